//! chant's lexicons, one module each: the catalog a lexicon's classes come from, its embedded
//! runtime module (TypeScript, evaluated by `chant-js`), its serializer, post-synth checks,
//! composites metadata, init templates and examples. Lexicons know nothing of MCP or QuickJS.

pub mod gitlab;
pub mod import;
pub mod lint;
pub mod temporal;

use chant_core::lexicon::Lexicon;

/// Every lexicon this chant embeds, in delivery order.
pub fn all() -> Vec<Box<dyn Lexicon>> {
    vec![Box::new(gitlab::Gitlab), Box::new(temporal::Temporal)]
}

/// A lexicon's runtime module: its hand-written TypeScript, then one `export const <Class> =
/// declarableClass(...)` per catalog entry and per extra `(class, resourceType, kind)`.
pub(crate) fn runtime_module(
    lexicon: &str,
    hand_written: &str,
    catalog: &chant_core::lexicon::Catalog,
    extra: &[(&str, &str, &str)],
) -> String {
    let mut src = String::from(hand_written);
    src.push_str("\nimport { declarableClass as __declarableClass } from \"@intentius/chant\";\n");
    let line = |class: &str, resource_type: &str, kind: &str, attrs: &[String]| {
        format!(
            "export const {class} = __declarableClass({lexicon:?}, {resource_type:?}, {class:?}, {kind:?}, {attrs:?});\n"
        )
    };
    for e in &catalog.entries {
        src.push_str(&line(&e.class_name, &e.resource_type, &e.kind, &e.attrs));
    }
    for (class, resource_type, kind) in extra {
        src.push_str(&line(class, resource_type, kind, &[]));
    }
    src
}

/// The rules a lint of a project using `lexicons` runs: the core rules, then each lexicon's.
pub fn lint_rule_set(lexicons: &[String]) -> Vec<chant_lint::Rule> {
    let mut rules = chant_lint::rules::core();
    for l in lexicons {
        rules.extend(lint_rules(l));
    }
    rules
}

/// The lint rules a lexicon contributes (run after the core rules).
pub fn lint_rules(lexicon: &str) -> Vec<chant_lint::Rule> {
    match lexicon {
        "gitlab" => gitlab::lint::rules(),
        _ => Vec::new(),
    }
}

/// The embedded lexicon named `name`.
pub fn by_name(name: &str) -> Option<Box<dyn Lexicon>> {
    all().into_iter().find(|l| l.name() == name)
}
