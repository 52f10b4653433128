//! A tiny lexicon that exists for tests and as the worked example of `docs/architecture.md`:
//! one resource class (`Thing`), a JSON serializer, one lint rule, an importer, a plugin
//! tool and an Op activity (`tinyMeasure`). It is registered by its tests and by no binary; that it works through a registry
//! alone is what the tests show.

use chant_core::discover::Discovery;
use chant_core::import::{Generated, Imported};
use chant_core::lexicon::{
    Activity, ActivityCall, ActivityError, Catalog, Importer, Lexicon, Output, Plugin,
    PluginOutput, PluginTool, Serialized, catalog_module,
};
use chant_core::model::Value;
use chant_lint::{Finding, Rule, RuleContext, Severity};
use serde_json::{Map, Value as Json, json};

const CATALOG: &str = r#"{"schemaVersion": 1, "entries": {
  "Thing": {"kind": "resource", "resourceType": "Tiny::Thing", "attrs": ["Id"], "props": ["size:true"]}
}}"#;

pub struct Tiny;

fn catalog() -> &'static Catalog {
    static C: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
    C.get_or_init(|| Catalog::from_surface_json(CATALOG).expect("the tiny catalog parses"))
}

impl Lexicon for Tiny {
    fn name(&self) -> &'static str {
        "tiny"
    }

    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    /// Only the root module: a subpath is no module of this lexicon.
    fn runtime_subpath(&self, subpath: &str) -> Option<String> {
        subpath.is_empty().then(String::new)
    }

    fn runtime_module(&self, subpath: &str) -> Option<String> {
        subpath
            .is_empty()
            .then(|| catalog_module("tiny", "", catalog(), &[]))
    }

    fn catalog(&self) -> &Catalog {
        catalog()
    }

    /// `{"things": {<export name>: <props>}}`.
    fn serialize(&self, d: &Discovery, entities: &[usize]) -> Option<Result<Serialized, String>> {
        let things: Map<String, Json> = entities
            .iter()
            .map(|&e| (d.entities[e].name.clone(), value(d, &d.decl(e).props)))
            .collect();
        Some(Ok(Serialized::of(Output::Json(
            json!({ "things": things }),
        ))))
    }

    fn lint_rules(&self) -> Vec<Rule> {
        vec![Rule::new(
            "TINY001",
            "no-huge-things",
            Severity::Warning,
            "style",
            "A Thing should not be huge",
            no_huge_things,
        )]
    }

    fn importer(&self) -> Option<&dyn Importer> {
        Some(self)
    }

    fn plugin(&self) -> Option<&dyn Plugin> {
        Some(self)
    }

    fn activities(&self) -> Vec<&dyn Activity> {
        vec![&Measure]
    }
}

/// `tinyMeasure {size}`: `{"size": <size>, "huge": <size ≥ 100>}`; a size that is not a
/// number fails as `InvalidArgs` (a name an Op's profile can make non-retryable).
pub struct Measure;

impl Activity for Measure {
    fn name(&self) -> &'static str {
        "tinyMeasure"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let size = call
            .args
            .and_then(|a| a.get("size"))
            .and_then(Json::as_f64)
            .ok_or_else(|| ActivityError::new("InvalidArgs", "tinyMeasure needs a size number"))?;
        Ok(json!({"size": size, "huge": size >= 100.0}))
    }
}

/// A prop value as JSON: a reference to another entity is its name.
fn value(d: &Discovery, v: &Value) -> Json {
    match v {
        Value::Bool(b) => json!(b),
        Value::Number(n) => json!(n),
        Value::String(s) => json!(s),
        Value::Array(items) => items.iter().map(|i| value(d, i)).collect(),
        Value::Object(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), value(d, v)))
                .collect(),
        ),
        Value::Decl(id) => d
            .entity_of(*id)
            .map(|e| json!(d.entities[e].name))
            .unwrap_or(Json::Null),
        _ => Json::Null,
    }
}

/// TINY001: the word `huge` in a file that makes Things.
fn no_huge_things(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    let text = ctx.file.text;
    match text.find("huge") {
        Some(at) if text.contains("new Thing") => {
            vec![Finding::at(at, "this Thing is huge")]
        }
        _ => Vec::new(),
    }
}

impl Importer for Tiny {
    fn detect(&self, template: &Json) -> bool {
        template.get("tinyThings").is_some_and(Json::is_object)
    }

    fn looks_for(&self) -> &'static str {
        "a `tinyThings` mapping"
    }

    fn import(&self, template: &Json) -> Result<Imported, String> {
        let mut src = String::from("import { Thing } from \"@intentius/chant-lexicon-tiny\";\n");
        for (name, props) in template["tinyThings"].as_object().into_iter().flatten() {
            if !name.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(format!("{name}: not a name a Thing can be exported as"));
            }
            src.push_str(&format!(
                "export const {name} = new Thing({});\n",
                serde_json::to_string(props).map_err(|e| e.to_string())?
            ));
        }
        Ok(Imported {
            lexicon: "tiny",
            files: vec![Generated {
                path: "things.ts".into(),
                content: src,
            }],
            warnings: Vec::new(),
        })
    }
}

impl Plugin for Tiny {
    fn plugin_tools(&self) -> Vec<PluginTool> {
        vec![PluginTool {
            name: "count".into(),
            title: "Count Things".into(),
            description: "How many Things the project declares".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            read_only: true,
        }]
    }

    fn call_plugin_tool(
        &self,
        name: &str,
        _args: &Json,
        _d: &Discovery,
        entities: &[usize],
    ) -> Result<PluginOutput, String> {
        match name {
            "count" => Ok(PluginOutput::Json(json!({"things": entities.len()}))),
            other => Err(format!("Unknown tool: {other}")),
        }
    }
}
