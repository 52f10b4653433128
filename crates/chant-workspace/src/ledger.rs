//! Where a project's entries go on the `chant/lifecycle` branch: a project inside a workspace
//! member writes under `_members/<member>/`, and a member of a nested workspace under its
//! outer member's directory first (`_members/platform/_members/core/`). The root member
//! (`dir: "."`), a directory no member owns and an example group's directory use the top, the
//! layout of a project outside any workspace.
//!
//! The owner is read from the declaration at the base revision (`origin/HEAD`, `main`, then
//! `master`), as the trust policy is: an agent editing the working tree's declaration cannot
//! make one member read another's approvals. Only a repository whose base holds no
//! declaration (a workspace being introduced) is placed by the working tree's. An unreadable
//! declaration is an error rather than a guess: a guess would put a member's runs and
//! approvals where another reader looks for someone else's.

use std::path::Path;

use crate::declaration::{self, Declaration};
use crate::error::{Result, WsError};
use crate::tree::Tree;

/// The directory the ledger entries of a project go under.
pub const MEMBERS_DIR: &str = "_members";

/// The members, outermost first, whose ledger directories hold the entries of the project in
/// `dir`; empty for the top. `reader` is this chant's version (a declaration's `minReader`).
pub fn members_of(dir: &Path, reader: &str) -> Result<Vec<String>> {
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| WsError::new("declaration-missing", format!("{}: {e}", dir.display())))?;
    // The base's declarations when the base has one for this directory, else the working tree's.
    if let Some(top) = crate::tree::toplevel(&dir)
        && let Ok(Some((commit, _))) = crate::trust::base_of(&top, None)
    {
        let base = Tree::Rev { top, commit };
        if let Some(decl) = nearest(&dir, &base, reader)? {
            return ledger_in(&decl, &dir, &base, reader);
        }
    }
    match nearest(&dir, &Tree::Work, reader)? {
        Some(decl) => ledger_in(&decl, &dir, &Tree::Work, reader),
        None => Ok(Vec::new()),
    }
}

/// The declaration nearest above `dir` in `tree`, `None` when there is none up to the git root.
fn nearest(dir: &Path, tree: &Tree, reader: &str) -> Result<Option<Declaration>> {
    match declaration::find(dir, tree) {
        Ok(file) => declaration::load(&file, tree, reader).map(Some),
        Err(e) if e.code == "declaration-missing" => Ok(None),
        Err(e) => Err(e),
    }
}

/// The ledger members of `dir` inside `decl`'s workspace: those of the workspace's own root in
/// the workspace above it (when it is nested in one, in the same repository), then its owner.
/// Each turn goes one declaration up, so this ends at the git root.
fn ledger_in(decl: &Declaration, dir: &Path, tree: &Tree, reader: &str) -> Result<Vec<String>> {
    let mut members = Vec::new();
    if !decl.root.join(".git").exists()
        && let Some(parent) = decl.root.parent()
        && let Some(outer) = nearest(parent, tree, reader)?
    {
        members = ledger_in(&outer, &decl.root, tree, reader)?;
    }
    members.extend(owner(decl, dir));
    Ok(members)
}

/// The member of `decl` that owns `dir` (absolute, resolved): the deepest member directory
/// holding it, unless that is the root member, or an example group owns it more deeply.
fn owner(decl: &Declaration, dir: &Path) -> Option<String> {
    let member = decl.member_of(dir)?;
    let member_dir = decl.root.join(&member.dir);
    let in_group = dir.ancestors().take_while(|a| *a != member_dir).any(|a| {
        let Ok(rel) = a.strip_prefix(&decl.root) else {
            return false;
        };
        let rel = rel.to_string_lossy();
        decl.groups.iter().flat_map(|g| &g.glob).any(|pattern| {
            globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .is_ok_and(|g| g.compile_matcher().is_match(rel.as_ref()))
        })
    });
    (!in_group).then(|| member.name.clone())
}

/// The ledger directory of the project in `dir`: `_members/<a>/_members/<b>`, or `""` for the
/// top. An unreadable declaration is an error that says why nothing guesses.
pub fn scope_of(dir: &Path, reader: &str) -> std::result::Result<String, String> {
    members_of(dir, reader)
        .map(|members| {
            members
                .iter()
                .map(|m| format!("{MEMBERS_DIR}/{m}"))
                .collect::<Vec<_>>()
                .join("/")
        })
        .map_err(|e| {
            format!(
                "cannot place this project's lifecycle ledger: {}. A project inside a workspace writes under _members/<member>/ on chant/lifecycle, and chant does not guess the member. Fix the declaration and retry.",
                e.message
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The reference's own cases: a member and its subdirectories, a nested workspace's root
    /// and its member, the root member, an unowned directory and an example group.
    #[test]
    fn each_directory_writes_under_its_members() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        write(
            root,
            "chant.workspace.json",
            r#"{"name": "ws", "schema": 1, "members": [
                 {"name": "root", "dir": ".", "kind": "chant"},
                 {"name": "api", "dir": "services/api", "kind": "chant"},
                 {"name": "platform", "dir": "platform", "kind": "workspace"},
                 {"name": "demos", "kind": "examples", "glob": "services/api/examples/*"}]}"#,
        );
        write(
            root,
            "platform/chant.workspace.json",
            r#"{"name": "platform", "schema": 1, "members": [{"name": "core", "dir": "core", "kind": "chant"}]}"#,
        );
        for d in [
            "services/api/src",
            "platform/core/x",
            "docs",
            "services/api/examples/one",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let of = |d: &str| members_of(&root.join(d), "9.9.9").unwrap();
        assert_eq!(of("services/api"), ["api"]);
        assert_eq!(of("services/api/src"), ["api"]);
        assert_eq!(of("platform"), ["platform"]);
        assert_eq!(of("platform/core/x"), ["platform", "core"]);
        assert!(of(".").is_empty());
        assert!(of("docs").is_empty());
        assert!(of("services/api/examples/one").is_empty());
        assert_eq!(
            scope_of(&root.join("platform/core"), "9.9.9").unwrap(),
            "_members/platform/_members/core"
        );
        assert_eq!(scope_of(root, "9.9.9").unwrap(), "");
    }

    /// A nested workspace that is its own repository starts a ledger of its own.
    #[test]
    fn a_nested_repository_is_its_own_top() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        write(
            root,
            "chant.workspace.json",
            r#"{"name": "ws", "schema": 1, "members": [{"name": "vendored", "dir": "vendored", "kind": "workspace"}]}"#,
        );
        write(
            root,
            "vendored/chant.workspace.json",
            r#"{"name": "v", "schema": 1, "members": [{"name": "core", "dir": "core", "kind": "chant"}]}"#,
        );
        std::fs::create_dir_all(root.join("vendored/.git")).unwrap();
        std::fs::create_dir_all(root.join("vendored/core")).unwrap();
        assert_eq!(
            members_of(&root.join("vendored/core"), "9.9.9").unwrap(),
            ["core"]
        );
    }

    /// No guess: a declaration that cannot be read (here, in the workspace above) stops it.
    #[test]
    fn an_unreadable_declaration_is_an_error_not_the_top() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        write(root, "chant.workspace.json", "{not json");
        std::fs::create_dir_all(root.join("api")).unwrap();
        let e = scope_of(&root.join("api"), "9.9.9").unwrap_err();
        assert!(
            e.starts_with("cannot place this project's lifecycle ledger: "),
            "{e}"
        );
        assert!(e.ends_with("chant does not guess the member. Fix the declaration and retry."));
        write(
            root,
            "chant.workspace.json",
            r#"{"name": "ws", "schema": 1, "members": []}"#,
        );
        write(
            root,
            "inner/chant.workspace.json",
            r#"{"name": "in", "schema": 1, "members": [], "bogus": 1}"#,
        );
        assert!(scope_of(&root.join("inner"), "9.9.9").is_err());
    }
}
