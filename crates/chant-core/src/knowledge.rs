//! The project's authored OKF knowledge bundle (the input side of OKF, spec §13.3): where it
//! lives, its concepts, and which of them bind to discovered entities.
//!
//! Neither the seed nor the references fix the bundle's location or the binding rule, so both
//! live here alone: the bundle is the `knowledge/` directory beside the project's config (or
//! in the named project directory) holding an `index.md`; every other `*.md` file under it is a
//! concept, described by its front matter (`type`, `title`, `name`); a concept binds when its
//! `name` equals a discovered entity's name.

use std::path::Path;

use crate::confine::{Visit, WalkLimits, Walls};

use serde_json::{Map, Value as Json, json};

/// The bundle directory, relative to the project.
pub const DIR: &str = "knowledge";

/// Concept files larger than this are skipped (a bundle is prose, not data).
const MAX_FILE: u64 = 1 << 20;

/// One concept file.
#[derive(Clone, Debug, PartialEq)]
pub struct Concept {
    /// Path relative to the bundle directory, `/`-separated.
    pub path: String,
    pub kind: Option<String>,
    pub title: Option<String>,
    pub name: Option<String>,
}

/// An authored bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// The bundle directory relative to the project (`knowledge`).
    pub dir: String,
    /// `index.md`, as written.
    pub index: String,
    /// Concepts sorted by path.
    pub concepts: Vec<Concept>,
}

/// The bundle of the project rooted at `project_dir`, if it has one.
/// Only regular files inside the project directory are read (symlinks resolved first).
pub fn load(project_dir: &Path) -> Option<Bundle> {
    let walls = Walls::new(project_dir).ok()?;
    let root = walls.resolve("knowledge", DIR).ok()?;
    let index_file = walls
        .resolve("knowledge", &format!("{DIR}/index.md"))
        .ok()?;
    let small_file =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_FILE);
    if !small_file(&index_file) {
        return None;
    }
    let index = crate::confine::read_text(&index_file, MAX_FILE).ok()?;
    let files = walls
        .walk(&root, WalkLimits::default(), &mut |e| {
            let take = !e.name.starts_with('.')
                && (e.is_dir || (e.name.ends_with(".md") && small_file(e.path)));
            if take { Visit::Take } else { Visit::Skip }
        })
        .ok()?;
    let mut concepts: Vec<Concept> = files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(&root).ok()?;
            let path = crate::confine::slash_path(rel);
            if path == "index.md" {
                return None;
            }
            // Each concept resolved again (it may have been swapped since the walk) and read
            // without blocking.
            let real = walls.resolve("knowledge", &f.to_string_lossy()).ok()?;
            let text = crate::confine::read_text(&real, MAX_FILE).ok()?;
            let fm = front_matter(&text);
            let get = |k: &str| fm.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
            Some(Concept {
                path,
                kind: get("type"),
                title: get("title"),
                name: get("name"),
            })
        })
        .collect();
    concepts.sort_by(|a, b| a.path.cmp(&b.path));
    Some(Bundle {
        dir: DIR.to_owned(),
        index,
        concepts,
    })
}

/// `key: value` pairs between a leading `---` line and the next one; quoted values unquoted.
fn front_matter(text: &str) -> Vec<(String, String)> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for line in lines {
        if line.trim_end() == "---" {
            return out;
        }
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim();
            let unquoted = if v.len() >= 2
                && ((v.starts_with('\'') && v.ends_with('\''))
                    || (v.starts_with('"') && v.ends_with('"')))
            {
                let inner = &v[1..v.len() - 1];
                if v.starts_with('\'') {
                    inner.replace("''", "'")
                } else {
                    serde_json::from_str::<String>(v).unwrap_or_else(|_| inner.to_owned())
                }
            } else {
                v.to_owned()
            };
            out.push((k.trim().to_owned(), unquoted));
        }
    }
    // No closing line: not front matter.
    Vec::new()
}

fn concept_json(c: &Concept, binds: bool) -> Json {
    let mut m = Map::new();
    m.insert("path".into(), json!(c.path));
    m.insert("type".into(), json!(c.kind));
    m.insert("title".into(), json!(c.title));
    if binds {
        m.insert("binds".into(), json!(c.name));
    }
    Json::Object(m)
}

fn binds(c: &Concept, entities: &[&str]) -> bool {
    c.name.as_deref().is_some_and(|n| entities.contains(&n))
}

/// `chant://knowledge`: `{dir, index, concepts: [{path, type, title, binds?}]}`, or
/// `{"dir":null,"index":null,"concepts":[]}` without a bundle.
pub fn resource(bundle: Option<&Bundle>, entities: &[&str]) -> Json {
    match bundle {
        None => json!({"dir": null, "index": null, "concepts": []}),
        Some(b) => json!({
            "dir": b.dir,
            "index": b.index,
            "concepts": b.concepts.iter().map(|c| concept_json(c, binds(c, entities))).collect::<Vec<_>>(),
        }),
    }
}

/// explain's `knowledge` key: `{dir, concepts}` with only the bound concepts; `None` (the key
/// is omitted) when nothing binds.
pub fn explain_key(bundle: Option<&Bundle>, entities: &[&str]) -> Option<Json> {
    let b = bundle?;
    let bound: Vec<Json> = b
        .concepts
        .iter()
        .filter(|c| binds(c, entities))
        .map(|c| concept_json(c, true))
        .collect();
    (!bound.is_empty()).then(|| json!({"dir": b.dir, "concepts": bound}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_bundle_is_read_only_from_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let (project, outside) = (dir.path().join("p"), dir.path().join("o"));
        write(&outside, "index.md", "# outside\n");
        write(&outside, "secret.md", "---\nname: secret\n---\n");
        std::fs::create_dir_all(&project).unwrap();
        // The folder itself a link out.
        std::os::unix::fs::symlink(&outside, project.join("knowledge")).unwrap();
        assert_eq!(load(&project), None);
        // index.md a link out, a concept a link out, a FIFO among the concepts.
        std::fs::remove_file(project.join("knowledge")).unwrap();
        std::fs::create_dir_all(project.join("knowledge")).unwrap();
        std::os::unix::fs::symlink(outside.join("index.md"), project.join("knowledge/index.md"))
            .unwrap();
        assert_eq!(load(&project), None);
        std::fs::remove_file(project.join("knowledge/index.md")).unwrap();
        write(&project, "knowledge/index.md", "# mine\n");
        std::os::unix::fs::symlink(outside.join("secret.md"), project.join("knowledge/s.md"))
            .unwrap();
        let fifo = project.join("knowledge/f.md");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let b = load(&project).unwrap();
        assert_eq!(b.index, "# mine\n");
        assert!(b.concepts.is_empty(), "{:?}", b.concepts);
    }

    #[test]
    fn no_bundle_is_the_empty_shape_and_no_explain_key() {
        let dir = tempfile::tempdir().unwrap();
        // A knowledge/ folder without index.md is not a bundle.
        write(dir.path(), "knowledge/build.md", "---\nname: build\n---\n");
        let b = load(dir.path());
        assert_eq!(b, None);
        assert_eq!(
            serde_json::to_string(&resource(None, &["build"])).unwrap(),
            r#"{"dir":null,"index":null,"concepts":[]}"#
        );
        assert_eq!(explain_key(None, &["build"]), None);
    }

    #[test]
    fn concepts_bind_by_front_matter_name() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "knowledge/index.md",
            "---\nokf_version: '0.2'\n---\n\n# Team notes\n",
        );
        write(
            dir.path(),
            "knowledge/gitlab/build.md",
            "---\ntype: GitLab::CI::Job\ntitle: 'Build: the ''main'' job'\nname: build\n---\nBuilds it.\n",
        );
        write(
            dir.path(),
            "knowledge/gitlab/old.md",
            "---\ntype: GitLab::CI::Job\ntitle: \"Old\"\nname: gone\n---\n",
        );
        write(dir.path(), "knowledge/notes.md", "No front matter here.\n");
        write(
            dir.path(),
            "knowledge/.hidden.md",
            "---\nname: build\n---\n",
        );
        write(dir.path(), "knowledge/data.json", "{}");
        let b = load(dir.path()).unwrap();
        assert_eq!(b.index, "---\nokf_version: '0.2'\n---\n\n# Team notes\n");
        let entities = ["build", "test"];
        assert_eq!(
            resource(Some(&b), &entities),
            json!({"dir": "knowledge", "index": b.index, "concepts": [
                {"path": "gitlab/build.md", "type": "GitLab::CI::Job", "title": "Build: the 'main' job", "binds": "build"},
                {"path": "gitlab/old.md", "type": "GitLab::CI::Job", "title": "Old"},
                {"path": "notes.md", "type": null, "title": null},
            ]})
        );
        assert_eq!(
            explain_key(Some(&b), &entities),
            Some(json!({"dir": "knowledge", "concepts": [
                {"path": "gitlab/build.md", "type": "GitLab::CI::Job", "title": "Build: the 'main' job", "binds": "build"}
            ]}))
        );
        assert_eq!(
            explain_key(Some(&b), &["test"]),
            None,
            "nothing binds: no key"
        );
    }

    #[test]
    fn front_matter_needs_both_fences() {
        assert_eq!(front_matter("---\nname: a\n"), vec![]);
        assert_eq!(
            front_matter("---\nname: a\nb: \"x\\\"y\"\n---\nbody: no\n"),
            vec![("name".into(), "a".into()), ("b".into(), "x\"y".into())]
        );
    }
}
