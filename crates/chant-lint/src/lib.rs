//! chant's lint engine.
//!
//! Owns the diagnostic shape, rules as plain data plus a check function (so a lexicon contributes
//! its own next to the core ones), the engine that parses each source file once with oxc and runs
//! every enabled rule over it, disable comments (`chant-disable`, `chant-disable-line`,
//! `chant-disable-next-line`), the `lint` section of a project's config (per-rule severity and
//! options, per-glob overrides), fixes applied back to front, and the stylish and JSON reporters.
//! It knows nothing of MCP, of the CLI, or of how a project is built or evaluated: it reads source
//! text and returns diagnostics.

pub mod config;
pub mod disable;
pub mod facts;
pub mod fix;
pub mod report;
pub mod rules;
pub mod run;
pub mod source;

use serde_json::{Map, Value as Json, json};

pub use config::LintConfig;
pub use source::{LineIndex, SourceFile};

/// How much a diagnostic matters. `Info` counts toward neither total.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "error" => Some(Severity::Error),
            "warning" | "warn" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// A replacement of `range` (byte offsets into the file) with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub range: (usize, usize),
    pub replacement: String,
    pub kind: Option<String>,
}

/// What a rule reports: where (byte offsets), what, and an optional fix. The engine turns it
/// into a [`Diagnostic`] with the rule's id and configured severity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub start: usize,
    pub end: Option<usize>,
    pub message: String,
    pub fix: Option<Fix>,
}

impl Finding {
    pub fn at(start: usize, message: impl Into<String>) -> Finding {
        Finding {
            start,
            end: None,
            message: message.into(),
            fix: None,
        }
    }

    pub fn with_fix(mut self, fix: Fix) -> Finding {
        self.fix = Some(fix);
        self
    }
}

/// One reported problem. Lines and columns are 1-based; columns count UTF-16 code units, as
/// editors and the TypeScript reference do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub end_line: Option<usize>,
    pub end_column: Option<usize>,
    pub rule_id: String,
    pub severity: Severity,
    pub message: String,
    /// The fix, with its range still in bytes (see [`Diagnostic::to_json`] for the wire form).
    pub fix: Option<Fix>,
    /// The fix range in UTF-16 code units, as reported.
    pub fix_range_utf16: Option<(usize, usize)>,
    /// Set when a disable comment hides this diagnostic: the comment's reason (`""` if none).
    pub suppressed: Option<String>,
}

impl Diagnostic {
    /// `{file, line, column, endLine?, endColumn?, ruleId, severity, message, fix?}` in that
    /// order; the fix range in UTF-16 code units.
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("file".into(), json!(self.file));
        m.insert("line".into(), json!(self.line));
        m.insert("column".into(), json!(self.column));
        if let Some(l) = self.end_line {
            m.insert("endLine".into(), json!(l));
        }
        if let Some(c) = self.end_column {
            m.insert("endColumn".into(), json!(c));
        }
        m.insert("ruleId".into(), json!(self.rule_id));
        m.insert("severity".into(), json!(self.severity.as_str()));
        m.insert("message".into(), json!(self.message));
        if let Some(f) = &self.fix {
            let (s, e) = self.fix_range_utf16.unwrap_or(f.range);
            let mut fm = Map::new();
            fm.insert("range".into(), json!([s, e]));
            fm.insert("replacement".into(), json!(f.replacement));
            if let Some(k) = &f.kind {
                fm.insert("kind".into(), json!(k));
            }
            m.insert("fix".into(), Json::Object(fm));
        }
        Json::Object(m)
    }
}

/// What a rule's check function sees.
pub struct RuleContext<'s, 'a> {
    pub file: &'s SourceFile<'a>,
    /// Facts gathered from the file's AST once for every rule.
    pub facts: &'s facts::Facts,
    /// The rule's options from the config (`["warning", {max: 4}]` → `{max: 4}`), `null` if none.
    pub options: &'s Json,
}

/// A rule: plain data plus a check function.
#[derive(Clone, Copy)]
pub struct Rule {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// `correctness`, `style`, `performance`, `security`.
    pub category: &'static str,
    pub severity: Severity,
    /// Whether the config may change the severity (the reference let it for core rules only).
    pub configurable_severity: bool,
    pub check: fn(&RuleContext<'_, '_>) -> Vec<Finding>,
}

impl Rule {
    /// A rule whose severity the config may change.
    pub fn new(
        id: &'static str,
        name: &'static str,
        severity: Severity,
        category: &'static str,
        description: &'static str,
        check: fn(&RuleContext<'_, '_>) -> Vec<Finding>,
    ) -> Rule {
        Rule {
            id,
            name,
            description,
            category,
            severity,
            configurable_severity: true,
            check,
        }
    }

    /// The same rule, keeping its own severity whatever the config says.
    pub fn fixed_severity(self) -> Rule {
        Rule {
            configurable_severity: false,
            ..self
        }
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("id", &self.id).finish()
    }
}

/// `{success, errorCount, warningCount, diagnostics, output}` of a lint run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LintResult {
    /// Everything the rules found, suppressed or not, in run order (SARIF reports the
    /// suppressed ones as such).
    pub all: Vec<Diagnostic>,
}

impl LintResult {
    /// From every finding in run order.
    pub fn from_all(all: Vec<Diagnostic>) -> LintResult {
        LintResult { all }
    }

    /// What is reported: everything no disable comment hides, in run order.
    pub fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.all.iter().filter(|d| d.suppressed.is_none())
    }

    /// What disable comments hid, in run order.
    pub fn suppressed(&self) -> impl Iterator<Item = &Diagnostic> {
        self.all.iter().filter(|d| d.suppressed.is_some())
    }
}

impl LintResult {
    pub fn error_count(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warning_count(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, s: Severity) -> usize {
        self.diagnostics().filter(|d| d.severity == s).count()
    }

    /// The MCP `lint` result: `output` is the diagnostics pretty-printed (`"[]"` when clean).
    pub fn to_json(&self) -> Json {
        let diagnostics: Vec<Json> = self.diagnostics().map(Diagnostic::to_json).collect();
        let output = if diagnostics.is_empty() {
            "[]".to_owned()
        } else {
            canon::to_pretty(&Json::Array(diagnostics.clone()))
        };
        json!({
            "success": self.error_count() == 0,
            "errorCount": self.error_count(),
            "warningCount": self.warning_count(),
            "diagnostics": diagnostics,
            "output": output,
        })
    }
}

/// Lints one file's text with `rules` (in registration order) under `config`. `display` is the
/// path diagnostics name; `relative` is the path overrides' globs match against.
pub fn lint_text(
    display: &str,
    relative: &str,
    text: &str,
    rules: &[Rule],
    config: &LintConfig,
) -> Vec<Diagnostic> {
    if let Some((at, message)) = parse_guard::nesting_error(text) {
        let position = source::LineIndex::new(text).position(at);
        return vec![parse_error(
            display,
            position,
            format!("Syntax error: {message}"),
        )];
    }
    // Parsing and every rule's walk recurse per level of nesting.
    parse_guard::on_parse_stack(|| lint_parsed(display, relative, text, rules, config))
}

/// The one diagnostic of a file that does not parse.
fn parse_error(display: &str, (line, column): (usize, usize), message: String) -> Diagnostic {
    Diagnostic {
        file: display.to_owned(),
        line,
        column,
        end_line: None,
        end_column: None,
        rule_id: "parse".into(),
        severity: Severity::Error,
        message,
        fix: None,
        fix_range_utf16: None,
        suppressed: None,
    }
}

fn lint_parsed(
    display: &str,
    relative: &str,
    text: &str,
    rules: &[Rule],
    config: &LintConfig,
) -> Vec<Diagnostic> {
    let allocator = oxc::allocator::Allocator::default();
    let file = SourceFile::parse(&allocator, text);
    if let Some(e) = &file.syntax_error {
        return vec![parse_error(display, file.lines.position(e.0), e.1.clone())];
    }
    let directives = disable::Directives::parse(&file);
    let facts = facts::Facts::gather(&file.program, &config.intrinsics);
    let mut out = Vec::new();
    for rule in rules {
        let Some(setting) = config.setting(rule.id, relative) else {
            continue;
        };
        let severity = match setting.severity {
            Some(s) if rule.configurable_severity => s,
            _ => rule.severity,
        };
        let ctx = RuleContext {
            file: &file,
            facts: &facts,
            options: &setting.options,
        };
        let mut findings = (rule.check)(&ctx);
        findings.sort_by_key(|f| f.start);
        for f in findings {
            let (line, column) = file.lines.position(f.start);
            let suppressed = directives.reason(rule.id, line).map(str::to_owned);
            let (end_line, end_column) = match f.end {
                Some(e) => {
                    let (l, c) = file.lines.position(e);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            let fix_range_utf16 = f.fix.as_ref().map(|x| {
                (
                    file.lines.utf16_offset(x.range.0),
                    file.lines.utf16_offset(x.range.1),
                )
            });
            out.push(Diagnostic {
                file: display.to_owned(),
                line,
                column,
                end_line,
                end_column,
                rule_id: rule.id.to_owned(),
                severity,
                message: f.message,
                fix: f.fix,
                fix_range_utf16,
                suppressed,
            });
        }
    }
    out
}
