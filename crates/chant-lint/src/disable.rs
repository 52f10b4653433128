//! Disable comments: `// chant-disable [IDS] [-- reason]` for the whole file,
//! `// chant-disable-line …` for the comment's line, `// chant-disable-next-line …` for the line
//! after it. IDs are separated by commas or spaces; none means every rule; an id that names no
//! rule simply matches nothing. Only real comments count (oxc's comment list), never text inside
//! a string.

use crate::SourceFile;

/// Which rules are off where in one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Directives {
    /// `(rules, line, reason)`: `line` `None` for the whole file; `rules` empty for every rule.
    entries: Vec<(Vec<String>, Option<usize>, String)>,
}

/// The directive in one comment's text (delimiters removed): `(kind, ids, reason)`.
fn directive(body: &str) -> Option<(&str, Vec<String>, String)> {
    let body = body.trim();
    let rest = body.strip_prefix("chant-disable")?;
    let (kind, rest) = if let Some(r) = rest.strip_prefix("-next-line") {
        ("next-line", r)
    } else if let Some(r) = rest.strip_prefix("-line") {
        ("line", r)
    } else {
        ("file", rest)
    };
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let (ids_text, reason) = rest
        .split_once("--")
        .map_or((rest, ""), |(ids, reason)| (ids, reason.trim()));
    let ids = ids_text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    Some((kind, ids, reason.to_owned()))
}

impl Directives {
    pub fn parse(file: &SourceFile<'_>) -> Directives {
        let mut entries = Vec::new();
        for c in file.program.comments.iter() {
            let span = c.content_span();
            let Some(body) = file.text.get(span.start as usize..span.end as usize) else {
                continue;
            };
            let Some((kind, ids, reason)) = directive(body) else {
                continue;
            };
            let line = file.lines.line(c.span.start as usize);
            let at = match kind {
                "file" => None,
                "line" => Some(line),
                _ => Some(line + 1),
            };
            entries.push((ids, at, reason));
        }
        Directives { entries }
    }

    /// Whether `rule` is disabled on 1-based `line`.
    pub fn disabled(&self, rule: &str, line: usize) -> bool {
        self.reason(rule, line).is_some()
    }

    /// The reason given where `rule` is disabled on `line` (`""` without one); `None` when
    /// the rule is not disabled there.
    pub fn reason(&self, rule: &str, line: usize) -> Option<&str> {
        self.entries
            .iter()
            .find(|(ids, at, _)| {
                at.is_none_or(|l| l == line) && (ids.is_empty() || ids.iter().any(|i| i == rule))
            })
            .map(|(_, _, reason)| reason.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directives(text: &str) -> Directives {
        let allocator = oxc::allocator::Allocator::default();
        let file = SourceFile::parse(&allocator, text);
        Directives::parse(&file)
    }

    #[test]
    fn each_form_scopes_to_its_lines() {
        let d = directives(
            "// chant-disable COR004\nconst a = 1;\n// chant-disable-next-line COR005, WGL001 -- reason here\nconst b = 2;\nconst c = 3; // chant-disable-line WGL004 -- kept\nconst d = 4;\n",
        );
        for line in 1..=6 {
            assert!(d.disabled("COR004", line), "file-wide on {line}");
        }
        assert!(d.disabled("COR005", 4) && d.disabled("WGL001", 4));
        assert!(!d.disabled("COR005", 3) && !d.disabled("COR005", 5));
        assert!(d.disabled("WGL004", 5) && !d.disabled("WGL004", 6) && !d.disabled("WGL004", 4));
        // A reason is not a rule id.
        assert!(!d.disabled("reason", 4) && !d.disabled("here", 4));
        assert_eq!(d.reason("WGL001", 4), Some("reason here"));
        assert_eq!(d.reason("COR004", 2), Some(""));
        assert_eq!(d.reason("WGL004", 5), Some("kept"));
    }

    #[test]
    fn no_ids_means_every_rule_and_strings_are_not_comments() {
        let d = directives(
            "const s = \"// chant-disable\";\n/* chant-disable-next-line */\nconst x = 1;\n",
        );
        assert!(
            !d.disabled("COR004", 1),
            "text inside a string is not a directive"
        );
        assert!(d.disabled("COR004", 3) && d.disabled("ANY", 3));
        assert!(!d.disabled("COR004", 2));
        // A longer word is not a directive.
        let d = directives("// chant-disabled COR004\nconst x = 1;\n");
        assert!(!d.disabled("COR004", 2) && !d.disabled("COR004", 1));
    }
}
