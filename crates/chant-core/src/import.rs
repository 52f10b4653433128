//! Importing existing templates into chant TypeScript: read the file (JSON, or YAML with
//! anchors, aliases and merge keys), find the lexicon whose [`Importer`] recognises it, let it
//! generate the files, and put them in the output directory (atomically; existing files are
//! kept unless forced).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

pub use crate::lexicon::{Generated, Imported};
use crate::lexicon::{Importer, Registry};

/// Templates larger than this are refused.
pub const MAX_TEMPLATE_BYTES: u64 = 64 << 20;

/// Reads a template: JSON when it parses as JSON, else YAML.
pub fn read_template(path: &Path) -> Result<Json, String> {
    let meta = std::fs::metadata(path)
        .map_err(|_| format!("Template file not found: {}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("Template is not a file: {}", path.display()));
    }
    if meta.len() > MAX_TEMPLATE_BYTES {
        return Err(format!(
            "Template {} is {} bytes, over the {MAX_TEMPLATE_BYTES}-byte limit",
            path.display(),
            meta.len()
        ));
    }
    let text = crate::confine::read_text(path, MAX_TEMPLATE_BYTES).map_err(|e| {
        if e.ends_with("not UTF-8 text") {
            format!("Template {} is not UTF-8 text", path.display())
        } else {
            format!("Cannot read {e}")
        }
    })?;
    if let Ok(v) = serde_json::from_str::<Json>(&text) {
        return Ok(v);
    }
    chant_yaml::read::parse(&text).map_err(|e| {
        format!(
            "Template {} is neither valid JSON nor valid YAML: {e}",
            path.display()
        )
    })
}

/// Imports `value` (read from `source`) with the first of `lexicons` whose importer detects it.
pub fn import(
    registry: &Registry,
    value: &Json,
    source: &Path,
    lexicons: &[String],
) -> Result<Imported, String> {
    let importers: Vec<(&str, &dyn Importer)> = lexicons
        .iter()
        .filter_map(|name| registry.get(name))
        .filter_map(|l| Some((l.name(), l.importer()?)))
        .collect();
    if let Some((_, importer)) = importers.iter().find(|(_, i)| i.detect(value)) {
        return importer
            .import(value)
            .map_err(|e| format!("{}: {e}", source.display()));
    }
    let tried: Vec<String> = lexicons
        .iter()
        .map(|name| match importers.iter().find(|(n, _)| n == name) {
            Some((_, i)) => format!("{name} looks for {}", i.looks_for()),
            None => format!("{name} has no importer"),
        })
        .collect();
    Err(format!(
        "Could not detect template lexicon. No installed lexicon recognizes this template: {} ({})",
        source.display(),
        tried.join("; ")
    ))
}

/// The lexicons that can import, for a project configuring none.
pub fn importers(registry: &Registry) -> Vec<String> {
    registry
        .iter()
        .filter(|l| l.importer().is_some())
        .map(|l| l.name().to_owned())
        .collect()
}

/// What an import of one file did.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub lexicon: &'static str,
    /// Files written, relative to the output directory.
    pub written: Vec<String>,
    /// The importer's warnings, then the writer's.
    pub warnings: Vec<String>,
}

/// Reads `source`, imports it with the first of `lexicons` (every importer when empty) that
/// recognises it, and writes the files under `output` ([`write`] with `force`).
pub fn import_file(
    registry: &Registry,
    source: &Path,
    output: &Path,
    lexicons: &[String],
    force: bool,
) -> Result<Report, String> {
    let value = read_template(source)?;
    let all = importers(registry);
    let lexicons = if lexicons.is_empty() { &all } else { lexicons };
    let imported = import(registry, &value, source, lexicons)?;
    let (written, write_warnings) = write(output, &imported.files, force)?;
    let mut warnings = imported.warnings;
    warnings.extend(write_warnings);
    Ok(Report {
        lexicon: imported.lexicon,
        written,
        warnings,
    })
}

/// Writes `files` under `dir` (created). Without `force`, files that exist are kept and
/// reported; with it they are replaced. Returns the files written and the warnings.
pub fn write(
    dir: &Path,
    files: &[Generated],
    force: bool,
) -> Result<(Vec<String>, Vec<String>), String> {
    let mut warnings = Vec::new();
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "Output {} is a file, not a directory; name a directory with -o",
            dir.display()
        ));
    }
    if !force && std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
        warnings.push(format!(
            "Output directory {} is not empty. Use --force to overwrite.",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("Cannot create {}: {e}", dir.display()))?;
    // A generated name (from a template's stage or job names) stays inside the output folder.
    let walls = crate::confine::Walls::new(dir).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    for f in files {
        let target: PathBuf = walls
            .resolve("a generated file", &f.path)
            .map_err(|e| e.to_string())?;
        if target.exists() && !force {
            warnings.push(format!("File {} already exists, skipping", f.path));
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("Cannot create {}: {e}", parent.display()))?;
        }
        fswrite::write_atomic(&target, f.content.as_bytes())
            .map_err(|e| format!("Cannot write {}: {e}", target.display()))?;
        written.push(f.path.clone());
    }
    Ok((written, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_read_as_json_or_yaml_with_clear_failures() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("p.json");
        std::fs::write(&json, r#"{"build": {"script": ["make"]}}"#).unwrap();
        let yaml = dir.path().join("p.yml");
        std::fs::write(&yaml, "build:\n  script: [make]\n").unwrap();
        assert_eq!(read_template(&json).unwrap(), read_template(&yaml).unwrap());
        let missing = dir.path().join("nope.yml");
        assert_eq!(
            read_template(&missing).unwrap_err(),
            format!("Template file not found: {}", missing.display())
        );
        let bad = dir.path().join("bad.yml");
        std::fs::write(&bad, "a: [1\n").unwrap();
        assert!(read_template(&bad).unwrap_err().starts_with(&format!(
            "Template {} is neither valid JSON nor valid YAML: ",
            bad.display()
        )));
        let cfn = serde_json::json!({"AWSTemplateFormatVersion": "2010-09-09"});
        assert_eq!(
            import(
                &Registry::default(),
                &cfn,
                Path::new("cfn.json"),
                &["x".into()]
            )
            .unwrap_err(),
            "Could not detect template lexicon. No installed lexicon recognizes this template: cfn.json (x has no importer)"
        );
    }

    #[test]
    fn a_generated_name_cannot_leave_the_output_folder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("infra");
        std::os::unix::fs::symlink(dir.path(), dir.path().join("up")).unwrap();
        for name in ["../escaped.ts", "/tmp/escaped.ts", "a/../../escaped.ts"] {
            let files = vec![Generated {
                path: name.into(),
                content: "x\n".into(),
            }];
            let e = write(&out, &files, true).unwrap_err();
            assert!(e.contains("must be inside the project"), "{name}: {e}");
        }
        std::os::unix::fs::symlink(dir.path(), out.join("up")).unwrap();
        let files = vec![Generated {
            path: "up/escaped.ts".into(),
            content: "x\n".into(),
        }];
        assert!(write(&out, &files, true).is_err());
        assert!(!dir.path().join("escaped.ts").exists());
    }

    #[test]
    fn existing_files_are_kept_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("infra");
        let files = vec![Generated {
            path: "a.ts".into(),
            content: "new\n".into(),
        }];
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("a.ts"), "old\n").unwrap();
        let (written, warnings) = write(&out, &files, false).unwrap();
        assert!(written.is_empty());
        assert_eq!(warnings.len(), 2);
        assert_eq!(warnings[1], "File a.ts already exists, skipping");
        assert_eq!(std::fs::read_to_string(out.join("a.ts")).unwrap(), "old\n");
        let (written, warnings) = write(&out, &files, true).unwrap();
        assert_eq!((written, warnings), (vec!["a.ts".to_owned()], vec![]));
        let file = out.join("a.ts");
        assert_eq!(
            write(&file, &files, true).unwrap_err(),
            format!(
                "Output {} is a file, not a directory; name a directory with -o",
                file.display()
            )
        );
        assert_eq!(std::fs::read_to_string(out.join("a.ts")).unwrap(), "new\n");
    }
}
