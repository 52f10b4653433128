//! The catalog-backed tools: `search`, `composites` and `scaffold`. They read the lexicons'
//! shipped data only: no project is evaluated and no composite is called.

use chant_core::lexicon::Lexicon;
use serde_json::{Value, json};

/// `{query, total, results}`: resource types (resource and property classes) and composites
/// matching `query` case-insensitively; prefix matches first, then composites before resource
/// types, then by type (composites: name).
pub fn search(
    lexicons: &[&dyn Lexicon],
    query: &str,
    lexicon: Option<&str>,
    limit: usize,
) -> Value {
    let q = query.to_lowercase();
    // (rank, is_composite, sort key, result)
    let mut hits: Vec<(u8, bool, String, Value)> = Vec::new();
    let rank = |fields: &[&str]| -> Option<u8> {
        let lowered: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
        if !lowered.iter().any(|f| f.contains(&q)) {
            return None;
        }
        Some(u8::from(lowered.iter().any(|f| f.starts_with(&q))))
    };
    for lex in lexicons
        .iter()
        .filter(|l| lexicon.is_none_or(|n| n == l.name()))
    {
        for c in lex.composites() {
            let mut fields = vec![c.name.as_str(), c.description.as_str()];
            fields.extend(c.bundles.iter().map(String::as_str));
            if let Some(r) = rank(&fields) {
                let result = json!({"kind": "composite", "name": c.name, "description": c.description, "bundles": c.bundles, "lexicon": c.lexicon});
                hits.push((r, true, c.name.clone(), result));
            }
        }
        for e in &lex.catalog().entries {
            if let Some(r) = rank(&[&e.resource_type, &e.class_name, &e.kind]) {
                let result = json!({"className": e.class_name, "resourceType": e.resource_type, "kind": e.kind, "lexicon": lex.name()});
                hits.push((r, false, e.resource_type.clone(), result));
            }
        }
    }
    hits.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then_with(|| canon::locale_cmp(&a.2, &b.2))
    });
    let total = hits.len();
    let results: Vec<Value> = hits.into_iter().take(limit).map(|h| h.3).collect();
    json!({"query": query, "total": total, "results": results})
}

/// `{lexicons, total, composites}` plus the `lexicon` and `query` given. Name matches come first.
pub fn composites(
    lexicons: &[&dyn Lexicon],
    lexicon: Option<&str>,
    query: Option<&str>,
    limit: usize,
) -> Value {
    let q = query.map(str::to_lowercase);
    let mut matches: Vec<(u8, usize, &str, Value)> = Vec::new();
    for (order, lex) in lexicons
        .iter()
        .enumerate()
        .filter(|(_, l)| lexicon.is_none_or(|n| n == l.name()))
    {
        for c in lex.composites() {
            let rank = match &q {
                None => 0,
                Some(q) if c.name.to_lowercase().contains(q) => 0,
                Some(q) => {
                    let in_params = c.params.iter().any(|p| {
                        p.get("name")
                            .and_then(Value::as_str)
                            .is_some_and(|n| n.to_lowercase().contains(q))
                    });
                    let other = c.description.to_lowercase().contains(q)
                        || c.bundles.iter().any(|b| b.to_lowercase().contains(q))
                        || in_params;
                    if !other {
                        continue;
                    }
                    1
                }
            };
            matches.push((rank, order, c.name.as_str(), c.to_json()));
        }
    }
    matches.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then_with(|| canon::locale_cmp(a.2, b.2))
    });
    let total = matches.len();
    let mut out = json!({
        "lexicons": lexicons.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "total": total,
        "composites": matches.into_iter().take(limit).map(|m| m.3).collect::<Vec<_>>(),
    });
    if let Some(l) = lexicon {
        out["lexicon"] = json!(l);
    }
    if let Some(q) = query {
        out["query"] = json!(q);
    }
    out
}

fn camel(pattern: &str) -> String {
    let mut parts = pattern.split(['-', '_']).filter(|p| !p.is_empty());
    let mut out = parts.next().unwrap_or_default().to_owned();
    for p in parts {
        let mut c = p.chars();
        if let Some(f) = c.next() {
            out.extend(f.to_uppercase());
            out.push_str(c.as_str());
        }
    }
    out
}

fn files_json(files: &[&chant_core::lexicon::TemplateFile]) -> Value {
    Value::Array(
        files
            .iter()
            .map(|f| json!({"filename": f.filename, "content": f.content}))
            .collect(),
    )
}

/// Starter files: a named template set, else files whose name contains `pattern`, else a
/// generic skeleton with a note.
pub fn scaffold(
    lexicons: &[&dyn Lexicon],
    pattern: &str,
    lexicon: Option<&str>,
    template: Option<&str>,
) -> Value {
    let candidates: Vec<&&dyn Lexicon> =
        match lexicon.and_then(|n| lexicons.iter().find(|l| l.name() == n)) {
            Some(l) => vec![l],
            None => lexicons.iter().collect(),
        };
    let needle = pattern.to_lowercase();
    for lex in &candidates {
        let sets = lex.templates();
        if let Some(t) = template {
            let set = sets
                .iter()
                .find(|s| s.name == t)
                .or_else(|| sets.iter().find(|s| s.name == "default"));
            if let Some(set) = set.filter(|s| !s.files.is_empty()) {
                let files: Vec<_> = set.files.iter().collect();
                return json!({"lexicon": lex.name(), "pattern": pattern, "template": t, "files": files_json(&files)});
            }
            continue;
        }
        let files: Vec<_> = sets
            .iter()
            .filter(|s| s.name == "default")
            .flat_map(|s| s.files.iter())
            .filter(|f| f.filename.to_lowercase().contains(&needle))
            .collect();
        if !files.is_empty() {
            return json!({"lexicon": lex.name(), "pattern": pattern, "files": files_json(&files)});
        }
    }
    let config = format!(
        "/**\n * Shared configuration for {pattern}\n */\n\n// TODO: Import resource types from your lexicon\n// import {{ ... }} from \"@intentius/chant-lexicon-<name>\";\n\nexport const config = {{\n  // Add shared configuration here\n}};\n"
    );
    let resource = format!(
        "/**\n * {pattern} resource definition\n */\n\n// TODO: Import resource types from your lexicon\n// import {{ ... }} from \"@intentius/chant-lexicon-<name>\";\n// import {{ config }} from \"./config\";\n\n// export const {} = new ResourceType({{\n//   // Add properties here\n// }});\n",
        camel(pattern)
    );
    json!({
        "lexicon": lexicon,
        "pattern": pattern,
        "files": [
            {"filename": "config.ts", "content": config},
            {"filename": format!("{pattern}.ts"), "content": resource},
        ],
        "note": "No lexicon-specific template found. Generic skeleton provided — fill in imports and resource types.",
    })
}

#[cfg(test)]
mod tests {
    use super::camel;

    #[test]
    fn camel_case_patterns() {
        assert_eq!(camel("s3-bucket"), "s3Bucket");
        assert_eq!(camel("my_queue"), "myQueue");
        assert_eq!(camel("pipeline"), "pipeline");
    }
}
