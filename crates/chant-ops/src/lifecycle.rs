//! Lifecycle state: the build digest, digest diffs against a stored snapshot, and snapshot
//! reads for `chant://state`.

use chant_core::discover::Discovery;
use gitledger::Ledger;
use serde_json::{Map, Value as Json, json};

use crate::model::to_json;

/// `{resources: {<name>: {type, lexicon, propsHash}}, lexiconVersions, dependencies, outputs, deployOrder}`.
pub fn build_digest(d: &Discovery, version: &str) -> Json {
    let mut resources = Map::new();
    let mut dependencies = Map::new();
    let mut lexicons: Vec<String> = Vec::new();
    for (i, e) in d.entities.iter().enumerate() {
        let decl = d.decl(i);
        let props = to_json(&decl.props);
        let hash = canon::sha256_hex(canon::to_canonical_compact(&props).as_bytes());
        resources.insert(
            e.name.clone(),
            json!({"type": decl.entity_type, "lexicon": decl.lexicon, "propsHash": hash}),
        );
        let deps: Vec<&str> = d.dependencies[i]
            .iter()
            .map(|&t| d.entities[t].name.as_str())
            .collect();
        dependencies.insert(e.name.clone(), json!(deps));
        if !lexicons.contains(&decl.lexicon) {
            lexicons.push(decl.lexicon.clone());
        }
    }
    let versions: Map<String, Json> = lexicons.into_iter().map(|l| (l, json!(version))).collect();
    let order: Vec<&str> = chant_core::discover::topological_order(d)
        .unwrap_or_default()
        .into_iter()
        .map(|i| d.entities[i].name.as_str())
        .collect();
    json!({"resources": resources, "lexiconVersions": versions, "dependencies": dependencies, "outputs": {}, "deployOrder": order})
}

fn resources_of<'a>(digest: &'a Json, lexicon: &str) -> Vec<(&'a String, &'a Json)> {
    digest["resources"]
        .as_object()
        .map(|m| m.iter().filter(|(_, r)| r["lexicon"] == lexicon).collect())
        .unwrap_or_default()
}

/// `{added, removed, changed, unchanged, lexiconVersionChanges}` for one lexicon's resources.
pub fn diff(current: &Json, previous: Option<&Json>, lexicon: &str) -> Json {
    let now = resources_of(current, lexicon);
    let Some(previous) = previous else {
        return json!({"added": now.iter().map(|(n, _)| n).collect::<Vec<_>>(), "removed": [], "changed": [], "unchanged": [], "lexiconVersionChanges": []});
    };
    let before = resources_of(previous, lexicon);
    let (mut added, mut changed, mut unchanged) = (Vec::new(), Vec::new(), Vec::new());
    for (name, r) in &now {
        match before.iter().find(|(n, _)| n == name) {
            None => added.push(*name),
            Some((_, old)) if old["propsHash"] != r["propsHash"] => changed.push(*name),
            Some(_) => unchanged.push(*name),
        }
    }
    let removed: Vec<&String> = before
        .iter()
        .filter(|(n, _)| !now.iter().any(|(m, _)| m == n))
        .map(|(n, _)| *n)
        .collect();
    let mut version_changes: Vec<String> = Vec::new();
    if let (Some(a), Some(b)) = (
        current["lexiconVersions"].as_object(),
        previous["lexiconVersions"].as_object(),
    ) {
        for (l, v) in a {
            if b.get(l).is_some_and(|old| old != v) {
                version_changes.push(l.clone());
            }
        }
    }
    version_changes.sort_by(|a, b| canon::locale_cmp(a, b));
    json!({"added": added, "removed": removed, "changed": changed, "unchanged": unchanged, "lexiconVersionChanges": version_changes})
}

/// `{<lexicon>: DigestDiff}`: the build `d`'s digest against each lexicon's last snapshot in
/// `env` (`lifecycle-diff`, and the `lifecycleDiff` activity). Every lexicon with resources
/// in the build, in their order, or only `lexicon`; no ledger or no snapshot diffs against
/// nothing (everything `added`).
pub fn diff_all(d: &Discovery, ledger: Option<&Ledger>, env: &str, lexicon: Option<&str>) -> Json {
    let digest = build_digest(d, env!("CARGO_PKG_VERSION"));
    let lexicons: Vec<String> = match lexicon {
        Some(l) => vec![l.to_owned()],
        None => {
            let mut ls: Vec<String> = Vec::new();
            for i in 0..d.entities.len() {
                let l = &d.decl(i).lexicon;
                if !ls.contains(l) {
                    ls.push(l.clone());
                }
            }
            // A lexicon the build no longer declares anything of, but the environment has a
            // snapshot of: all its resources were removed, which is drift too.
            if crate::model::valid_name(env) {
                for name in ledger.and_then(|l| l.list(env).ok()).unwrap_or_default() {
                    if let Some(lex) = name.strip_suffix(".json")
                        && !ls.iter().any(|l| l == lex)
                        && crate::model::valid_name(lex)
                    {
                        ls.push(lex.to_owned());
                    }
                }
            }
            ls
        }
    };
    let mut out = Map::new();
    for lex in lexicons {
        let previous = ledger
            .and_then(|l| snapshot(l, env, &lex))
            .and_then(|s| s.get("digest").cloned());
        out.insert(lex.clone(), diff(&digest, previous.as_ref(), &lex));
    }
    Json::Object(out)
}

/// The stored snapshot of `lexicon` in `env`, parsed.
pub fn snapshot(ledger: &Ledger, env: &str, lexicon: &str) -> Option<Json> {
    let bytes = ledger.read(&format!("{env}/{lexicon}.json")).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// `chant://state/{env}/{lexicon}`: the raw blob text.
pub fn state_text(ledger: &Ledger, env: &str, lexicon: &str) -> Result<String, String> {
    let valid = |s: &str| crate::model::valid_name(s);
    if !valid(env) || !valid(lexicon) {
        return Err(format!("No snapshot found for {env}/{lexicon}"));
    }
    match ledger.read(&format!("{env}/{lexicon}.json")) {
        Ok(Some(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        _ => Err(format!("No snapshot found for {env}/{lexicon}")),
    }
}

/// `chant://state/{env}`: `{<lexicon>: <snapshot>}` for every `*.json` directly under `env`.
pub fn state_all(ledger: &Ledger, env: &str) -> Json {
    let mut out = Map::new();
    if crate::model::valid_name(env) {
        for name in ledger.list(env).unwrap_or_default() {
            if let Some(lex) = name.strip_suffix(".json")
                && let Some(s) = snapshot(ledger, env, lex)
            {
                out.insert(lex.to_owned(), s);
            }
        }
    }
    Json::Object(out)
}
