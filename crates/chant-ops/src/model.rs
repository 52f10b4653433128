//! The Op model: what an `*.op.ts` declares, read from the evaluated declarable, and discovery.

use std::path::{Path, PathBuf};

pub use chant_core::config::parse_duration;
use chant_core::confine::{Visit, WalkLimits, Walls};
use chant_core::model::{Budget, DeclKind, Evaluator, Value};
use serde_json::{Map, Value as Json};

/// The resource type of an Op declarable.
pub const OP_TYPE: &str = "Temporal::Op";

/// One step of a phase.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Activity {
        function: String,
        args: Option<Json>,
        profile: Option<String>,
        outcome: Option<(String, Option<String>)>,
    },
    Gate {
        gate: String,
        timeout: String,
        description: Option<String>,
        /// Only a signed, verified approval passes (`gate(name, { attested: true })`).
        attested: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub name: String,
    pub steps: Vec<Step>,
    pub parallel: bool,
}

/// A discovered Op.
#[derive(Clone, Debug, PartialEq)]
pub struct OpDef {
    pub name: String,
    pub overview: String,
    pub phases: Vec<Phase>,
    pub on_failure: Vec<Phase>,
    pub labels: Map<String, Json>,
    pub depends: Vec<String>,
    pub never_over_mcp: bool,
    /// The Op's props as canonical-JSON data (what the plan digest covers).
    pub props: Json,
    pub file: PathBuf,
}

/// Op and gate names become ledger paths and command words: `^[a-z0-9][a-z0-9._-]*$`.
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes.all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
        && !name.contains("..")
}

/// JSON of a prop value as `JSON.stringify` would write it: `undefined` dropped from objects
/// (`null` in arrays), a nested declarable as its enumerable keys (a resource's attribute
/// references, a property declarable `{}`).
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Undefined | Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => number(*n),
        Value::String(s) => Json::String(s.clone()),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Object(entries) => Json::Object(
            entries
                .iter()
                .filter(|(_, v)| !matches!(v, Value::Undefined))
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
        Value::Decl(_) => Json::Object(Map::new()),
        Value::AttrRef { attribute, .. } => {
            serde_json::json!({"__attrRef": {"attribute": attribute}})
        }
        Value::Tagged { value, .. } | Value::Intrinsic { args: value, .. } => to_json(value),
        Value::Composite { members, .. } => Json::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
    }
}

fn number(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Json::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

fn text(o: &Map<String, Json>, key: &str) -> Option<String> {
    o.get(key).and_then(Json::as_str).map(str::to_owned)
}

fn phases(v: Option<&Json>) -> Result<Vec<Phase>, String> {
    let Some(items) = v.and_then(Json::as_array) else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .map(|p| {
            let p = p.as_object().ok_or("a phase must be an object")?;
            let name = text(p, "name").ok_or("a phase needs a name")?;
            let steps = p
                .get("steps")
                .and_then(Json::as_array)
                .ok_or_else(|| format!("phase \"{name}\" needs steps"))?
                .iter()
                .map(|s| step(s, &name))
                .collect::<Result<_, _>>()?;
            Ok(Phase {
                name,
                steps,
                parallel: p.get("parallel") == Some(&Json::Bool(true)),
            })
        })
        .collect()
}

fn step(s: &Json, phase: &str) -> Result<Step, String> {
    let s = s
        .as_object()
        .ok_or_else(|| format!("a step of phase \"{phase}\" is not an object"))?;
    match s.get("kind").and_then(Json::as_str) {
        Some("gate") => {
            let gate = text(s, "gate")
                .or_else(|| text(s, "signalName"))
                .ok_or_else(|| format!("a gate of phase \"{phase}\" has no name"))?;
            if gate != "." && !valid_name(&gate) {
                return Err(format!(
                    "gate name \"{gate}\" must match ^[a-z0-9][a-z0-9._-]*$"
                ));
            }
            Ok(Step::Gate {
                gate,
                timeout: text(s, "timeout").unwrap_or_else(|| "48h".into()),
                description: text(s, "description"),
                attested: s.get("attested") == Some(&Json::Bool(true)),
            })
        }
        Some("activity") | None => {
            let function = text(s, "fn")
                .ok_or_else(|| format!("an activity of phase \"{phase}\" has no fn"))?;
            let outcome = s
                .get("outcomeAttribute")
                .and_then(Json::as_object)
                .and_then(|o| Some((text(o, "name")?, text(o, "from"))));
            Ok(Step::Activity {
                function,
                args: s.get("args").cloned(),
                profile: text(s, "profile"),
                outcome,
            })
        }
        Some(other) => Err(format!(
            "unknown step kind \"{other}\" in phase \"{phase}\""
        )),
    }
}

/// Reads an Op from its declarable's props.
pub fn op_from_props(props: Json, file: &Path) -> Result<OpDef, String> {
    let o = props.as_object().ok_or("default export is not an object")?;
    let (Some(name), Some(_)) = (text(o, "name"), o.get("phases").and_then(Json::as_array)) else {
        return Err("default export is not a valid Op (missing name or phases)".into());
    };
    if !valid_name(&name) {
        return Err(format!(
            "Op name \"{name}\" must match ^[a-z0-9][a-z0-9._-]*$"
        ));
    }
    Ok(OpDef {
        overview: text(o, "overview").unwrap_or_default(),
        phases: phases(o.get("phases"))?,
        on_failure: phases(o.get("onFailure"))?,
        labels: o
            .get("labels")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default(),
        depends: o
            .get("depends")
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|d| d.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        never_over_mcp: o.get("neverOverMcp") == Some(&Json::Bool(true)),
        file: file.to_path_buf(),
        name,
        props,
    })
}

/// The Ops of a repository and the problems found on the way.
#[derive(Clone, Debug, Default)]
pub struct OpSet {
    pub ops: Vec<OpDef>,
    pub errors: Vec<String>,
}

impl OpSet {
    pub fn get(&self, name: &str) -> Option<&OpDef> {
        self.ops.iter().find(|o| o.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.ops.iter().map(|o| o.name.as_str()).collect()
    }
}

/// `*.op.ts` files under `root` (dot directories, `node_modules` and `dist` skipped; symlinks
/// out of `root` not followed; the walk bounded).
pub fn op_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let walls = Walls::new(root).map_err(|e| e.to_string())?;
    walls
        .walk(walls.root(), WalkLimits::default(), &mut |e| {
            let take = if e.is_dir {
                !(e.name.starts_with('.') || e.name == "node_modules" || e.name == "dist")
            } else {
                e.name.ends_with(".op.ts")
                    && !e.name.ends_with(".test.ts")
                    && !e.name.ends_with(".spec.ts")
            };
            if take { Visit::Take } else { Visit::Skip }
        })
        .map_err(|e| e.to_string())
}

/// Discovers every Op under `root` (the git top level), evaluating each file in the sandbox.
pub fn discover(root: &Path, evaluator: &dyn Evaluator, budget: &Budget) -> OpSet {
    let files = match op_files(root) {
        Ok(f) => f,
        Err(e) => {
            return OpSet {
                errors: vec![e],
                ..Default::default()
            };
        }
    };
    let evaluation = evaluator.evaluate(root, &files, budget);
    let mut set = OpSet {
        errors: evaluation
            .errors
            .iter()
            .map(|e| e.message.clone())
            .collect(),
        ..Default::default()
    };
    for module in &evaluation.modules {
        let file = module.file.display().to_string();
        let default = module
            .exports
            .iter()
            .find(|(n, _)| n == "default")
            .map(|(_, v)| v);
        let props = match default {
            Some(Value::Decl(id)) => {
                let decl = evaluation.decl(*id);
                if decl.kind != DeclKind::Resource || decl.entity_type != OP_TYPE {
                    set.errors.push(format!(
                        "{file}: default export is not a valid Op (missing name or phases)"
                    ));
                    continue;
                }
                to_json(&decl.props)
            }
            Some(v @ Value::Object(_)) => to_json(v),
            _ => {
                set.errors
                    .push(format!("{file}: default export is not an object"));
                continue;
            }
        };
        match op_from_props(props, &module.file) {
            Ok(op) => {
                if let Some(first) = set.ops.iter().find(|o| o.name == op.name) {
                    set.errors.push(format!(
                        "Duplicate Op name \"{}\" in {file} and {}",
                        op.name,
                        first.file.display()
                    ));
                } else {
                    set.ops.push(op);
                }
            }
            Err(e) => set.errors.push(format!("{file}: {e}")),
        }
    }
    set.ops.sort_by(|a, b| canon::locale_cmp(&a.name, &b.name));
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_can_become_paths() {
        for ok in ["greet", "prod-rollout", "a.b_c", "9lives"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "Greet", "-x", "a/b", "..", "a..b", "x\"y", "a b", "_x"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn ops_read_from_props() {
        let props = serde_json::json!({"name": "hello", "overview": "o", "phases": [{"name": "P", "steps": [
            {"kind": "activity", "fn": "shellCmd", "args": {"cmd": "echo"}},
            {"kind": "gate", "signalName": "ok-to-go"}
        ], "parallel": true}], "neverOverMcp": true, "labels": {"Env": "prod"}});
        let op = op_from_props(props, Path::new("x.op.ts")).unwrap();
        assert!(op.never_over_mcp && op.phases[0].parallel);
        assert_eq!(
            op.phases[0].steps[1],
            Step::Gate {
                gate: "ok-to-go".into(),
                timeout: "48h".into(),
                description: None,
                attested: false,
            }
        );
        let err =
            op_from_props(serde_json::json!({"name": "x"}), Path::new("x.op.ts")).unwrap_err();
        assert_eq!(
            err,
            "default export is not a valid Op (missing name or phases)"
        );
        let err = op_from_props(
            serde_json::json!({"name": "../etc", "phases": []}),
            Path::new("x.op.ts"),
        )
        .unwrap_err();
        assert!(err.contains("must match"));
    }
}
