//! Reporters: `stylish` (per file, by position, with totals) and `json` (the diagnostics array).

use serde_json::Value as Json;

use crate::{Diagnostic, LintResult, Severity};

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The stylish report: a blank line and the file path before each file's rows
/// (`{line:>6}:{column:<4} {severity:<9}{message}  {ruleId}`, by position), then a blank line
/// and the totals: `✖ <e> errors, <w> warnings`, `⚠ <w> warnings`, or `✓ No problems found`.
pub fn stylish(result: &LintResult) -> String {
    let mut files: Vec<&str> = Vec::new();
    for d in &result.diagnostics {
        if !files.contains(&d.file.as_str()) {
            files.push(&d.file);
        }
    }
    let mut out = String::new();
    for file in &files {
        out.push('\n');
        out.push_str(file);
        out.push('\n');
        let mut rows: Vec<&Diagnostic> = result
            .diagnostics
            .iter()
            .filter(|d| d.file == *file)
            .collect();
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
    let list: Vec<Json> = result.diagnostics.iter().map(Diagnostic::to_json).collect();
    let mut s = canon::to_pretty(&Json::Array(list));
    s.push('\n');
    s
}

/// Whether the result should fail the command (any error).
pub fn failed(result: &LintResult) -> bool {
    result
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
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
        }
    }

    #[test]
    fn stylish_groups_sorts_and_totals() {
        let r = LintResult {
            diagnostics: vec![
                d("/p/a.ts", 12, 14, Severity::Warning, "W2"),
                d("/p/a.ts", 1, 1, Severity::Warning, "W1"),
                d("/p/a.ts", 8, 29, Severity::Error, "E1"),
                d("/p/b.ts", 16, 26, Severity::Info, "I1"),
            ],
        };
        assert_eq!(
            stylish(&r),
            "\n/p/a.ts\n     1:1    warning  mW1  W1\n     8:29   error    mE1  E1\n    12:14   warning  mW2  W2\n\n/p/b.ts\n    16:26   info     mI1  I1\n\n✖ 1 error, 2 warnings\n"
        );
        let warn = LintResult {
            diagnostics: vec![d("/p/a.ts", 4, 1, Severity::Warning, "W")],
        };
        assert!(stylish(&warn).ends_with("\n\n⚠ 1 warning\n"));
        assert_eq!(stylish(&LintResult::default()), "✓ No problems found\n");
        assert!(!failed(&warn) && failed(&r));
    }
}
