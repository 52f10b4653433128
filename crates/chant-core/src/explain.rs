//! `explain`: a summary of a discovered project as JSON, markdown or an OKF knowledge bundle.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value as Json, json};

use crate::discover::Discovery;
use crate::model::DeclKind;

struct Group<'a> {
    lexicon: String,
    resources: Vec<&'a str>,
    properties: Vec<&'a str>,
}

fn groups(d: &Discovery) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for (i, e) in d.entities.iter().enumerate() {
        let decl = d.decl(i);
        let lexicon = if decl.lexicon.is_empty() {
            "unknown".to_owned()
        } else {
            decl.lexicon.clone()
        };
        let idx = match out.iter().position(|g| g.lexicon == lexicon) {
            Some(idx) => idx,
            None => {
                out.push(Group {
                    lexicon,
                    resources: Vec::new(),
                    properties: Vec::new(),
                });
                out.len() - 1
            }
        };
        if decl.kind == DeclKind::Property {
            out[idx].properties.push(&e.name);
        } else {
            out[idx].resources.push(&e.name);
        }
    }
    out
}

fn edges_json(d: &Discovery) -> Vec<Json> {
    d.edges()
        .into_iter()
        .map(|(f, t)| json!({"from": d.entities[f].name, "to": d.entities[t].name}))
        .collect()
}

fn error_messages(d: &Discovery) -> Vec<String> {
    d.errors.iter().map(|e| e.message.clone()).collect()
}

/// `{sourceFiles, totalEntities, lexicons, dependencies, errors}`.
pub fn json(d: &Discovery) -> Json {
    let mut lexicons = Map::new();
    for g in groups(d) {
        lexicons.insert(
            g.lexicon.clone(),
            json!({
                "resourceCount": g.resources.len(),
                "propertyCount": g.properties.len(),
                "resources": g.resources,
                "properties": g.properties,
            }),
        );
    }
    json!({
        "sourceFiles": d.source_files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "totalEntities": d.entities.len(),
        "lexicons": lexicons,
        "dependencies": edges_json(d),
        "errors": error_messages(d),
    })
}

/// [`json`] plus the `knowledge` key when the project's authored bundle binds a concept to a
/// discovered entity (omitted otherwise).
pub fn json_with_knowledge(d: &Discovery, project_dir: &Path) -> Json {
    let mut out = json(d);
    let names: Vec<&str> = d.entities.iter().map(|e| e.name.as_str()).collect();
    let bundle = crate::knowledge::load(project_dir);
    if let Some(k) = crate::knowledge::explain_key(bundle.as_ref(), &names)
        && let Some(o) = out.as_object_mut()
    {
        o.insert("knowledge".into(), k);
    }
    out
}

/// The markdown summary (ends with one newline).
pub fn markdown(d: &Discovery) -> String {
    let mut lines: Vec<String> = vec![
        "# Project Summary".into(),
        String::new(),
        format!("- **Source files:** {}", d.source_files.len()),
        format!("- **Total entities:** {}", d.entities.len()),
        String::new(),
    ];
    for g in groups(d) {
        lines.push(format!("## Lexicon: {}", g.lexicon));
        lines.push(String::new());
        lines.push(format!("- Resources: {}", g.resources.len()));
        lines.push(format!("- Properties: {}", g.properties.len()));
        lines.push(String::new());
        for (title, names) in [("Resources", &g.resources), ("Properties", &g.properties)] {
            if names.is_empty() {
                continue;
            }
            lines.push(format!("### {title}"));
            lines.extend(names.iter().map(|n| format!("- `{n}`")));
            lines.push(String::new());
        }
    }
    let edges = d.edges();
    if !edges.is_empty() {
        lines.push("## Dependencies".into());
        lines.push(String::new());
        lines.extend(
            edges
                .iter()
                .map(|(f, t)| format!("- `{}` → `{}`", d.entities[*f].name, d.entities[*t].name)),
        );
        lines.push(String::new());
    }
    if !d.errors.is_empty() {
        lines.push("## Errors".into());
        lines.push(String::new());
        lines.extend(d.errors.iter().map(|e| format!("- {}", e.message)));
        lines.push(String::new());
    }
    lines.join("\n")
}

/// `[A-Za-z0-9._-]` kept, others `-`, leading dots removed, empty → `unnamed`.
fn slug(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = mapped.trim_start_matches('.');
    if trimmed.is_empty() {
        "unnamed".into()
    } else {
        trimmed.to_owned()
    }
}

/// Quotes a front-matter value as the YAML emitter does.
fn front_value(s: &str) -> String {
    let needs = s.is_empty()
        || matches!(s, "true" | "false" | "null" | "yes" | "no")
        || s.contains(": ")
        || s.contains('#')
        || s.starts_with(['*', '&', '!', '{', '[', '\'', '"', '$'])
        || s.starts_with(|c: char| c.is_ascii_digit());
    if needs {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        s.to_owned()
    }
}

/// The OKF bundle: `{okf_version, files}` (files sorted by path), and the errors.
pub fn okf(d: &Discovery, explained_dir: &Path) -> (Json, Vec<String>) {
    struct Concept {
        name: String,
        lexicon: String,
        kind: &'static str,
        ty: String,
        path: String,
        source: Option<String>,
        composite: Option<String>,
        composite_instance: Option<String>,
    }
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    let concepts: Vec<Concept> = d
        .entities
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let decl = d.decl(i);
            // An output is filed under the lexicon of the resource whose attribute it
            // publishes (`unknown` when its value names none), as the reference files it.
            let lexicon = match (decl.kind, &decl.props) {
                (DeclKind::Output, props) => match props.get("ref") {
                    Some(crate::model::Value::AttrRef { decl: parent, .. }) => {
                        d.evaluation.decl(*parent).lexicon.clone()
                    }
                    _ => String::new(),
                },
                _ => decl.lexicon.clone(),
            };
            let lexicon = if lexicon.is_empty() {
                "unknown".to_owned()
            } else {
                lexicon
            };
            let base = format!("{}/{}", slug(&lexicon), slug(&e.name));
            let n = used.entry(base.clone()).or_insert(0);
            *n += 1;
            let path = if *n == 1 {
                format!("{base}.md")
            } else {
                format!("{base}-{n}.md")
            };
            let ty = if decl.kind == DeclKind::Output {
                "Output".to_owned()
            } else {
                decl.entity_type.clone()
            };
            let source = e
                .file
                .strip_prefix(explained_dir)
                .ok()
                .map(|p| p.display().to_string());
            Concept {
                name: e.name.clone(),
                lexicon,
                kind: decl.kind.as_str(),
                ty,
                path,
                source,
                composite: e.composite.clone(),
                composite_instance: e.composite_instance.clone(),
            }
        })
        .collect();
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, c) in concepts.iter().enumerate() {
        let mut text = String::from("---\n");
        let description = format!("{} {} of type {}", c.lexicon, c.kind, c.ty);
        let mut fields: Vec<(&str, String)> = vec![
            ("type", c.ty.clone()),
            ("title", c.name.clone()),
            ("description", description),
            ("name", c.name.clone()),
            ("lexicon", c.lexicon.clone()),
            ("kind", c.kind.to_owned()),
        ];
        if let Some(s) = &c.source {
            fields.push(("source", s.clone()));
        }
        if let Some(s) = &c.composite {
            fields.push(("composite", s.clone()));
        }
        if let Some(s) = &c.composite_instance {
            fields.push(("composite_instance", s.clone()));
        }
        for (k, v) in fields {
            text.push_str(&format!("{k}: {}\n", front_value(&v)));
        }
        text.push_str("---\n");
        match &c.source {
            Some(s) => text.push_str(&format!("Declared in `{s}`.")),
            None => text.push_str(&format!("Declared by the {} lexicon.", c.lexicon)),
        }
        let mut deps: Vec<&Concept> = d.dependencies[i].iter().map(|&t| &concepts[t]).collect();
        deps.sort_by(|a, b| canon::locale_cmp(&a.name, &b.name));
        if !deps.is_empty() {
            text.push_str("\n\n## Depends on\n\n");
            text.push_str(
                &deps
                    .iter()
                    .map(|c| format!("- [{}](/{})", c.name, c.path))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        let mut referrers: Vec<&Concept> = d
            .dependencies
            .iter()
            .enumerate()
            .filter(|(_, tos)| tos.contains(&i))
            .map(|(f, _)| &concepts[f])
            .collect();
        referrers.sort_by(|a, b| canon::locale_cmp(&a.name, &b.name));
        if !referrers.is_empty() {
            text.push_str("\n\n## Referenced by\n\n");
            text.push_str(
                &referrers
                    .iter()
                    .map(|c| format!("- [{}](/{})", c.name, c.path))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        text.push('\n');
        files.push((c.path.clone(), text));
    }
    let mut index = String::from("---\nokf_version: '0.2'\n---\n\n");
    if concepts.is_empty() {
        index.push_str("No entities discovered.\n");
    } else {
        let mut lexicons: Vec<&str> = concepts.iter().map(|c| c.lexicon.as_str()).collect();
        lexicons.sort_by(|a, b| canon::locale_cmp(a, b));
        lexicons.dedup();
        let blocks: Vec<String> = lexicons
            .iter()
            .map(|lex| {
                let mut members: Vec<&Concept> =
                    concepts.iter().filter(|c| c.lexicon == *lex).collect();
                members.sort_by(|a, b| canon::locale_cmp(&a.name, &b.name));
                let mut block = format!("# Lexicon: {lex}\n\n");
                for c in members {
                    block.push_str(&format!(
                        "* [{}](/{}) - {} {} of type {}\n",
                        c.name, c.path, c.lexicon, c.kind, c.ty
                    ));
                }
                block
            })
            .collect();
        index.push_str(&blocks.join("\n"));
    }
    files.push(("index.md".into(), index));
    files.sort_by(|a, b| canon::locale_cmp(&a.0, &b.0));
    let files: Map<String, Json> = files
        .into_iter()
        .map(|(k, v)| (k, Json::String(v)))
        .collect();
    (
        json!({"okf_version": "0.2", "files": files}),
        error_messages(d),
    )
}
