//! `chant init`'s project: the files a new project starts with (config, TypeScript and
//! package settings, `.gitignore`, and a lexicon's init template set under `src/`), and
//! writing them into a directory without replacing anything already there.

use std::path::Path;

use crate::lexicon::{Generated, Registry};

/// Why a project cannot be planned or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InitError {
    #[error("Lexicon \"{name}\" is not available in this chant (available: {})", .available.join(", "))]
    UnknownLexicon {
        name: String,
        available: Vec<String>,
    },
    #[error("Lexicon {lexicon} has no init template \"{name}\" (templates: {})", .available.join(", "))]
    UnknownTemplate {
        lexicon: String,
        name: String,
        available: Vec<String>,
    },
    #[error("No lexicon in this chant has init templates; name one with --lexicon")]
    NoDefault,
    #[error(
        "{dir} is not empty and holds no chant project; use --force to add a project to it (nothing there is replaced)"
    )]
    NotEmpty { dir: String },
    #[error("{0}")]
    Io(String),
}

/// A project to write: its lexicon and files, relative to the project directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub lexicon: &'static str,
    pub template: String,
    pub files: Vec<Generated>,
}

/// The files of a new project of `lexicon` (else the first registered lexicon with a
/// `default` init template set) from its `template` set (default `default`). `version` is
/// the chant version its `package.json` asks for.
pub fn plan(
    registry: &Registry,
    lexicon: Option<&str>,
    template: Option<&str>,
    version: &str,
) -> Result<Plan, InitError> {
    let lex = match lexicon {
        Some(name) => registry
            .get(name)
            .ok_or_else(|| InitError::UnknownLexicon {
                name: name.to_owned(),
                available: registry.iter().map(|l| l.name().to_owned()).collect(),
            })?,
        None => registry
            .iter()
            .find(|l| l.templates().iter().any(|t| t.name == "default"))
            .ok_or(InitError::NoDefault)?,
    };
    let name = lex.name();
    let wanted = template.unwrap_or("default");
    let sets = lex.templates();
    let set = sets.iter().find(|s| s.name == wanted);
    // A lexicon without templates still makes a project (config and settings, no sources);
    // a template named that it does not have is an error.
    if set.is_none() && (template.is_some() || !sets.is_empty()) {
        return Err(InitError::UnknownTemplate {
            lexicon: name.to_owned(),
            name: wanted.to_owned(),
            available: sets.iter().map(|s| s.name.clone()).collect(),
        });
    }
    let file = |path: &str, content: String| Generated {
        path: path.to_owned(),
        content,
    };
    let mut files = vec![
        file("chant.config.ts", config_ts(name)),
        file("tsconfig.json", TSCONFIG.to_owned()),
        file("package.json", package_json(name, version)),
        file(".gitignore", GITIGNORE.to_owned()),
    ];
    for f in set.map(|s| s.files.as_slice()).unwrap_or_default() {
        files.push(file(&format!("src/{}", f.filename), f.content.clone()));
    }
    Ok(Plan {
        lexicon: name,
        template: wanted.to_owned(),
        files,
    })
}

fn config_ts(lexicon: &str) -> String {
    format!(
        "import type {{ ChantConfig }} from \"@intentius/chant\";\n\nexport default {{\n  lexicons: [\"{lexicon}\"],\n}} satisfies ChantConfig;\n"
    )
}

const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "esModuleInterop": true,
    "skipLibCheck": true,
    "declaration": true,
    "outDir": "./dist",
    "rootDir": "./src"
  },
  "include": [
    "src"
  ],
  "exclude": [
    "node_modules",
    "dist"
  ]
}
"#;

/// The reference's list, and `.mcp.json`: it names this machine's chant binary by path.
const GITIGNORE: &str =
    "dist/\nnode_modules/\n.chant/types/\n.chant/meta/\n.chant/rules/\nskills/\n.mcp.json\n";

/// The reference's `package.json`: editors find the types through it; chant needs no Node.
fn package_json(lexicon: &str, version: &str) -> String {
    let mut deps = serde_json::Map::new();
    deps.insert("@intentius/chant".into(), format!("^{version}").into());
    deps.insert(
        format!("@intentius/chant-lexicon-{lexicon}"),
        format!("^{version}").into(),
    );
    let pkg = serde_json::json!({
        "name": "chant-project",
        "version": version,
        "type": "module",
        "scripts": {
            "build": format!("chant build src --lexicon {lexicon}"),
            "lint": "chant lint src",
        },
        "dependencies": deps,
        "devDependencies": {"typescript": "^5.0.0"},
    });
    let mut text = serde_json::to_string_pretty(&pkg).expect("JSON serializes");
    text.push('\n');
    text
}

/// Which of `files` a write into `dir` would create and which exist already (kept), in order.
/// A directory that is not there yet creates them all.
pub fn sort_out(dir: &Path, files: &[Generated]) -> Result<(Vec<String>, Vec<String>), InitError> {
    let (mut create, mut keep) = (Vec::new(), Vec::new());
    if !dir.exists() {
        return Ok((files.iter().map(|f| f.path.clone()).collect(), keep));
    }
    let walls = crate::confine::Walls::new(dir).map_err(|e| InitError::Io(e.to_string()))?;
    for f in files {
        let target = walls
            .resolve("a project file", &f.path)
            .map_err(|e| InitError::Io(e.to_string()))?;
        if std::fs::symlink_metadata(&target).is_ok() {
            keep.push(f.path.clone());
        } else {
            create.push(f.path.clone());
        }
    }
    Ok((create, keep))
}

/// Whether `dir` may take a new project: it is missing, empty but for hidden entries, holds a
/// chant project already (its files are then kept), or `force` says so.
pub fn check_dir(dir: &Path, force: bool) -> Result<(), InitError> {
    if dir.exists() && !dir.is_dir() {
        return Err(InitError::Io(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut visible = false;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("chant.config.") {
            return Ok(());
        }
        visible |= !name.starts_with('.');
    }
    if visible && !force {
        return Err(InitError::NotEmpty {
            dir: dir.display().to_string(),
        });
    }
    Ok(())
}

/// Writes the files of `plan` that `dir` does not have (atomically, each inside `dir`, which
/// is created); returns those written. Nothing there is replaced, and every path is checked
/// before the first is written: a path that would leave `dir` writes nothing.
pub fn write(dir: &Path, files: &[Generated]) -> Result<Vec<String>, InitError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| InitError::Io(format!("Cannot create {}: {e}", dir.display())))?;
    let walls = crate::confine::Walls::new(dir).map_err(|e| InitError::Io(e.to_string()))?;
    let mut todo = Vec::new();
    for f in files {
        let target = walls
            .resolve("a project file", &f.path)
            .map_err(|e| InitError::Io(e.to_string()))?;
        if std::fs::symlink_metadata(&target).is_err() {
            todo.push((target, f));
        }
    }
    let mut written = Vec::new();
    for (target, f) in todo {
        fswrite::write_atomic(&target, f.content.as_bytes())
            .map_err(|e| InitError::Io(format!("Cannot write {}: {e}", target.display())))?;
        written.push(f.path.clone());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::{Lexicon, TemplateFile, TemplateSet};

    struct WithTemplates(Vec<TemplateSet>);
    impl Lexicon for WithTemplates {
        fn name(&self) -> &'static str {
            "t"
        }
        fn version(&self) -> &'static str {
            "0"
        }
        fn templates(&self) -> &[TemplateSet] {
            &self.0
        }
    }
    struct Bare;
    impl Lexicon for Bare {
        fn name(&self) -> &'static str {
            "bare"
        }
        fn version(&self) -> &'static str {
            "0"
        }
    }

    fn registry() -> Registry {
        let set = |name: &str, files: &[&str]| TemplateSet {
            name: name.into(),
            files: files
                .iter()
                .map(|f| TemplateFile {
                    filename: (*f).into(),
                    content: format!("// {f}\n"),
                })
                .collect(),
        };
        Registry::new(vec![
            Box::new(Bare),
            Box::new(WithTemplates(vec![
                set("default", &["a.ts", "b.ts"]),
                set("small", &["c.ts"]),
            ])),
        ])
    }

    fn paths(p: &Plan) -> Vec<&str> {
        p.files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn a_plan_is_the_settings_and_the_template_set() {
        let r = registry();
        let p = plan(&r, None, None, "1.2.3").unwrap();
        assert_eq!((p.lexicon, p.template.as_str()), ("t", "default"));
        assert_eq!(
            paths(&p),
            [
                "chant.config.ts",
                "tsconfig.json",
                "package.json",
                ".gitignore",
                "src/a.ts",
                "src/b.ts"
            ]
        );
        assert!(p.files[0].content.contains("lexicons: [\"t\"]"));
        assert!(p.files[3].content.ends_with("skills/\n.mcp.json\n"));
        let pkg: serde_json::Value = serde_json::from_str(&p.files[2].content).unwrap();
        assert_eq!(pkg["dependencies"]["@intentius/chant-lexicon-t"], "^1.2.3");
        let small = plan(&r, Some("t"), Some("small"), "1").unwrap();
        assert_eq!(paths(&small)[4..], ["src/c.ts"]);
        // A lexicon without templates makes a project without sources.
        let bare = plan(&r, Some("bare"), None, "1").unwrap();
        assert_eq!(bare.files.len(), 4);
        assert_eq!(
            plan(&r, Some("t"), Some("huge"), "1")
                .unwrap_err()
                .to_string(),
            "Lexicon t has no init template \"huge\" (templates: default, small)"
        );
        assert_eq!(
            plan(&r, Some("bare"), Some("x"), "1")
                .unwrap_err()
                .to_string(),
            "Lexicon bare has no init template \"x\" (templates: )"
        );
        assert_eq!(
            plan(&r, Some("azure"), None, "1").unwrap_err().to_string(),
            "Lexicon \"azure\" is not available in this chant (available: bare, t)"
        );
        assert_eq!(
            plan(&Registry::new(vec![Box::new(Bare)]), None, None, "1").unwrap_err(),
            InitError::NoDefault
        );
    }

    #[test]
    fn writing_keeps_what_is_there_and_stays_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        let p = plan(&registry(), None, None, "1").unwrap();
        assert_eq!(check_dir(&root, false), Ok(()));
        let (create, keep) = sort_out(&root, &p.files).unwrap();
        assert_eq!((create.len(), keep.len()), (6, 0));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.ts"), "mine").unwrap();
        std::fs::write(root.join(".hidden"), "").unwrap();
        assert!(
            matches!(check_dir(&root, false), Err(InitError::NotEmpty { .. })),
            "src/ is there"
        );
        assert_eq!(check_dir(&root, true), Ok(()));
        let (_, keep) = sort_out(&root, &p.files).unwrap();
        assert_eq!(keep, ["src/a.ts"]);
        let written = write(&root, &p.files).unwrap();
        assert_eq!(written.len(), 5);
        assert_eq!(
            std::fs::read_to_string(root.join("src/a.ts")).unwrap(),
            "mine"
        );
        // Once a project is there, a second init may run without --force and writes nothing.
        assert_eq!(check_dir(&root, false), Ok(()));
        assert_eq!(write(&root, &p.files).unwrap(), Vec::<String>::new());
        // A link that leads out of the directory is not written through.
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let other = dir.path().join("q");
        std::fs::create_dir(&other).unwrap();
        std::os::unix::fs::symlink(&out, other.join("src")).unwrap();
        let err = write(&other, &p.files).unwrap_err().to_string();
        assert!(err.contains("must be inside the project"), "{err}");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        // A dangling link is not written through either, and nothing is written before it.
        let third = dir.path().join("r");
        std::fs::create_dir(&third).unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere"), third.join("tsconfig.json"))
            .unwrap();
        let err = write(&third, &p.files).unwrap_err().to_string();
        assert!(err.contains("tsconfig.json"), "{err}");
        assert!(!dir.path().join("nowhere").exists());
        assert!(!third.join("chant.config.ts").exists());
    }
}
