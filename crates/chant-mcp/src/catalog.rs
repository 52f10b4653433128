//! The replies of the catalog-backed tools, `search`, `composites` and `scaffold`, shaped from
//! what `chant_core::search` finds.

use chant_core::lexicon::{Lexicon, TemplateFile};
use chant_core::search::{self, Hit, Scaffold};
use serde_json::{Value, json};

/// `{query, total, results}`.
pub fn search(
    lexicons: &[&dyn Lexicon],
    query: &str,
    lexicon: Option<&str>,
    limit: usize,
) -> Value {
    let found = search::search(lexicons, query, lexicon, limit);
    let results: Vec<Value> = found
        .results
        .iter()
        .map(|hit| match hit {
            Hit::Composite(c) => json!({"kind": "composite", "name": c.name, "description": c.description, "bundles": c.bundles, "lexicon": c.lexicon}),
            Hit::Class { lexicon, entry: e } => json!({"className": e.class_name, "resourceType": e.resource_type, "kind": e.kind, "lexicon": lexicon}),
        })
        .collect();
    json!({"query": query, "total": found.total, "results": results})
}

/// `{lexicons, total, composites}` plus the `lexicon` and `query` given.
pub fn composites(
    lexicons: &[&dyn Lexicon],
    lexicon: Option<&str>,
    query: Option<&str>,
    limit: usize,
) -> Value {
    let found = search::composites(lexicons, lexicon, query, limit);
    let mut out = json!({
        "lexicons": lexicons.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "total": found.total,
        "composites": found.results.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
    });
    if let Some(l) = lexicon {
        out["lexicon"] = json!(l);
    }
    if let Some(q) = query {
        out["query"] = json!(q);
    }
    out
}

fn files_json<'a>(files: impl IntoIterator<Item = &'a TemplateFile>) -> Value {
    files
        .into_iter()
        .map(|f| json!({"filename": f.filename, "content": f.content}))
        .collect()
}

/// `{lexicon, pattern, [template], files, [note]}`.
pub fn scaffold(
    lexicons: &[&dyn Lexicon],
    pattern: &str,
    lexicon: Option<&str>,
    template: Option<&str>,
) -> Value {
    match search::scaffold(lexicons, pattern, lexicon, template) {
        Scaffold::Template { lexicon, files } => {
            json!({"lexicon": lexicon, "pattern": pattern, "template": template, "files": files_json(files)})
        }
        Scaffold::Matched { lexicon, files } => {
            json!({"lexicon": lexicon, "pattern": pattern, "files": files_json(files)})
        }
        Scaffold::Skeleton { files } => json!({
            "lexicon": lexicon,
            "pattern": pattern,
            "files": files_json(&files),
            "note": "No lexicon-specific template found. Generic skeleton provided — fill in imports and resource types.",
        }),
    }
}
