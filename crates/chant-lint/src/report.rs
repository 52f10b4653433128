//! Reporters: `stylish` (per file, by position, with totals) and `json` (the diagnostics array).

use serde_json::Value as Json;

use serde_json::{Map, json};

use crate::{Diagnostic, LintResult, Rule, Severity};

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The stylish report: a blank line and the file path before each file's rows
/// (`{line:>6}:{column:<4} {severity:<9}{message}  {ruleId}`, by position), then a blank line
/// and the totals: `✖ <e> errors, <w> warnings`, `⚠ <w> warnings`, or `✓ No problems found`.
pub fn stylish(result: &LintResult) -> String {
    let mut files: Vec<&str> = Vec::new();
    for d in result.diagnostics() {
        if !files.contains(&d.file.as_str()) {
            files.push(&d.file);
        }
    }
    let mut out = String::new();
    for file in &files {
        out.push('\n');
        out.push_str(file);
        out.push('\n');
        let mut rows: Vec<&Diagnostic> = result.diagnostics().filter(|d| d.file == *file).collect();
        rows.sort_by_key(|d| (d.line, d.column));
        for d in rows {
            out.push_str(&format!(
                "{:>6}:{:<4} {:<9}{}  {}\n",
                d.line,
                d.column,
                d.severity.as_str(),
                d.message,
                d.rule_id
            ));
        }
    }
    if !files.is_empty() {
        out.push('\n');
    }
    let (e, w) = (result.error_count(), result.warning_count());
    out.push_str(&if e > 0 {
        format!("✖ {}, {}", plural(e, "error"), plural(w, "warning"))
    } else if w > 0 {
        format!("⚠ {}", plural(w, "warning"))
    } else {
        "✓ No problems found".to_owned()
    });
    out.push('\n');
    out
}

/// The JSON report: the diagnostics array, pretty-printed.
pub fn json(result: &LintResult) -> String {
    let list: Vec<Json> = result.diagnostics().map(Diagnostic::to_json).collect();
    let mut s = canon::to_pretty(&Json::Array(list));
    s.push('\n');
    s
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// `file://` URI of a path, percent-encoding what a URI path may not hold.
fn file_uri(path: &str) -> String {
    let mut out = String::from("file://");
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// SARIF 2.1.0: one run of `chant` (at `version`), its rules in order of first use, and
/// every result: the reported ones, then those a disable comment hid, each carrying an
/// `inSource` suppression (with the comment's reason as its justification).
pub fn sarif(result: &LintResult, rules: &[Rule], version: &str) -> String {
    let ordered: Vec<&Diagnostic> = result.diagnostics().chain(result.suppressed()).collect();
    let mut used: Vec<&str> = Vec::new();
    for d in &ordered {
        if !used.contains(&d.rule_id.as_str()) {
            used.push(&d.rule_id);
        }
    }
    let descriptors: Vec<Json> = used
        .iter()
        .map(|id| {
            let rule = rules.iter().find(|r| r.id == *id);
            let (text, level, category) = match rule {
                Some(r) => (r.description, sarif_level(r.severity), r.category),
                None if *id == "parse" => {
                    ("The file must parse as TypeScript", "error", "correctness")
                }
                None => ("The file must be readable", "error", "correctness"),
            };
            json!({
                "id": id,
                "shortDescription": {"text": text},
                "fullDescription": {"text": text},
                "helpUri": format!("https://intentius.io/chant/lint-rules/{}", id.to_lowercase()),
                "defaultConfiguration": {"level": level},
                "properties": {"category": category},
            })
        })
        .collect();
    let results: Vec<Json> = ordered
        .iter()
        .map(|d| {
            let mut m = Map::new();
            m.insert("ruleId".into(), json!(d.rule_id));
            m.insert(
                "ruleIndex".into(),
                json!(used.iter().position(|u| *u == d.rule_id).unwrap_or(0)),
            );
            m.insert("level".into(), json!(sarif_level(d.severity)));
            m.insert("message".into(), json!({"text": d.message}));
            let mut region = Map::new();
            region.insert("startLine".into(), json!(d.line));
            region.insert("startColumn".into(), json!(d.column));
            if let (Some(l), Some(c)) = (d.end_line, d.end_column) {
                region.insert("endLine".into(), json!(l));
                region.insert("endColumn".into(), json!(c));
            }
            m.insert(
                "locations".into(),
                json!([{"physicalLocation": {"artifactLocation": {"uri": file_uri(&d.file)}, "region": region}}]),
            );
            m.insert(
                "fingerprints".into(),
                json!({"chant/v1": format!("{}:{}:{}:{}", d.rule_id, d.file, d.line, d.column)}),
            );
            if let Some(reason) = &d.suppressed {
                let mut s = Map::new();
                s.insert("kind".into(), json!("inSource"));
                if !reason.is_empty() {
                    s.insert("justification".into(), json!(reason));
                }
                m.insert("suppressions".into(), json!([s]));
            }
            Json::Object(m)
        })
        .collect();
    let doc = json!({
        "$schema": "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "chant",
                "version": version,
                "informationUri": "https://intentius.io/chant",
                "rules": descriptors,
            }},
            "results": results,
        }],
    });
    let mut s = canon::to_pretty(&doc);
    s.push('\n');
    s
}

/// Whether the result should fail the command (any error).
pub fn failed(result: &LintResult) -> bool {
    result.diagnostics().any(|d| d.severity == Severity::Error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(file: &str, line: usize, column: usize, severity: Severity, rule: &str) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            line,
            column,
            end_line: None,
            end_column: None,
            rule_id: rule.into(),
            severity,
            message: format!("m{rule}"),
            fix: None,
            fix_range_utf16: None,
            suppressed: None,
        }
    }

    #[test]
    fn stylish_groups_sorts_and_totals() {
        let r = LintResult::from_all(vec![
            d("/p/a.ts", 12, 14, Severity::Warning, "W2"),
            d("/p/a.ts", 1, 1, Severity::Warning, "W1"),
            d("/p/a.ts", 8, 29, Severity::Error, "E1"),
            d("/p/b.ts", 16, 26, Severity::Info, "I1"),
        ]);
        assert_eq!(
            stylish(&r),
            "\n/p/a.ts\n     1:1    warning  mW1  W1\n     8:29   error    mE1  E1\n    12:14   warning  mW2  W2\n\n/p/b.ts\n    16:26   info     mI1  I1\n\n✖ 1 error, 2 warnings\n"
        );
        let warn = LintResult::from_all(vec![d("/p/a.ts", 4, 1, Severity::Warning, "W")]);
        assert!(stylish(&warn).ends_with("\n\n⚠ 1 warning\n"));
        assert_eq!(stylish(&LintResult::default()), "✓ No problems found\n");
        assert!(!failed(&warn) && failed(&r));
    }
}
