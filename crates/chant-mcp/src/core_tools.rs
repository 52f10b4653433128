//! The core tools (build, lint, import, explain, scaffold, search, composites), each declared
//! once beside its handler.

use std::path::PathBuf;

use chant_core::build::Format;
use chant_core::explain;
use chant_core::model::Budget;
use chant_core::project::Project;
use mcp::{Args, Arguments, RequestContext, ToolAnnotations, ToolError, ToolOutput};
use serde_json::{Value, json};

use crate::{READ_ONLY, State, ToolDecl, budget, catalog, limit, required, schema, string_prop};

/// In the order `tools/list` gives them.
pub(crate) const TOOLS: &[ToolDecl] = &[BUILD, LINT, IMPORT, EXPLAIN, SCAFFOLD, SEARCH, COMPOSITES];

/// The project the `path` argument names (inside the root); a path that is not there is named.
fn project_at(
    state: &State,
    args: &Args,
    budget: &Budget,
) -> Result<(PathBuf, Project), ToolError> {
    let given = required(args, "path")?;
    let path = state.resolve("path", given)?;
    if !path.exists() {
        return Err(ToolError(format!("{given}: no such file or directory")));
    }
    let project = state.locate(&path, budget)?;
    Ok((path, project))
}

pub(crate) const BUILD: ToolDecl = ToolDecl {
    name: "build",
    title: "Build",
    description: "Build chant infrastructure code and generate output for the target lexicon.",
    schema: build_schema,
    annotations: READ_ONLY,
    permit: true,
    checks: crate::Checks::Types,
    handler: tool_build,
};

fn build_schema() -> Value {
    schema(
        &[
            (
                "path",
                string_prop("Path to the infrastructure directory or file"),
            ),
            (
                "output",
                string_prop(
                    "Accepted by the schema and currently ignored; the built output always comes back in the response",
                ),
            ),
            (
                "format",
                json!({"type": "string", "enum": ["json", "yaml"], "description": "Output format (default: json)"}),
            ),
        ],
        &["path"],
    )
}

fn tool_build(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let budget = budget(ctx);
    let format = match args.str("format").unwrap_or("json") {
        "json" => Format::Json,
        "yaml" => Format::Yaml,
        other => {
            return Err(ToolError(format!(
                "format must be \"json\" or \"yaml\", got \"{other}\""
            )));
        }
    };
    let (_, project) = project_at(state, &args, &budget)?;
    let (_, result) = state.chant.build(&project, format, None, &budget);
    let built = result.map_err(|f| ToolError(f.message()))?;
    // A post-synth error fails the build here as it fails `chant build`: the template would
    // be refused, or unsafe, when deployed.
    let errors: Vec<String> = built
        .findings
        .iter()
        .filter(|(_, f)| f.error)
        .map(|(lexicon, f)| format!("[{}] {} ({lexicon})", f.entity, f.message))
        .collect();
    if !errors.is_empty() {
        return Err(ToolError(errors.join("; ")));
    }
    let mut output = built.output;
    for (name, content) in &built.files {
        output.push_str(&format!("\n--- {name} ---\n{content}"));
    }
    Ok(ToolOutput::Json(json!({
        "success": true,
        "resourceCount": built.resource_count,
        "output": output,
        "format": if format == Format::Json { "json" } else { "yaml" },
    })))
}

pub(crate) const LINT: ToolDecl = ToolDecl {
    name: "lint",
    title: "Lint",
    description: "Lint chant infrastructure code and report issues.",
    schema: lint_schema,
    annotations: ToolAnnotations {
        // `fix: true` rewrites source files (the same fixes again change nothing).
        read_only: Some(false),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    },
    permit: true,
    checks: crate::Checks::Types,
    handler: tool_lint,
};

fn lint_schema() -> Value {
    schema(
        &[
            (
                "path",
                string_prop("Path to the infrastructure directory or file"),
            ),
            (
                "fix",
                json!({"type": "boolean", "description": "Auto-fix fixable issues (default: false)"}),
            ),
        ],
        &["path"],
    )
}

/// `{success, errorCount, warningCount, diagnostics, output}`; findings never fail the call,
/// a path that is not there or a broken lint config does.
fn tool_lint(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    // Its type was checked against the schema before the call (`check_types`).
    let fix = args.bool("fix").unwrap_or(false);
    let (path, project) = project_at(state, &args, &budget(ctx))?;
    let setup =
        chant_core::lint::setup(&state.chant.lexicons, &project, &path, &[]).map_err(ToolError)?;
    let linter = setup.linter();
    let result = if fix {
        linter
            .fix(&setup.files)
            .map_err(|e| ToolError(format!("could not write the fixes: {e}")))?
            .0
    } else {
        linter.lint(&setup.files)
    };
    Ok(ToolOutput::Json(result.to_json()))
}

pub(crate) const IMPORT: ToolDecl = ToolDecl {
    name: "import",
    title: "Import",
    description: "Import external templates and convert them to chant TypeScript.",
    schema: import_schema,
    annotations: ToolAnnotations {
        // `force: true` replaces files that exist.
        read_only: Some(false),
        destructive: Some(true),
        idempotent: Some(true),
        open_world: Some(false),
    },
    permit: true,
    checks: crate::Checks::Types,
    handler: tool_import,
};

fn import_schema() -> Value {
    schema(
        &[
            ("source", string_prop("Path to the template file to import")),
            (
                "output",
                string_prop("Output directory (default: ./infra/)"),
            ),
            (
                "force",
                json!({"type": "boolean", "description": "Replace files that already exist in the output directory (default: false: they are kept and named in warnings)"}),
            ),
        ],
        &["source"],
    )
}

/// `{success: true, lexicon, generatedFiles, warnings}`; both paths stay inside the project,
/// existing files are kept (and named in `warnings`) unless `force`, and any failure fails the
/// call.
fn tool_import(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let source = state.resolve("source", required(&args, "source")?)?;
    let output = state.resolve("output", args.str("output").unwrap_or("./infra/"))?;
    let force = args.bool("force").unwrap_or(false);
    let report = chant_core::import::import_file(
        &state.chant.lexicons,
        &source,
        &output,
        &state.loaded,
        force,
    )
    .map_err(ToolError)?;
    Ok(ToolOutput::Json(json!({
        "success": true,
        "lexicon": report.lexicon,
        "generatedFiles": report.written,
        "warnings": report.warnings,
    })))
}

pub(crate) const EXPLAIN: ToolDecl = ToolDecl {
    name: "explain",
    title: "Explain",
    description: "Summarize the resources in a chant project.",
    schema: explain_schema,
    annotations: READ_ONLY,
    permit: true,
    checks: crate::Checks::Types,
    handler: tool_explain,
};

fn explain_schema() -> Value {
    schema(
        &[
            ("path", string_prop("Path to the infrastructure directory")),
            (
                "format",
                json!({"type": "string", "enum": ["markdown", "json", "okf"], "description": "Output format (default: markdown)"}),
            ),
        ],
        &["path"],
    )
}

fn tool_explain(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let format = args.str("format").unwrap_or("markdown");
    if !matches!(format, "markdown" | "json" | "okf") {
        return Err(ToolError(format!(
            "format must be \"markdown\", \"json\" or \"okf\", got \"{format}\""
        )));
    }
    let budget = budget(ctx);
    let (_, project) = project_at(state, &args, &budget)?;
    let d = state.chant.discover(&project, &budget);
    Ok(match format {
        "markdown" => ToolOutput::Text(explain::markdown(&d)),
        "json" => ToolOutput::Json(explain::json_with_knowledge(&d, project.dir())),
        _ => {
            let (mut bundle, errors) = explain::okf(&d, &project.path);
            bundle["errors"] = json!(errors);
            ToolOutput::Json(bundle)
        }
    })
}

pub(crate) const SCAFFOLD: ToolDecl = ToolDecl {
    name: "scaffold",
    title: "Scaffold",
    description: "Generate starter files for a chant project.",
    schema: scaffold_schema,
    annotations: READ_ONLY,
    permit: false,
    checks: crate::Checks::Types,
    handler: tool_scaffold,
};

fn scaffold_schema() -> Value {
    schema(
        &[
            (
                "pattern",
                string_prop("Resource pattern to scaffold (e.g. \"s3-bucket\", \"pipeline\")"),
            ),
            (
                "lexicon",
                string_prop("Lexicon to use for templates. Auto-detected if omitted"),
            ),
            (
                "template",
                string_prop(
                    "Named init template (e.g. \"node-pipeline\"). Given one, the template's own source files come back instead of a pattern match",
                ),
            ),
        ],
        &["pattern"],
    )
}

fn tool_scaffold(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let pattern = required(&args, "pattern")?;
    let lexicon = args.str("lexicon");
    let template = args.str("template");
    Ok(ToolOutput::Json(catalog::scaffold(
        &state.lexicons(),
        pattern,
        lexicon,
        template,
    )))
}

pub(crate) const SEARCH: ToolDecl = ToolDecl {
    name: "search",
    title: "Search",
    description: "Search the resource types and the composites of the loaded lexicons.",
    schema: search_schema,
    annotations: READ_ONLY,
    permit: false,
    checks: crate::Checks::Types,
    handler: tool_search,
};

fn search_schema() -> Value {
    schema(
        &[
            (
                "query",
                string_prop("Search query (case-insensitive substring match)"),
            ),
            ("lexicon", string_prop("Filter to a specific lexicon")),
            (
                "limit",
                json!({"type": "number", "description": "Maximum results (default: 20)"}),
            ),
        ],
        &["query"],
    )
}

fn tool_search(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let query = required(&args, "query")?;
    Ok(ToolOutput::Json(catalog::search(
        &state.lexicons(),
        query,
        args.str("lexicon"),
        limit(&args, 20)?,
    )))
}

pub(crate) const COMPOSITES: ToolDecl = ToolDecl {
    name: "composites",
    title: "Composites",
    description: "List the composites the loaded lexicons export.",
    schema: composites_schema,
    annotations: READ_ONLY,
    permit: false,
    checks: crate::Checks::Types,
    handler: tool_composites,
};

fn composites_schema() -> Value {
    schema(
        &[
            ("lexicon", string_prop("Only composites from this lexicon")),
            (
                "query",
                string_prop(
                    "Keyword matched against the name, description, bundled resource kinds and parameter names",
                ),
            ),
            (
                "limit",
                json!({"type": "number", "description": "Maximum composites (default: 50)"}),
            ),
        ],
        &[],
    )
}

fn tool_composites(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    Ok(ToolOutput::Json(catalog::composites(
        &state.lexicons(),
        args.str("lexicon"),
        args.str("query"),
        limit(&args, 50)?,
    )))
}
