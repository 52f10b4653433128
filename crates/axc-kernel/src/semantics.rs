//! The semantic checks of workflow artifacts: what a gate reads in `.planning/PM_SIGNOFF.md`,
//! `SYSTEM_SPEC.md`, `IMPLEMENTATION_NOTES.md`, `acceptance-matrix.md`, `ship-verdict.md`
//! and `RELEASE_NOTES.md`, and the configurable `section_check`. Each returns why the file
//! does not yet let its gate pass, with the reference's text.

use serde_json::Value as Json;

pub const PM_SIGNOFF: &str = ".planning/PM_SIGNOFF.md";
pub const SYSTEM_SPEC: &str = ".planning/SYSTEM_SPEC.md";
pub const IMPLEMENTATION_NOTES: &str = ".planning/IMPLEMENTATION_NOTES.md";
pub const ACCEPTANCE_MATRIX: &str = ".planning/acceptance-matrix.md";
pub const SHIP_VERDICT: &str = ".planning/ship-verdict.md";
pub const RELEASE_NOTES: &str = ".planning/RELEASE_NOTES.md";

/// The semantic id the reference ties to a well-known path.
pub fn id_for_path(path: &str) -> Option<&'static str> {
    Some(match path {
        PM_SIGNOFF => "pm_signoff",
        SYSTEM_SPEC => "system_spec",
        IMPLEMENTATION_NOTES => "implementation_notes",
        ACCEPTANCE_MATRIX => "acceptance_matrix",
        SHIP_VERDICT => "ship_verdict",
        RELEASE_NOTES => "release_notes",
        _ => return None,
    })
}

/// Runs semantic check `id` over `content`: `Some(reason)` when it fails, `None` when it passes
/// or no such check exists.
pub fn check(id: &str, content: &str, config: Option<&Json>) -> Option<String> {
    match id {
        "pm_signoff" => pm_signoff(content),
        "system_spec" => system_spec(content),
        "implementation_notes" => two_sections(
            content,
            IMPLEMENTATION_NOTES,
            ["## Changes", "## Verification"],
            "implementation can exit",
            "Dev must replace placeholder content with real implementation notes",
            &|l| l.eq_ignore_ascii_case("(Dev fills this during implementation)"),
        ),
        "acceptance_matrix" => acceptance_matrix(content),
        "ship_verdict" => ship_verdict(content),
        "release_notes" => two_sections(
            content,
            RELEASE_NOTES,
            ["## User Impact", "## Verification Summary"],
            "ship approval can be requested",
            "QA must replace placeholder content with real release notes",
            &|l| l.eq_ignore_ascii_case("(QA fills this during the QA phase)"),
        ),
        "section_check" => section_check(content, config),
        _ => None,
    }
}

/// Upper case with runs of white space made one space.
fn token(v: &str) -> String {
    v.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase()
}

/// The value of the first line `<key> : <value>` (key compared without case).
fn line_value<'a>(content: &'a str, key: &str) -> Option<&'a str> {
    content.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim_end().eq_ignore_ascii_case(key) && !v.trim().is_empty()).then(|| v.trim())
    })
}

fn pm_signoff(content: &str) -> Option<String> {
    match line_value(content, "Approved") {
        None => Some(format!(
            "PM signoff must declare `Approved: YES` in {PM_SIGNOFF}."
        )),
        Some(v) if token(v) != "YES" => Some(format!(
            "PM signoff is not approved. Found \"Approved: {v}\" in {PM_SIGNOFF}; set it to \"Approved: YES\"."
        )),
        Some(_) => None,
    }
}

fn ship_verdict(content: &str) -> Option<String> {
    let verdict = content.lines().find_map(|line| {
        let rest = line.strip_prefix("##")?;
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        let (k, v) = rest.trim_start().split_once(':')?;
        (k.trim_end().eq_ignore_ascii_case("Verdict") && !v.trim().is_empty()).then(|| v.trim())
    });
    match verdict {
        None => Some(format!(
            "Ship verdict must declare an affirmative `## Verdict:` line in {SHIP_VERDICT}."
        )),
        Some(v) if !["YES", "SHIP", "SHIP IT"].contains(&token(v).as_str()) => Some(format!(
            "Ship verdict is not affirmative. Found \"## Verdict: {v}\" in {SHIP_VERDICT}; use \"## Verdict: YES\"."
        )),
        Some(_) => None,
    }
}

/// Whether the section headed by a line starting with `header` exists, and holds a line
/// that is neither blank nor a placeholder before the next `## `.
fn section(content: &str, header: &str, placeholder: &dyn Fn(&str) -> bool) -> (bool, bool) {
    let mut lines = content
        .lines()
        .skip_while(|l| !l.trim().starts_with(header));
    if lines.next().is_none() {
        return (false, false);
    }
    for line in lines.map(str::trim) {
        if line.starts_with("## ") {
            break;
        }
        if !line.is_empty() && !placeholder(line) {
            return (true, true);
        }
    }
    (true, false)
}

fn scaffold_line(line: &str) -> bool {
    (line.starts_with('(') && line.ends_with(')'))
        || line.starts_with("- [ ] Name the executable checks")
}

/// Of the `required` sections, those `content` does not mention, and those it has but with
/// nothing in them other than blank or `placeholder` lines.
fn unfilled<'a>(
    content: &str,
    required: &[&'a str],
    placeholder: &dyn Fn(&str) -> bool,
) -> (Vec<&'a str>, Vec<&'a str>) {
    let missing = required
        .iter()
        .copied()
        .filter(|s| !content.contains(s))
        .collect();
    let empty = required
        .iter()
        .copied()
        .filter(|s| section(content, s, placeholder) == (true, false))
        .collect();
    (missing, empty)
}

fn system_spec(content: &str) -> Option<String> {
    let required = ["## Purpose", "## Interface", "## Acceptance Tests"];
    let (missing, empty) = unfilled(content, &required, &scaffold_line);
    if !missing.is_empty() {
        return Some(format!(
            "{SYSTEM_SPEC} must define {} before planning can exit.",
            missing.join(", ")
        ));
    }
    (!empty.is_empty()).then(|| {
        format!(
            "{} in {SYSTEM_SPEC} still contains only scaffold placeholder text. Replace placeholder content with real spec content before planning can exit.",
            empty.join(" and ")
        )
    })
}

/// Implementation notes and release notes: two sections that must exist and hold content.
fn two_sections(
    content: &str,
    path: &str,
    names: [&str; 2],
    before: &str,
    remedy: &str,
    placeholder: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let found: Vec<(bool, bool)> = names
        .iter()
        .map(|n| section(content, n, placeholder))
        .collect();
    let missing: Vec<&str> = names
        .iter()
        .zip(&found)
        .filter(|(_, f)| !f.0)
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "{path} must define {} before {before}.",
            missing.join(" and ")
        ));
    }
    let empty: Vec<&str> = names
        .iter()
        .zip(&found)
        .filter(|(_, f)| !f.1)
        .map(|(n, _)| *n)
        .collect();
    (!empty.is_empty()).then(|| {
        format!(
            "{} in {path} still contains only placeholder text. {remedy}.",
            empty.join(" and ")
        )
    })
}

fn separator_row(cells: &[&str]) -> bool {
    !cells.is_empty()
        && cells.iter().all(|c| {
            let inner = c.strip_prefix(':').unwrap_or(c);
            let inner = inner.strip_suffix(':').unwrap_or(inner);
            inner.len() >= 3 && inner.bytes().all(|b| b == b'-')
        })
}

fn acceptance_matrix(content: &str) -> Option<String> {
    let lines: Vec<&str> = content.lines().collect();
    let is_header = |l: &str| {
        let Some(rest) = l.strip_prefix('|') else {
            return false;
        };
        let cell = rest.split('|').next().unwrap_or("");
        cell.trim().eq_ignore_ascii_case("Req #")
            || cell
                .split_whitespace()
                .collect::<String>()
                .eq_ignore_ascii_case("Req#")
    };
    let Some(header) = lines.iter().position(|l| is_header(l)) else {
        return Some(format!(
            "Acceptance matrix must preserve the `| Req # |` requirement table header in {ACCEPTANCE_MATRIX}."
        ));
    };
    let mut rows: Vec<Vec<&str>> = Vec::new();
    let mut in_table = false;
    for line in &lines[header + 1..] {
        let t = line.trim();
        if t.is_empty() || !t.starts_with('|') {
            if in_table {
                break;
            }
            continue;
        }
        in_table = true;
        let parts: Vec<&str> = t.split('|').map(str::trim).collect();
        let cells: Vec<&str> = if parts.len() >= 2 {
            parts[1..parts.len() - 1].to_vec()
        } else {
            Vec::new()
        };
        if cells.is_empty() || separator_row(&cells) {
            continue;
        }
        rows.push(cells);
    }
    let requirements: Vec<&Vec<&str>> = rows
        .iter()
        .filter(|c| {
            let id = c.first().copied().unwrap_or("");
            !id.is_empty() && !id.eq_ignore_ascii_case("(QA fills this from ROADMAP.md)")
        })
        .collect();
    if requirements.is_empty() {
        return Some("Acceptance matrix has no real requirement verdict rows. Replace the scaffold placeholder with QA-owned requirement results before requesting ship approval.".to_owned());
    }
    let failing: Vec<String> = requirements
        .iter()
        .filter_map(|c| {
            let status = c.last().copied().unwrap_or("");
            (!["PASS", "PASSED", "OK", "YES"].contains(&token(status).as_str())).then(|| {
                format!(
                    "{}={}",
                    c.first()
                        .copied()
                        .filter(|s| !s.is_empty())
                        .unwrap_or("<unknown>"),
                    if status.is_empty() { "missing" } else { status }
                )
            })
        })
        .collect();
    (!failing.is_empty()).then(|| {
        format!(
            "Acceptance matrix still has non-passing requirement rows in {ACCEPTANCE_MATRIX}: {}. Mark every requirement row with a passing Status before requesting ship approval.",
            failing.join(", ")
        )
    })
}

fn section_check(content: &str, config: Option<&Json>) -> Option<String> {
    let sections: Vec<&str> = config
        .and_then(|c| c["required_sections"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    if sections.is_empty() {
        return None;
    }
    let placeholder = |l: &str| {
        l.eq_ignore_ascii_case("(Content here.)")
            || l.eq_ignore_ascii_case("(Operator fills this in.)")
    };
    let (missing, empty) = unfilled(content, &sections, &placeholder);
    if !missing.is_empty() {
        return Some(format!(
            "Document must contain sections: {}",
            missing.join(", ")
        ));
    }
    (!empty.is_empty()).then(|| {
        format!(
            "Sections still contain only scaffold placeholder text: {}. Replace placeholder content before this gate can pass.",
            empty.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signoff_and_verdict_need_an_affirmative_line() {
        assert_eq!(pm_signoff("# PM\nApproved: yes\n"), None);
        assert_eq!(
            pm_signoff("approved :  No way\n").unwrap(),
            "PM signoff is not approved. Found \"Approved: No way\" in .planning/PM_SIGNOFF.md; set it to \"Approved: YES\"."
        );
        assert!(
            pm_signoff("nothing")
                .unwrap()
                .starts_with("PM signoff must declare")
        );
        assert_eq!(ship_verdict("## Verdict:  ship   it\n"), None);
        assert!(
            ship_verdict("## Verdict: PENDING")
                .unwrap()
                .starts_with("Ship verdict is not affirmative. Found \"## Verdict: PENDING\"")
        );
        assert!(ship_verdict("##Verdict: YES").is_some());
    }

    #[test]
    fn sections_need_real_content() {
        assert_eq!(
            system_spec("## Purpose\nx\n## Interface\ny\n## Acceptance Tests\n- [x] z\n"),
            None
        );
        assert_eq!(
            system_spec("## Purpose\nx\n## Interface\n(fill)\n## Acceptance Tests\n- [ ] Name the executable checks\n").unwrap(),
            "## Interface and ## Acceptance Tests in .planning/SYSTEM_SPEC.md still contains only scaffold placeholder text. Replace placeholder content with real spec content before planning can exit."
        );
        assert_eq!(
            check(
                "implementation_notes",
                "## Changes\n(Dev fills this during implementation)\n",
                None
            )
            .unwrap(),
            ".planning/IMPLEMENTATION_NOTES.md must define ## Verification before implementation can exit."
        );
        assert_eq!(
            check(
                "section_check",
                "## A\n(Content here.)\n",
                Some(&serde_json::json!({"required_sections": ["## A"]}))
            )
            .unwrap(),
            "Sections still contain only scaffold placeholder text: ## A. Replace placeholder content before this gate can pass."
        );
    }

    #[test]
    fn the_matrix_needs_passing_requirement_rows() {
        let m = "| Req # | Requirement | Status |\n|---|---|---|\n| R1 | a | PASS |\n| R2 | b | fail |\n| R3 | c | |\n";
        assert_eq!(
            acceptance_matrix(m).unwrap(),
            "Acceptance matrix still has non-passing requirement rows in .planning/acceptance-matrix.md: R2=fail, R3=missing. Mark every requirement row with a passing Status before requesting ship approval."
        );
        assert_eq!(
            acceptance_matrix("| Req # | S |\n|---|---|\n| R1 | ok |\n"),
            None
        );
        assert!(
            acceptance_matrix("| Req # | S |\n|---|---|\n| (QA fills this from ROADMAP.md) | |\n")
                .unwrap()
                .starts_with("Acceptance matrix has no real")
        );
    }
}
