//! The aws lexicon's MCP surface: `aws:diff` (the current build against a previous template)
//! and the `chant://aws/resource-catalog` and `chant://aws/examples/*` resources. Plain data in,
//! plain data out; the server namespaces them and hands `aws:diff` the previous file's text.

use chant_core::discover::Discovery;
use chant_core::lexicon::{Plugin, PluginOutput, PluginResource, PluginTool};
use serde_json::{Map, Value as Json, json};

use crate::{Aws, catalog, examples, serialize};

impl Plugin for Aws {
    fn plugin_tools(&self) -> Vec<PluginTool> {
        vec![PluginTool {
            name: "diff".into(),
            title: "CloudFormation diff".into(),
            description: "Compare current build output against previous output for AWS CloudFormation: resources added, removed and changed (with whether a change replaces the resource), and parameter and output changes. Read-only.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path to the infrastructure project directory"},
                    "output": {"type": "string", "format": "path", "description": "Path to the existing output file to compare against (JSON or YAML, inside the project)"}
                },
                "required": ["path"]
            }),
            read_only: true,
        }]
    }

    fn call_plugin_tool(
        &self,
        name: &str,
        args: &Json,
        d: &Discovery,
        entities: &[usize],
    ) -> Result<PluginOutput, String> {
        match name {
            "diff" => {
                let current = serialize::template(d, entities)?;
                let previous = match args.get("output").and_then(Json::as_str) {
                    None => Json::Object(Map::new()),
                    // JSON, else YAML; text that opens like JSON and is neither is reported
                    // with JSON's error.
                    Some(text) => match serde_json::from_str(text) {
                        Ok(v) => v,
                        Err(json) => chant_yaml::read::parse(text).map_err(|yaml| {
                            if text.trim_start().starts_with(['{', '[']) {
                                format!("output: not a JSON template: {json}")
                            } else {
                                format!("output: not a YAML template: {yaml}")
                            }
                        })?,
                    },
                };
                Ok(PluginOutput::Json(diff(&previous, &current)))
            }
            other => Err(format!("Unknown tool: aws:{other}")),
        }
    }

    fn plugin_resources(&self) -> Vec<PluginResource> {
        let mut out = vec![PluginResource {
            uri: "aws:resource-catalog".into(),
            name: "AWS Resource Catalog".into(),
            description: "JSON list of all supported AWS CloudFormation resource types".into(),
            mime_type: "application/json".into(),
        }];
        out.extend(chant_core::lexicon::Example::resources(examples()));
        out
    }

    fn read_plugin_resource(&self, uri: &str) -> Option<(String, String)> {
        if uri == "aws:resource-catalog" {
            return Some((
                "application/json".into(),
                catalog::catalog().resource_catalog_json(),
            ));
        }
        chant_core::lexicon::Example::read(examples(), uri)
    }
}

fn section(t: &Json, name: &str) -> Map<String, Json> {
    t.get(name)
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Names in `a` not in `b`, sorted.
fn only_in(a: &Map<String, Json>, b: &Map<String, Json>) -> Vec<String> {
    let mut v: Vec<String> = a.keys().filter(|k| !b.contains_key(*k)).cloned().collect();
    v.sort();
    v
}

/// What changed from `previous` to `current`: resources added, removed and modified (the
/// properties that differ, and whether a changed create-only property or type replaces it),
/// and the parameters and outputs added, removed or changed.
pub fn diff(previous: &Json, current: &Json) -> Json {
    let (old, new) = (
        section(previous, "Resources"),
        section(current, "Resources"),
    );
    let mut modified = Vec::new();
    let mut ids: Vec<&String> = new.keys().filter(|k| old.contains_key(*k)).collect();
    ids.sort();
    for id in ids {
        let (a, b) = (&old[id], &new[id]);
        if a == b {
            continue;
        }
        let ty = b.get("Type").and_then(Json::as_str).unwrap_or_default();
        let (pa, pb) = (section(a, "Properties"), section(b, "Properties"));
        let mut props: Vec<String> = pa
            .keys()
            .chain(pb.keys())
            .filter(|k| pa.get(*k) != pb.get(*k))
            .cloned()
            .collect();
        props.sort();
        props.dedup();
        let create_only: Vec<&str> = catalog::resource_of_type(ty)
            .map(|c| c.create_only().collect())
            .unwrap_or_default();
        let replaced_by: Vec<&String> = props
            .iter()
            .filter(|p| create_only.contains(&p.as_str()))
            .collect();
        let type_changed = a.get("Type") != b.get("Type");
        let mut attributes: Vec<&str> = serialize::ATTRIBUTES
            .iter()
            .copied()
            .filter(|k| a.get(*k) != b.get(*k))
            .collect();
        attributes.sort();
        modified.push(json!({
            "logicalId": id,
            "type": ty,
            "properties": props,
            "attributes": attributes,
            "replacement": type_changed || !replaced_by.is_empty(),
            "replacedBy": if type_changed { json!(["Type"]) } else { json!(replaced_by) },
        }));
    }
    let changes = |name: &str| {
        let (a, b) = (section(previous, name), section(current, name));
        let mut changed: Vec<&String> = b
            .keys()
            .filter(|k| a.get(*k).is_some_and(|v| Some(v) != b.get(*k)))
            .collect();
        changed.sort();
        json!({"added": only_in(&b, &a), "removed": only_in(&a, &b), "changed": changed})
    };
    let added = only_in(&new, &old);
    let removed = only_in(&old, &new);
    let parameters = changes("Parameters");
    let outputs = changes("Outputs");
    let quiet = |v: &Json| {
        ["added", "removed", "changed"]
            .iter()
            .all(|k| v[*k].as_array().is_some_and(Vec::is_empty))
    };
    let has_changes = !(added.is_empty()
        && removed.is_empty()
        && modified.is_empty()
        && quiet(&parameters)
        && quiet(&outputs)
        && previous.get("Conditions") == current.get("Conditions")
        && previous.get("Mappings") == current.get("Mappings"));
    json!({
        "hasChanges": has_changes,
        "resources": {"added": added, "removed": removed, "modified": modified},
        "parameters": parameters,
        "outputs": outputs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_create_only_property_replaces_the_resource() {
        let before = json!({"Resources": {
            "b": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "one", "Tags": []}},
            "q": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 1}},
            "gone": {"Type": "AWS::SNS::Topic"}
        }, "Outputs": {"A": {"Value": 1}}});
        let after = json!({"Resources": {
            "b": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "two", "Tags": []}},
            "q": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 2}, "DeletionPolicy": "Retain"},
            "new": {"Type": "AWS::SNS::Topic"}
        }, "Outputs": {"A": {"Value": 2}, "B": {"Value": 3}}});
        let d = diff(&before, &after);
        assert_eq!(d["hasChanges"], true);
        assert_eq!(d["resources"]["added"], json!(["new"]));
        assert_eq!(d["resources"]["removed"], json!(["gone"]));
        assert_eq!(
            d["resources"]["modified"],
            json!([
                {"logicalId": "b", "type": "AWS::S3::Bucket", "properties": ["BucketName"], "attributes": [], "replacement": true, "replacedBy": ["BucketName"]},
                {"logicalId": "q", "type": "AWS::SQS::Queue", "properties": ["DelaySeconds"], "attributes": ["DeletionPolicy"], "replacement": false, "replacedBy": []}
            ])
        );
        assert_eq!(
            d["outputs"],
            json!({"added": ["B"], "removed": [], "changed": ["A"]})
        );
        assert_eq!(diff(&after, &after)["hasChanges"], false);
    }
}
