//! The trust policy, read at the base revision (`--base`, else `origin/HEAD`, `main`, then
//! `master`; never `HEAD` and never the working tree), so a change cannot vouch for itself:
//! the signers file (`.chant/allowed_signers`) and `.chant/trust.json` (`roles`, `adopted`).
//! A record's provenance is judged against it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::{Result, WsError};
use crate::tree::{self, Tree};

pub const SIGNERS: &str = ".chant/allowed_signers";
pub const TRUST: &str = ".chant/trust.json";

/// The policy at base.
#[derive(Debug, Default)]
pub struct Trust {
    /// The git work tree's top, when in one.
    pub top: Option<PathBuf>,
    pub base: Option<String>,
    pub base_from: Option<String>,
    /// A signers file exists at base.
    pub active: bool,
    /// The signers file's path from the workspace root.
    pub signers_path: String,
    pub signers: Option<Vec<u8>>,
    pub problems: Vec<String>,
    /// Principals the `agent` role lists, compared form.
    pub agents: HashSet<String>,
    /// Every role grant: role, compared principal.
    pub roles: Vec<(String, String)>,
    /// Commits up to which history is adopted.
    pub adopted: Vec<String>,
    /// The workspace declaration at base beside the trust files (`chant.workspace.json` or
    /// `.jsonc` at the workspace root): its path and bytes, when the base holds one.
    pub base_declaration: Option<(PathBuf, Vec<u8>)>,
    /// The signers file as ssh-keygen reads it, written when first needed.
    signers_file: std::sync::OnceLock<Option<tempfile::NamedTempFile>>,
}

/// The base revision: `given`, else the first of `origin/HEAD`, `main`, `master` that names a
/// commit; with the name it was found by.
pub fn base_of(top: &Path, given: Option<&str>) -> Result<Option<(String, String)>> {
    if let Some(g) = given {
        return match tree::resolve(top, g) {
            Some(c) => Ok(Some((c, "flag".to_owned()))),
            None => Err(WsError::new(
                "revision-unknown",
                format!("--base {g} names no commit; give the target branch, such as origin/main"),
            )),
        };
    }
    // One process for the three candidates: a symbolic origin/HEAD shows its target's commit.
    let out = tree::git_out(
        top,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname) %(objecttype)",
            "refs/remotes/origin/HEAD",
            "refs/heads/main",
            "refs/heads/master",
        ],
    )
    .unwrap_or_default();
    let text = String::from_utf8_lossy(&out);
    let found = |r: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(r)?.strip_prefix(' ')?;
            let (id, kind) = rest.split_once(' ')?;
            Some((id.to_owned(), kind.to_owned()))
        })
    };
    for (name, r) in [
        ("origin/HEAD", "refs/remotes/origin/HEAD"),
        ("main", "refs/heads/main"),
        ("master", "refs/heads/master"),
    ] {
        if let Some((c, kind)) = found(r) {
            // The commit the ref names: as listed, or a tag object peeled.
            let commit = if kind == "commit" {
                Some(c)
            } else {
                tree::resolve(top, &c)
            };
            if let Some(c) = commit {
                return Ok(Some((c, name.to_owned())));
            }
        }
    }
    Ok(None)
}

impl Trust {
    /// Reads the policy for the workspace at `root` from the base revision.
    pub fn read(root: &Path, given_base: Option<&str>) -> Result<Trust> {
        let mut t = Trust {
            signers_path: SIGNERS.to_owned(),
            ..Trust::default()
        };
        let Some(top) = tree::toplevel(root) else {
            return Ok(t);
        };
        t.top = Some(top.clone());
        let Some((base, from)) = base_of(&top, given_base)? else {
            return Ok(t);
        };
        let at = Tree::Rev {
            top: top.clone(),
            commit: base.clone(),
        };
        t.base = Some(base);
        t.base_from = Some(from);
        // One read at base for the policy and the declaration beside it (its quorum).
        let declared = [
            root.join(crate::declaration::FILE),
            root.join(crate::declaration::FILE_JSONC),
        ];
        let mut four = at
            .read_many(&[
                root.join(TRUST),
                root.join(SIGNERS),
                declared[0].clone(),
                declared[1].clone(),
            ])
            .into_iter();
        let (trust_bytes, default_signers) = (four.next().flatten(), four.next().flatten());
        t.base_declaration = match (four.next().flatten(), four.next().flatten()) {
            (Some(b), None) => Some((declared[0].clone(), b)),
            (None, Some(b)) => Some((declared[1].clone(), b)),
            _ => None,
        };
        if let Some(bytes) = trust_bytes {
            match crate::json::parse(&String::from_utf8_lossy(&bytes), false) {
                Ok(Value::Object(m)) => {
                    if let Some(s) = m.get("signers").and_then(Value::as_str) {
                        if tree::pin_path_ok(s) {
                            t.signers_path = s.to_owned();
                        } else {
                            t.problems.push(format!("{TRUST} at base names the signers file {s:?}, which is not a workspace path; the default {SIGNERS} is read"));
                        }
                    }
                    if let Some(Value::Object(roles)) = m.get("roles") {
                        for (role, who) in roles {
                            for p in who
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(Value::as_str)
                            {
                                let p = crate::principal::principal(p);
                                if role == "agent" {
                                    t.agents.insert(p.clone());
                                }
                                t.roles.push((role.clone(), p));
                            }
                        }
                    }
                    for a in m
                        .get("adopted")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(to) = a.get("to").and_then(Value::as_str)
                            && let Some(c) = tree::resolve(&top, to)
                        {
                            t.adopted.push(c);
                        }
                    }
                }
                Ok(_) => t.problems.push(format!(
                    "{TRUST} at base is not a JSON object; no role is granted"
                )),
                Err(e) => t.problems.push(format!(
                    "{TRUST} at base cannot be read: {e}; no role is granted"
                )),
            }
        }
        let signers = if t.signers_path == SIGNERS {
            default_signers
        } else {
            at.read(&root.join(&t.signers_path))
        };
        if let Some(s) = signers {
            t.active = true;
            t.signers = Some(s);
        }
        Ok(t)
    }

    /// The first role a principal holds among `classes`, in that order.
    pub fn class_of(&self, principal: &str, classes: &[&str]) -> Option<String> {
        let p = crate::principal::principal(principal);
        classes
            .iter()
            .find(|c| self.roles.iter().any(|(r, q)| r == *c && *q == p))
            .map(|c| (*c).to_owned())
    }

    fn short(&self) -> String {
        self.base
            .as_deref()
            .map_or("(none)".into(), |b| b[..8.min(b.len())].to_owned())
    }

    /// The `trust` block of a records document.
    pub fn block(&self) -> Value {
        json!({
            "base": self.base,
            "baseFrom": self.base_from,
            "active": self.active,
            "signersPath": self.signers_path,
            "problems": self.problems,
        })
    }

    /// A record's provenance: `attested`, `attested-unverifiable-here`, `adopted` or
    /// `unattested`, by the commit that last changed `file`.
    pub fn provenance(&self, file: &Path, dirty: Option<&HashSet<PathBuf>>) -> Value {
        let level = |level: &str, commit: Option<&str>, reason: String| json!({"level": level, "commit": commit, "reason": reason});
        if !self.active {
            return match &self.base {
                None => level(
                    "unattested",
                    None,
                    "no base revision (origin/HEAD, main or master) to read a signers file from; attestation is off".into(),
                ),
                Some(_) => level(
                    "unattested",
                    None,
                    format!("no signers file ({}) at base {}; attestation is off", self.signers_path, self.short()),
                ),
            };
        }
        let Some(top) = &self.top else {
            return level("unattested", None, "not in a git repository".into());
        };
        if dirty.is_some_and(|d| d.contains(file)) {
            return level(
                "unattested",
                None,
                "the file has uncommitted changes".into(),
            );
        }
        let Some(rel) = file.strip_prefix(top).ok().and_then(Path::to_str) else {
            return level(
                "unattested",
                None,
                "the file is outside the repository".into(),
            );
        };
        // The signers at base, written once for every record the read judges.
        let signers = self.signers_file.get_or_init(|| {
            let f = tempfile::NamedTempFile::new().ok()?;
            std::fs::write(f.path(), self.signers.as_deref().unwrap_or_default()).ok()?;
            Some(f)
        });
        let Some(signers) = signers else {
            return level(
                "unattested",
                None,
                "cannot write the signers file for ssh-keygen".into(),
            );
        };
        let allowed = format!("gpg.ssh.allowedSignersFile={}", signers.path().display());
        let out = tree::git(top)
            .args([
                "-c",
                "gpg.format=ssh",
                "-c",
                "gpg.ssh.program=ssh-keygen",
                "-c",
                &allowed,
            ])
            .args(["log", "-1", "--format=%H%x00%G?%x00%GS", "--", rel])
            .output();
        let text = out
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return level("unattested", None, "the file is not committed".into());
        };
        let mut parts = text.trim_end().split('\0');
        let commit = parts.next().unwrap_or("").to_owned();
        let status = parts.next().unwrap_or("N");
        let signer = parts.next().unwrap_or("");
        match status {
            "G" => level(
                "attested",
                Some(&commit),
                format!(
                    "signed by {signer}, a signer listed at base {}",
                    self.short()
                ),
            ),
            "E" | "X" | "Y" => level(
                "attested-unverifiable-here",
                Some(&commit),
                "the commit is signed, and this machine cannot check the signature".into(),
            ),
            _ => {
                let adopted = self.adopted.iter().any(|to| {
                    tree::git_out(top, &["merge-base", "--is-ancestor", &commit, to]).is_some()
                });
                if adopted {
                    level(
                        "adopted",
                        Some(&commit),
                        format!("the commit falls in a range {TRUST} at base adopts"),
                    )
                } else {
                    level(
                        "unattested",
                        Some(&commit),
                        "the commit that last changed it carries no signature a signer at base made".into(),
                    )
                }
            }
        }
    }
}

/// Paths (absolute) the working tree holds modified or new against HEAD, in the repository
/// holding `root`.
pub fn dirty(root: &Path) -> Option<HashSet<PathBuf>> {
    let top = tree::toplevel(root)?;
    let out = tree::git_out(
        &top,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    )?;
    let mut set = HashSet::new();
    for entry in out.split(|b| *b == 0).filter(|e| e.len() > 3) {
        let path = String::from_utf8_lossy(&entry[3..]).into_owned();
        set.insert(top.join(path));
    }
    Some(set)
}
