//! The sandboxed QuickJS runtime: one fresh runtime per evaluation, module resolution inside a
//! boundary plus embedded runtime modules, determinism, and time and memory limits.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use chant_core::confine::{PathError, Walls};
use chant_core::lexicon::Registry;
use chant_core::model::{Budget, EvalError, Evaluation, ModuleExports};
use chant_core::permits::Permits;
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{
    Array, CatchResultExt, CaughtError, Context, Ctx, Function, Module, Object, Promise, Runtime,
};

use crate::extract;
use crate::strip::{self, Stripped};

/// The specifier of the core runtime module.
pub const CORE_SPECIFIER: &str = "@intentius/chant";
const CORE_SOURCE: &str = include_str!("../runtime/chant.ts");

/// Resource limits of one evaluation (its wall time is the caller's [`Budget`]).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The JavaScript heap of one evaluation.
    pub memory_bytes: usize,
    pub stack_bytes: usize,
    /// What reading the values back into Rust may build (an estimate of its bytes): shared
    /// references are copied, so a small heap can describe a huge tree.
    pub extract_bytes: usize,
    /// Evaluations of one engine running at once; the others wait their turn. With
    /// `memory_bytes + extract_bytes` each, this bounds the whole process.
    pub concurrent: usize,
    /// A module file larger than this is refused before it is read.
    pub module_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory_bytes: 320 << 20,
            stack_bytes: 2 << 20,
            extract_bytes: 32 << 20,
            concurrent: 2,
            module_bytes: 16 << 20,
        }
    }
}

/// The module evaluated before any other (a module, so its bytecode is cached like the
/// runtime modules').
const PRELUDE_SPECIFIER: &str = "chant:prelude";

/// Runs before any module: no clock, no randomness, no environment, no host.
const PRELUDE: &str = include_str!("../runtime/prelude.js");

/// The prelude compiled by the build script (`build.rs`) with this same QuickJS: loading it
/// skips the parse every evaluation would otherwise start with. Empty if the build could not
/// compile it; then the source is compiled as any embedded module is.
static PRELUDE_BYTECODE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prelude.qbc"));

/// Embedded runtime modules: the prelude and the core module, and the lexicons' runtime
/// modules, asked of the [`Registry`] when a project first imports one. Their stripped forms
/// are kept here, so an engine strips each once.
#[derive(Default)]
pub struct EmbeddedModules {
    sources: HashMap<String, Arc<str>>,
    lexicons: Option<Arc<Registry>>,
    /// Lexicon modules built so far (`None`: the registry has no such module).
    built: Mutex<HashMap<String, Option<Arc<str>>>>,
    stripped: Mutex<HashMap<String, Arc<Stripped>>>,
}

impl EmbeddedModules {
    /// The prelude and the core module.
    pub fn new() -> EmbeddedModules {
        let mut m = EmbeddedModules::default();
        m.add(PRELUDE_SPECIFIER, PRELUDE);
        m.add(CORE_SPECIFIER, CORE_SOURCE);
        m
    }

    /// The core module plus the runtime modules of `lexicons`.
    pub fn with_lexicons(lexicons: Arc<Registry>) -> EmbeddedModules {
        EmbeddedModules {
            lexicons: Some(lexicons),
            ..EmbeddedModules::new()
        }
    }

    pub fn add(&mut self, specifier: &str, typescript: &str) {
        self.sources
            .insert(specifier.to_owned(), Arc::from(typescript));
    }

    /// The embedded module a bare specifier names (`@intentius/chant/params` → the core
    /// module; a lexicon's subpath → the module its lexicon says it loads).
    fn lookup(&self, specifier: &str) -> Option<String> {
        if self.sources.contains_key(specifier) {
            return Some(specifier.to_owned());
        }
        if specifier.starts_with("@intentius/chant/") {
            return Some(CORE_SPECIFIER.to_owned());
        }
        let name = self.lexicons.as_ref()?.resolve_runtime(specifier)?;
        self.source(&name).map(|_| name)
    }

    /// The module exporting just `names` of the lexicon module `specifier` names, when its
    /// lexicon offers one.
    fn pick(&self, specifier: &str, names: &[String]) -> Option<String> {
        let name = self.lexicons.as_ref()?.resolve_pick(specifier, names)?;
        self.source(&name).map(|_| name)
    }

    /// The source of an embedded module, by the name [`EmbeddedModules::lookup`] gave.
    fn source(&self, name: &str) -> Option<Arc<str>> {
        if let Some(s) = self.sources.get(name) {
            return Some(Arc::clone(s));
        }
        // Only a lexicon's specifier is asked of the registry (and remembered): a project's
        // own files are never entries here.
        let registry = self.lexicons.as_ref()?;
        if !name.starts_with(chant_core::lexicon::RUNTIME_PREFIX) {
            return None;
        }
        if let Some(built) = lock(&self.built).get(name) {
            return built.clone();
        }
        // Built outside the lock: a large lexicon's module takes a while, and two threads
        // building the same one at once only repeat work.
        let built: Option<Arc<str>> = registry.runtime_module(name).map(Arc::from);
        lock(&self.built)
            .entry(name.to_owned())
            .or_insert(built)
            .clone()
    }

    /// The stripped form of an embedded module, stripped once per engine.
    fn stripped(&self, specifier: &str, source: &str) -> Result<Arc<Stripped>, String> {
        if let Some(s) = lock(&self.stripped).get(specifier) {
            return Ok(Arc::clone(s));
        }
        let stripped = strip::strip_typescript(Path::new(&format!("{specifier}.ts")), source)
            .map(Arc::new)
            .map_err(|e| format!("embedded module {specifier}: {}", e[0].message))?;
        lock(&self.stripped).insert(specifier.to_owned(), Arc::clone(&stripped));
        Ok(stripped)
    }
}

/// An embedded module, compiled once per process and loaded from its bytecode after that: the
/// runtime modules are the same in every evaluation, and parsing them was most of a small
/// build's time.
fn embedded_module<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    code: &str,
) -> rquickjs::Result<Module<'js, Declared>> {
    // `None`: compiled once, not written yet (a process that evaluates once never pays for
    // the write); `Some`: the bytecode.
    type Cache = Mutex<HashMap<String, Option<&'static [u8]>>>;
    static BYTECODE: OnceLock<Cache> = OnceLock::new();
    let cache = BYTECODE.get_or_init(Default::default);
    let cached = lock(cache).get(name).copied();
    if let Some(Some(bytes)) = cached {
        // SAFETY: the bytes were written by `Module::write` of this same QuickJS build in this
        // process, and live as long as the process (QuickJS keeps pointing at them).
        return unsafe { Module::load(ctx.clone(), bytes) };
    }
    let module = Module::declare(ctx.clone(), name, code)?;
    if cached.is_none() {
        lock(cache).insert(name.to_owned(), None);
        return Ok(module);
    }
    if let Ok(bytes) = module.write(rquickjs::WriteOptions::default()) {
        // Leaked once per embedded module and process: loaded modules refer to it.
        let mut cache = lock(cache);
        let slot = cache.entry(name.to_owned()).or_insert(None);
        if slot.is_none() {
            *slot = Some(Box::leak(bytes.into_boxed_slice()));
        }
    }
    Ok(module)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records `message` as the evaluation's error (once) and drops everything half-read: a
/// failed evaluation has no declarables to index.
/// An evaluation that produced nothing but `message`.
fn failed(boundary: &Path, message: String) -> Evaluation {
    let mut evaluation = Evaluation::default();
    fail(&mut evaluation, boundary, message);
    evaluation
}

fn fail(evaluation: &mut Evaluation, boundary: &Path, message: String) {
    if !evaluation.errors.iter().any(|e| e.message == message) {
        evaluation.errors.push(EvalError {
            file: boundary.to_path_buf(),
            message,
        });
    }
    evaluation.modules.clear();
    evaluation.decls.clear();
}

/// State shared between the module loader and the evaluation driver.
#[derive(Default)]
struct LoadState {
    /// Module name → its stripped code (for mapping error positions).
    maps: HashMap<String, Arc<Stripped>>,
    /// The first load failure (syntax error, unreadable file) since the last reset.
    failure: Option<String>,
    /// The project files read and how imports found them.
    reads: chant_core::model::Reads,
}

/// Lowercase hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct SandboxResolver {
    walls: Walls,
    embedded: Arc<EmbeddedModules>,
    state: Arc<Mutex<LoadState>>,
}

impl Resolver for SandboxResolver {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _a: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        // A module that names what it takes from a lexicon gets a module of just that.
        if name.starts_with(chant_core::lexicon::RUNTIME_PREFIX) {
            let names = lock(&self.state).maps.get(base).and_then(|s| {
                s.imports
                    .iter()
                    .find(|(spec, _)| spec == name)
                    .and_then(|(_, names)| names.clone())
            });
            if let Some(found) = names.and_then(|names| self.embedded.pick(name, &names)) {
                return Ok(found);
            }
        }
        if let Some(found) = self.embedded.lookup(name) {
            return Ok(found);
        }
        let fail = |message: String| {
            lock(&self.state).failure.get_or_insert(message.clone());
            Err(rquickjs::Error::new_resolving_message(base, name, message))
        };
        let outside = || {
            format!(
                "{base}: Cannot import '{name}': it is outside the project ({})",
                self.walls.root().display()
            )
        };
        let absolute = Path::new(name).is_absolute();
        if !(absolute || name.starts_with("./") || name.starts_with("../")) {
            return fail(format!("{base}: Cannot find module '{name}'"));
        }
        if !absolute && self.embedded.lookup(base).is_some() {
            return fail(format!(
                "Cannot find module '{name}' (relative import from {base})"
            ));
        }
        let dir = Path::new(base).parent().unwrap_or(Path::new("/"));
        let candidates: Vec<String> = if absolute {
            vec![name.to_owned()]
        } else {
            let target = PathBuf::from(name);
            vec![
                name.to_owned(),
                target.with_extension("ts").to_string_lossy().into_owned(),
                format!("{name}.ts"),
                format!("{name}/index.ts"),
            ]
        };
        // Each candidate resolved with its symlinks followed, then held to the walls. What
        // each one found is kept: resolving them again later tells whether this import would
        // still find the same file.
        let mut probes = Vec::new();
        for c in &candidates {
            match self.walls.resolve_from(dir, "import", c) {
                Ok(found) if found.is_file() => {
                    probes.push((c.clone(), Some(found.clone())));
                    lock(&self.state)
                        .reads
                        .imports
                        .push(chant_core::model::Import {
                            from: base.to_owned(),
                            dir: dir.to_path_buf(),
                            probes,
                            to: found.clone(),
                        });
                    return Ok(found.to_string_lossy().into_owned());
                }
                Ok(_) | Err(PathError::Unresolvable { .. }) => probes.push((c.clone(), None)),
                Err(PathError::Outside { .. }) => return fail(outside()),
            }
        }
        if absolute {
            return fail(format!(
                "{name}: not a file inside the project ({})",
                self.walls.root().display()
            ));
        }
        fail(format!("{base}: Cannot find module '{name}'"))
    }
}

struct SandboxLoader {
    embedded: Arc<EmbeddedModules>,
    state: Arc<Mutex<LoadState>>,
    module_bytes: u64,
}

impl Loader for SandboxLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _a: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        if name == PRELUDE_SPECIFIER {
            if !PRELUDE_BYTECODE.is_empty() {
                // SAFETY: written by `Module::write` of the same rquickjs and QuickJS sources at
                // build time (build.rs), and 'static.
                if let Ok(m) = unsafe { Module::load(ctx.clone(), PRELUDE_BYTECODE) } {
                    return Ok(m);
                }
            }
            // Plain JavaScript: nothing to strip.
            return embedded_module(ctx, name, PRELUDE);
        }
        let embedded = self.embedded.source(name);
        let stripped = if let Some(source) = &embedded {
            self.embedded.stripped(name, source)
        } else {
            let read = chant_core::confine::read_text(Path::new(name), self.module_bytes)
                .map_err(|e| format!("cannot read module {e}"));
            if let Ok(source) = &read {
                lock(&self.state)
                    .reads
                    .modules
                    .push((PathBuf::from(name), sha256_hex(source.as_bytes())));
            }
            match read {
                Err(e) => Err(e),
                Ok(source) => strip::strip_typescript(Path::new(name), &source)
                    .map(Arc::new)
                    .map_err(|errors| {
                        let e = &errors[0];
                        format!(
                            "{name}:{}:{}: {}",
                            e.position.line, e.position.column, e.message
                        )
                    }),
            }
        };
        match stripped {
            Ok(s) if embedded.is_some() => {
                lock(&self.state)
                    .maps
                    .insert(name.to_owned(), Arc::clone(&s));
                embedded_module(ctx, name, &s.code)
            }
            Ok(s) => {
                let code = s.code.clone();
                lock(&self.state).maps.insert(name.to_owned(), s);
                Module::declare(ctx.clone(), name, code)
            }
            Err(message) => {
                lock(&self.state).failure.get_or_insert(message.clone());
                Err(rquickjs::Error::new_loading_message(name, message))
            }
        }
    }
}

/// How long an evaluation past its budget may take to stop before it is left behind.
const GRACE: Duration = Duration::from_millis(400);

/// Evaluations left behind that may still be running before new ones are refused.
const MAX_LEFT_BEHIND: usize = 2;

/// Evaluates TypeScript modules in a fresh sandbox.
#[derive(Clone)]
pub struct Engine {
    embedded: Arc<EmbeddedModules>,
    limits: Limits,
    permits: Arc<Permits>,
    /// Evaluations past their budget and grace whose thread has not ended yet.
    left_behind: Arc<std::sync::atomic::AtomicUsize>,
}

/// When an evaluation must stop: its deadline, or the caller's stop signal.
#[derive(Clone)]
struct Clock {
    deadline: Instant,
    time: Duration,
    stop: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
}

impl Clock {
    fn new(budget: &Budget) -> Clock {
        let time = budget.time();
        let now = Instant::now();
        Clock {
            deadline: now
                .checked_add(time)
                .unwrap_or(now + Duration::from_secs(3600)),
            time,
            stop: budget.stop.clone(),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s())
    }

    fn over(&self) -> bool {
        Instant::now() >= self.deadline || self.stopped()
    }

    /// Why the evaluation ended early.
    fn reason(&self) -> String {
        if self.stopped() {
            "the evaluation was stopped: the request was cancelled or the client went away"
                .to_owned()
        } else {
            format!(
                "the evaluation exceeded its {} s budget (set timeout in chant.config, or --timeout)",
                self.time.as_secs_f64()
            )
        }
    }
}

impl Engine {
    pub fn new(embedded: EmbeddedModules, limits: Limits) -> Engine {
        Engine {
            embedded: Arc::new(embedded),
            limits,
            permits: Arc::new(Permits::new(limits.concurrent)),
            left_behind: Arc::default(),
        }
    }

    /// Evaluates each file in `files` (absolute paths) within `budget` (one deadline for all
    /// of them) and collects exports and declarables.
    pub fn evaluate(&self, boundary: &Path, files: &[PathBuf], budget: &Budget) -> Evaluation {
        let files = files.to_vec();
        let root = boundary.to_path_buf();
        let result = self.with_sandbox(boundary, budget, move |realms| {
            realms.realm(|ctx, sandbox| Ok(evaluate_in(ctx, sandbox, &root, &files)))
        });
        result.unwrap_or_else(|message| failed(boundary, message))
    }

    /// Evaluates each of `files` on its own, in a fresh realm (its own built-ins and module
    /// instances: nothing one file does is seen by another), all in one runtime and one
    /// thread, within one deadline: what [`Engine::evaluate`] of each file alone returns, at a
    /// fraction of the cost of a runtime each.
    pub fn evaluate_each(
        &self,
        boundary: &Path,
        files: &[PathBuf],
        budget: &Budget,
    ) -> Vec<Evaluation> {
        let deadline = Instant::now() + budget.time();
        let mut out: Vec<Evaluation> = Vec::with_capacity(files.len());
        // A file that leaves jobs queued (a promise chain still running when its module
        // ended) ends its runtime: the queue is the runtime's, and its jobs must never run,
        // nor hold memory, in the next file's realm. The files after it go on in a new one.
        while out.len() < files.len() {
            let rest = files[out.len()..].to_vec();
            let root = boundary.to_path_buf();
            let left = Budget {
                time: Some(deadline.saturating_duration_since(Instant::now())),
                stop: budget.stop.clone(),
            };
            let result = self.with_sandbox(boundary, &left, move |realms| {
                let mut done = Vec::new();
                for file in &rest {
                    let one = std::slice::from_ref(file);
                    let evaluation = realms
                        .realm(|ctx, sandbox| Ok(evaluate_in(ctx, sandbox, &root, one)))
                        .unwrap_or_else(|message| failed(&root, message));
                    done.push(evaluation);
                    if realms.runtime.is_job_pending() {
                        break;
                    }
                }
                Ok(done)
            });
            match result {
                Ok(done) if !done.is_empty() => out.extend(done),
                Ok(_) | Err(_) => {
                    let message = result
                        .err()
                        .unwrap_or_else(|| "the evaluation ended without an answer".to_owned());
                    for _ in out.len()..files.len() {
                        out.push(failed(boundary, message.clone()));
                    }
                }
            }
        }
        out
    }

    /// Evaluates one file and returns its default export as JSON.
    pub fn default_export(
        &self,
        boundary: &Path,
        file: &Path,
        budget: &Budget,
    ) -> Result<serde_json::Value, String> {
        self.named_export(boundary, file, "default", budget)
    }

    /// The export `export` of the module `file` as JSON (`undefined` when it has none),
    /// read back in the sandbox like every value a project makes.
    pub fn named_export(
        &self,
        boundary: &Path,
        file: &Path,
        export: &str,
        budget: &Budget,
    ) -> Result<serde_json::Value, String> {
        let file = file.to_path_buf();
        let export = export.to_owned();
        self.with_sandbox(boundary, budget, move |realms| {
            realms.realm(|ctx, sandbox| {
                let name = file.to_string_lossy().into_owned();
                let namespace = sandbox.import(ctx, &name)?;
                let default: rquickjs::Value = namespace
                    .get(export.as_str())
                    .map_err(|e| sandbox.extract_error(&name, e.to_string()))?;
                if default.is_undefined() {
                    return Ok(serde_json::Value::Null);
                }
                let value = sandbox
                    .reader()
                    .value(ctx, &default, 0)
                    .map_err(|e| sandbox.extract_error(&name, e))?;
                extract::to_json(&value).map_err(|e| format!("{name}: {export} export: {e}"))
            })
        })
    }

    /// Runs `f` in a fresh runtime on a thread of its own whose stack is larger than the
    /// JavaScript stack limit (deep recursion is a JavaScript error, never a host stack
    /// overflow), after waiting for a permit. The interrupt handler stops JavaScript at the
    /// deadline; a built-in that never asks it is waited for [`GRACE`] more, then left behind:
    /// the caller gets its answer, and the thread ends whenever the built-in returns.
    fn with_sandbox<T: Send + 'static>(
        &self,
        boundary: &Path,
        budget: &Budget,
        f: impl FnOnce(&Realms) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        use std::sync::atomic::{AtomicU8, Ordering};
        let clock = Clock::new(budget);
        if self.left_behind.load(Ordering::SeqCst) >= MAX_LEFT_BEHIND {
            return Err(format!(
                "{MAX_LEFT_BEHIND} earlier evaluations are still stuck in JavaScript built-ins that never yield; restart chant to evaluate again"
            ));
        }
        // The permit goes with the thread: one left behind still holds it, so no more than
        // `concurrent` evaluations ever run, stuck or not.
        let Some(permit) = self.permits.take(&|| clock.over()) else {
            return Err(clock.reason());
        };
        // 0 running, 1 ended, 2 left behind.
        let state = Arc::new(AtomicU8::new(0));
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<T, String>>(1);
        let engine = self.clone();
        let root = boundary.to_path_buf();
        let thread_clock = clock.clone();
        let thread_state = Arc::clone(&state);
        std::thread::Builder::new()
            .name("chant-js".into())
            // Room for the JavaScript stack and for oxc, which strips every module on this
            // thread and recurses per level of nesting.
            .stack_size(self.limits.stack_bytes + chant_core::parse_guard::PARSE_STACK_BYTES)
            .spawn(move || {
                let _permit = permit;
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    engine.sandboxed(&root, thread_clock, f)
                }))
                .unwrap_or_else(|_| Err("the JavaScript evaluation crashed".to_owned()));
                if thread_state.swap(1, Ordering::SeqCst) == 2 {
                    engine.left_behind.fetch_sub(1, Ordering::SeqCst);
                }
                let _ = tx.send(result);
            })
            .map_err(|e| format!("cannot start the evaluation thread: {e}"))?;
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            let wait = if clock.over() {
                GRACE
            } else {
                Duration::from_millis(20)
            };
            match rx.recv_timeout(wait) {
                Ok(result) => return result,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the JavaScript evaluation crashed".to_owned());
                }
                Err(RecvTimeoutError::Timeout) if wait == GRACE => {
                    if state
                        .compare_exchange(0, 2, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        self.left_behind.fetch_add(1, Ordering::SeqCst);
                        return Err(format!(
                            "{}; it was inside a JavaScript built-in that does not stop, and was left behind",
                            clock.reason()
                        ));
                    }
                    // It ended just now: its result is on the way.
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    fn sandboxed<T>(
        &self,
        boundary: &Path,
        clock: Clock,
        f: impl FnOnce(&Realms) -> Result<T, String>,
    ) -> Result<T, String> {
        let runtime =
            Runtime::new().map_err(|e| format!("cannot start the JavaScript runtime: {e}"))?;
        runtime.set_memory_limit(self.limits.memory_bytes);
        runtime.set_max_stack_size(self.limits.stack_bytes);
        // Asked by QuickJS while any JavaScript runs, module bodies and getters, Proxy traps,
        // toJSON or valueOf reached while values are read back alike.
        let handler_clock = clock.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || handler_clock.over())));
        let state = Arc::new(Mutex::new(LoadState::default()));
        runtime.set_loader(
            SandboxResolver {
                walls: Walls::resolved(boundary.to_path_buf()),
                embedded: Arc::clone(&self.embedded),
                state: Arc::clone(&state),
            },
            SandboxLoader {
                embedded: Arc::clone(&self.embedded),
                state: Arc::clone(&state),
                module_bytes: self.limits.module_bytes,
            },
        );
        let sandbox = Sandbox {
            state,
            clock,
            limits: self.limits,
        };
        f(&Realms {
            runtime: &runtime,
            sandbox: &sandbox,
        })
    }
}

/// One runtime's realms: each [`Realms::realm`] call is a fresh context (its own built-ins and
/// module instances) that has run the prelude.
struct Realms<'a> {
    runtime: &'a Runtime,
    sandbox: &'a Sandbox,
}

impl Realms<'_> {
    fn realm<T>(
        &self,
        f: impl FnOnce(&Ctx<'_>, &Sandbox) -> Result<T, String>,
    ) -> Result<T, String> {
        // What the last realm loaded and read is not this one's.
        *lock(&self.sandbox.state) = LoadState::default();
        let context = Context::full(self.runtime)
            .map_err(|e| format!("cannot create a JavaScript context: {e}"))?;
        let result = context.with(|ctx| {
            Module::import(&ctx, PRELUDE_SPECIFIER)
                .catch(&ctx)
                .and_then(|p: Promise<'_>| p.finish::<rquickjs::Value<'_>>().catch(&ctx))
                .map_err(|e| format!("sandbox prelude failed: {e}"))?;
            f(&ctx, self.sandbox)
        });
        // Its objects are freed with it (cycles at QuickJS's next collection, which its own
        // allocation threshold triggers within the runtime's memory limit).
        drop(context);
        result
    }
}

/// Evaluates `files` in the realm of `ctx` and collects exports and declarables.
fn evaluate_in(ctx: &Ctx<'_>, sandbox: &Sandbox, root: &Path, files: &[PathBuf]) -> Evaluation {
    let mut evaluation = Evaluation::default();
    let read = (|| -> Result<(), String> {
        let core = sandbox.import(ctx, CORE_SPECIFIER)?;
        let mut reader = sandbox.reader();
        for file in files {
            let name = file.to_string_lossy().into_owned();
            match sandbox.import(ctx, &name).and_then(|ns| {
                reader
                    .exports(ctx, &ns)
                    .map_err(|e| sandbox.extract_error(&name, e))
            }) {
                Ok(exports) => evaluation.modules.push(ModuleExports {
                    file: file.clone(),
                    exports,
                }),
                Err(message) => {
                    let over = sandbox.clock.over();
                    evaluation.errors.push(EvalError {
                        file: file.clone(),
                        message,
                    });
                    if over {
                        // Every later file would end the same way.
                        return Err(sandbox.clock.reason());
                    }
                }
            }
        }
        let registry: Function = core.get("__chant_registry").map_err(internal)?;
        let registry: Array = registry
            .call(())
            .catch(ctx)
            .map_err(|e| sandbox.describe(CORE_SPECIFIER, e))?;
        evaluation.decls = reader
            .decls(ctx, &registry)
            .map_err(|e| sandbox.extract_error("the declarables", e))?;
        extract::check_ids(&evaluation)
    })();
    if let Err(message) = read {
        fail(&mut evaluation, root, message);
    }
    evaluation.reads = std::mem::take(&mut lock(&sandbox.state).reads);
    evaluation
}

struct Sandbox {
    state: Arc<Mutex<LoadState>>,
    clock: Clock,
    limits: Limits,
}

impl Sandbox {
    /// Imports a module (by resolved name) and returns its namespace.
    fn import<'js>(&self, ctx: &Ctx<'js>, name: &str) -> Result<Object<'js>, String> {
        if self.clock.over() {
            return Err(self.clock.reason());
        }
        lock(&self.state).failure = None;
        let result = Module::import(ctx, name)
            .catch(ctx)
            .and_then(|p: Promise<'js>| p.finish::<Object<'js>>().catch(ctx));
        result.map_err(|e| self.describe(name, e))
    }

    fn reader(&self) -> extract::Reader<'_> {
        extract::Reader::new(self.limits.extract_bytes, || self.clock.over())
    }

    /// An error met while reading values back: the budget's reason when it ran out.
    fn extract_error(&self, name: &str, message: String) -> String {
        if self.clock.over() {
            self.clock.reason()
        } else {
            format!("{name}: {message}")
        }
    }

    /// The message for a caught error, positions mapped back to the TypeScript source.
    fn describe(&self, name: &str, error: CaughtError<'_>) -> String {
        if let Some(failure) = lock(&self.state).failure.take() {
            return failure;
        }
        let (message, stack) = match &error {
            CaughtError::Exception(e) => (
                e.message().unwrap_or_default(),
                e.stack().unwrap_or_default(),
            ),
            CaughtError::Value(v) => (format!("{v:?}"), String::new()),
            CaughtError::Error(e) => (e.to_string(), String::new()),
        };
        // QuickJS words a temporal-dead-zone access differently from V8; use the familiar text.
        let message = match message.strip_suffix(" is not initialized") {
            Some(name) if !name.contains(' ') => {
                format!("Cannot access '{name}' before initialization")
            }
            _ => message,
        };
        if message.contains("interrupted") || self.clock.over() {
            return self.clock.reason();
        }
        if message.contains("out of memory") {
            return format!(
                "evaluation of {name} exceeded the memory limit ({} MiB)",
                self.limits.memory_bytes >> 20
            );
        }
        match self.locate(&stack) {
            Some(location) => format!("{location}: {message}"),
            None => format!("{name}: {message}"),
        }
    }

    /// `file:line:column` of the innermost project frame of a QuickJS stack.
    fn locate(&self, stack: &str) -> Option<String> {
        let state = lock(&self.state);
        for frame in stack.lines() {
            let inner = frame.trim().trim_start_matches("at ");
            let inner = inner
                .rsplit_once('(')
                .map_or(inner, |(_, r)| r)
                .trim_end_matches(')');
            let mut parts = inner.rsplitn(3, ':');
            let (Some(col), Some(line), Some(file)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let (Ok(line), Ok(col)) = (line.parse::<u32>(), col.parse::<u32>()) else {
                continue;
            };
            if !file.starts_with('/') {
                continue;
            }
            let pos = state.maps.get(file).and_then(|m| m.original(line, col));
            return Some(match pos {
                Some(p) => format!("{file}:{}:{}", p.line, p.column),
                None => format!("{file}:{line}:{col}"),
            });
        }
        None
    }
}

fn internal(e: rquickjs::Error) -> String {
    format!("internal error in the chant runtime module: {e}")
}

impl chant_core::model::Evaluator for Engine {
    fn evaluate(&self, boundary: &Path, files: &[PathBuf], budget: &Budget) -> Evaluation {
        Engine::evaluate(self, boundary, files, budget)
    }

    fn evaluate_each(
        &self,
        boundary: &Path,
        files: &[PathBuf],
        budget: &Budget,
    ) -> Vec<Evaluation> {
        Engine::evaluate_each(self, boundary, files, budget)
    }

    fn evaluate_config(
        &self,
        boundary: &Path,
        file: &Path,
        budget: &Budget,
    ) -> Result<serde_json::Value, String> {
        self.default_export(boundary, file, budget)
    }

    fn evaluate_export(
        &self,
        boundary: &Path,
        file: &Path,
        export: &str,
        budget: &Budget,
    ) -> Result<serde_json::Value, String> {
        self.named_export(boundary, file, export, budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    /// A built-in that never asks the interrupt handler, as Rust code that sleeps.
    #[test]
    fn an_evaluation_that_does_not_stop_is_left_behind_after_its_grace() {
        let engine = Engine::new(EmbeddedModules::new(), Limits::default());
        let dir = tempfile::tempdir().unwrap();
        let budget = Budget {
            time: Some(Duration::from_millis(200)),
            stop: None,
        };
        let stuck = |engine: &Engine| {
            let t = Instant::now();
            let r = engine.with_sandbox(dir.path(), &budget, |_| {
                std::thread::sleep(Duration::from_millis(1500));
                Ok(())
            });
            (r, t.elapsed())
        };
        let (r, took) = stuck(&engine);
        assert!(took < Duration::from_millis(1500), "{took:?}");
        assert!(r.unwrap_err().contains("left behind"));
        assert_eq!(engine.left_behind.load(Ordering::SeqCst), 1);
        let (r, _) = stuck(&engine);
        assert!(r.unwrap_err().contains("left behind"));
        // Two left behind: the next evaluation is refused at once, saying why.
        let (r, took) = stuck(&engine);
        assert!(took < Duration::from_millis(50));
        assert!(r.unwrap_err().contains("restart chant"), "refused");
        // Once they end, evaluations run again.
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(engine.left_behind.load(Ordering::SeqCst), 0);
        let ok = engine.with_sandbox(dir.path(), &budget, |_| Ok(7));
        assert_eq!(ok, Ok(7));
    }
}
