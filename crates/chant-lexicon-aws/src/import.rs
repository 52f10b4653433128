//! Importing a CloudFormation template (JSON, or YAML with its short-form tags, read by the
//! core) into chant TypeScript that builds back to an equivalent template: parameters with
//! every constraint, mappings, conditions, resources with their attributes (`DependsOn`,
//! `Condition`, policies, `Metadata`) and outputs with exports — none of it dropped.
//!
//! Every logical id becomes a declaration exported under that id; references become the
//! declarations themselves (`Ref(Env)`, `queue.Arn`, `If(IsProd, …)`), so the dependency graph
//! is real. Declarations are ordered so each comes after what it references.

use std::collections::{BTreeMap, BTreeSet};

use chant_core::lexicon::{Generated, Imported, Importer};
use serde_json::{Map, Value as Json};

use crate::{catalog, modules};

/// The CloudFormation importer.
#[derive(Debug, Default)]
pub struct CfnImporter;

impl Importer for CfnImporter {
    fn detect(&self, template: &Json) -> bool {
        template.get("AWSTemplateFormatVersion").is_some()
            || template
                .get("Resources")
                .and_then(Json::as_object)
                .is_some_and(|r| {
                    r.values().any(|v| {
                        v.get("Type")
                            .and_then(Json::as_str)
                            .is_some_and(|t| t.starts_with("AWS::"))
                    })
                })
    }

    fn looks_for(&self) -> &'static str {
        "AWSTemplateFormatVersion, or Resources of AWS:: types"
    }

    fn import(&self, template: &Json) -> Result<Imported, String> {
        let (content, warnings) = generate(template)?;
        Ok(Imported {
            lexicon: "aws",
            files: vec![Generated {
                path: "main.ts".into(),
                content,
            }],
            warnings,
        })
    }
}

const PSEUDO: &[(&str, &str)] = &[
    ("AWS::AccountId", "AccountId"),
    ("AWS::NotificationARNs", "NotificationARNs"),
    ("AWS::NoValue", "NoValue"),
    ("AWS::Partition", "Partition"),
    ("AWS::Region", "Region"),
    ("AWS::StackId", "StackId"),
    ("AWS::StackName", "StackName"),
    ("AWS::URLSuffix", "URLSuffix"),
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Parameter,
    Mapping,
    Condition,
    Resource,
    Output,
}

struct Decl {
    id: String,
    kind: Kind,
    /// The entity name it is exported under: its id, unless another declaration takes that
    /// (an output named as a resource).
    export: String,
    /// The name it is declared under in the module (the id, unless that cannot be one).
    local: String,
    /// The catalog class of a resource (`None`: the generic `resource(type, …)`).
    class: Option<catalog::Class>,
}

struct Gen<'t> {
    template: &'t Map<String, Json>,
    decls: Vec<Decl>,
    by_id: BTreeMap<(u8, String), usize>,
    imports: BTreeSet<String>,
    warnings: Vec<String>,
}

use chant_core::names::is_identifier;

fn string(s: &str) -> String {
    let mut out = String::new();
    canon::write_string(&mut out, s);
    out
}

fn key(k: &str) -> String {
    if k == "__proto__" {
        // `__proto__: v` would set the object's prototype, not a key.
        return format!("[{}]", string(k));
    }
    if is_identifier(k) {
        k.to_owned()
    } else {
        string(k)
    }
}

/// The section index a kind's ids live in (a parameter and a resource may not share an id,
/// but a condition and a resource may).
fn space(kind: Kind) -> u8 {
    match kind {
        Kind::Parameter | Kind::Resource => 0,
        Kind::Mapping => 1,
        Kind::Condition => 2,
        Kind::Output => 3,
    }
}

impl<'t> Gen<'t> {
    fn section(&self, name: &str) -> Result<Option<&'t Map<String, Json>>, String> {
        match self.template.get(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Object(m)) => Ok(Some(m)),
            Some(_) => Err(format!("the template's {name} must be an object")),
        }
    }

    fn find(&self, kind: Kind, id: &str) -> Option<&Decl> {
        self.by_id
            .get(&(space(kind), id.to_owned()))
            .map(|&i| &self.decls[i])
    }

    /// A parameter or resource named `id`.
    fn referable(&self, id: &str) -> Option<&Decl> {
        self.find(Kind::Resource, id)
    }

    fn use_name(&mut self, name: &str) -> String {
        self.imports.insert(name.to_owned());
        name.to_owned()
    }

    /// Every declaration and its local name, before any value is written.
    fn declare(&mut self) -> Result<(), String> {
        let mut taken: BTreeSet<String> = modules::hand_written_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        taken.extend(
            chant_core::names::RESERVED_WORDS
                .iter()
                .map(|s| (*s).to_owned()),
        );
        let mut all: Vec<(Kind, String, Option<catalog::Class>)> = Vec::new();
        for (section, kind) in [
            ("Parameters", Kind::Parameter),
            ("Mappings", Kind::Mapping),
            ("Conditions", Kind::Condition),
            ("Resources", Kind::Resource),
            ("Outputs", Kind::Output),
        ] {
            for (id, body) in self.section(section)?.into_iter().flatten() {
                let class = if kind == Kind::Resource {
                    let ty = body.get("Type").and_then(Json::as_str).ok_or_else(|| {
                        format!("resource {id} has no Type (a string such as \"AWS::S3::Bucket\")")
                    })?;
                    let class = catalog::resource_of_type(ty).and_then(|c| {
                        // The name it is exported under (a catalog name the hand-written part
                        // takes is renamed).
                        modules::exported_class(c.name()).map(|_| c).or_else(|| {
                            modules::RENAMED
                                .iter()
                                .find(|(_, n)| *n == c.name())
                                .and(Some(c))
                        })
                    });
                    if class.is_none() {
                        self.warnings.push(format!(
                            "{id}: {ty} has no class in this chant's catalog; written as resource(\"{ty}\", …)"
                        ));
                    }
                    class
                } else {
                    None
                };
                all.push((kind, id.clone(), class));
            }
        }
        // Class names are imported under their own names, so no declaration may take one.
        for (_, _, class) in &all {
            if let Some(c) = class {
                taken.insert(class_name(*c).to_owned());
            }
        }
        let mut locals: BTreeSet<String> = BTreeSet::new();
        let mut exports: BTreeSet<String> = BTreeSet::new();
        // Parameters and resources keep their ids as entity names; a mapping, condition or
        // output of the same id is exported under another (an output's name is its argument).
        all.sort_by_key(|(kind, _, _)| !matches!(kind, Kind::Parameter | Kind::Resource));
        for (kind, id, class) in all {
            let base = if is_identifier(&id) {
                id.clone()
            } else {
                let cleaned: String = id
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                format!("_{cleaned}")
            };
            let suffix = match kind {
                Kind::Parameter => "Param",
                Kind::Mapping => "Map",
                Kind::Condition => "Condition",
                Kind::Resource => "Resource",
                Kind::Output => "Output",
            };
            let mut local = base.clone();
            if taken.contains(&local) || locals.contains(&local) {
                local = format!("{base}{suffix}");
            }
            let mut n = 2;
            while taken.contains(&local) || locals.contains(&local) {
                local = format!("{base}{suffix}{n}");
                n += 1;
            }
            locals.insert(local.clone());
            let mut export = id.clone();
            if exports.contains(&export) {
                export = format!("{id}{suffix}");
                let mut n = 2;
                while exports.contains(&export) {
                    export = format!("{id}{suffix}{n}");
                    n += 1;
                }
                if kind != Kind::Output {
                    self.warnings.push(format!(
                        "{id}: a resource or parameter has the same id; this {} is named {export}",
                        suffix.to_lowercase()
                    ));
                }
            }
            exports.insert(export.clone());
            if local == id && export != id {
                local = export.clone();
            }
            let key = (space(kind), id.clone());
            if self.by_id.contains_key(&key) {
                return Err(format!(
                    "{id} is both a parameter and a resource — CloudFormation needs logical ids to be unique"
                ));
            }
            self.by_id.insert(key, self.decls.len());
            self.decls.push(Decl {
                id,
                kind,
                export,
                local,
                class,
            });
        }
        Ok(())
    }

    /// The TypeScript of a template value.
    fn expr(&mut self, v: &Json, indent: usize) -> String {
        match v {
            Json::Null => "null".into(),
            Json::Bool(b) => b.to_string(),
            Json::Number(n) => {
                let exact = n
                    .as_i64()
                    .map(|i| i.unsigned_abs() <= 1 << 53)
                    .or(n.as_u64().map(|u| u <= 1 << 53));
                if exact == Some(false) {
                    self.warnings.push(format!(
                        "{n} is larger than a JavaScript number holds exactly; write it as a string if it must stay exact"
                    ));
                }
                n.to_string()
            }
            Json::String(s) => string(s),
            Json::Array(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.expr(i, indent + 1)).collect();
                layout("[", "]", &parts, indent)
            }
            Json::Object(o) => {
                if o.len() == 1
                    && let Some((k, arg)) = o.iter().next()
                    && let Some(call) = self.intrinsic(k, arg, indent)
                {
                    return call;
                }
                let parts: Vec<String> = o
                    .iter()
                    .map(|(k, v)| format!("{}: {}", key(k), self.expr(v, indent + 1)))
                    .collect();
                layout("{", "}", &parts, indent)
            }
        }
    }

    fn call(&mut self, f: &str, args: &[&Json], indent: usize) -> String {
        let f = self.use_name(f);
        let parts: Vec<String> = args.iter().map(|a| self.expr(a, indent + 1)).collect();
        let inner = layout("(", ")", &parts, indent);
        format!("{f}{inner}")
    }

    /// A reference to a condition (its declaration, or its name when the template lacks it).
    fn condition(&mut self, v: &Json, indent: usize) -> String {
        match v.as_str().and_then(|c| self.find(Kind::Condition, c)) {
            Some(d) => d.local.clone(),
            None => self.expr(v, indent),
        }
    }

    fn intrinsic(&mut self, k: &str, arg: &Json, indent: usize) -> Option<String> {
        let list = arg.as_array();
        let two = list.filter(|a| a.len() == 2);
        let three = list.filter(|a| a.len() == 3);
        Some(match k {
            "Ref" => {
                let name = arg.as_str()?;
                if let Some((_, p)) = PSEUDO.iter().find(|(n, _)| *n == name) {
                    self.use_name("AWS");
                    return Some(format!("AWS.{p}"));
                }
                match self.referable(name) {
                    Some(d) if d.kind == Kind::Parameter => {
                        let local = d.local.clone();
                        format!("{}({local})", self.use_name("Ref"))
                    }
                    // A resource as a value is its Ref.
                    Some(d) => d.local.clone(),
                    None => format!("{}({})", self.use_name("Ref"), string(name)),
                }
            }
            // A condition reference only when it names a declared condition (a key named
            // `Condition` in, say, `Metadata` is data).
            "Condition" => {
                let c = arg.as_str()?;
                self.find(Kind::Condition, c)?.local.clone()
            }
            "Fn::GetAtt" => {
                let (resource, attribute) = match arg {
                    Json::String(s) => {
                        let (r, a) = s.split_once('.')?;
                        (r.to_owned(), Json::String(a.to_owned()))
                    }
                    Json::Array(a) if a.len() == 2 => (a[0].as_str()?.to_owned(), a[1].clone()),
                    _ => return None,
                };
                let target = self
                    .referable(&resource)
                    .filter(|d| d.kind == Kind::Resource);
                if let (Some(d), Some(attr)) = (target, attribute.as_str()) {
                    let field = attr.replace('.', "_");
                    if d.class.is_some_and(|c| c.has_attr(&field)) && is_identifier(&field) {
                        return Some(format!("{}.{field}", d.local));
                    }
                }
                let target = match target {
                    Some(d) => d.local.clone(),
                    None => string(&resource),
                };
                let attribute = self.expr(&attribute, indent + 1);
                format!("{}({target}, {attribute})", self.use_name("GetAtt"))
            }
            "Fn::Sub" => match arg {
                Json::String(s) => self.sub(s)?,
                Json::Array(a) if a.len() == 2 && a[0].is_string() => {
                    let f = self.use_name("Sub");
                    let vars = self.expr(&a[1], indent + 1);
                    format!("{f}({}, {vars})", self.expr(&a[0], indent + 1))
                }
                _ => return None,
            },
            "Fn::If" => {
                let a = three?;
                let cond = self.condition(&a[0], indent + 1);
                let f = self.use_name("If");
                let t = self.expr(&a[1], indent + 1);
                let e = self.expr(&a[2], indent + 1);
                layout(&format!("{f}("), ")", &[cond, t, e], indent)
            }
            "Fn::FindInMap" => {
                let a = three?;
                let map = match a[0].as_str().and_then(|m| self.find(Kind::Mapping, m)) {
                    Some(d) => d.local.clone(),
                    None => self.expr(&a[0], indent + 1),
                };
                let f = self.use_name("FindInMap");
                let k1 = self.expr(&a[1], indent + 1);
                let k2 = self.expr(&a[2], indent + 1);
                layout(&format!("{f}("), ")", &[map, k1, k2], indent)
            }
            "Fn::Join" => {
                let a = two?;
                self.call("Join", &[&a[0], &a[1]], indent)
            }
            "Fn::Select" => {
                let a = two?;
                // Select writes its index as a string.
                let index = match &a[0] {
                    Json::Number(n) => Json::String(n.to_string()),
                    other => other.clone(),
                };
                self.call("Select", &[&index, &a[1]], indent)
            }
            "Fn::Split" => {
                let a = two?;
                self.call("Split", &[&a[0], &a[1]], indent)
            }
            "Fn::Equals" => {
                let a = two?;
                self.call("Equals", &[&a[0], &a[1]], indent)
            }
            "Fn::Cidr" => {
                let a = three?;
                self.call("Cidr", &[&a[0], &a[1], &a[2]], indent)
            }
            "Fn::And" | "Fn::Or" => {
                let a = list?;
                let f = &k[4..];
                let refs: Vec<&Json> = a.iter().collect();
                self.call(f, &refs, indent)
            }
            "Fn::Not" => {
                let a = list.filter(|a| a.len() == 1)?;
                self.call("Not", &[&a[0]], indent)
            }
            "Fn::Base64" => self.call("Base64", &[arg], indent),
            "Fn::GetAZs" => self.call("GetAZs", &[arg], indent),
            "Fn::ImportValue" => self.call("ImportValue", &[arg], indent),
            _ => return None,
        })
    }

    /// `` Sub`…` `` from an `Fn::Sub` string: `${AWS::X}` → `${AWS.X}`, `${Param}` and
    /// `${Resource}` → the declaration, `${Resource.Attr}` → its attribute; the rest literal.
    fn sub(&mut self, s: &str) -> Option<String> {
        let mut out = String::from("`");
        let mut rest = s;
        let literal = |text: &str, out: &mut String| {
            for c in text.chars() {
                match c {
                    '`' => out.push_str("\\`"),
                    '\\' => out.push_str("\\\\"),
                    '$' => out.push_str("\\$"),
                    // A template literal reads a raw CR (or CRLF) as LF.
                    '\r' => out.push_str("\\r"),
                    c => out.push(c),
                }
            }
        };
        while let Some(start) = rest.find("${") {
            literal(&rest[..start], &mut out);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                literal(&rest[start..], &mut out);
                rest = "";
                break;
            };
            let name = &after[..end];
            let piece = if name.starts_with('!') {
                None
            } else if let Some((_, p)) = PSEUDO.iter().find(|(n, _)| *n == name) {
                self.use_name("AWS");
                Some(format!("AWS.{p}"))
            } else if let Some(d) = self.referable(name) {
                Some(d.local.clone())
            } else if let Some((r, a)) = name.split_once('.') {
                match self.referable(r).filter(|d| d.kind == Kind::Resource) {
                    Some(d) => {
                        let field = a.replace('.', "_");
                        if d.class.is_some_and(|c| c.has_attr(&field)) && is_identifier(&field) {
                            Some(format!("{}.{field}", d.local))
                        } else {
                            let local = d.local.clone();
                            Some(format!(
                                "{}({local}, {})",
                                self.use_name("GetAtt"),
                                string(a)
                            ))
                        }
                    }
                    None => None,
                }
            } else {
                None
            };
            match piece {
                Some(p) => {
                    out.push_str("${");
                    out.push_str(&p);
                    out.push('}');
                }
                None => literal(&rest[start..start + 2 + end + 1], &mut out),
            }
            rest = &after[end + 1..];
        }
        literal(rest, &mut out);
        out.push('`');
        Some(format!("{}{out}", self.use_name("Sub")))
    }

    /// The names a value references (to order declarations).
    fn references(&self, v: &Json, out: &mut BTreeSet<usize>) {
        match v {
            Json::Object(o) => {
                for (k, arg) in o {
                    let mut add = |kind: Kind, id: &str| {
                        if let Some(&i) = self.by_id.get(&(space(kind), id.to_owned())) {
                            out.insert(i);
                        }
                    };
                    match (k.as_str(), arg) {
                        ("Ref", Json::String(n)) => add(Kind::Resource, n),
                        ("Condition", Json::String(n)) => add(Kind::Condition, n),
                        ("Fn::GetAtt", Json::String(s)) => {
                            add(Kind::Resource, s.split('.').next().unwrap_or_default())
                        }
                        ("Fn::GetAtt", Json::Array(a)) => {
                            if let Some(n) = a.first().and_then(Json::as_str) {
                                add(Kind::Resource, n)
                            }
                        }
                        ("Fn::If", Json::Array(a)) => {
                            if let Some(n) = a.first().and_then(Json::as_str) {
                                add(Kind::Condition, n)
                            }
                        }
                        ("Fn::FindInMap", Json::Array(a)) => {
                            if let Some(n) = a.first().and_then(Json::as_str) {
                                add(Kind::Mapping, n)
                            }
                        }
                        ("Fn::Sub", sub) => {
                            for name in crate::cfn::sub_names(sub) {
                                add(Kind::Resource, name.split('.').next().unwrap_or_default());
                            }
                        }
                        _ => {}
                    }
                    self.references(arg, out);
                }
            }
            Json::Array(a) => a.iter().for_each(|x| self.references(x, out)),
            _ => {}
        }
    }

    fn body(&self, d: &Decl) -> &'t Json {
        let section = match d.kind {
            Kind::Parameter => "Parameters",
            Kind::Mapping => "Mappings",
            Kind::Condition => "Conditions",
            Kind::Resource => "Resources",
            Kind::Output => "Outputs",
        };
        &self.template[section][&d.id]
    }

    /// Declarations in an order where each follows what it references.
    fn order(&self) -> Result<Vec<usize>, String> {
        let deps: Vec<BTreeSet<usize>> = (0..self.decls.len())
            .map(|i| {
                let mut refs = BTreeSet::new();
                let body = self.body(&self.decls[i]);
                self.references(body, &mut refs);
                for dep in depends_on(body) {
                    if let Some(&j) = self.by_id.get(&(0, dep)) {
                        refs.insert(j);
                    }
                }
                if let Some(Json::String(c)) = body.get("Condition")
                    && let Some(&j) = self.by_id.get(&(2, c.clone()))
                {
                    refs.insert(j);
                }
                refs.remove(&i);
                refs
            })
            .collect();
        // The first declaration (in template order) whose references are all declared, each
        // time: the template's order, moved only as far as references need.
        let mut scan: Vec<usize> = (0..self.decls.len()).collect();
        scan.sort_by_key(|&i| self.decls[i].kind as u8);
        let mut done = vec![false; self.decls.len()];
        let mut order = Vec::new();
        while order.len() < self.decls.len() {
            let next = scan
                .iter()
                .copied()
                .find(|&i| !done[i] && deps[i].iter().all(|&j| done[j]));
            if let Some(i) = next {
                done[i] = true;
                order.push(i);
            } else {
                let stuck: Vec<&str> = (0..self.decls.len())
                    .filter(|&i| !done[i])
                    .map(|i| self.decls[i].id.as_str())
                    .collect();
                return Err(format!(
                    "these reference each other in a cycle: {}",
                    stuck.join(", ")
                ));
            }
        }
        Ok(order)
    }

    fn declaration(&mut self, i: usize) -> Result<String, String> {
        let (id, kind, local, class, export) = {
            let d = &self.decls[i];
            (
                d.id.clone(),
                d.kind,
                d.local.clone(),
                d.class,
                d.export.clone(),
            )
        };
        let body = self.body(&self.decls[i]);
        let value = match kind {
            Kind::Parameter => self.parameter(&id, body)?,
            Kind::Mapping => format!("new {}({})", self.use_name("Mapping"), self.expr(body, 0)),
            Kind::Condition => {
                let e = self.expr(body, 0);
                format!("new {}({e})", self.use_name("Condition"))
            }
            Kind::Resource => self.resource(&id, body, class)?,
            Kind::Output => self.output(&id, body)?,
        };
        Ok(if local == export {
            format!("export const {local} = {value};\n")
        } else {
            format!(
                "const {local} = {value};\nexport {{ {local} as {} }};\n",
                string(&export)
            )
        })
    }

    fn parameter(&mut self, id: &str, body: &Json) -> Result<String, String> {
        let o = body
            .as_object()
            .ok_or_else(|| format!("parameter {id} must be an object"))?;
        let ty = o.get("Type").and_then(Json::as_str).unwrap_or("String");
        let mut options = Vec::new();
        for (k, v) in o {
            let option = match k.as_str() {
                "Type" => continue,
                "Description" => "description",
                "Default" => "defaultValue",
                "AllowedValues" => "allowedValues",
                "AllowedPattern" => "allowedPattern",
                "ConstraintDescription" => "constraintDescription",
                "MinLength" => "minLength",
                "MaxLength" => "maxLength",
                "MinValue" => "minValue",
                "MaxValue" => "maxValue",
                "NoEcho" => "noEcho",
                other => {
                    self.warnings.push(format!(
                        "parameter {id}: {other} is not a parameter property; dropped"
                    ));
                    continue;
                }
            };
            options.push(format!("{option}: {}", self.expr(v, 1)));
        }
        let f = self.use_name("Parameter");
        Ok(if options.is_empty() {
            format!("new {f}({})", string(ty))
        } else {
            format!("new {f}({}, {})", string(ty), layout("{", "}", &options, 0))
        })
    }

    fn resource(
        &mut self,
        id: &str,
        body: &Json,
        class: Option<catalog::Class>,
    ) -> Result<String, String> {
        let o = body
            .as_object()
            .ok_or_else(|| format!("resource {id} must be an object"))?;
        let props = match o.get("Properties") {
            None | Some(Json::Null) => Json::Object(Map::new()),
            Some(p @ Json::Object(_)) => p.clone(),
            Some(_) => return Err(format!("resource {id}: Properties must be an object")),
        };
        let mut attributes = Vec::new();
        for (k, v) in o {
            match k.as_str() {
                "Type" | "Properties" => {}
                "DependsOn" => {
                    let names: Vec<String> = depends_on(body)
                        .into_iter()
                        .map(|n| match self.referable(&n) {
                            Some(d) => d.local.clone(),
                            None => string(&n),
                        })
                        .collect();
                    attributes.push(format!("DependsOn: [{}]", names.join(", ")));
                }
                "Condition" => {
                    let c = self.condition(v, 1);
                    attributes.push(format!("Condition: {c}"));
                }
                "DeletionPolicy"
                | "UpdateReplacePolicy"
                | "UpdatePolicy"
                | "CreationPolicy"
                | "Metadata" => attributes.push(format!("{k}: {}", self.expr(v, 1))),
                other => self.warnings.push(format!(
                    "resource {id}: {other} is not a resource attribute chant writes; dropped"
                )),
            }
        }
        // A resource's properties one per line, as the examples write them.
        let props = match &props {
            Json::Object(o) if !o.is_empty() => {
                let parts: Vec<String> = o
                    .iter()
                    .map(|(k, v)| format!("{}: {}", key(k), self.expr(v, 1)))
                    .collect();
                block("{", "}", &parts, 0)
            }
            other => self.expr(other, 0),
        };
        let attributes = if attributes.is_empty() {
            String::new()
        } else {
            format!(", {}", layout("{", "}", &attributes, 0))
        };
        Ok(match class {
            Some(c) => {
                let name = self.use_name(class_name(c));
                format!("new {name}({props}{attributes})")
            }
            None => {
                let ty = o.get("Type").and_then(Json::as_str).unwrap_or_default();
                let f = self.use_name("resource");
                format!("{f}({}, {props}{attributes})", string(ty))
            }
        })
    }

    fn output(&mut self, id: &str, body: &Json) -> Result<String, String> {
        let o = body
            .as_object()
            .ok_or_else(|| format!("output {id} must be an object"))?;
        let value = o
            .get("Value")
            .ok_or_else(|| format!("output {id} has no Value"))?;
        let value = self.expr(value, 0);
        let mut options = Vec::new();
        for (k, v) in o {
            match k.as_str() {
                "Value" => {}
                "Description" => options.push(format!("description: {}", self.expr(v, 1))),
                "Export" => match v.get("Name") {
                    Some(n) => options.push(format!("export: {}", self.expr(n, 1))),
                    None => self
                        .warnings
                        .push(format!("output {id}: its Export has no Name; dropped")),
                },
                "Condition" => {
                    let c = self.condition(v, 1);
                    options.push(format!("condition: {c}"));
                }
                other => self.warnings.push(format!(
                    "output {id}: {other} is not an output property; dropped"
                )),
            }
        }
        let f = self.use_name("output");
        Ok(if options.is_empty() {
            format!("{f}({value}, {})", string(id))
        } else {
            format!(
                "{f}({value}, {}, {})",
                string(id),
                layout("{", "}", &options, 0)
            )
        })
    }
}

/// The export name of a catalog class (renamed when the hand-written part takes it).
fn class_name(c: catalog::Class) -> &'static str {
    modules::RENAMED
        .iter()
        .find(|(_, n)| *n == c.name())
        .map(|(alias, _)| *alias)
        .unwrap_or(c.name())
}

/// A resource's `DependsOn` names.
fn depends_on(body: &Json) -> Vec<String> {
    match body.get("DependsOn") {
        Some(Json::String(s)) => vec![s.clone()],
        Some(Json::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// `parts` between `open` and `close`, one per line.
fn block(open: &str, close: &str, parts: &[String], indent: usize) -> String {
    let pad = |n: usize| "  ".repeat(n);
    let mut out = format!("{open}\n");
    for p in parts {
        out.push_str(&pad(indent + 1));
        out.push_str(p);
        out.push_str(",\n");
    }
    out.push_str(&pad(indent));
    out.push_str(close);
    out
}

/// `parts` between `open` and `close`: on one line when short, else one per line.
fn layout(open: &str, close: &str, parts: &[String], indent: usize) -> String {
    if parts.is_empty() {
        return format!("{open}{close}");
    }
    let one = parts.join(", ");
    if one.len() + indent * 2 <= 72 && !one.contains('\n') {
        if open == "{" {
            return format!("{{ {one} }}");
        }
        return format!("{open}{one}{close}");
    }
    block(open, close, parts, indent)
}

/// The TypeScript module for `template`, and what it could not carry.
pub fn generate(template: &Json) -> Result<(String, Vec<String>), String> {
    let t = template
        .as_object()
        .ok_or("a CloudFormation template must be an object")?;
    let mut g = Gen {
        template: t,
        decls: Vec::new(),
        by_id: BTreeMap::new(),
        imports: BTreeSet::new(),
        warnings: Vec::new(),
    };
    for k in t.keys() {
        if !matches!(
            k.as_str(),
            "AWSTemplateFormatVersion"
                | "Description"
                | "Parameters"
                | "Mappings"
                | "Conditions"
                | "Resources"
                | "Outputs"
        ) {
            g.warnings.push(format!(
                "the template's {k} section is not imported; add it by hand"
            ));
        }
    }
    g.declare()?;
    let order = g.order()?;
    let mut body = String::new();
    if let Some(d) = t.get("Description").and_then(Json::as_str) {
        let f = g.use_name("templateDescription");
        let mut local = "description".to_owned();
        while g.decls.iter().any(|x| x.local == local) {
            local.insert(0, '_');
        }
        body.push_str(&format!("export const {local} = {f}({});\n\n", string(d)));
    }
    let mut last: Option<Kind> = None;
    for i in order {
        let kind = g.decls[i].kind;
        if last.is_some_and(|k| k != kind) {
            body.push('\n');
        }
        last = Some(kind);
        body.push_str(&g.declaration(i)?);
    }
    let names: Vec<String> = g.imports.iter().cloned().collect();
    let mut out = String::new();
    if !names.is_empty() {
        out.push_str(&format!(
            "import {} from \"@intentius/chant-lexicon-aws\";\n\n",
            layout("{", "}", &names, 0)
        ));
    }
    out.push_str(&body);
    Ok((out, g.warnings))
}
