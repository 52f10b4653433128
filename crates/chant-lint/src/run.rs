//! Linting files on disk: read each, lint it, and with `--fix` apply every file's fixes
//! (atomically: write beside, then rename) and lint again.

use std::path::{Path, PathBuf};

use crate::{Diagnostic, LintConfig, LintResult, Rule, Severity};

/// Files larger than this are reported, not parsed.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// What a lint run applies to each file.
pub struct Linter<'r> {
    pub rules: &'r [Rule],
    pub config: &'r LintConfig,
    /// Override globs match file paths relative to this directory.
    pub root: &'r Path,
}

fn problem(file: &Path, message: String) -> Diagnostic {
    Diagnostic {
        file: file.display().to_string(),
        line: 1,
        column: 1,
        end_line: None,
        end_column: None,
        rule_id: "read".into(),
        severity: Severity::Error,
        message,
        fix: None,
        fix_range_utf16: None,
        suppressed: None,
    }
}

impl Linter<'_> {
    fn relative(&self, file: &Path) -> String {
        confine::slash_path(file.strip_prefix(self.root).unwrap_or(file))
    }

    /// Lints one file's current text.
    pub fn lint_file(&self, file: &Path) -> Vec<Diagnostic> {
        self.read_and_lint(file).1
    }

    /// The file's text (when it could be read) and its diagnostics.
    fn read_and_lint(&self, file: &Path) -> (Option<String>, Vec<Diagnostic>) {
        match std::fs::metadata(file) {
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                let message = format!(
                    "File is {} bytes, over the {MAX_FILE_BYTES}-byte lint limit — split it",
                    m.len()
                );
                return (None, vec![problem(file, message)]);
            }
            Err(e) => return (None, vec![problem(file, format!("Cannot read file: {e}"))]),
            Ok(_) => {}
        }
        match confine::read_text(file, MAX_FILE_BYTES) {
            Ok(text) => {
                let diagnostics = crate::lint_text(
                    &file.display().to_string(),
                    &self.relative(file),
                    &text,
                    self.rules,
                    self.config,
                );
                (Some(text), diagnostics)
            }
            Err(e) => (None, vec![problem(file, format!("Cannot read file: {e}"))]),
        }
    }

    /// Lints `files` in order.
    pub fn lint(&self, files: &[PathBuf]) -> LintResult {
        LintResult::from_all(files.iter().flat_map(|f| self.lint_file(f)).collect())
    }

    /// Lints, applies every fix a disable comment does not hide, file by file (back to
    /// front), writes the changed files atomically, and lints again. Returns the second
    /// result and the files rewritten.
    pub fn fix(&self, files: &[PathBuf]) -> std::io::Result<(LintResult, Vec<PathBuf>)> {
        let mut changed = Vec::new();
        for file in files {
            let (Some(text), diagnostics) = self.read_and_lint(file) else {
                continue;
            };
            let fixes: Vec<&crate::Fix> = diagnostics
                .iter()
                .filter(|d| d.suppressed.is_none())
                .filter_map(|d| d.fix.as_ref())
                .collect();
            if fixes.is_empty() {
                continue;
            }
            let (fixed, applied) = crate::fix::apply(&text, &fixes);
            if applied == 0 || fixed == text {
                continue;
            }
            fswrite::write_atomic(file, fixed.as_bytes())?;
            changed.push(file.clone());
        }
        Ok((self.lint(files), changed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fix_rewrites_files_and_relints() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.ts");
        std::fs::write(
            &file,
            "import * as gl from \"@intentius/chant-lexicon-gitlab\";\nimport type { Job } from \"@intentius/chant-lexicon-gitlab\";\nimport { Composite } from \"@intentius/chant\";\nexport const Pair = Composite((p: { c: string }) => ({ run: new gl.Job({ script: [p.c] }) }));\nexport const x = Pair({ c: \"x\" });\nexport type J = Job;\n",
        )
        .unwrap();
        let rules = crate::rules::core();
        let config = LintConfig::default();
        let linter = Linter {
            rules: &rules,
            config: &config,
            root: dir.path(),
        };
        let before = linter.lint(std::slice::from_ref(&file));
        let ids: Vec<&str> = before.diagnostics().map(|d| d.rule_id.as_str()).collect();
        assert_eq!(ids, ["COR012", "COR017"]);
        let (after, changed) = linter.fix(std::slice::from_ref(&file)).unwrap();
        assert_eq!(changed, std::slice::from_ref(&file));
        assert!(after.diagnostics().next().is_none(), "{:?}", after.all);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "import * as gl from \"@intentius/chant-lexicon-gitlab\";\nimport { Composite } from \"@intentius/chant\";\nexport const Pair = Composite((p: { c: string }) => ({ run: new gl.Job({ script: [p.c] }) }), \"Pair\");\nexport const x = Pair({ c: \"x\" });\nexport type J = Job;\n"
        );
    }

    #[test]
    fn a_disabled_diagnostic_keeps_its_fix_from_applying() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.ts");
        let text = "import * as gl from \"@intentius/chant-lexicon-gitlab\";\n// chant-disable-next-line COR012 -- kept on purpose\nimport type { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport type J = Job | gl.Job;\n";
        std::fs::write(&file, text).unwrap();
        let rules = crate::rules::core();
        let config = LintConfig::default();
        let linter = Linter {
            rules: &rules,
            config: &config,
            root: dir.path(),
        };
        let (after, changed) = linter.fix(std::slice::from_ref(&file)).unwrap();
        assert!(changed.is_empty());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        assert_eq!(after.suppressed().count(), 1);
    }

    #[test]
    fn unreadable_and_broken_files_are_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("broken.ts");
        std::fs::write(&broken, "export const = ;\n").unwrap();
        let missing = dir.path().join("missing.ts");
        let rules = crate::rules::core();
        let config = LintConfig::default();
        let linter = Linter {
            rules: &rules,
            config: &config,
            root: dir.path(),
        };
        let r = linter.lint(&[broken, missing]);
        let d: Vec<&Diagnostic> = r.diagnostics().collect();
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].rule_id, "parse");
        assert!(d[0].message.starts_with("Syntax error: "));
        assert_eq!(d[1].rule_id, "read");
        assert!(d[1].message.starts_with("Cannot read file: "));
        assert_eq!(r.error_count(), 2);
    }
}
