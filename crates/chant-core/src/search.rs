//! Finding things in the lexicons' shipped data: resource types and composites by a query
//! (`search`), composites by lexicon and keyword (`composites`), and starter files
//! (`scaffold`). The rankings live here; the adapters shape the replies. No project is
//! evaluated and no composite is called.

use crate::lexicon::{CatalogEntry, CompositeEntry, Lexicon, TemplateFile, TemplateSet};

/// One search result.
#[derive(Clone, Copy, Debug)]
pub enum Hit<'a> {
    Composite(&'a CompositeEntry),
    /// A resource or property class of `lexicon`'s catalog.
    Class {
        lexicon: &'a str,
        entry: &'a CatalogEntry,
    },
}

/// Results in rank order (at most the limit) and how many matched in all.
#[derive(Clone, Debug)]
pub struct Found<T> {
    pub total: usize,
    pub results: Vec<T>,
}

/// Resource types (resource and property classes) and composites matching `query`
/// case-insensitively: prefix matches first, then composites before classes, then by resource
/// type (composites: name), in locale order.
pub fn search<'a>(
    lexicons: &[&'a dyn Lexicon],
    query: &str,
    lexicon: Option<&str>,
    limit: usize,
) -> Found<Hit<'a>> {
    let q = query.to_lowercase();
    // (prefix match, is a composite, sort key, hit)
    let mut hits: Vec<(bool, bool, &str, Hit<'a>)> = Vec::new();
    let rank = |fields: &[&str]| -> Option<bool> {
        let lowered: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
        if !lowered.iter().any(|f| f.contains(&q)) {
            return None;
        }
        Some(lowered.iter().any(|f| f.starts_with(&q)))
    };
    for lex in lexicons
        .iter()
        .filter(|l| lexicon.is_none_or(|n| n == l.name()))
    {
        for c in lex.composites() {
            let mut fields = vec![c.name.as_str(), c.description.as_str()];
            fields.extend(c.bundles.iter().map(String::as_str));
            if let Some(prefix) = rank(&fields) {
                hits.push((prefix, true, &c.name, Hit::Composite(c)));
            }
        }
        for e in &lex.catalog().entries {
            if let Some(prefix) = rank(&[&e.resource_type, &e.class_name, &e.kind]) {
                let hit = Hit::Class {
                    lexicon: lex.name(),
                    entry: e,
                };
                hits.push((prefix, false, &e.resource_type, hit));
            }
        }
    }
    hits.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then_with(|| canon::locale_cmp(a.2, b.2))
    });
    Found {
        total: hits.len(),
        results: hits.into_iter().take(limit).map(|h| h.3).collect(),
    }
}

/// The composites of `lexicons` (or of the one named), those matching `query` by name
/// first, then those matching it in the description, bundled kinds or parameter names; within
/// a rank in lexicon order, then by name.
pub fn composites<'a>(
    lexicons: &[&'a dyn Lexicon],
    lexicon: Option<&str>,
    query: Option<&str>,
    limit: usize,
) -> Found<&'a CompositeEntry> {
    let q = query.map(str::to_lowercase);
    let mut matches: Vec<(u8, usize, &'a CompositeEntry)> = Vec::new();
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
                            .and_then(serde_json::Value::as_str)
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
            matches.push((rank, order, c));
        }
    }
    matches.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then_with(|| canon::locale_cmp(&a.2.name, &b.2.name))
    });
    Found {
        total: matches.len(),
        results: matches.into_iter().take(limit).map(|m| m.2).collect(),
    }
}

/// What a scaffold found.
#[derive(Clone, Debug)]
pub enum Scaffold<'a> {
    /// The named template set (or the lexicon's default set when it has no such one).
    Template {
        lexicon: &'a str,
        files: Vec<&'a TemplateFile>,
    },
    /// The default set's files whose name contains the pattern.
    Matched {
        lexicon: &'a str,
        files: Vec<&'a TemplateFile>,
    },
    /// Nothing of any lexicon: a generic skeleton to fill in.
    Skeleton { files: Vec<TemplateFile> },
}

/// Starter files for `pattern`: the named `template` set of the first lexicon that has one,
/// else the default set's files whose name contains `pattern`, else a generic skeleton.
pub fn scaffold<'a>(
    lexicons: &[&'a dyn Lexicon],
    pattern: &str,
    lexicon: Option<&str>,
    template: Option<&str>,
) -> Scaffold<'a> {
    let candidates: Vec<&'a dyn Lexicon> =
        match lexicon.and_then(|n| lexicons.iter().find(|l| l.name() == n)) {
            Some(l) => vec![*l],
            None => lexicons.to_vec(),
        };
    let needle = pattern.to_lowercase();
    for lex in candidates {
        let sets = lex.templates();
        if let Some(t) = template {
            let set = sets
                .iter()
                .find(|s| s.name == t)
                .or_else(|| sets.iter().find(|s| s.name == "default"));
            if let Some(set) = set.filter(|s| !s.files.is_empty()) {
                return Scaffold::Template {
                    lexicon: lex.name(),
                    files: set.files.iter().collect(),
                };
            }
            continue;
        }
        // The default set's files first (the reference looked there only), then each named
        // set's (a lexicon's scaffold patterns: aws `s3-bucket`, `lambda-sqs`, …).
        let in_set = |s: &'a TemplateSet| -> Vec<&'a TemplateFile> {
            s.files
                .iter()
                .filter(|f| f.filename.to_lowercase().contains(&needle))
                .collect()
        };
        let files = sets
            .iter()
            .filter(|s| s.name == "default")
            .chain(sets.iter().filter(|s| s.name != "default"))
            .map(in_set)
            .find(|files| !files.is_empty());
        if let Some(files) = files {
            return Scaffold::Matched {
                lexicon: lex.name(),
                files,
            };
        }
    }
    Scaffold::Skeleton {
        files: skeleton(pattern),
    }
}

/// `config.ts` and `<pattern>.ts` with the imports and the resource left to fill in.
fn skeleton(pattern: &str) -> Vec<TemplateFile> {
    let config = format!(
        "/**\n * Shared configuration for {pattern}\n */\n\n// TODO: Import resource types from your lexicon\n// import {{ ... }} from \"@intentius/chant-lexicon-<name>\";\n\nexport const config = {{\n  // Add shared configuration here\n}};\n"
    );
    let resource = format!(
        "/**\n * {pattern} resource definition\n */\n\n// TODO: Import resource types from your lexicon\n// import {{ ... }} from \"@intentius/chant-lexicon-<name>\";\n// import {{ config }} from \"./config\";\n\n// export const {} = new ResourceType({{\n//   // Add properties here\n// }});\n",
        camel(pattern)
    );
    vec![
        TemplateFile {
            filename: "config.ts".into(),
            content: config,
        },
        TemplateFile {
            filename: format!("{pattern}.ts"),
            content: resource,
        },
    ]
}

/// `s3-bucket` → `s3Bucket`.
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
