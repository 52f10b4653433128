//! Serving at a workspace root with no lexicon of its own: each `chant` member's lexicons,
//! read from that member's own config, and the `instructions` saying what loaded, what did
//! not and why, and that tools taking a path want a member's directory.

use std::path::PathBuf;

use chant_core::model::Budget;
use chant_core::session::Chant;
use chant_workspace::declaration::Declaration;

pub(crate) struct Served {
    /// Lexicon names, in the order members first name them.
    pub loaded: Vec<String>,
    /// The `chant` members whose config loaded: name and resolved directory.
    pub members: Vec<(String, PathBuf)>,
    pub instructions: String,
}

/// A member's directory (resolved) and the lexicons its own config names, or why not.
fn member_lexicons(
    chant: &Chant,
    d: &Declaration,
    m: &chant_workspace::declaration::Member,
) -> Result<(PathBuf, Vec<String>), String> {
    let dir = std::fs::canonicalize(d.root.join(&m.dir))
        .map_err(|_| format!("no directory at {}", m.dir))?;
    if !dir.starts_with(&d.root) {
        return Err(format!("{} leads outside the workspace", m.dir));
    }
    if chant_core::project::config_file(&dir).is_none() {
        return Err(format!("{} holds no chant.config.ts", m.dir));
    }
    let project = chant_core::project::locate(
        &dir,
        chant.evaluator.as_ref(),
        &Budget::default(),
        Some(&dir),
    )
    .map_err(|e| format!("its config does not load: {e}"))?;
    let names = project.lexicon_names().map_err(|e| e.to_string())?;
    Ok((dir, names))
}

pub(crate) fn serve(chant: &Chant, d: &Declaration) -> Served {
    let mut loaded: Vec<(String, String)> = Vec::new();
    let mut left_out: Vec<String> = Vec::new();
    let mut members = Vec::new();
    // Each member's config evaluated at once (the sandbox runs two at a time): the server's
    // start waits for the slowest, not for their sum.
    let chant_members: Vec<_> = d.members.iter().filter(|m| m.kind == "chant").collect();
    let outcomes: Vec<Result<(PathBuf, Vec<String>), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chant_members
            .iter()
            .map(|m| scope.spawn(move || member_lexicons(chant, d, m)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("reading its config failed".into()))
            })
            .collect()
    });
    for (m, outcome) in chant_members.iter().zip(outcomes) {
        let (dir, names) = match outcome {
            Ok(found) => found,
            Err(why) => {
                left_out.push(format!("member {} ({why})", m.name));
                continue;
            }
        };
        for name in names {
            if chant.lexicon(&name).is_none() {
                left_out.push(format!(
                    "lexicon {name} of member {} (this chant has no such lexicon)",
                    m.name
                ));
            } else if !loaded.iter().any(|(l, _)| *l == name) {
                loaded.push((name, m.name.clone()));
            }
        }
        members.push((m.name.clone(), dir));
    }
    let mut text = format!(
        "This server runs at the root of the workspace {} ({}), which has no lexicon of its own; it serves the core tools and its chant members' lexicons. ",
        d.name, d.file_name
    );
    if loaded.is_empty() {
        text.push_str("Lexicons loaded: none, so only the core is served. ");
    } else {
        let l: Vec<String> = loaded
            .iter()
            .map(|(l, m)| format!("{l} (from member {m})"))
            .collect();
        text.push_str(&format!("Lexicons loaded: {}. ", l.join(", ")));
    }
    if !left_out.is_empty() {
        text.push_str(&format!("Not loaded: {}. ", left_out.join("; ")));
    }
    if members.is_empty() {
        text.push_str(
            "Tools that take a path want a member's directory, and no chant member could be read.",
        );
    } else {
        let dirs: Vec<String> = members
            .iter()
            .map(|(n, p)| format!("{n} ({})", chant_workspace::read::shown(&d.root, p)))
            .collect();
        text.push_str(&format!(
            "Tools that take a path want a member's directory: {}.",
            dirs.join(", ")
        ));
    }
    Served {
        loaded: loaded.into_iter().map(|(l, _)| l).collect(),
        members,
        instructions: text,
    }
}
