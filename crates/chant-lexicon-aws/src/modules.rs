//! The runtime modules of `@intentius/chant-lexicon-aws`.
//!
//! The catalog holds 10,761 classes; a module defining all of them would be most of every
//! build's time. So a project file that names what it imports (`import { Bucket, Sub } from
//! "@intentius/chant-lexicon-aws"`) gets a *pick* module re-exporting just those names: the
//! hand-written part (intrinsics, template parts) from `~base`, and each class from its own
//! `~class/<Name>` module, evaluated once per build however many files import it. Only a
//! namespace import or `export *` loads the whole module.

use std::sync::OnceLock;

use crate::catalog::{self, Class};

/// The hand-written part (intrinsics, pseudo-parameters, Parameter, Condition, Mapping, …).
pub const BASE: &str = include_str!("../runtime/aws.ts");

/// The composites (factories over the catalog classes).
pub const COMPOSITES: &str = include_str!("../runtime/composites.ts");

const SPECIFIER: &str = "@intentius/chant-lexicon-aws";

/// The most names one file's pick module takes (more load the whole module).
pub const MAX_PICK: usize = 400;

/// The longest name a pick module takes (the catalog's longest is 80 characters).
pub const MAX_NAME: usize = 128;

/// Catalog classes exported under another name, because the hand-written part takes theirs:
/// `Mapping` is the template's `Mappings` entry and `Partition` the pseudo-parameter (as in the
/// reference, whose explicit export of it shadowed the Glue class). `And` and `Or` (condition
/// functions here) need none: the catalog also names their classes `StorageLensGroup_And`/`_Or`.
/// `LandingZone` is the composite; Control Tower's resource is `ControlTowerLandingZone`.
pub const RENAMED: &[(&str, &str)] = &[
    ("ControlTowerLandingZone", "LandingZone"),
    ("GluePartition", "Partition"),
    ("Transformer_Mapping", "Mapping"),
];

/// The names a runtime source exports: its `export const|function|class <Name>` lines.
fn exported_names(source: &str) -> Vec<&str> {
    let mut names: Vec<&str> = source
        .lines()
        .filter_map(|l| {
            let rest = l
                .strip_prefix("export const ")
                .or_else(|| l.strip_prefix("export function "))
                .or_else(|| l.strip_prefix("export class "))?;
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len());
            Some(&rest[..end])
        })
        .filter(|n| !n.is_empty())
        .collect();
    names.sort_unstable();
    names
}

/// The names `~base` and `~composites` export, each sorted: read from their sources once.
fn exports() -> &'static (Vec<&'static str>, Vec<&'static str>) {
    static NAMES: OnceLock<(Vec<&'static str>, Vec<&'static str>)> = OnceLock::new();
    NAMES.get_or_init(|| (exported_names(BASE), exported_names(COMPOSITES)))
}

/// Which module of the hand-written part exports a name: `~base` or `~composites`.
fn hand_written(name: &str) -> Option<&'static str> {
    let (base, composites) = exports();
    if base.binary_search(&name).is_ok() {
        Some("~base")
    } else if composites.binary_search(&name).is_ok() {
        Some("~composites")
    } else {
        None
    }
}

/// Every name the hand-written part exports.
pub fn hand_written_names() -> Vec<&'static str> {
    let (base, composites) = exports();
    base.iter().chain(composites).copied().collect()
}

/// The catalog class exported as `name`, unless the hand-written part takes that name.
pub fn exported_class(name: &str) -> Option<Class> {
    if let Some((_, class)) = RENAMED.iter().find(|(alias, _)| *alias == name) {
        return catalog::class(class);
    }
    if hand_written(name).is_some() {
        return None;
    }
    catalog::class(name)
}

/// Whether `subpath` names a module of this lexicon.
pub fn has(subpath: &str) -> bool {
    match subpath {
        "" | "~base" | "~composites" => true,
        _ => {
            if let Some(class) = subpath.strip_prefix("~class/") {
                exported_class(class).is_some()
            } else {
                subpath.strip_prefix("~pick/").is_some()
            }
        }
    }
}

/// The pick module's subpath for `names` (sorted, so files naming the same set share one).
pub fn pick(names: &[String]) -> String {
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    format!("~pick/{}", names.join(","))
}

/// The TypeScript of the module at `subpath`.
pub fn source(subpath: &str) -> Option<String> {
    match subpath {
        "~base" => Some(BASE.to_owned()),
        "~composites" => Some(COMPOSITES.to_owned()),
        "" => Some(whole()),
        _ => {
            if let Some(name) = subpath.strip_prefix("~class/") {
                return exported_class(name).map(|c| class_module(name, c));
            }
            subpath
                .strip_prefix("~pick/")
                .filter(|names| names.len() <= MAX_PICK * (MAX_NAME + 1))
                .map(pick_module)
        }
    }
}

fn define(name: &str, class: Class) -> String {
    format!(
        "export const {name} = __declarableClass(\"aws\", {:?}, {name:?}, {:?}, {:?});\n",
        class.resource_type(),
        if class.resource() {
            "resource"
        } else {
            "property"
        },
        class.attrs().collect::<Vec<_>>(),
    )
}

const IMPORT_CORE: &str =
    "import { declarableClass as __declarableClass } from \"@intentius/chant\";\n";

fn class_module(name: &str, class: Class) -> String {
    format!("{IMPORT_CORE}{}", define(name, class))
}

fn pick_module(names: &str) -> String {
    let mut src = String::new();
    let mut unknown = Vec::new();
    for name in names.split(',').filter(|n| !n.is_empty()) {
        if let Some(module) = hand_written(name) {
            src.push_str(&format!(
                "export {{ {name} }} from \"{SPECIFIER}/{module}\";\n"
            ));
        } else if exported_class(name).is_some() {
            src.push_str(&format!(
                "export {{ {name} }} from \"{SPECIFIER}/~class/{name}\";\n"
            ));
        } else {
            unknown.push(name);
        }
    }
    if !unknown.is_empty() {
        // The names are bound, so linking succeeds and evaluating says what is wrong.
        let messages: Vec<String> = unknown.iter().map(|n| missing(n)).collect();
        for n in &unknown {
            if chant_core::names::is_identifier(n) && !chant_core::names::is_reserved(n) {
                src.push_str(&format!("export const {n} = undefined;\n"));
            }
        }
        src.push_str(&format!("throw new Error({:?});\n", messages.join("; ")));
    }
    src
}

/// `@intentius/chant-lexicon-aws has no export "Buckett" (did you mean "Bucket"?)`.
pub fn missing(name: &str) -> String {
    if name.len() > MAX_NAME {
        return format!(
            "{SPECIFIER} has no export \"{}…\"",
            &name[..name.floor_char_boundary(MAX_NAME)]
        );
    }
    let names = hand_written_names();
    let near = catalog::nearest(
        name,
        names
            .iter()
            .copied()
            .chain(catalog::all().filter(|c| c.resource()).map(|c| c.name())),
    )
    .or_else(|| catalog::nearest(name, catalog::all().map(|c| c.name())));
    match near {
        Some(n) => format!("{SPECIFIER} has no export \"{name}\" (did you mean \"{n}\"?)"),
        None => format!("{SPECIFIER} has no export \"{name}\""),
    }
}

/// The whole module: the hand-written part and every class (for `import * as aws`).
fn whole() -> String {
    let mut src = format!(
        "export * from \"{SPECIFIER}/~base\";\nexport * from \"{SPECIFIER}/~composites\";\n{IMPORT_CORE}"
    );
    for class in catalog::all() {
        if exported_class(class.name()) == Some(class) {
            src.push_str(&define(class.name(), class));
        }
    }
    for (alias, name) in RENAMED {
        if let Some(class) = catalog::class(name) {
            src.push_str(&define(alias, class));
        }
    }
    src
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hand_written_part_is_read_for_its_names() {
        let names = hand_written_names();
        for n in [
            "Sub",
            "Ref",
            "AWS",
            "Parameter",
            "Condition",
            "Mapping",
            "output",
            "defaultTags",
        ] {
            assert!(names.contains(&n), "{n}: {names:?}");
        }
        assert_eq!(hand_written("Sub"), Some("~base"));
        assert!(exported_class("Mapping").is_none());
        assert_eq!(
            exported_class("Transformer_Mapping")
                .unwrap()
                .resource_type(),
            "AWS::B2BI::Transformer.Mapping"
        );
    }

    #[test]
    fn the_hand_written_part_shadows_only_the_renamed_classes() {
        let shadowed: Vec<&str> = hand_written_names()
            .into_iter()
            .filter(|n| catalog::class(n).is_some())
            .collect();
        for name in &shadowed {
            let class = catalog::class(name).unwrap();
            let elsewhere = RENAMED.iter().any(|(_, n)| n == name)
                || catalog::all()
                    .any(|c| c.resource_type() == class.resource_type() && c.name() != *name);
            assert!(
                elsewhere,
                "{name} ({}) is shadowed and has no other name",
                class.resource_type()
            );
        }
        assert_eq!(
            shadowed,
            ["And", "Mapping", "Or", "Partition", "LandingZone"]
        );
        for (alias, _) in RENAMED {
            assert!(catalog::class(alias).is_none(), "{alias} is a catalog name");
        }
    }

    #[test]
    fn a_pick_reexports_each_name_from_its_module() {
        let src = source(&pick(&["Sub".into(), "Bucket".into(), "Sub".into()])).unwrap();
        assert_eq!(
            src,
            "export { Bucket } from \"@intentius/chant-lexicon-aws/~class/Bucket\";\nexport { Sub } from \"@intentius/chant-lexicon-aws/~base\";\n"
        );
        let bad = source("~pick/Buckett").unwrap();
        assert!(
            bad.contains("has no export \\\"Buckett\\\" (did you mean \\\"Bucket\\\"?)"),
            "{bad}"
        );
    }
}
