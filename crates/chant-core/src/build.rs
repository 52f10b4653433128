//! Build orchestration: order the entities, partition them by lexicon, serialize each partition,
//! assemble the output and run the post-synth checks.

use crate::discover::{Discovery, topological_order};
use crate::lexicon::{Finding, Output, Registry};

/// Output format of `build`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// A successful build.
#[derive(Clone, Debug, PartialEq)]
pub struct Built {
    pub output: String,
    /// Number of entities (properties included).
    pub resource_count: usize,
    /// Additional files `(path, content)` from the serializers.
    pub files: Vec<(String, String)>,
    /// `(lexicon, finding)` from the post-synth checks.
    pub findings: Vec<(String, Finding)>,
    /// Serializer notes and `No serializer found for lexicon "<x>"`.
    pub warnings: Vec<String>,
}

/// A failed build: `(file, message)` per error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildFailure {
    pub errors: Vec<(String, String)>,
}

impl BuildFailure {
    /// The messages joined with `; ` (the MCP `build` tool's error text).
    pub fn message(&self) -> String {
        self.errors
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Builds a discovered project with the given lexicons (`only`: just that lexicon's part).
pub fn build(
    d: &Discovery,
    lexicons: &Registry,
    format: Format,
    only: Option<&str>,
) -> Result<Built, BuildFailure> {
    if !d.errors.is_empty() {
        return Err(BuildFailure {
            errors: d
                .errors
                .iter()
                .map(|e| (e.file.display().to_string(), e.message.clone()))
                .collect(),
        });
    }
    if let Err(cycle) = topological_order(d) {
        let file = d
            .entities
            .iter()
            .find(|e| e.name == cycle[0])
            .map(|e| e.file.display().to_string())
            .unwrap_or_default();
        return Err(BuildFailure {
            errors: vec![(file, format!("Circular dependency: {}", cycle.join(" → ")))],
        });
    }
    let mut partitions: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, _) in d.entities.iter().enumerate() {
        let lexicon = d.decl(i).home_lexicon().to_owned();
        match partitions.iter_mut().find(|(l, _)| *l == lexicon) {
            Some((_, members)) => members.push(i),
            None => partitions.push((lexicon, vec![i])),
        }
    }
    partitions.sort_by(|a, b| canon::locale_cmp(&a.0, &b.0));
    let mut warnings = Vec::new();
    let mut json_parts: Vec<(String, serde_json::Value)> = Vec::new();
    let mut text_parts: Vec<(String, String)> = Vec::new();
    let mut files = Vec::new();
    let mut findings = Vec::new();
    let mut errors = Vec::new();
    for (name, members) in &partitions {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let Some(lexicon) = lexicons.get(name) else {
            warnings.push(format!("No serializer found for lexicon \"{name}\""));
            continue;
        };
        let Some(serialized) = lexicon.serialize(d, members) else {
            warnings.push(format!("No serializer found for lexicon \"{name}\""));
            continue;
        };
        match serialized {
            Ok(out) => {
                warnings.extend(out.warnings);
                files.extend(out.files);
                findings.extend(
                    lexicon
                        .post_synth_checks(d, members, &out.output)
                        .into_iter()
                        .map(|f| (name.clone(), f)),
                );
                match out.output {
                    Output::Json(v) => json_parts.push((name.clone(), v)),
                    Output::Yaml(docs) => {
                        text_parts.push((name.clone(), chant_yaml::safe::documents(&docs)))
                    }
                    Output::Text(text) => text_parts.push((name.clone(), text)),
                }
            }
            Err(e) => errors.push((String::new(), e)),
        }
    }
    if !errors.is_empty() {
        return Err(BuildFailure { errors });
    }
    if json_parts.is_empty() && text_parts.is_empty() {
        if d.source_files.is_empty() {
            return Ok(Built {
                output: String::new(),
                resource_count: 0,
                files,
                findings,
                warnings,
            });
        }
        return Err(BuildFailure {
            errors: vec![(
                String::new(),
                format!(
                    "Discovered {} source file(s) but produced no output. Likely causes: imports resolving to undefined (missing exports from a lexicon root), or no Declarables/Composites exported. Check that imported names exist in the target package.",
                    d.source_files.len()
                ),
            )],
        });
    }
    let output = assemble(json_parts, text_parts, format);
    Ok(Built {
        output,
        resource_count: d.entities.len(),
        files,
        findings,
        warnings,
    })
}

fn assemble(
    json_parts: Vec<(String, serde_json::Value)>,
    text_parts: Vec<(String, String)>,
    format: Format,
) -> String {
    let render = |v: &serde_json::Value| match format {
        Format::Json => canon::to_pretty(&canonical(v)),
        Format::Yaml => chant_yaml::safe::to_yaml(&canonical(v)),
    };
    if json_parts.len() + text_parts.len() == 1 {
        if let Some((_, v)) = json_parts.first() {
            return render(v);
        }
        return text_parts
            .into_iter()
            .next()
            .map(|(_, t)| t)
            .unwrap_or_default();
    }
    let mut parts = Vec::new();
    if !json_parts.is_empty() {
        let combined: serde_json::Map<String, serde_json::Value> = json_parts.into_iter().collect();
        parts.push(render(&serde_json::Value::Object(combined)));
    }
    for (name, text) in text_parts {
        parts.push(format!("# --- {name} ---\n{text}"));
    }
    parts.join("\n\n")
}

pub use canon::canonical;

/// Writes a build to `file` atomically, and the serializers' extra files beside it (each
/// name resolved inside that folder; one that would leave it is an error and nothing after
/// it is written).
pub fn write_output(built: &Built, file: &std::path::Path) -> Result<(), String> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    // Every target is resolved, and none may be another's, before anything is written: a
    // refused name leaves nothing half written.
    let mut targets: Vec<(std::path::PathBuf, &str)> = Vec::new();
    if !built.files.is_empty() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let walls = crate::confine::Walls::new(dir).map_err(|e| e.to_string())?;
        let main = walls.root().join(file.file_name().unwrap_or_default());
        for (name, content) in &built.files {
            let target = walls
                .resolve("an output file", name)
                .map_err(|e| e.to_string())?;
            if target == main || targets.iter().any(|(t, _)| *t == target) {
                return Err(format!(
                    "two outputs of this build would be written to {}: rename one (a nested stack's name, or -o)",
                    target.display()
                ));
            }
            targets.push((target, content));
        }
    }
    fswrite::write_atomic(file, built.output.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    for (target, content) in targets {
        fswrite::write_atomic(&target, content.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_key_order() {
        let v = canonical(&json!({"10": 1, "9": 2, "b": 3, "a": {"z": 1, "A": 2}}));
        assert_eq!(
            canon::to_compact(&v),
            r#"{"9":2,"10":1,"a":{"A":2,"z":1},"b":3}"#
        );
    }
}
