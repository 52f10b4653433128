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

pub(crate) fn serve(chant: &Chant, d: &Declaration) -> Served {
    let mut loaded: Vec<(String, String)> = Vec::new();
    let mut left_out: Vec<String> = Vec::new();
    let mut members = Vec::new();
    for m in d.members.iter().filter(|m| m.kind == "chant") {
        let dir = d.root.join(&m.dir);
        let Ok(dir) = std::fs::canonicalize(&dir) else {
            left_out.push(format!("member {} (no directory at {})", m.name, m.dir));
            continue;
        };
        if !dir.starts_with(&d.root) {
            left_out.push(format!(
                "member {} ({} leads outside the workspace)",
                m.name, m.dir
            ));
            continue;
        }
        if chant_core::project::config_file(&dir).is_none() {
            left_out.push(format!(
                "member {} ({} holds no chant.config.ts)",
                m.name, m.dir
            ));
            continue;
        }
        let project = match chant_core::project::locate(
            &dir,
            chant.evaluator.as_ref(),
            &Budget::default(),
            Some(&dir),
        ) {
            Ok(p) => p,
            Err(e) => {
                left_out.push(format!("member {} (its config does not load: {e})", m.name));
                continue;
            }
        };
        let names = match project.lexicon_names() {
            Ok(n) => n,
            Err(e) => {
                left_out.push(format!("member {} ({e})", m.name));
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
