//! The Op model: what an `*.op.ts` declares, read from the evaluated declarable, and discovery.

use std::path::{Path, PathBuf};

pub use chant_core::config::parse_duration;
use chant_core::confine::{Visit, WalkLimits, Walls};
use chant_core::model::{Budget, DeclKind, Evaluator, Value};
use fsread::Stamp;
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
    /// The lexicon whose `Op` declared it (its activities are always at hand); `None` for
    /// a plain object.
    pub lexicon: Option<String>,
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

pub use chant_core::model::to_json;

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
        lexicon: None,
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
    Ok(op_files_walked(&walls)?
        .into_iter()
        .map(|w| w.path)
        .collect())
}

/// [`op_files`] under `walls`, with what the walk learnt of each file.
fn op_files_walked(walls: &Walls) -> Result<Vec<chant_core::confine::Walked>, String> {
    walls
        .walk_files(walls.root(), WalkLimits::default(), &mut |e| {
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
pub fn discover(root: &Path, evaluator: &(dyn Evaluator + Sync), budget: &Budget) -> OpSet {
    let set = discover_cached(root, evaluator, budget, None);
    std::sync::Arc::try_unwrap(set).unwrap_or_else(|shared| (*shared).clone())
}

/// What one Op file declared: its Op, or why it declares none.
#[derive(Clone, Debug)]
enum Outcome {
    Op(Box<OpDef>),
    Error(String),
}

/// What evaluating one Op file read, and what it declared.
#[derive(Clone, Debug)]
struct Cached {
    /// Every project module it loaded (itself first).
    modules: Vec<Module>,
    /// Every import on the way.
    probes: Vec<Probe>,
    outcome: Outcome,
}

/// A module's path and the SHA-256 of the bytes an evaluation read.
type Digest = (PathBuf, String);

/// A candidate an import asked for: `(dir, candidate, the file it resolved to)`.
type Probe = (PathBuf, String, Option<PathBuf>);

/// A module an evaluation read: the SHA-256 of its bytes, and, once it is safe to, the stat
/// of the file those bytes came from.
#[derive(Clone, Debug)]
struct Module {
    path: PathBuf,
    digest: String,
    stamp: Option<Stamp>,
}

/// Op files evaluated before, for a long-running process (`chant serve mcp`): a file is
/// evaluated again only when something its evaluation read changed — its bytes, a module it
/// imports, or where one of its imports would now resolve (a new file that an earlier
/// candidate names, a symlink pointed elsewhere). Evaluation is deterministic (no clock,
/// randomness, environment or host), so the same reads give the same Op.
#[derive(Debug, Default)]
pub struct DiscoveryCache {
    /// By path, as bytes (hashing a `Path` walks its components).
    files: std::sync::Mutex<std::collections::HashMap<std::ffi::OsString, std::sync::Arc<Cached>>>,
    /// Counts the changes of what files declared (an evaluation's answer kept, a file
    /// forgotten), so a set is known to be built from the answers of one generation.
    generation: std::sync::atomic::AtomicU64,
    /// The set a call built, and the generation of the answers it was built from: the
    /// answer again while no file's reads changed and no other call changed an answer.
    last: std::sync::Mutex<Option<(u64, std::sync::Arc<OpSet>)>>,
}

impl DiscoveryCache {
    fn get(&self, file: &Path) -> Option<std::sync::Arc<Cached>> {
        self.files.lock().ok()?.get(file.as_os_str()).cloned()
    }

    /// Keeps `entry`; `changed`: it answers differently from before (a new evaluation).
    fn put(&self, file: &Path, entry: Cached, changed: bool) {
        if let Ok(mut m) = self.files.lock() {
            if changed {
                self.generation
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            m.insert(file.as_os_str().to_owned(), std::sync::Arc::new(entry));
        }
    }

    fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Forgets the files no longer walked; whether there were any.
    fn retain(&self, files: &[PathBuf]) -> bool {
        let Ok(mut m) = self.files.lock() else {
            return true;
        };
        if m.len() <= files.len() {
            return false;
        }
        let keep: std::collections::HashSet<&std::ffi::OsStr> =
            files.iter().map(|f| f.as_os_str()).collect();
        m.retain(|k, _| keep.contains(k.as_os_str()));
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        true
    }
}

/// The largest module a check reads back (the evaluator's own limit): a larger one fails the
/// check, so its file is evaluated again, and refused there.
const MAX_MODULE_BYTES: u64 = 16 << 20;

/// One call's checks, each asked once however many files share it.
#[derive(Default)]
struct Checks {
    modules: std::collections::HashMap<std::ffi::OsString, Option<Module>>,
    probes: std::collections::HashMap<(PathBuf, String), Option<Option<PathBuf>>>,
}

impl Checks {
    /// `m` as it is now (its stamp renewed when it may be), or `None` if its bytes changed.
    /// `meta`: the file's stat, when the caller has one.
    fn module(&mut self, m: &Module, meta: Option<&std::fs::Metadata>) -> Option<Module> {
        if let Some(meta) = meta {
            // A file's own entry, with the walk's stat: asked once per call anyway.
            return Checks::now(m, Some(meta));
        }
        if let Some(known) = self.modules.get(m.path.as_os_str()) {
            return known.clone().filter(|k| k.digest == m.digest);
        }
        let now = Checks::now(m, std::fs::metadata(&m.path).ok().as_ref());
        self.modules
            .insert(m.path.as_os_str().to_owned(), now.clone());
        now
    }

    /// `m` as its file is now: unchanged by its stamp, or by its bytes.
    fn now(m: &Module, meta: Option<&std::fs::Metadata>) -> Option<Module> {
        let taken = Stamp::now();
        let now = match (meta, m.stamp) {
            (Some(meta), Some(stamp)) if Stamp::of(meta) == stamp => return Some(m.clone()),
            (Some(meta), _) => chant_core::confine::read_text(&m.path, MAX_MODULE_BYTES)
                .ok()
                .map(|text| Module {
                    path: m.path.clone(),
                    digest: canon::sha256_hex(text.as_bytes()),
                    stamp: Stamp::trusted(meta, taken),
                }),
            (None, _) => None,
        };
        now.filter(|n| n.digest == m.digest)
    }

    fn probe(&mut self, walls: &Walls, dir: &Path, candidate: &str) -> Option<Option<PathBuf>> {
        self.probes
            .entry((dir.to_path_buf(), candidate.to_owned()))
            .or_insert_with(|| match walls.resolve_from(dir, "import", candidate) {
                Ok(f) if f.is_file() => Some(Some(f)),
                Ok(_) | Err(chant_core::confine::PathError::Unresolvable { .. }) => Some(None),
                Err(_) => None,
            })
            .clone()
    }
}

/// Whether evaluating `walked` again would read exactly what `entry` read: `None` when
/// anything it read changed; `Some(Some(renewed))` when it did not and a stamp was renewed
/// (`Some(None)`: nothing to renew).
fn still_reads(
    walls: &Walls,
    entry: &Cached,
    walked: &chant_core::confine::Walked,
    checks: &mut Checks,
) -> Option<Option<Cached>> {
    let mut modules = Vec::with_capacity(entry.modules.len());
    let mut renewed = false;
    for (i, m) in entry.modules.iter().enumerate() {
        // The file itself: the walk's stat is this call's.
        let meta = (i == 0 && m.path == walked.path).then_some(&walked.meta);
        let now = checks.module(m, meta)?;
        renewed |= now.stamp != m.stamp;
        modules.push(now);
    }
    for (dir, candidate, found) in &entry.probes {
        // The file's own path, walked without a link on the way, resolves to itself.
        if walked.canonical
            && *candidate == walked.path.to_string_lossy()
            && found.as_deref() == Some(walked.path.as_path())
        {
            continue;
        }
        if checks.probe(walls, dir, candidate)? != *found {
            return None;
        }
    }
    Some(renewed.then(|| Cached {
        modules,
        probes: entry.probes.clone(),
        outcome: entry.outcome.clone(),
    }))
}

/// What `file`'s evaluation read, from the reads of the evaluation it was part of: the
/// import that found it, and everything reachable from it. `None` when it cannot be told.
fn reads_of(file: &Path, reads: &chant_core::model::Reads) -> Option<(Vec<Digest>, Vec<Probe>)> {
    let name = file.to_string_lossy();
    let entry = reads
        .imports
        .iter()
        .find(|i| i.probes.first().is_some_and(|(c, _)| *c == name))?;
    let mut probes = Vec::new();
    let mut modules = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut queue = vec![entry];
    while let Some(import) = queue.pop() {
        probes.extend(
            import
                .probes
                .iter()
                .map(|(c, f)| (import.dir.clone(), c.clone(), f.clone())),
        );
        if !seen.insert(import.to.clone()) {
            continue;
        }
        let (_, digest) = reads.modules.iter().find(|(p, _)| *p == import.to)?;
        modules.push((import.to.clone(), digest.clone()));
        let from = import.to.to_string_lossy();
        queue.extend(reads.imports.iter().filter(|i| i.from == from));
    }
    Some((modules, probes))
}

/// [`discover`], evaluating only the files `cache` cannot answer for (and, when no file's
/// reads changed, the very set the last call answered).
pub fn discover_cached(
    root: &Path,
    evaluator: &(dyn Evaluator + Sync),
    budget: &Budget,
    cache: Option<&DiscoveryCache>,
) -> std::sync::Arc<OpSet> {
    let taken = Stamp::now();
    let walked = match Walls::new(root)
        .map_err(|e| e.to_string())
        .and_then(|walls| Ok((op_files_walked(&walls)?, walls)))
    {
        Ok(f) => f,
        Err(e) => {
            return std::sync::Arc::new(OpSet {
                errors: vec![e],
                ..Default::default()
            });
        }
    };
    let (walked, walls) = walked;
    let files: Vec<PathBuf> = walked.iter().map(|w| w.path.clone()).collect();
    // What each walked file declared, by its place in the walk: the cache's entry, or (once
    // evaluated) its new answer.
    let mut known: Vec<Option<std::sync::Arc<Cached>>> = vec![None; files.len()];
    let mut fresh = Vec::new();
    let mut forgot = true;
    let start = cache.map(DiscoveryCache::generation);
    match cache {
        Some(cache) => {
            forgot = cache.retain(&files);
            let mut checks = Checks::default();
            for (i, w) in walked.iter().enumerate() {
                let Some(entry) = cache.get(&w.path) else {
                    fresh.push(w.path.clone());
                    continue;
                };
                match still_reads(&walls, &entry, w, &mut checks) {
                    Some(renewed) => {
                        if let Some(r) = renewed {
                            cache.put(&w.path, r, false);
                        }
                        known[i] = Some(entry);
                    }
                    None => fresh.push(w.path.clone()),
                }
            }
        }
        None => fresh = files.clone(),
    }
    if let Some(cache) = cache
        && fresh.is_empty()
        && !forgot
        && let Some((generation, last)) = cache.last.lock().ok().and_then(|l| l.clone())
        && Some(generation) == start
    {
        return last;
    }
    let mut outcomes: Vec<Option<Outcome>> = known
        .into_iter()
        .map(|k| k.map(|entry| entry.outcome.clone()))
        .collect();
    let mut kept = 0;
    let mut set = OpSet::default();
    if !fresh.is_empty() {
        let place: std::collections::HashMap<&std::ffi::OsStr, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.as_os_str(), i))
            .collect();
        for (_, evaluation) in evaluate_each(evaluator, root, &fresh, budget) {
            set.errors
                .extend(evaluation.errors.iter().map(|e| e.message.clone()));
            for (file, outcome) in evaluate_outcomes(&evaluation) {
                // Only what a clean evaluation declared is kept: an error (the budget, a
                // crash, the file's own) says nothing for next time.
                if let Some(cache) = cache
                    && evaluation.errors.is_empty()
                    && let Some((modules, probes)) = reads_of(&file, &evaluation.reads)
                {
                    // The walk's stat was taken before the evaluation read the file: it
                    // stands for the bytes hashed only if nothing changed in between, which
                    // the next call's stat tells (a change after it moves ctime).
                    let stat = place.get(file.as_os_str()).map(|i| &walked[*i].meta);
                    let modules = modules
                        .into_iter()
                        .map(|(path, digest)| Module {
                            stamp: stat
                                .filter(|_| path == file)
                                .and_then(|m| Stamp::trusted(m, taken)),
                            path,
                            digest,
                        })
                        .collect();
                    cache.put(
                        &file,
                        Cached {
                            modules,
                            probes,
                            outcome: outcome.clone(),
                        },
                        true,
                    );
                    kept += 1;
                }
                if let Some(i) = place.get(file.as_os_str()) {
                    outcomes[*i] = Some(outcome);
                }
            }
        }
    }
    // In the walk's order, as an evaluation of them all would report them.
    let mut named: std::collections::HashMap<String, usize> = Default::default();
    for (file, outcome) in files.iter().zip(outcomes) {
        let Some(outcome) = outcome else {
            continue;
        };
        match outcome {
            Outcome::Op(op) => {
                if let Some(first) = named.get(&op.name) {
                    set.errors.push(format!(
                        "Duplicate Op name \"{}\" in {} and {}",
                        op.name,
                        file.display(),
                        set.ops[*first].file.display()
                    ));
                } else {
                    named.insert(op.name.clone(), set.ops.len());
                    set.ops.push(*op);
                }
            }
            Outcome::Error(e) => set.errors.push(e),
        }
    }
    set.ops.sort_by(|a, b| canon::locale_cmp(&a.name, &b.name));
    let set = std::sync::Arc::new(set);
    // Kept only if every answer it was built from is of one generation: no other call
    // changed an answer meanwhile, and every file was answered from the cache or kept.
    if let Some(cache) = cache
        && fresh.len() == kept
        && start.map(|g| g + kept as u64 + u64::from(forgot)) == Some(cache.generation())
        && let Ok(mut last) = cache.last.lock()
    {
        *last = Some((cache.generation(), std::sync::Arc::clone(&set)));
    }
    set
}

/// Evaluates each of `files` on its own — a fresh sandbox per file, so no Op file can change
/// what another declares (a monkey-patched built-in, a mutated shared module), and what a file
/// declares depends only on what it reads — within one deadline for them all.
fn evaluate_each(
    evaluator: &(dyn Evaluator + Sync),
    root: &Path,
    files: &[PathBuf],
    budget: &Budget,
) -> Vec<(PathBuf, chant_core::model::Evaluation)> {
    // In two halves at once (what the engine runs at once), each file in a realm of its own.
    let evaluations = if files.len() > 1 {
        let (a, b) = files.split_at(files.len().div_ceil(2));
        std::thread::scope(|s| {
            let first = s.spawn(|| evaluator.evaluate_each(root, a, budget));
            let mut second = evaluator.evaluate_each(root, b, budget);
            let mut all = first.join().unwrap_or_default();
            all.append(&mut second);
            all
        })
    } else {
        evaluator.evaluate_each(root, files, budget)
    };
    // An evaluation that never came back (a crashed thread) is said, never silently absent.
    let mut evaluations = evaluations.into_iter();
    files
        .iter()
        .map(|f| {
            let e = evaluations
                .next()
                .unwrap_or_else(|| chant_core::model::Evaluation {
                    errors: vec![chant_core::model::EvalError {
                        file: f.clone(),
                        message: format!("{}: the evaluation ended without an answer", f.display()),
                    }],
                    ..Default::default()
                });
            (f.clone(), e)
        })
        .collect()
}

/// What each successfully evaluated module declared.
fn evaluate_outcomes(evaluation: &chant_core::model::Evaluation) -> Vec<(PathBuf, Outcome)> {
    let mut out = Vec::new();
    for module in &evaluation.modules {
        let file = module.file.display().to_string();
        let default = module
            .exports
            .iter()
            .find(|(n, _)| n == "default")
            .map(|(_, v)| v);
        let mut lexicon = None;
        let props = match default {
            Some(Value::Decl(id)) => {
                let decl = evaluation.decl(*id);
                lexicon = Some(decl.lexicon.clone());
                if decl.kind != DeclKind::Resource || decl.entity_type != OP_TYPE {
                    out.push((
                        module.file.clone(),
                        Outcome::Error(format!(
                            "{file}: default export is not a valid Op (missing name or phases)"
                        )),
                    ));
                    continue;
                }
                to_json(&decl.props)
            }
            Some(v @ Value::Object(_)) => to_json(v),
            _ => {
                out.push((
                    module.file.clone(),
                    Outcome::Error(format!("{file}: default export is not an object")),
                ));
                continue;
            }
        };
        out.push((
            module.file.clone(),
            match op_from_props(props, &module.file) {
                Ok(op) => Outcome::Op(Box::new(OpDef { lexicon, ..op })),
                Err(e) => Outcome::Error(format!("{file}: {e}")),
            },
        ));
    }
    out
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
