//! The GitLab lexicon's MCP plugin surface: tools over the built pipeline and the catalog and
//! example resources. Plain data in, plain data out; the server namespaces them.

use chant_core::discover::Discovery;
use chant_yaml::gitlab::Yaml;

use super::{Gitlab, catalog, checks, examples, pipeline_yaml, sections};

fn path_schema(extra: Option<(&str, &str)>) -> serde_json::Value {
    let mut props = serde_json::Map::new();
    props.insert("path".into(), serde_json::json!({"type": "string", "description": "Path to the chant project directory (default: the server's project)"}));
    let mut required = Vec::new();
    if let Some((name, description)) = extra {
        props.insert(
            name.into(),
            serde_json::json!({"type": "string", "description": description}),
        );
        required.push(name);
    }
    let mut schema = serde_json::json!({"type": "object", "properties": props});
    if !required.is_empty() {
        schema["required"] = serde_json::json!(required);
    }
    schema
}

impl chant_core::lexicon::Plugin for Gitlab {
    fn plugin_tools(&self) -> Vec<chant_core::lexicon::PluginTool> {
        use chant_core::lexicon::PluginTool;
        vec![
            PluginTool {
                name: "pipeline-yaml".into(),
                title: "GitLab pipeline YAML".into(),
                description: "Build the project and return the generated .gitlab-ci.yml as a string. Read-only.".into(),
                input_schema: path_schema(None),
                read_only: true,
            },
            PluginTool {
                name: "pipeline".into(),
                title: "GitLab pipeline stages and jobs".into(),
                description: "Build the pipeline and return its stages and jobs (name, stage, and the entity each job comes from). Read-only.".into(),
                input_schema: path_schema(None),
                read_only: true,
            },
            PluginTool {
                name: "checks".into(),
                title: "GitLab post-synth checks".into(),
                description: "Build the pipeline and return the post-synth findings (timeouts, digest pinning, attacker-controllable variables, …) as JSON. Read-only.".into(),
                input_schema: path_schema(None),
                read_only: true,
            },
        ]
    }

    fn call_plugin_tool(
        &self,
        name: &str,
        _args: &serde_json::Value,
        d: &Discovery,
        entities: &[usize],
    ) -> Result<chant_core::lexicon::PluginOutput, String> {
        use chant_core::lexicon::PluginOutput;
        match name {
            "pipeline-yaml" => Ok(PluginOutput::Text(pipeline_yaml(d, entities)?)),
            "pipeline" => {
                let (stages, sections) = sections(d, entities)?;
                let jobs: Vec<serde_json::Value> = sections
                    .iter()
                    .filter(|s| s.kind == "job")
                    .map(|s| {
                        let stage = s.props.get("stage").and_then(Yaml::as_str);
                        serde_json::json!({"name": s.name, "stage": stage.unwrap_or("test")})
                    })
                    .collect();
                Ok(PluginOutput::Json(
                    serde_json::json!({"stages": stages, "jobs": jobs}),
                ))
            }
            "checks" => {
                let findings: Vec<serde_json::Value> = checks::run(d, entities)
                    .into_iter()
                    .map(|f| serde_json::json!({"entity": f.entity, "severity": if f.error { "error" } else { "warning" }, "message": f.message}))
                    .collect();
                Ok(PluginOutput::Json(
                    serde_json::json!({"count": findings.len(), "findings": findings}),
                ))
            }
            other => Err(format!("Unknown tool: gitlab:{other}")),
        }
    }

    fn plugin_resources(&self) -> Vec<chant_core::lexicon::PluginResource> {
        use chant_core::lexicon::PluginResource;
        let mut out = vec![PluginResource {
            uri: "gitlab:resource-catalog".into(),
            name: "GitLab CI Entity Catalog".into(),
            description: "JSON list of all supported GitLab CI entity types".into(),
            mime_type: "application/json".into(),
        }];
        out.extend(chant_core::lexicon::Example::resources(examples()));
        out
    }

    fn read_plugin_resource(&self, uri: &str) -> Option<(String, String)> {
        if uri == "gitlab:resource-catalog" {
            return Some(("application/json".into(), catalog().resource_catalog_json()));
        }
        chant_core::lexicon::Example::read(examples(), uri)
    }
}
