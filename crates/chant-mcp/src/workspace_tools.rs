//! The workspace tools, served at or inside a declared workspace: reads run
//! `<this chant> workspace <argv> --json` in the server's directory and return the document it
//! printed, unchanged (an error document is a document); writes call the functions
//! `chant workspace records new|amend|review|close` call, in process, with the MCP rules on
//! top: a new record opens in the kind's first state, and the source block says the proposal
//! came over MCP and from which client.
//!
//! Every argument is checked here before anything runs, in the seed's words; a string that
//! starts with `-` is refused so that no argument can be read as a flag.

use std::process::{Command, Stdio};

use chant_workspace::records::Env;
use chant_workspace::write::{self, Review, Source};
use mcp::{Arguments, RequestContext, ToolAnnotations, ToolError, ToolOutput};
use serde_json::{Map, Value, json};

use crate::{Checks, READ_ONLY, State, ToolDecl, schema};

pub(crate) const TOOLS: &[ToolDecl] = &[LS, RECORDS, NEW, AMEND, REVIEW, CLOSE];

/// The sentence every write tool's description ends with, for the model that reads it.
macro_rules! proposals {
    () => {
        " Records are proposals until people review them: a write here changes a file in the working tree and commits nothing, and a record counts only once its quorum of reviewers agrees. `by` must name the person or agent that actually proposed or decided it; it is recorded as given."
    };
}

const WRITES: ToolAnnotations = ToolAnnotations {
    read_only: Some(false),
    destructive: Some(false),
    idempotent: Some(false),
    open_world: Some(false),
};

fn obj(args: &Arguments) -> Map<String, Value> {
    match args {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}

/// The checks every workspace tool makes first: each key known, required ones present,
/// strings non-empty and not starting with `-`, booleans true or false, objects objects.
fn check(args: &Map<String, Value>, spec: &[(&str, Ty, bool)]) -> Result<(), ToolError> {
    for (key, ty, required) in spec {
        let v = args.get(*key).filter(|v| !v.is_null());
        let Some(v) = v else {
            if *required {
                return Err(ToolError(format!("{key} is required")));
            }
            continue;
        };
        match ty {
            Ty::Str => match v {
                Value::String(s) if s.trim().is_empty() => {
                    return Err(ToolError(format!("{key} must be a non-empty string")));
                }
                Value::String(s) if s.starts_with('-') => {
                    return Err(ToolError(format!("{key} may not start with -: \"{s}\"")));
                }
                Value::String(_) => {}
                _ => return Err(ToolError(format!("{key} must be a non-empty string"))),
            },
            Ty::Kind => match v {
                Value::String(s) if s.starts_with('-') => {
                    return Err(ToolError(format!("{key} may not start with -: \"{s}\"")));
                }
                Value::String(s) if !s.trim().is_empty() => {}
                _ => {
                    return Err(ToolError(
                        "kind must be a kind file, or a list of them".into(),
                    ));
                }
            },
            Ty::Bool => {
                if !v.is_boolean() {
                    return Err(ToolError(format!("{key} must be true or false")));
                }
            }
            Ty::Object => {
                if !v.is_object() {
                    return Err(ToolError(format!("{key} must be a JSON object")));
                }
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Ty {
    Str,
    Kind,
    Bool,
    Object,
}

/// A `kind` that names a file (it has a `/` or a module's extension) must be inside the
/// server's directory, links followed; a bare name is a declared kind's.
fn confine_kind(state: &State, args: &Map<String, Value>) -> Result<(), ToolError> {
    if let Some(k) = s(args, "kind")
        && (k.contains('/')
            || k.contains('\\')
            || k.ends_with(".mjs")
            || k.ends_with(".js")
            || k.ends_with(".ts"))
    {
        state.resolve("kind", k)?;
    }
    Ok(())
}

fn s<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn b(args: &Map<String, Value>, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Runs `<chant> workspace <argv> --json` in the server's directory and returns the document.
fn run_read(state: &State, argv: &[String]) -> Result<ToolOutput, ToolError> {
    let shown = format!("workspace {}", argv.join(" "));
    let Some(exe) = &state.exe else {
        return Err(ToolError(format!(
            "chant {shown} --json cannot run: this server knows no chant executable"
        )));
    };
    let out = Command::new(exe)
        .arg("workspace")
        .args(argv)
        .arg("--json")
        .current_dir(&state.root)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ToolError(format!("chant {shown} --json cannot run: {e}")))?;
    match serde_json::from_slice::<Value>(&out.stdout) {
        Ok(doc) if doc.is_object() => Ok(ToolOutput::Json(doc)),
        _ => Err(ToolError(format!(
            "chant {shown} --json printed no JSON document: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

const LS: ToolDecl = ToolDecl {
    name: "workspace-ls",
    title: "Workspace members",
    description: "The document of `chant workspace ls --json` (ls.schema.json): the workspace's members with their kinds, directories, record kinds and agent sessions, each unreadable member with its reason code, and the example groups.",
    schema: ls_schema,
    annotations: READ_ONLY,
    permit: false,
    checks: Checks::Own,
    handler: tool_ls,
};

fn ls_schema() -> Value {
    schema(
        &[(
            "at",
            json!({"type": "string", "description": "Read the workspace as it was at this commit (--at)"}),
        )],
        &[],
    )
}

fn tool_ls(state: &State, args: Arguments, _ctx: &RequestContext) -> Result<ToolOutput, ToolError> {
    let args = obj(&args);
    check(&args, &[("at", Ty::Str, false)])?;
    let mut argv = vec!["ls".to_owned()];
    if let Some(at) = s(&args, "at") {
        argv.extend(["--at".into(), at.into()]);
    }
    run_read(state, &argv)
}

const RECORDS: ToolDecl = ToolDecl {
    name: "workspace-records",
    title: "Workspace records",
    description: "The document of `chant workspace records --json` (records.schema.json): every record a kind locates, each checked against the kind's schema, with supersession, evidence pins, digest, review quorum and provenance. With since, the changes since a revision instead (records-since.schema.json). With uncommitted, only the records the working tree holds modified or new against HEAD; with id, only that record is kept in records, and summary stays the command's.",
    schema: records_schema,
    annotations: READ_ONLY,
    permit: false,
    checks: Checks::Own,
    handler: tool_records,
};

fn records_schema() -> Value {
    schema(
        &[
            (
                "kind",
                json!({"type": "string", "description": "A kind file (from the server's directory) or a kind the declaration names (--kind); default: every declared kind"}),
            ),
            (
                "current",
                json!({"type": "boolean", "description": "Leave out records a closed record supersedes (--current)"}),
            ),
            (
                "uncommitted",
                json!({"type": "boolean", "description": "Only the records the working tree holds modified or new against HEAD (--uncommitted); takes no at or since"}),
            ),
            (
                "since",
                json!({"type": "string", "description": "What changed since a revision (--since): records new and removed, states, verdicts, supersessions and pins, to at or the working tree (records-since.schema.json)"}),
            ),
            (
                "id",
                json!({"type": "string", "description": "Keep only this record in records"}),
            ),
            (
                "at",
                json!({"type": "string", "description": "Read the records as they were at this commit (--at)"}),
            ),
        ],
        &[],
    )
}

fn tool_records(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = obj(&args);
    check(
        &args,
        &[
            ("kind", Ty::Kind, false),
            ("current", Ty::Bool, false),
            ("uncommitted", Ty::Bool, false),
            ("since", Ty::Str, false),
            ("id", Ty::Str, false),
            ("at", Ty::Str, false),
        ],
    )?;
    confine_kind(state, &args)?;
    if b(&args, "uncommitted") && (s(&args, "at").is_some() || s(&args, "since").is_some()) {
        return Err(ToolError(
            "uncommitted reads the working tree against HEAD, and takes no at or since".into(),
        ));
    }
    let mut argv = vec!["records".to_owned()];
    for key in ["kind", "id", "since", "at"] {
        if let Some(v) = s(&args, key) {
            argv.extend([format!("--{key}"), v.to_owned()]);
        }
    }
    for key in ["current", "uncommitted"] {
        if b(&args, key) {
            argv.push(format!("--{key}"));
        }
    }
    run_read(state, &argv)
}

/// The client identity the source block names: `{name, version?, title?}`.
fn client(ctx: &RequestContext) -> Value {
    let info = ctx.client_info.clone().unwrap_or(Value::Null);
    let mut c = Map::new();
    c.insert(
        "name".into(),
        info.get("name")
            .cloned()
            .filter(Value::is_string)
            .unwrap_or(json!("unknown")),
    );
    for k in ["version", "title"] {
        if let Some(v) = info.get(k).filter(|v| v.is_string()) {
            c.insert(k.into(), v.clone());
        }
    }
    Value::Object(c)
}

fn mcp_source(ctx: &RequestContext) -> Source {
    Source {
        block: Some(json!({"via": "mcp", "client": client(ctx)})),
        initial_only: true,
        sign: None,
    }
}

fn answer(
    schema_id: &str,
    r: chant_workspace::error::Result<Value>,
) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::Json(match r {
        Ok(doc) => doc,
        Err(e) => write::refusal(schema_id, &e),
    }))
}

fn with_env<T>(state: &State, f: impl FnOnce(&Env) -> T) -> T {
    let reader = crate::KindReader(state.chant.evaluator.as_ref());
    let env = Env {
        cwd: &state.root,
        version: &state.version,
        reader: &reader,
    };
    f(&env)
}

/// The key a write seals with when `sign` is true: this host's configured key (MCP names no
/// key file: git's `user.signingkey` with `gpg.format ssh`, from the host's config only), or
/// the CLI's refusal with `code`.
fn host_key(
    state: &State,
    args: &Map<String, Value>,
    code: &'static str,
) -> chant_workspace::error::Result<Option<chant_workspace::seal::Key>> {
    b(args, "sign")
        .then(|| {
            chant_workspace::seal::key(
                &state.root,
                None,
                code,
                chant_workspace::seal::KeyConfig::Host,
            )
        })
        .transpose()
}

/// The MCP source of a write, with [`host_key`] when `sign` is true.
fn source_for(
    state: &State,
    ctx: &RequestContext,
    args: &Map<String, Value>,
    code: &'static str,
) -> chant_workspace::error::Result<Source> {
    Ok(Source {
        sign: host_key(state, args, code)?,
        ..mcp_source(ctx)
    })
}

const NEW: ToolDecl = ToolDecl {
    name: "records-new",
    title: "Propose a record",
    description: concat!(
        "Write a new record through a kind (the result of `chant workspace records new`, records-new.schema.json): its fields are the record object; it opens in the kind's first state (proposed, for a decision), and any other state is refused with record-state-not-initial. The source block records that it came over MCP and from which client. by fills the kind's proposedBy field (proposed_by for a decision).",
        proposals!()
    ),
    schema: new_schema,
    annotations: WRITES,
    permit: true,
    checks: Checks::Own,
    handler: tool_new,
};

fn common(props: &mut Vec<(&'static str, Value)>) {
    props.push(("kind", json!({"type": "string", "description": "A kind file (from the server's directory) or a kind the declaration names; default: the declaration's one kind"})));
    props.push(("dryRun", json!({"type": "boolean", "description": "Return the result with the file's text, and write nothing"})));
}

fn new_schema() -> Value {
    let mut p = vec![
        (
            "record",
            json!({"type": "object", "description": "The record's fields, the JSON object --from reads"}),
        ),
        (
            "prefix",
            json!({"type": "string", "description": "The id prefix, when the records use several or there are none yet"}),
        ),
        (
            "by",
            json!({"type": "string", "description": "Who actually proposed it (recorded as given)"}),
        ),
        (
            "sign",
            json!({"type": "boolean", "description": "Seal with this host's configured key, git's user.signingkey with gpg.format ssh, as --sign does; refused, with the CLI's remedy, when none is set"}),
        ),
    ];
    common(&mut p);
    schema(&p, &["record"])
}

fn tool_new(state: &State, args: Arguments, ctx: &RequestContext) -> Result<ToolOutput, ToolError> {
    let args = obj(&args);
    check(
        &args,
        &[
            ("record", Ty::Object, true),
            ("kind", Ty::Kind, false),
            ("prefix", Ty::Str, false),
            ("by", Ty::Str, false),
            ("sign", Ty::Bool, false),
            ("dryRun", Ty::Bool, false),
        ],
    )?;
    confine_kind(state, &args)?;
    let record = args.get("record").cloned().unwrap_or(Value::Null);
    with_env(state, |env| {
        answer(
            write::NEW_SCHEMA,
            source_for(state, ctx, &args, "record-sign-failed").and_then(|source| {
                write::new(
                    env,
                    s(&args, "kind"),
                    &record,
                    s(&args, "prefix"),
                    s(&args, "by"),
                    &source,
                    b(&args, "dryRun"),
                )
            }),
        )
    })
}

const AMEND: ToolDecl = ToolDecl {
    name: "records-amend",
    title: "Amend a record",
    description: concat!(
        "Replace top-level fields of a record (the result of `chant workspace records amend`, records-amend.schema.json). A closed record never changes (record-closed); an approved one changes only in its state, evidence and reviews (amend-supersede-instead); the id never changes (amend-id-immutable). by writes the decider field. The source block gets via: mcp and the client only when fields set it.",
        proposals!()
    ),
    schema: amend_schema,
    annotations: WRITES,
    permit: true,
    checks: Checks::Own,
    handler: tool_amend,
};

fn amend_schema() -> Value {
    let mut p = vec![
        (
            "id",
            json!({"type": "string", "description": "The record's id"}),
        ),
        (
            "fields",
            json!({"type": "object", "description": "The fields to set, the JSON object --set reads (null removes a field)"}),
        ),
        (
            "by",
            json!({"type": "string", "description": "Who actually decided it (the decider field; recorded as given)"}),
        ),
        (
            "sign",
            json!({"type": "boolean", "description": "Seal with this host's configured key, git's user.signingkey with gpg.format ssh, as --sign does; refused, with the CLI's remedy, when none is set"}),
        ),
    ];
    common(&mut p);
    schema(&p, &["id", "fields"])
}

fn tool_amend(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = obj(&args);
    check(
        &args,
        &[
            ("id", Ty::Str, true),
            ("fields", Ty::Object, true),
            ("kind", Ty::Kind, false),
            ("by", Ty::Str, false),
            ("sign", Ty::Bool, false),
            ("dryRun", Ty::Bool, false),
        ],
    )?;
    confine_kind(state, &args)?;
    let fields = args.get("fields").cloned().unwrap_or(Value::Null);
    let id = s(&args, "id").unwrap_or_default();
    with_env(state, |env| {
        answer(
            write::AMEND_SCHEMA,
            source_for(state, ctx, &args, "record-sign-failed").and_then(|source| {
                write::amend(
                    env,
                    id,
                    s(&args, "kind"),
                    &fields,
                    s(&args, "by"),
                    &source,
                    b(&args, "dryRun"),
                )
            }),
        )
    })
}

const REVIEW: ToolDecl = ToolDecl {
    name: "records-review",
    title: "Review a record",
    description: concat!(
        "Append one verdict (agree, dissent or abstain) to a record's reviews (the result of `chant workspace records review`, records-review.schema.json), whose verdict moves the record's quorum. A dissent needs a note (review-note-required); a closed record takes no review (record-closed).",
        proposals!()
    ),
    schema: review_schema,
    annotations: WRITES,
    permit: true,
    checks: Checks::Own,
    handler: tool_review,
};

fn review_schema() -> Value {
    let mut p = vec![
        (
            "id",
            json!({"type": "string", "description": "The record's id"}),
        ),
        (
            "verdict",
            json!({"type": "string", "enum": ["agree", "dissent", "abstain"], "description": "The verdict"}),
        ),
        (
            "by",
            json!({"type": "string", "description": "The reviewer who actually gave the verdict (recorded as given)"}),
        ),
        (
            "note",
            json!({"type": "string", "description": "Why (required for a dissent)"}),
        ),
        (
            "session",
            json!({"type": "string", "description": "The review session the verdict was given in"}),
        ),
        (
            "sign",
            json!({"type": "boolean", "description": "Seal with this host's configured key, git's user.signingkey with gpg.format ssh, as --sign does; refused, with the CLI's remedy, when none is set"}),
        ),
    ];
    common(&mut p);
    schema(&p, &["id", "verdict", "by"])
}

fn tool_review(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = obj(&args);
    check(
        &args,
        &[
            ("id", Ty::Str, true),
            ("verdict", Ty::Str, true),
            ("by", Ty::Str, true),
            ("kind", Ty::Kind, false),
            ("note", Ty::Str, false),
            ("session", Ty::Str, false),
            ("sign", Ty::Bool, false),
            ("dryRun", Ty::Bool, false),
        ],
    )?;
    confine_kind(state, &args)?;
    let rv = Review {
        verdict: s(&args, "verdict").unwrap_or_default(),
        by: s(&args, "by").unwrap_or_default(),
        note: s(&args, "note"),
        session: s(&args, "session"),
        sign: None,
    };
    let id = s(&args, "id").unwrap_or_default();
    with_env(state, |env| {
        answer(
            write::REVIEW_SCHEMA,
            host_key(state, &args, "review-sign-failed").and_then(|sign| {
                let rv = Review { sign, ..rv };
                write::review(env, id, s(&args, "kind"), &rv, b(&args, "dryRun"))
            }),
        )
    })
}

const CLOSE: ToolDecl = ToolDecl {
    name: "records-close",
    title: "Close a record",
    description: concat!(
        "Close a review session (the result of `chant workspace records close`, records-close.schema.json): the session (a record of a kind with a session block) enters its first closed state with the close time and the commit HEAD names, sealed last, and then takes no more verdicts. Without kind, the one session kind the declaration names. A kind without a session block is refused with write-usage-invalid; a decision is ratified with records-amend setting its state, which needs its quorum met (ratify-quorum-not-met).",
        proposals!()
    ),
    schema: close_schema,
    annotations: WRITES,
    permit: true,
    checks: Checks::Own,
    handler: tool_close,
};

fn close_schema() -> Value {
    let mut p = vec![(
        "id",
        json!({"type": "string", "description": "The record's id"}),
    )];
    common(&mut p);
    schema(&p, &["id"])
}

fn tool_close(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = obj(&args);
    check(
        &args,
        &[
            ("id", Ty::Str, true),
            ("kind", Ty::Kind, false),
            ("dryRun", Ty::Bool, false),
        ],
    )?;
    confine_kind(state, &args)?;
    let id = s(&args, "id").unwrap_or_default();
    with_env(state, |env| {
        answer(
            write::CLOSE_SCHEMA,
            write::close(env, id, s(&args, "kind"), b(&args, "dryRun")),
        )
    })
}
