//! The CloudFormation serializer: entities of the aws partition to one template.
//!
//! `{AWSTemplateFormatVersion, Parameters?, Mappings?, Conditions?, Resources, Outputs?}`;
//! the core sorts the keys afterwards. Values walk as the spec's §4.2 says: a named resource
//! is `{"Ref"}`, an attribute `{"Fn::GetAtt"}`, a property declarable is inlined, an intrinsic
//! is rendered here once logical names are known.

use std::cell::Cell;

use chant_core::discover::Discovery;
use chant_core::model::{DeclId, DeclKind, Declarable, Value};
use serde_json::{Map, Value as Json, json};

use crate::catalog;

pub const PARAMETER: &str = "AWS::CloudFormation::Parameter";
pub const CONDITION: &str = "AWS::CloudFormation::Condition";
pub const MAPPING: &str = "AWS::CloudFormation::Mapping";
pub const DEFAULT_TAGS: &str = "chant:aws:defaultTags";
pub const DESCRIPTION: &str = "chant:aws:templateDescription";
pub const STACK: &str = "AWS::CloudFormation::Stack";

/// A nested stack's name as a file name: letters, digits, `.`, `_`, `-`, not starting with a dot.
fn stack_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The directory and the file of a nested stack's child template (`None`: not a nested stack,
/// or a name that is no file name, which the serializer refuses).
pub fn child_template_file(decl: &Declarable) -> Option<(String, String)> {
    if decl.entity_type != STACK || decl.class_name != "NestedStack" {
        return None;
    }
    let path = decl.props.get("childProject").and_then(Value::as_str)?;
    let name = decl.props.get("templateName").and_then(Value::as_str)?;
    stack_file_name(name).then(|| (path.to_owned(), format!("{name}.template.json")))
}

/// A nested stack's child template, checked against the parent: the parameters it passes are
/// the child's, the child's parameters without a default are passed, the outputs the parent
/// reads are the child's; the child declares `TemplateBasePath` (which the parent passes it).
pub fn child_template(d: &Discovery, entity: usize, child_output: &str) -> Result<String, String> {
    let mut child: Json = serde_json::from_str(child_output)
        .map_err(|e| format!("the child's template is not JSON: {e}"))?;
    let decl = d.decl(entity);
    let declared: Vec<String> = child
        .get("Parameters")
        .and_then(Json::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut passed: Vec<String> = vec!["TemplateBasePath".into()];
    if let Some(Value::Object(given)) = decl.props.get("parameters") {
        for (k, v) in given {
            if matches!(v, Value::Undefined) {
                continue;
            }
            if !declared.contains(k) {
                return Err(format!(
                    "passes the parameter \"{k}\", which the child does not declare (it declares {})",
                    if declared.is_empty() {
                        "none".to_owned()
                    } else {
                        declared.join(", ")
                    }
                ));
            }
            passed.push(k.clone());
        }
    }
    if let Some(params) = child.get("Parameters").and_then(Json::as_object) {
        for (k, p) in params {
            if p.get("Default").is_none() && !passed.contains(k) {
                return Err(format!(
                    "the child's parameter \"{k}\" has no default and is not passed — add it to the nested stack's parameters"
                ));
            }
        }
    }
    let outputs: Vec<String> = child
        .get("Outputs")
        .and_then(Json::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let own = d.entities[entity].decl;
    let mut missing: Option<String> = None;
    for e in 0..d.entities.len() {
        let other = d.decl(e);
        for v in [&other.props, &other.attributes] {
            v.visit_refs(&mut |target, attribute| {
                if target == own
                    && let Some(name) = attribute.and_then(|a| a.strip_prefix("Outputs."))
                    && !outputs.iter().any(|o| o == name)
                    && missing.is_none()
                {
                    missing = Some(name.to_owned());
                }
            });
        }
    }
    if let Some(name) = missing {
        return Err(format!(
            "reads the output \"{name}\", which the child does not declare (it declares {})",
            if outputs.is_empty() {
                "none".to_owned()
            } else {
                outputs.join(", ")
            }
        ));
    }
    let t = child
        .as_object_mut()
        .ok_or("the child's template is not an object")?;
    let params = t
        .entry("Parameters")
        .or_insert_with(|| Json::Object(Map::new()));
    if let Some(params) = params.as_object_mut() {
        params.entry("TemplateBasePath").or_insert_with(|| {
            json!({"Type": "String", "Default": ".", "Description": "Base URL/path for nested stack templates"})
        });
    }
    Ok(format!("{}\n", canon::to_pretty(&canon::canonical(&child))))
}

/// The resource attributes CloudFormation knows, in the order a template lists them.
pub const ATTRIBUTES: &[&str] = &[
    "DependsOn",
    "Condition",
    "DeletionPolicy",
    "UpdateReplacePolicy",
    "UpdatePolicy",
    "CreationPolicy",
    "Metadata",
];

/// How many values one template may hold once inlined declarables are copied in (a shared
/// declarable nested in itself level by level would otherwise make 2^levels of them).
const MAX_VALUES: usize = 2_000_000;

pub(crate) struct Walker<'a> {
    d: &'a Discovery,
    walked: Cell<usize>,
    /// Inside a condition's expression (`Equals`, `And`, `Or`, `Not`), where a `Condition`
    /// declarable is `{"Condition": name}`; anywhere else it is a mistake.
    in_condition: Cell<bool>,
}

type Walked = Result<Json, String>;

impl<'a> Walker<'a> {
    pub fn new(d: &'a Discovery) -> Walker<'a> {
        Walker {
            d,
            walked: Cell::new(0),
            in_condition: Cell::new(false),
        }
    }

    fn decl(&self, id: DeclId) -> &'a Declarable {
        self.d.evaluation.decl(id)
    }

    /// The logical name of a declarable that is an entity.
    fn name(&self, id: DeclId) -> Option<&'a str> {
        self.d
            .entity_of(id)
            .map(|e| self.d.entities[e].name.as_str())
    }

    fn named(&self, id: DeclId, what: &str) -> Result<&'a str, String> {
        self.name(id).ok_or_else(|| {
            let decl = self.decl(id);
            format!(
                "{what}: a {} ({}) that is not exported has no logical name — export it",
                decl.class_name, decl.entity_type
            )
        })
    }

    /// A prop value as CloudFormation JSON.
    pub fn value(&self, v: &Value, depth: usize) -> Walked {
        let walked = self.walked.get() + 1;
        self.walked.set(walked);
        if walked > MAX_VALUES {
            return Err(format!(
                "the template holds more than {MAX_VALUES} values once shared declarables are copied in"
            ));
        }
        if depth > 128 {
            return Err("a value is nested more than 128 levels deep".into());
        }
        Ok(match v {
            Value::Undefined | Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) if !n.is_finite() => {
                return Err(format!(
                    "a number that is not finite ({n}) has no CloudFormation form"
                ));
            }
            Value::Number(n) => number(*n),
            Value::String(s) => Json::String(s.clone()),
            Value::Array(items) => Json::Array(
                items
                    .iter()
                    .map(|i| self.value(i, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(entries) => self.object(entries, depth)?,
            Value::Decl(id) => self.declarable(*id, depth)?,
            Value::AttrRef { decl, attribute } => json!({
                "Fn::GetAtt": [self.named(*decl, &format!("the attribute {attribute}"))?, catalog::dotted_attribute(attribute)]
            }),
            Value::Tagged { value, .. } => self.value(value, depth + 1)?,
            Value::Intrinsic { name, args } => self.intrinsic(name, args, depth)?,
            Value::Composite { name, .. } => {
                return Err(format!(
                    "a {name} composite is used as a value: reference one of its members instead (e.g. app.queue.Arn)"
                ));
            }
        })
    }

    /// An object, keys holding `undefined` left out.
    fn object(&self, entries: &[(String, Value)], depth: usize) -> Walked {
        let mut m = Map::new();
        for (k, v) in entries {
            if !matches!(v, Value::Undefined) {
                m.insert(k.clone(), self.value(v, depth + 1)?);
            }
        }
        Ok(Json::Object(m))
    }

    fn declarable(&self, id: DeclId, depth: usize) -> Walked {
        let decl = self.decl(id);
        match (decl.kind, self.name(id)) {
            (DeclKind::Property, _) | (DeclKind::Resource, None) => {
                self.value(&decl.props, depth + 1)
            }
            (DeclKind::Output, _) => self.value(
                decl.props.get("ref").unwrap_or(&Value::Undefined),
                depth + 1,
            ),
            (DeclKind::Resource, Some(name)) => match decl.entity_type.as_str() {
                CONDITION if self.in_condition.get() => Ok(json!({ "Condition": name })),
                CONDITION => Err(format!(
                    "the Condition \"{name}\" is used as a value: use it in If({name}, …), in another condition (And, Or, Not), or as a resource's or output's condition"
                )),
                MAPPING => Err(format!(
                    "the Mapping \"{name}\" is used as a value: read it with FindInMap({name}, key, key)"
                )),
                DEFAULT_TAGS => Err(format!(
                    "defaultTags \"{name}\" is used as a value; it applies itself to every taggable resource"
                )),
                _ => Ok(json!({ "Ref": name })),
            },
        }
    }

    /// The name a condition, mapping or resource is addressed by: a string as it is, a
    /// declarable by its logical name.
    fn target(&self, v: &Value, what: &str) -> Result<String, String> {
        match v {
            Value::String(s) => Ok(s.clone()),
            Value::Decl(id) => {
                let decl = self.decl(*id);
                let name = self.named(*id, what)?;
                match decl.entity_type.as_str() {
                    CONDITION | MAPPING | DEFAULT_TAGS | DESCRIPTION => Err(format!(
                        "{what}: {name} is a {} — it is not a resource or parameter",
                        decl.class_name
                    )),
                    _ => Ok(name.to_owned()),
                }
            }
            Value::AttrRef { decl, .. } => Ok(self.named(*decl, what)?.to_owned()),
            Value::Intrinsic { name, args } if name == "Pseudo" => {
                Ok(args.as_str().unwrap_or_default().to_owned())
            }
            other => Err(format!(
                "{what}: expected a declarable or a logical name, got {}",
                describe(other)
            )),
        }
    }

    fn intrinsic(&self, name: &str, args: &Value, depth: usize) -> Walked {
        let list = |v: &Value| -> Vec<Value> {
            match v {
                Value::Array(items) => items.clone(),
                other => vec![other.clone()],
            }
        };
        Ok(match name {
            "Pseudo" => json!({ "Ref": args.as_str().unwrap_or_default() }),
            "Ref" => json!({ "Ref": self.target(args, "Ref")? }),
            "Fn::GetAtt" => {
                let a = list(args);
                let attribute = a.get(1).and_then(Value::as_str).ok_or_else(|| {
                    "GetAtt(logicalName, attribute): the attribute must be a string".to_owned()
                })?;
                json!({ "Fn::GetAtt": [self.target(a.first().unwrap_or(&Value::Undefined), "GetAtt")?, attribute] })
            }
            "Fn::Sub" => self.sub(args, depth)?,
            "Fn::If" => {
                let a = list(args);
                if a.len() != 3 {
                    return Err(
                        "If(condition, valueIfTrue, valueIfFalse) takes three arguments".into(),
                    );
                }
                json!({ "Fn::If": [
                    self.condition_name(&a[0], "If")?,
                    self.value(&a[1], depth + 1)?,
                    self.value(&a[2], depth + 1)?,
                ] })
            }
            "Fn::FindInMap" => {
                let a = list(args);
                if a.len() != 3 {
                    return Err(
                        "FindInMap(map, topLevelKey, secondLevelKey) takes three arguments".into(),
                    );
                }
                json!({ "Fn::FindInMap": [
                    self.kind_name(&a[0], "FindInMap", MAPPING, "a Mapping")?,
                    self.value(&a[1], depth + 1)?,
                    self.value(&a[2], depth + 1)?,
                ] })
            }
            "Fn::Equals" | "Fn::And" | "Fn::Or" | "Fn::Not" => {
                let outer = self.in_condition.replace(true);
                let walked = self.value(args, depth + 1);
                self.in_condition.set(outer);
                let mut m = Map::new();
                m.insert(name.to_owned(), walked?);
                Json::Object(m)
            }
            _ => {
                let outer = self.in_condition.replace(false);
                let walked = self.value(args, depth + 1);
                self.in_condition.set(outer);
                let mut m = Map::new();
                m.insert(name.to_owned(), walked?);
                Json::Object(m)
            }
        })
    }

    /// The name of a declarable of one template part (`Condition`, `Mapping`), or a name given
    /// as a string; another declarable is refused naming what it is.
    fn kind_name(
        &self,
        v: &Value,
        what: &str,
        kind: &str,
        article: &str,
    ) -> Result<String, String> {
        if let Value::Decl(id) = v {
            let decl = self.decl(*id);
            if decl.entity_type != kind {
                return Err(format!(
                    "{what}: expected {article}, got {} ({})",
                    self.name(*id).unwrap_or("a declarable"),
                    decl.class_name
                ));
            }
            return Ok(self.named(*id, what)?.to_owned());
        }
        match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!(
                "{what}: expected {article} or its name, got {}",
                describe(other)
            )),
        }
    }

    fn condition_name(&self, v: &Value, what: &str) -> Result<String, String> {
        self.kind_name(v, what, CONDITION, "a Condition")
    }

    /// `Fn::Sub` from a tagged template's parts and values. A value CloudFormation can name
    /// in the string (an attribute, a resource, a parameter, a pseudo-parameter, a `Ref` or
    /// `GetAtt`) is written as `${…}`; a literal is written as it is; anything else (a `Join`,
    /// an `If`) becomes a variable of the `[string, {variables}]` form.
    fn sub(&self, args: &Value, depth: usize) -> Walked {
        let parts = match args.get("parts") {
            Some(Value::Array(p)) => p,
            _ => return Err("Sub: not a template".into()),
        };
        let no_values = Vec::new();
        let values = match args.get("values") {
            Some(Value::Array(v)) => v,
            _ => &no_values,
        };
        let mut text = String::new();
        let mut variables = Map::new();
        if let Some(Value::Object(given)) = args.get("variables") {
            for (k, v) in given {
                variables.insert(k.clone(), self.value(v, depth + 1)?);
            }
        }
        for (i, part) in parts.iter().enumerate() {
            text.push_str(part.as_str().unwrap_or_default());
            let Some(v) = values.get(i) else { continue };
            match self.sub_piece(v)? {
                Some(piece) => text.push_str(&piece),
                None => {
                    let mut k = variables.len();
                    while variables.contains_key(&format!("chantVar{k}")) {
                        k += 1;
                    }
                    let var = format!("chantVar{k}");
                    text.push_str(&format!("${{{var}}}"));
                    variables.insert(var, self.value(v, depth + 1)?);
                }
            }
        }
        Ok(if variables.is_empty() {
            json!({ "Fn::Sub": text })
        } else {
            json!({ "Fn::Sub": [text, variables] })
        })
    }

    /// What a `Sub` value writes into the string, or `None` for a variable.
    fn sub_piece(&self, v: &Value) -> Result<Option<String>, String> {
        Ok(Some(match v {
            // Text is text: a `${` in it must not become a reference of the template.
            Value::String(s) => s.replace("${", "${!"),
            Value::Number(n) => {
                let mut s = String::new();
                canon::write_f64(&mut s, *n);
                s
            }
            Value::Bool(b) => b.to_string(),
            Value::AttrRef { decl, attribute } => format!(
                "${{{}.{}}}",
                self.named(*decl, "Sub")?,
                catalog::dotted_attribute(attribute)
            ),
            Value::Decl(id) => {
                let decl = self.decl(*id);
                if decl.kind != DeclKind::Resource || self.name(*id).is_none() {
                    return Ok(None);
                }
                format!("${{{}}}", self.target(v, "Sub")?)
            }
            Value::Intrinsic { name, args } => match name.as_str() {
                "Pseudo" => format!("${{{}}}", args.as_str().unwrap_or_default()),
                "Ref" => format!("${{{}}}", self.target(args, "Ref")?),
                "Fn::GetAtt" => match &**args {
                    Value::Array(a) if a.len() == 2 && a[1].as_str().is_some() => format!(
                        "${{{}.{}}}",
                        self.target(&a[0], "GetAtt")?,
                        a[1].as_str().unwrap_or_default()
                    ),
                    _ => return Ok(None),
                },
                _ => return Ok(None),
            },
            Value::Undefined | Value::Null => {
                return Err(format!("Sub: a value of the template is {}", describe(v)));
            }
            _ => return Ok(None),
        }))
    }

    /// A resource's `DependsOn`: declarables (or names) to logical names, itself left out.
    fn depends_on(&self, v: &Value, own: &str) -> Result<Option<Json>, String> {
        let items = match v {
            Value::Array(items) => items.clone(),
            Value::Undefined | Value::Null => return Ok(None),
            other => vec![other.clone()],
        };
        let mut names: Vec<String> = Vec::new();
        for item in &items {
            let n = self.target(item, &format!("DependsOn of {own}"))?;
            if n != own && !names.contains(&n) {
                names.push(n);
            }
        }
        Ok(match names.len() {
            0 => None,
            1 => Some(Json::String(names.remove(0))),
            _ => Some(Json::Array(names.into_iter().map(Json::String).collect())),
        })
    }

    /// One resource of `Resources`.
    fn resource(&self, name: &str, decl: &Declarable) -> Walked {
        let mut r = Map::new();
        r.insert("Type".into(), Json::String(decl.entity_type.clone()));
        if let Json::Object(props) = self.value(&decl.props, 0)?
            && !props.is_empty()
        {
            r.insert("Properties".into(), Json::Object(props));
        }
        self.attributes(name, &decl.attributes, &mut r)?;
        Ok(Json::Object(r))
    }

    /// A resource's attributes (the second argument) into its template entry `r`.
    fn attributes(
        &self,
        name: &str,
        attributes: &Value,
        r: &mut Map<String, Json>,
    ) -> Result<(), String> {
        match attributes {
            Value::Undefined | Value::Null => {}
            Value::Object(attrs) => {
                for (k, v) in attrs {
                    if matches!(v, Value::Undefined) {
                        continue;
                    }
                    let walked = match k.as_str() {
                        "DependsOn" => self.depends_on(v, name)?,
                        "Condition" => Some(Json::String(
                            self.condition_name(v, &format!("the Condition of {name}"))?,
                        )),
                        "DeletionPolicy"
                        | "UpdateReplacePolicy"
                        | "UpdatePolicy"
                        | "CreationPolicy"
                        | "Metadata" => Some(self.value(v, 1)?),
                        other => {
                            return Err(format!(
                                "{name}: \"{other}\" is not a resource attribute — use one of {}",
                                ATTRIBUTES.join(", ")
                            ));
                        }
                    };
                    if let Some(w) = walked {
                        r.insert(k.clone(), w);
                    }
                }
            }
            other => {
                return Err(format!(
                    "{name}: the resource attributes (the second argument) must be an object, got {}",
                    describe(other)
                ));
            }
        }
        Ok(())
    }
}

/// A JavaScript number as JSON: an integer when it is one.
fn number(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0 {
        Json::from(n as i64)
    } else {
        serde_json::Number::from_f64(n)
            .map(Json::Number)
            .unwrap_or(Json::Null)
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Undefined => "undefined",
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::Decl(_) => "a declarable",
        Value::AttrRef { .. } => "an attribute reference",
        Value::Tagged { .. } => "a tagged value",
        Value::Intrinsic { .. } => "an intrinsic",
        Value::Composite { .. } => "a composite",
    }
}

/// CloudFormation's logical ids (and output names): letters and digits, at most 255.
fn logical_id(name: &str, what: &str) -> Result<(), String> {
    if !name.is_empty() && name.len() <= 255 && name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Ok(());
    }
    Err(format!(
        "{what} \"{name}\" is not a CloudFormation logical id (letters and digits only, at most 255) — rename it"
    ))
}

/// The template of the entities `entities` (the aws partition, entity order).
pub fn template(d: &Discovery, entities: &[usize]) -> Result<Json, String> {
    let w = Walker::new(d);
    let mut parameters = Map::new();
    let mut mappings = Map::new();
    let mut conditions = Map::new();
    let mut resources = Map::new();
    let mut outputs = Map::new();
    let mut output_entity: Vec<(String, String)> = Vec::new();
    let mut tags: Vec<(String, Json)> = Vec::new();
    let mut description: Option<(String, String)> = None;
    let mut nested = false;
    for &e in entities {
        let decl = d.decl(e);
        let name = d.entities[e].name.as_str();
        match decl.kind {
            DeclKind::Property => {}
            DeclKind::Output => {
                let p = &decl.props;
                let out_name = p.get("name").and_then(Value::as_str).unwrap_or(name);
                logical_id(out_name, "the output name")?;
                if let Some((_, first)) = output_entity.iter().find(|(n, _)| n == out_name) {
                    return Err(format!(
                        "Output \"{out_name}\" is declared twice (by {first} and {name}) — give one another name"
                    ));
                }
                output_entity.push((out_name.to_owned(), name.to_owned()));
                let mut o = Map::new();
                let value = p.get("ref").unwrap_or(&Value::Undefined);
                if value.is_nullish() {
                    return Err(format!("output \"{out_name}\" ({name}) has no value"));
                }
                o.insert("Value".into(), w.value(value, 1)?);
                if let Some(v) = p.get("description").filter(|v| !v.is_nullish()) {
                    o.insert("Description".into(), w.value(v, 1)?);
                }
                if let Some(v) = p.get("export").filter(|v| !v.is_nullish()) {
                    o.insert("Export".into(), json!({ "Name": w.value(v, 2)? }));
                }
                if let Some(v) = p.get("condition").filter(|v| !v.is_nullish()) {
                    o.insert(
                        "Condition".into(),
                        Json::String(
                            w.condition_name(v, &format!("the condition of output {out_name}"))?,
                        ),
                    );
                }
                outputs.insert(out_name.to_owned(), Json::Object(o));
            }
            DeclKind::Resource
                if !matches!(decl.entity_type.as_str(), DEFAULT_TAGS | DESCRIPTION)
                    && logical_id(name, "").is_err() =>
            {
                return Err(format!(
                    "the export {name:?} ({}) is not a CloudFormation logical id (letters and digits only, at most 255) — rename the export",
                    decl.class_name
                ));
            }
            DeclKind::Resource => match decl.entity_type.as_str() {
                PARAMETER => {
                    parameters.insert(name.to_owned(), w.value(&decl.props, 0)?);
                }
                CONDITION => {
                    let expr = decl.props.get("expression").unwrap_or(&Value::Undefined);
                    if expr.is_nullish() {
                        return Err(format!("Condition \"{name}\" has no expression"));
                    }
                    let outer = w.in_condition.replace(true);
                    let walked = w.value(expr, 1);
                    w.in_condition.set(outer);
                    conditions.insert(name.to_owned(), walked?);
                }
                MAPPING => {
                    let map = decl.props.get("map").unwrap_or(&Value::Undefined);
                    if !matches!(map, Value::Object(_)) {
                        return Err(format!(
                            "Mapping \"{name}\" must be an object of objects ({{ key: {{ name: value }} }})"
                        ));
                    }
                    mappings.insert(name.to_owned(), w.value(map, 1)?);
                }
                DESCRIPTION => {
                    let text = decl
                        .props
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    if let Some((first, _)) = &description {
                        return Err(format!(
                            "the template's description is declared twice (by {first} and {name})"
                        ));
                    }
                    description = Some((name.to_owned(), text.to_owned()));
                }
                DEFAULT_TAGS => {
                    let Some(Value::Array(list)) = decl.props.get("tags") else {
                        continue;
                    };
                    for t in list {
                        let key = t.get("Key").and_then(Value::as_str).ok_or_else(|| {
                            format!("defaultTags \"{name}\": every tag needs a string Key")
                        })?;
                        let value =
                            t.get("Value").filter(|v| !v.is_nullish()).ok_or_else(|| {
                                format!("defaultTags \"{name}\": the tag {key} has no Value")
                            })?;
                        let value = w.value(value, 2)?;
                        tags.retain(|(k, _)| k != key);
                        tags.push((key.to_owned(), value));
                    }
                }
                STACK if decl.class_name == "NestedStack" => {
                    let Some((_, file)) = child_template_file(decl) else {
                        return Err(format!(
                            "nested stack {name}: {:?} is not a file name (letters, digits, . _ -, not starting with a dot)",
                            decl.props
                                .get("templateName")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                        ));
                    };
                    let mut params = Map::new();
                    params.insert(
                        "TemplateBasePath".into(),
                        json!({ "Ref": "TemplateBasePath" }),
                    );
                    if let Some(Value::Object(given)) = decl.props.get("parameters") {
                        for (k, v) in given {
                            if !matches!(v, Value::Undefined) {
                                params.insert(k.clone(), w.value(v, 2)?);
                            }
                        }
                    }
                    let mut r = Map::new();
                    r.insert("Type".into(), Json::String(STACK.into()));
                    r.insert(
                        "Properties".into(),
                        json!({
                            "TemplateURL": { "Fn::Sub": format!("${{TemplateBasePath}}/{file}") },
                            "Parameters": params,
                        }),
                    );
                    w.attributes(name, &decl.attributes, &mut r)?;
                    resources.insert(name.to_owned(), Json::Object(r));
                    nested = true;
                }
                _ => {
                    resources.insert(name.to_owned(), w.resource(name, decl)?);
                }
            },
        }
    }
    if !tags.is_empty() {
        for resource in resources.values_mut() {
            apply_tags(resource, &tags);
        }
    }
    let mut t = Map::new();
    t.insert(
        "AWSTemplateFormatVersion".into(),
        Json::String("2010-09-09".into()),
    );
    if let Some((_, text)) = description {
        t.insert("Description".into(), Json::String(text));
    }
    if nested {
        parameters.insert(
            "TemplateBasePath".into(),
            json!({"Type": "String", "Default": ".", "Description": "Base URL/path for nested stack templates"}),
        );
    }
    for (key, section) in [
        ("Parameters", parameters),
        ("Mappings", mappings),
        ("Conditions", conditions),
    ] {
        if !section.is_empty() {
            t.insert(key.into(), Json::Object(section));
        }
    }
    t.insert("Resources".into(), Json::Object(resources));
    if !outputs.is_empty() {
        t.insert("Outputs".into(), Json::Object(outputs));
    }
    Ok(Json::Object(t))
}

/// Default tags into a taggable resource: the defaults whose key the resource does not set,
/// then its own, in the shape its type takes (a list of `{Key, Value}`, or a map).
fn apply_tags(resource: &mut Json, tags: &[(String, Json)]) {
    let Some(ty) = resource.get("Type").and_then(Json::as_str) else {
        return;
    };
    if !catalog::taggable(ty) {
        return;
    }
    let (property, shape) = crate::tags::property(ty);
    let r = resource.as_object_mut().expect("a resource is an object");
    let props = r
        .entry("Properties")
        .or_insert_with(|| Json::Object(Map::new()));
    let Some(props) = props.as_object_mut() else {
        return;
    };
    let own = props.remove(property);
    let merged = match (own, shape) {
        (Some(Json::Object(mut own)), _) => {
            let mut m: Map<String, Json> = tags
                .iter()
                .filter(|(k, _)| !own.contains_key(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            m.append(&mut own);
            Json::Object(m)
        }
        (Some(Json::Array(own)), _) => {
            let keys: Vec<&Json> = own.iter().filter_map(|t| t.get("Key")).collect();
            let mut merged: Vec<Json> = tags
                .iter()
                .filter(|(k, _)| !keys.iter().any(|own| own.as_str() == Some(k.as_str())))
                .map(|(k, v)| json!({ "Key": k, "Value": v }))
                .collect();
            merged.extend(own);
            Json::Array(merged)
        }
        // An intrinsic or anything else the resource computes is left as it is.
        (Some(other), _) => other,
        (None, crate::tags::Shape::Map) => Json::Object(tags.iter().cloned().collect()),
        (None, crate::tags::Shape::List) => Json::Array(
            tags.iter()
                .map(|(k, v)| json!({ "Key": k, "Value": v }))
                .collect(),
        ),
    };
    props.insert(property.to_owned(), merged);
}
