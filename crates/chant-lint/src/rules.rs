//! The core rules (COR, EVL), in the order they run. Each is plain data plus a check function
//! over the file's [`Facts`](crate::facts::Facts).

use crate::{Finding, Fix, Rule, RuleContext, Severity};

/// Modules whose imports count as chant's (`@intentius/chant`, `@intentius/chant-lexicon-*`).
const CHANT_MODULES: &str = "@intentius/chant";

/// Constructors that are JavaScript built-ins, never declarables.
const BUILTINS: [&str; 38] = [
    "Array",
    "ArrayBuffer",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "Error",
    "EvalError",
    "Float32Array",
    "Float64Array",
    "Int8Array",
    "Int16Array",
    "Int32Array",
    "Map",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "RegExp",
    "Set",
    "SharedArrayBuffer",
    "String",
    "SyntaxError",
    "TypeError",
    "URIError",
    "URL",
    "URLSearchParams",
    "Uint8Array",
    "Uint8ClampedArray",
    "Uint16Array",
    "Uint32Array",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "Function",
];

/// The default of COR009's `max`.
pub const DECLARABLE_LIMIT: u64 = 8;

/// Every core rule, in run order.
pub fn core() -> Vec<Rule> {
    vec![
        Rule::new(
            "COR001",
            "flat-declarations",
            Severity::Warning,
            "style",
            "Detects inline object literals in Declarable constructors — extract to named exports",
            cor001,
        ),
        Rule::new(
            "COR008",
            "export-required",
            Severity::Warning,
            "correctness",
            "Detects declarable instances that are not exported for chant discovery",
            cor008,
        ),
        Rule::new(
            "COR009",
            "file-declarable-limit",
            Severity::Warning,
            "style",
            "Limits the number of Declarable instances per file to encourage splitting by concern",
            cor009,
        ),
        Rule::new(
            "COR013",
            "single-concern-file",
            Severity::Info,
            "style",
            "Flags files mixing resource Declarables with configuration Declarables",
            cor013,
        ),
        Rule::new(
            "COR005",
            "declarable-naming-convention",
            Severity::Warning,
            "style",
            "Exported declarable instances must use camelCase naming",
            cor005,
        ),
        Rule::new(
            "COR010",
            "no-unused-declarable-import",
            Severity::Warning,
            "style",
            "Flags unused namespace imports from @intentius/chant packages",
            cor010,
        ),
        Rule::new(
            "COR004",
            "no-unused-declarable",
            Severity::Warning,
            "correctness",
            "Detects exported declarables that are never referenced in the same file",
            cor004,
        ),
        Rule::new(
            "COR012",
            "no-redundant-type-import",
            Severity::Warning,
            "style",
            "Flags redundant type imports when a namespace import already provides access",
            cor012,
        ),
        Rule::new(
            "COR003",
            "no-string-ref",
            Severity::Warning,
            "correctness",
            "Flags string-based GetAtt() and Ref() calls — use typed property access instead",
            cor003,
        ),
        Rule::new(
            "EVL001",
            "non-literal-expression",
            Severity::Error,
            "correctness",
            "Resource constructor property values must be statically evaluable — no function calls",
            evl001,
        ),
        Rule::new(
            "COR017",
            "composite-name-match",
            Severity::Error,
            "correctness",
            "Composite name argument must match the variable it is assigned to",
            cor017,
        ),
        Rule::new(
            "COR018",
            "composite-prefer-lexicon-type",
            Severity::Info,
            "style",
            "Composite prop types should use the lexicon's property types, not local ones",
            cor018,
        ),
    ]
}

fn cor001(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    // Property-kind constructors are flagged too, as the captured reference (0.44.14) does.
    ctx.facts
        .news
        .iter()
        .flat_map(|n| n.props.iter().flatten())
        .filter(|p| p.nested_literal)
        .map(|p| {
            Finding::at(
                p.value_start,
                "Inline object in Declarable constructor — extract to a named 'const' with 'export'. Each config value should be its own Declarable.",
            )
        })
        .collect()
}

fn cor008(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .news
        .iter()
        .filter(|n| n.bare && !n.in_exported_var)
        .filter_map(|n| {
            let class = n.class.as_ref()?;
            ctx.facts.local_declarable_classes.contains(class).then(|| {
                let label = match &n.var_name {
                    Some(v) => format!("'{v}' ({class})"),
                    None => format!("'{class}'"),
                };
                Finding::at(
                    n.start,
                    format!("Declarable {label} is not exported — add 'export' so chant can discover it during synthesis."),
                )
            })
        })
        .collect()
}

fn is_declarable_class(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase()) && !BUILTINS.contains(&name)
}

fn cor009(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    let limit = ctx
        .options
        .get("max")
        .and_then(|m| m.as_u64())
        .unwrap_or(DECLARABLE_LIMIT);
    let count = ctx
        .facts
        .news
        .iter()
        .filter(|n| n.bare && n.class.as_deref().is_some_and(is_declarable_class))
        .count() as u64;
    if count > limit {
        vec![Finding::at(
            0,
            format!(
                "File contains {count} Declarable instances (limit: {limit}) — consider splitting into separate files by concern"
            ),
        )]
    } else {
        Vec::new()
    }
}

/// Class names that read as configuration (property-kind) rather than resources.
const PROPERTY_KIND_PATTERNS: [&str; 7] = [
    "Configuration",
    "Encryption",
    "Policy",
    "Rule",
    "Setting",
    "Block",
    "Specification",
];

fn cor013(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    let is_property = |c: &str| PROPERTY_KIND_PATTERNS.iter().any(|p| c.contains(p));
    let classes: Vec<&str> = ctx
        .facts
        .news
        .iter()
        .filter_map(|n| n.class.as_deref())
        .collect();
    let resources = classes
        .iter()
        .any(|c| c.starts_with(|ch: char| ch.is_ascii_uppercase()) && !is_property(c));
    let properties = classes.iter().any(|c| is_property(c));
    if resources && properties {
        vec![Finding::at(
            0,
            "COR013: File mixes resource Declarables with configuration Declarables — consider splitting into separate files",
        )]
    } else {
        Vec::new()
    }
}

/// `DataBucket` → `dataBucket`; `DATA_BUCKET` → `dataBucket`.
pub fn to_camel_case(name: &str) -> String {
    let mut chars = name.chars();
    let first = chars.next();
    let second = chars.next();
    if first.is_some_and(|c| c.is_ascii_uppercase())
        && second.is_some_and(|c| c.is_ascii_lowercase())
    {
        let mut out: String = first.into_iter().flat_map(char::to_lowercase).collect();
        out.push_str(&name[first.map_or(0, char::len_utf8)..]);
        return out;
    }
    let lower = name.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut up = false;
    for c in lower.chars() {
        if c == '_' {
            up = true;
            continue;
        }
        if up && c.is_ascii_lowercase() {
            out.push(c.to_ascii_uppercase());
        } else {
            if up {
                out.push('_');
            }
            out.push(c);
        }
        up = false;
    }
    if up {
        out.push('_');
    }
    out
}

fn cor005(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .exported_news
        .iter()
        .filter(|e| !e.name.starts_with(|c: char| c.is_ascii_lowercase()))
        .map(|e| {
            Finding::at(
                e.name_start,
                format!(
                    "Declarable '{}' should use camelCase naming — rename to '{}'.",
                    e.name,
                    to_camel_case(&e.name)
                ),
            )
        })
        .collect()
}

fn cor010(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .imports
        .iter()
        .filter(|i| i.source.starts_with(CHANT_MODULES) && !i.type_only)
        .filter_map(|i| {
            let ns = i.namespace.as_ref()?;
            (!ctx.facts.member_objects.contains(ns)).then(|| {
                Finding::at(
                    i.start,
                    format!("Namespace import '{ns}' is never used — remove the import or use {ns}.<resource>."),
                )
            })
        })
        .collect()
}

fn cor004(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .exported_news
        .iter()
        .filter(|e| {
            e.class.as_deref().is_some_and(|c| {
                c.starts_with(|ch: char| ch.is_uppercase()) && c != "Parameter"
            })
        })
        .filter(|e| {
            !ctx.facts.identifiers.get(&e.name).is_some_and(|uses| {
                uses.iter()
                    .any(|u| *u < e.statement_start || *u >= e.statement_end)
            })
        })
        .map(|e| {
            Finding::at(
                e.statement_start,
                format!("Exported declarable '{}' is never referenced in this file — it may be dead infrastructure code.", e.name),
            )
        })
        .collect()
}

fn cor012(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    let text = ctx.file.text;
    let namespaces: Vec<(&str, &str)> = ctx
        .facts
        .imports
        .iter()
        .filter(|i| i.source.starts_with(CHANT_MODULES))
        .filter_map(|i| Some((i.source.as_str(), i.namespace.as_deref()?)))
        .collect();
    ctx.facts
        .imports
        .iter()
        .filter(|i| i.type_only && i.namespace.is_none() && !i.named.is_empty())
        .filter_map(|i| {
            let alias = namespaces.iter().rev().find(|(s, _)| *s == i.source)?.1;
            let qualified: Vec<String> = i.named.iter().map(|n| format!("{alias}.{n}")).collect();
            // Exactly the import's own line(s) and the newline ending them: never the
            // newline before it (the reference's range joined two lines).
            let line_start = text[..i.start].rfind('\n').map_or(0, |p| p + 1);
            let from = if text[line_start..i.start].trim().is_empty() { line_start } else { i.start };
            let mut to = i.end;
            if text[to..].starts_with("\r\n") {
                to += 2;
            } else if text[to..].starts_with('\n') {
                to += 1;
            }
            Some(
                Finding::at(
                    i.start,
                    format!("Redundant type import — use {} instead. The namespace import already provides access to all exported types.", qualified.join(", ")),
                )
                .with_fix(Fix { range: (from, to), replacement: String::new(), kind: None }),
            )
        })
        .collect()
}

fn cor003(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .string_refs
        .iter()
        .map(|(f, at)| {
            Finding::at(
                *at,
                format!("Avoid string-based {f}() — import the resource and use typed property access instead."),
            )
        })
        .collect()
}

fn cor018(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    let types = &ctx.facts.local_types;
    let mut out = Vec::new();
    for props in &ctx.facts.composite_props_types {
        let Some(decl) = types.iter().find(|t| &t.name == props) else {
            continue;
        };
        let mut seen: Vec<&str> = Vec::new();
        for (field, refs) in &decl.fields {
            for r in refs {
                if r == props || seen.contains(&r.as_str()) {
                    continue;
                }
                if let Some(local) = types.iter().find(|t| &t.name == r) {
                    seen.push(r);
                    out.push(Finding::at(
                        local.start,
                        format!("Local type \"{r}\" is used in Composite prop \"{field}\" — consider using a lexicon property type instead (e.g., InstanceType<typeof _.PropertyType>)"),
                    ));
                }
            }
        }
    }
    out
}

fn evl001(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .news
        .iter()
        .filter(|n| !n.in_composite_factory)
        .flat_map(|n| n.non_literal.iter())
        .map(|at| {
            Finding::at(
                *at,
                "Non-literal expression in resource constructor property — value must be statically evaluable",
            )
        })
        .collect()
}

fn cor017(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .composites
        .iter()
        .filter_map(|c| {
            let quoted = format!("\"{}\"", c.name);
            match &c.name_arg {
                None => {
                    let at = c.factory_end?;
                    Some(
                        Finding::at(
                            c.callee_start,
                            format!("Composite is missing a name argument — add \"{}\" as the second argument", c.name),
                        )
                        .with_fix(Fix { range: (at, at), replacement: format!(", {quoted}"), kind: None }),
                    )
                }
                Some((s, e, None)) => Some(
                    Finding::at(*s, "Composite name must be a string literal")
                        .with_fix(Fix { range: (*s, *e), replacement: quoted, kind: None }),
                ),
                Some((s, e, Some(v))) if *v != c.name => Some(
                    Finding::at(
                        *s,
                        format!("Composite name \"{v}\" does not match variable name \"{}\"", c.name),
                    )
                    .with_fix(Fix { range: (*s, *e), replacement: quoted, kind: None }),
                ),
                Some(_) => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Diagnostic, LintConfig, lint_text};

    fn lint(text: &str) -> Vec<Diagnostic> {
        lint_text("f.ts", "f.ts", text, &core(), &LintConfig::default())
    }

    fn ids(d: &[Diagnostic]) -> Vec<(String, usize, usize)> {
        d.iter()
            .map(|d| (d.rule_id.clone(), d.line, d.column))
            .collect()
    }

    #[test]
    fn single_concern_flags_resources_mixed_with_configuration() {
        let mixed = lint(
            "export const a = new Job({ script: [\"x\"], rules: new Rule({}) });\nexport const b = new gl.WorkflowRule({});\n",
        );
        let c: Vec<&Diagnostic> = mixed.iter().filter(|d| d.rule_id == "COR013").collect();
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].line, c[0].column, c[0].severity),
            (1, 1, Severity::Info)
        );
        let only_resources = lint(
            "export const a = new Job({ script: [\"x\"] });\nexport const b = new Job({ script: [a] });\n",
        );
        assert!(only_resources.iter().all(|d| d.rule_id != "COR013"));
    }

    #[test]
    fn string_refs_and_local_composite_prop_types() {
        let src = "import { Composite } from \"@intentius/chant\";\n\
interface Port { port: number }\n\
type Tags = Record<string, string>;\n\
interface WebProps { ports: Port[]; tags?: Tags | undefined; name: string }\n\
export const Web = Composite<WebProps>((p) => ({ arn: GetAtt(\"Role\", \"Arn\"), id: aws.Ref(\"X\"), ok: Ref(role) }), \"Web\");\n";
        let d = lint(src);
        let got: Vec<(&str, usize, usize, &str)> = d
            .iter()
            .filter(|d| d.rule_id == "COR003" || d.rule_id == "COR018")
            .map(|d| (d.rule_id.as_str(), d.line, d.column, d.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "COR003",
                    5,
                    55,
                    "Avoid string-based GetAtt() — import the resource and use typed property access instead."
                ),
                (
                    "COR003",
                    5,
                    82,
                    "Avoid string-based Ref() — import the resource and use typed property access instead."
                ),
                (
                    "COR018",
                    2,
                    1,
                    "Local type \"Port\" is used in Composite prop \"ports\" — consider using a lexicon property type instead (e.g., InstanceType<typeof _.PropertyType>)"
                ),
                (
                    "COR018",
                    3,
                    1,
                    "Local type \"Tags\" is used in Composite prop \"tags\" — consider using a lexicon property type instead (e.g., InstanceType<typeof _.PropertyType>)"
                ),
            ]
        );
    }

    #[test]
    fn camel_case_suggestions() {
        assert_eq!(to_camel_case("LegacyDeploy"), "legacyDeploy");
        assert_eq!(to_camel_case("DATA_BUCKET"), "dataBucket");
        assert_eq!(to_camel_case("X"), "x");
    }

    #[test]
    fn flat_naming_unused_and_evaluable() {
        let d = lint(
            "import { Job } from \"@intentius/chant-lexicon-gitlab\";\n\
export const Build = new Job({ stage: \"b\", variables: { A: \"1\" }, rules: [{ if: \"x\" }], script: [\"a\"] });\n\
export const test = new Job({ needs: [Build], script: [`run ${Build}`], image: name.trim() });\n",
        );
        assert_eq!(
            ids(&d),
            [
                ("COR001".into(), 2, 55),
                ("COR001".into(), 2, 74),
                ("COR005".into(), 2, 14),
                ("COR004".into(), 3, 1),
                ("EVL001".into(), 3, 80),
            ]
        );
    }

    #[test]
    fn declarable_limit_counts_bare_capitalized_constructors() {
        let mut src = String::from("import { Job } from \"@intentius/chant-lexicon-gitlab\";\n");
        for i in 0..9 {
            src.push_str(&format!(
                "export const j{i} = new Job({{ script: [\"j{i}\"] }});\nconst m{i} = new Map();\n"
            ));
        }
        let d = lint(&src);
        let limit: Vec<&Diagnostic> = d.iter().filter(|d| d.rule_id == "COR009").collect();
        assert_eq!(limit.len(), 1);
        assert_eq!(
            limit[0].message,
            "File contains 9 Declarable instances (limit: 8) — consider splitting into separate files by concern"
        );
        assert_eq!((limit[0].line, limit[0].column), (1, 1));
    }

    #[test]
    fn namespace_and_type_imports() {
        let src = "import * as gl from \"@intentius/chant-lexicon-gitlab\";\nimport type { Job as GlJob } from \"@intentius/chant-lexicon-gitlab\";\nimport * as unused from \"@intentius/chant\";\nexport type X = GlJob;\n";
        let d = lint(src);
        assert_eq!(
            ids(&d),
            [
                ("COR010".into(), 1, 1),
                ("COR010".into(), 3, 1),
                ("COR012".into(), 2, 1)
            ]
        );
        let fix = d[2].fix.as_ref().unwrap();
        assert_eq!(
            &src[fix.range.0..fix.range.1],
            "import type { Job as GlJob } from \"@intentius/chant-lexicon-gitlab\";\n"
        );
        assert!(
            d[2].message
                .starts_with("Redundant type import — use gl.GlJob instead.")
        );
        // A namespace used only in a type position is used.
        assert!(lint("import * as gl from \"@intentius/chant-lexicon-gitlab\";\nexport type J = gl.Job;\n").is_empty());
    }

    #[test]
    fn composite_names_match_their_variables() {
        let src = "import { Composite } from \"@intentius/chant\";\nexport const Pair = Composite((p) => ({}), \"Other\");\nexport const Lone = Composite((p) => ({}));\nexport const Dyn = Composite((p) => ({}), name);\nexport const Ok = Composite((p) => ({}), \"Ok\");\n";
        let d = lint(src);
        let msgs: Vec<(&str, Option<String>)> = d
            .iter()
            .map(|d| {
                (
                    d.message.as_str(),
                    d.fix
                        .as_ref()
                        .map(|f| format!("{}..{}={}", f.range.0, f.range.1, f.replacement)),
                )
            })
            .collect();
        let other = src.find("\"Other\"").unwrap();
        let lone_end = src.find("({}));").unwrap() + 4;
        let dyn_at = src.find("name);").unwrap();
        assert_eq!(
            msgs,
            [
                (
                    "Composite name \"Other\" does not match variable name \"Pair\"",
                    Some(format!("{other}..{}=\"Pair\"", other + 7))
                ),
                (
                    "Composite is missing a name argument — add \"Lone\" as the second argument",
                    Some(format!("{lone_end}..{lone_end}=, \"Lone\""))
                ),
                (
                    "Composite name must be a string literal",
                    Some(format!("{dyn_at}..{}=\"Dyn\"", dyn_at + 4))
                ),
            ]
        );
    }

    #[test]
    fn export_required_only_for_local_declarable_classes() {
        let src = "class Thing implements Declarable {}\nconst t = new Thing();\nexport const u = new Thing();\nconst j = new Job({});\n";
        let d: Vec<Diagnostic> = lint(src)
            .into_iter()
            .filter(|d| d.rule_id == "COR008")
            .collect();
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].message,
            "Declarable 't' (Thing) is not exported — add 'export' so chant can discover it during synthesis."
        );
        assert_eq!((d[0].line, d[0].column), (2, 11));
    }
}
