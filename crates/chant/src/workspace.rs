//! `chant workspace`: argument parsing and wiring into `chant-workspace`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chant_core::model::{Budget, Evaluator};
use chant_workspace::records::{Env, ReadOptions};
use chant_workspace::write::{self, Review, Source};
use clap::{Args, Subcommand};
use serde_json::Value;

#[derive(Subcommand, Debug)]
pub enum WorkspaceCommand {
    /// List the workspace's members, example groups and record kinds from chant.workspace.json
    /// (exit 0 even when a member can't be read: it carries a reason code; 1 when the
    /// declaration can't be read)
    Ls {
        /// Where the walk up to the declaration starts (default: the current directory)
        dir: Option<PathBuf>,
        /// Read the declaration and members as they were at this commit
        #[arg(long, value_name = "REV")]
        at: Option<String>,
        /// Print the document as JSON (ls.schema.json)
        #[arg(long)]
        json: bool,
    },
    /// Read the records a kind locates, each checked against the kind's schema, with
    /// supersession, pins, digest, quorum and provenance; or write one (new, amend, review,
    /// close)
    Records(Box<RecordsArgs>),
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RecordsArgs {
    #[command(subcommand)]
    verb: Option<RecordsVerb>,
    /// The kind to read: a kind file (from the current directory) or a declared kind's name
    /// (default: every kind the declaration names)
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// Leave out records a closed record supersedes
    #[arg(long)]
    current: bool,
    /// Only the records the working tree holds modified or new against HEAD
    #[arg(long, conflicts_with = "at")]
    uncommitted: bool,
    /// Read the records as they were at this commit
    #[arg(long, value_name = "REV")]
    at: Option<String>,
    /// List what changed since this commit (to --at, or the working tree): records new and
    /// removed, states, verdicts, supersessions and pins (records-since.schema.json)
    #[arg(long, value_name = "REV", conflicts_with = "uncommitted")]
    since: Option<String>,
    /// The revision the trust policy is read from (default: origin/HEAD, main, then master)
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// Keep only this record in `records` (the summary stays the whole kind's)
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// Exit 2 unless every record printed is attested
    #[arg(long, value_name = "LEVEL", value_parser = ["attested"])]
    require: Option<String>,
    /// Print the document as JSON (records.schema.json)
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum RecordsVerb {
    /// Write a new record from a JSON object of its fields (prints records-new.schema.json)
    New {
        /// The kind (a kind file or a declared kind's name; default: the declaration's one kind)
        kind_file: Option<String>,
        /// The kind, as the other verbs take it
        #[arg(long = "kind", value_name = "KIND", conflicts_with = "kind_file")]
        kind: Option<String>,
        /// The fields: a JSON file, or - for standard input
        #[arg(long, value_name = "FILE|-")]
        from: String,
        /// The id prefix, when the records use several or there are none yet
        #[arg(long, value_name = "PREFIX")]
        prefix: Option<String>,
        /// Who proposed it (the kind's proposedBy field, else its decider field)
        #[arg(long, value_name = "PRINCIPAL")]
        by: Option<String>,
        /// Seal with this key file, or with git's ssh signing key (user.signingkey, gpg.format
        /// ssh) when no file is given
        #[arg(long, value_name = "KEY FILE", num_args = 0..=1, default_missing_value = "")]
        sign: Option<String>,
        /// Print the result with the file's text, and write nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Replace top-level fields of a record (prints records-amend.schema.json)
    Amend {
        id: String,
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        /// The fields to set: a JSON file, or - for standard input (null removes a field)
        #[arg(long, value_name = "FILE|-")]
        set: String,
        /// The decider (writes the kind's decider field)
        #[arg(long, value_name = "PRINCIPAL")]
        by: Option<String>,
        /// Seal with this key file, or with git's ssh signing key (user.signingkey, gpg.format
        /// ssh) when no file is given
        #[arg(long, value_name = "KEY FILE", num_args = 0..=1, default_missing_value = "")]
        sign: Option<String>,
        #[arg(long)]
        dry_run: bool,
    },
    /// Append one verdict to a record's reviews (prints records-review.schema.json)
    Review {
        id: String,
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        #[arg(long, value_parser = ["agree", "dissent", "abstain"])]
        verdict: String,
        /// The reviewer, recorded as given
        #[arg(long, value_name = "PRINCIPAL")]
        by: String,
        /// Why (required for a dissent)
        #[arg(long)]
        note: Option<String>,
        /// The review session the verdict was given in
        #[arg(long)]
        session: Option<String>,
        /// Seal with this key file, or with git's ssh signing key (user.signingkey, gpg.format
        /// ssh) when no file is given
        #[arg(long, value_name = "KEY FILE", num_args = 0..=1, default_missing_value = "")]
        sign: Option<String>,
        #[arg(long)]
        dry_run: bool,
    },
    /// Close a review session (a record of a kind with a session block): its first closed
    /// state, the close time and HEAD's commit, sealed last (prints records-close.schema.json)
    Close {
        id: String,
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        #[arg(long)]
        dry_run: bool,
    },
    /// Print the path (from the workspace root) and sha256 of a file, for an evidence pin
    Pin { path: PathBuf },
}

/// Reads kind files through chant's JavaScript sandbox.
pub struct SandboxReader<'a> {
    pub evaluator: &'a dyn Evaluator,
    pub budget: Budget,
}

impl chant_workspace::kind::ModuleReader for SandboxReader<'_> {
    fn export(&self, boundary: &Path, file: &Path, name: &str) -> Result<Value, String> {
        self.evaluator
            .evaluate_export(boundary, file, name, &self.budget)
    }
}

/// Prints `doc` as pretty JSON straight to standard output.
fn print(doc: &Value) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = serde_json::to_writer_pretty(&mut out, doc);
    let _ = writeln!(out);
}

/// [`print`] for a read document that may list thousands of records: the same bytes, its
/// records written over both cores.
fn print_records(doc: &mut Value) {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let _ = crate::pretty::write(doc, &mut out);
}

fn code(c: i32) -> ExitCode {
    ExitCode::from(c.clamp(0, 255) as u8)
}

fn read_json(from: &str) -> Result<Value, String> {
    let text = if from == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(from).map_err(|e| format!("cannot read {from}: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| format!("{from} is not JSON: {e}"))
}

fn cwd() -> PathBuf {
    std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_else(|_| PathBuf::from("."))
}

pub fn run(evaluator: &dyn Evaluator, budget: &Budget, command: WorkspaceCommand) -> ExitCode {
    let reader = SandboxReader {
        evaluator,
        budget: budget.clone(),
    };
    let version = env!("CARGO_PKG_VERSION");
    let here = cwd();
    match command {
        WorkspaceCommand::Ls { dir, at, json } => {
            let dir = dir
                .map(|d| std::fs::canonicalize(here.join(&d)).unwrap_or(here.join(d)))
                .unwrap_or(here);
            let (doc, ok) = chant_workspace::ls::ls(&dir, at.as_deref(), version, &reader);
            if json {
                print(&doc);
            } else if ok {
                print!("{}", chant_workspace::ls::human(&doc));
            } else {
                eprint!("{}", chant_workspace::ls::human(&doc));
            }
            code(if ok { 0 } else { 1 })
        }
        WorkspaceCommand::Records(args) => {
            let env = Env {
                cwd: &here,
                version,
                reader: &reader,
            };
            let args = *args;
            match args.verb {
                None if args.since.is_some() => records_since(&env, args),
                None => {
                    let opts = ReadOptions {
                        kind: args.kind,
                        current: args.current,
                        uncommitted: args.uncommitted,
                        at: args.at,
                        base: args.base,
                        id: args.id,
                        require_attested: args.require.is_some(),
                    };
                    let (mut doc, c) = chant_workspace::records::records(&env, &opts);
                    if args.json {
                        print_records(&mut doc);
                    } else if c == 1 && doc.get("error").is_some() {
                        eprint!("{}", chant_workspace::records::human(&doc));
                    } else {
                        print!("{}", chant_workspace::records::human(&doc));
                    }
                    // The process ends here: freeing thousands of records one by one is time
                    // the caller waits for and nobody uses.
                    std::mem::forget(doc);
                    code(c)
                }
                Some(verb) => write_verb(&env, verb),
            }
        }
    }
}

/// `records --since`: what changed between two revisions of the records.
fn records_since(env: &Env, args: RecordsArgs) -> ExitCode {
    if args.current || args.require.is_some() || args.base.is_some() {
        eprintln!(
            "error: --since compares two revisions and takes no --current, --require or --base\n  usage: chant workspace records [--kind KIND] --since REV [--at REV] [--id ID] [--json]"
        );
        return ExitCode::from(1);
    }
    let opts = chant_workspace::since::SinceOptions {
        kind: args.kind,
        since: args.since.unwrap_or_default(),
        at: args.at,
        id: args.id,
    };
    let (doc, c) = chant_workspace::since::records_since(env, &opts);
    if args.json {
        print(&doc);
    } else if c == 1 && doc.get("error").is_some() {
        eprint!("{}", chant_workspace::since::human(&doc));
    } else {
        print!("{}", chant_workspace::since::human(&doc));
    }
    code(c)
}

/// The fields a write reads (`--from`/`--set`), and the shell's source with the key `--sign`
/// names (its file, or git's configured key).
fn fields(
    from: &str,
    sign: Option<&str>,
    cwd: &Path,
) -> Result<(Value, Source), chant_workspace::error::WsError> {
    let fields = read_json(from)
        .map_err(|e| chant_workspace::error::WsError::new("write-usage-invalid", e))?;
    let source = Source {
        sign: sign
            .map(|f| {
                chant_workspace::seal::key(
                    cwd,
                    Some(f),
                    "record-sign-failed",
                    chant_workspace::seal::KeyConfig::Any,
                )
            })
            .transpose()?,
        ..Source::default()
    };
    Ok((fields, source))
}

fn write_verb(env: &Env, verb: RecordsVerb) -> ExitCode {
    let (schema, result) = match verb {
        RecordsVerb::New {
            kind_file,
            kind,
            from,
            prefix,
            by,
            sign,
            dry_run,
        } => (
            write::NEW_SCHEMA,
            fields(&from, sign.as_deref(), env.cwd).and_then(|(fields, shell)| {
                write::new(
                    env,
                    kind_file.as_deref().or(kind.as_deref()),
                    &fields,
                    prefix.as_deref(),
                    by.as_deref(),
                    &shell,
                    dry_run,
                )
            }),
        ),
        RecordsVerb::Amend {
            id,
            kind,
            set,
            by,
            sign,
            dry_run,
        } => (
            write::AMEND_SCHEMA,
            fields(&set, sign.as_deref(), env.cwd).and_then(|(fields, shell)| {
                write::amend(
                    env,
                    &id,
                    kind.as_deref(),
                    &fields,
                    by.as_deref(),
                    &shell,
                    dry_run,
                )
            }),
        ),
        RecordsVerb::Review {
            id,
            kind,
            verdict,
            by,
            note,
            session,
            sign,
            dry_run,
        } => (
            write::REVIEW_SCHEMA,
            (|| {
                let rv = Review {
                    verdict: &verdict,
                    by: &by,
                    note: note.as_deref(),
                    session: session.as_deref(),
                    sign: sign
                        .as_deref()
                        .map(|f| {
                            chant_workspace::seal::key(
                                env.cwd,
                                Some(f),
                                "review-sign-failed",
                                chant_workspace::seal::KeyConfig::Any,
                            )
                        })
                        .transpose()?,
                };
                write::review(env, &id, kind.as_deref(), &rv, dry_run)
            })(),
        ),
        RecordsVerb::Close { id, kind, dry_run } => (
            write::CLOSE_SCHEMA,
            write::close(env, &id, kind.as_deref(), dry_run),
        ),
        RecordsVerb::Pin { path } => {
            return match chant_workspace::records::pin(env, &path) {
                Ok(doc) => {
                    print(&doc);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error[{}]: {}", e.code, e.message);
                    ExitCode::from(1)
                }
            };
        }
    };
    match result {
        Ok(doc) => {
            print(&doc);
            ExitCode::SUCCESS
        }
        Err(e) => {
            print(&write::refusal(schema, &e));
            ExitCode::from(1)
        }
    }
}
