//! The sandboxed QuickJS runtime: one fresh runtime per evaluation, module resolution inside a
//! boundary plus embedded runtime modules, determinism, and time and memory limits.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use chant_core::model::{EvalError, Evaluation, ModuleExports};
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

/// Resource limits of one evaluation.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Wall time one file (with the modules it imports) may take.
    pub time: Duration,
    pub memory_bytes: usize,
    pub stack_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            time: Duration::from_secs(5),
            memory_bytes: 512 << 20,
            stack_bytes: 2 << 20,
        }
    }
}

/// Runs before any module: no clock, no randomness, no environment, no host.
const PRELUDE: &str = r#"(() => {
  const RealDate = Date;
  function FixedDate(...args) {
    if (!new.target) return new RealDate(0).toString();
    return args.length ? new RealDate(...args) : new RealDate(0);
  }
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = () => 0;
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, "constructor", { value: FixedDate });
  globalThis.Date = FixedDate;
  let seed = 0x2545f491;
  Math.random = () => {
    seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
  globalThis.process = Object.freeze({ env: Object.freeze({}) });
  delete globalThis.performance;
})();"#;

/// Embedded runtime modules: specifier → TypeScript source.
#[derive(Clone, Debug, Default)]
pub struct EmbeddedModules {
    sources: HashMap<String, Arc<str>>,
}

impl EmbeddedModules {
    /// The core module plus nothing else.
    pub fn new() -> EmbeddedModules {
        let mut m = EmbeddedModules::default();
        m.add(CORE_SPECIFIER, CORE_SOURCE);
        m
    }

    pub fn add(&mut self, specifier: &str, typescript: &str) {
        self.sources
            .insert(specifier.to_owned(), Arc::from(typescript));
    }

    /// The embedded module a bare specifier names (`@intentius/chant/params` → the core module).
    fn lookup(&self, specifier: &str) -> Option<&str> {
        if self.sources.contains_key(specifier) {
            return self
                .sources
                .get_key_value(specifier)
                .map(|(k, _)| k.as_str());
        }
        let root = if let Some(rest) = specifier.strip_prefix("@intentius/chant-lexicon-") {
            let name = rest.split('/').next().unwrap_or(rest);
            format!("@intentius/chant-lexicon-{name}")
        } else if specifier.starts_with("@intentius/chant/") {
            CORE_SPECIFIER.to_owned()
        } else {
            return None;
        };
        self.sources
            .get_key_value(root.as_str())
            .map(|(k, _)| k.as_str())
    }
}

/// Stripped sources of embedded modules, shared across evaluations of a process.
fn stripped_embedded(specifier: &str, source: &str) -> Result<Arc<Stripped>, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Stripped>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(s) = lock(cache).get(specifier) {
        return Ok(Arc::clone(s));
    }
    let stripped = strip::strip_typescript(Path::new(&format!("{specifier}.ts")), source)
        .map(Arc::new)
        .map_err(|e| format!("embedded module {specifier}: {}", e[0].message))?;
    lock(cache).insert(specifier.to_owned(), Arc::clone(&stripped));
    Ok(stripped)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// State shared between the module loader and the evaluation driver.
#[derive(Default)]
struct LoadState {
    /// Module name → its stripped code (for mapping error positions).
    maps: HashMap<String, Arc<Stripped>>,
    /// The first load failure (syntax error, unreadable file) since the last reset.
    failure: Option<String>,
}

struct SandboxResolver {
    boundary: PathBuf,
    embedded: Arc<EmbeddedModules>,
    state: Arc<Mutex<LoadState>>,
}

/// `path.resolve`-style lexical normalization.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl Resolver for SandboxResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _a: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        let _ = ctx;
        if let Some(found) = self.embedded.lookup(name) {
            return Ok(found.to_owned());
        }
        let fail = |message: String| {
            lock(&self.state).failure.get_or_insert(message.clone());
            Err(rquickjs::Error::new_resolving_message(base, name, message))
        };
        if Path::new(name).is_absolute() {
            let target = normalize(Path::new(name));
            return if target.starts_with(&self.boundary) && target.is_file() {
                Ok(target.to_string_lossy().into_owned())
            } else {
                fail(format!(
                    "{name}: not a file inside the project ({})",
                    self.boundary.display()
                ))
            };
        }
        if !(name.starts_with("./") || name.starts_with("../")) {
            return fail(format!("{base}: Cannot find module '{name}'"));
        }
        if self.embedded.lookup(base).is_some() {
            return fail(format!(
                "Cannot find module '{name}' (relative import from {base})"
            ));
        }
        let dir = Path::new(base).parent().unwrap_or(Path::new("/"));
        let target = normalize(&dir.join(name));
        if !target.starts_with(&self.boundary) {
            return fail(format!(
                "{base}: Cannot import '{name}': it is outside the project ({})",
                self.boundary.display()
            ));
        }
        let candidates = [
            target.clone(),
            target.with_extension("ts"),
            append(&target, ".ts"),
            target.join("index.ts"),
        ];
        match candidates
            .iter()
            .find(|c| c.is_file() && c.starts_with(&self.boundary))
        {
            Some(found) => Ok(found.to_string_lossy().into_owned()),
            None => fail(format!("{base}: Cannot find module '{name}'")),
        }
    }
}

fn append(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

struct SandboxLoader {
    embedded: Arc<EmbeddedModules>,
    state: Arc<Mutex<LoadState>>,
}

impl Loader for SandboxLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _a: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        let stripped = if let Some(source) = self.embedded.sources.get(name) {
            stripped_embedded(name, source)
        } else {
            match std::fs::read_to_string(name) {
                Err(e) => Err(format!("{name}: cannot read: {e}")),
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

/// Evaluates TypeScript modules in a fresh sandbox.
#[derive(Clone)]
pub struct Engine {
    embedded: Arc<EmbeddedModules>,
    limits: Limits,
}

impl Engine {
    pub fn new(embedded: EmbeddedModules, limits: Limits) -> Engine {
        Engine {
            embedded: Arc::new(embedded),
            limits,
        }
    }

    /// Evaluates each file in `files` (absolute paths) and collects exports and declarables.
    pub fn evaluate(&self, boundary: &Path, files: &[PathBuf]) -> Evaluation {
        let mut evaluation = Evaluation::default();
        let result = self.with_sandbox(boundary, |ctx, sandbox| {
            let core = sandbox.import(ctx, CORE_SPECIFIER)?;
            for file in files {
                let name = file.to_string_lossy().into_owned();
                match sandbox
                    .import(ctx, &name)
                    .and_then(|ns| extract::exports(ctx, &ns).map_err(|e| format!("{name}: {e}")))
                {
                    Ok(exports) => evaluation.modules.push(ModuleExports {
                        file: file.clone(),
                        exports,
                    }),
                    Err(message) => evaluation.errors.push(EvalError {
                        file: file.clone(),
                        message,
                    }),
                }
            }
            let registry: Function = core.get("__chant_registry").map_err(internal)?;
            let registry: Array = registry
                .call(())
                .catch(ctx)
                .map_err(|e| sandbox.describe(CORE_SPECIFIER, e))?;
            evaluation.decls =
                extract::decls(ctx, &registry).map_err(|e| format!("internal: {e}"))?;
            Ok(())
        });
        if let Err(message) = result {
            evaluation.errors.push(EvalError {
                file: boundary.to_path_buf(),
                message,
            });
        }
        evaluation
    }

    /// Evaluates one file and returns its default export as JSON.
    pub fn default_export(
        &self,
        boundary: &Path,
        file: &Path,
    ) -> Result<serde_json::Value, String> {
        self.with_sandbox(boundary, |ctx, sandbox| {
            let name = file.to_string_lossy().into_owned();
            let namespace = sandbox.import(ctx, &name)?;
            let default: rquickjs::Value = namespace.get("default").map_err(internal)?;
            let value = extract::value(ctx, &default, 0).map_err(|e| format!("{name}: {e}"))?;
            extract::to_json(&value).map_err(|e| format!("{name}: default export: {e}"))
        })
    }

    /// Runs `f` in a fresh runtime on a thread whose stack is larger than the JavaScript stack
    /// limit, so deep recursion is a JavaScript error, never a host stack overflow.
    fn with_sandbox<T: Send>(
        &self,
        boundary: &Path,
        f: impl FnOnce(&Ctx<'_>, &Sandbox) -> Result<T, String> + Send,
    ) -> Result<T, String> {
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("chant-js".into())
                .stack_size(self.limits.stack_bytes + (16 << 20))
                .spawn_scoped(scope, || self.sandboxed(boundary, f))
                .map_err(|e| format!("cannot start the evaluation thread: {e}"))?
                .join()
                .unwrap_or_else(|_| Err("the JavaScript evaluation crashed".to_owned()))
        })
    }

    fn sandboxed<T>(
        &self,
        boundary: &Path,
        f: impl FnOnce(&Ctx<'_>, &Sandbox) -> Result<T, String>,
    ) -> Result<T, String> {
        let runtime =
            Runtime::new().map_err(|e| format!("cannot start the JavaScript runtime: {e}"))?;
        runtime.set_memory_limit(self.limits.memory_bytes);
        runtime.set_max_stack_size(self.limits.stack_bytes);
        let deadline = Arc::new(Mutex::new(None::<Instant>));
        let handler_deadline = Arc::clone(&deadline);
        runtime.set_interrupt_handler(Some(Box::new(move || {
            lock(&handler_deadline).is_some_and(|d| Instant::now() > d)
        })));
        let state = Arc::new(Mutex::new(LoadState::default()));
        runtime.set_loader(
            SandboxResolver {
                boundary: normalize(boundary),
                embedded: Arc::clone(&self.embedded),
                state: Arc::clone(&state),
            },
            SandboxLoader {
                embedded: Arc::clone(&self.embedded),
                state: Arc::clone(&state),
            },
        );
        let context = Context::full(&runtime)
            .map_err(|e| format!("cannot create a JavaScript context: {e}"))?;
        let sandbox = Sandbox {
            state,
            deadline,
            limits: self.limits,
        };
        context.with(|ctx| {
            ctx.eval::<(), _>(PRELUDE)
                .catch(&ctx)
                .map_err(|e| format!("sandbox prelude failed: {e}"))?;
            f(&ctx, &sandbox)
        })
    }
}

struct Sandbox {
    state: Arc<Mutex<LoadState>>,
    deadline: Arc<Mutex<Option<Instant>>>,
    limits: Limits,
}

impl Sandbox {
    /// Imports a module (by resolved name) and returns its namespace, with the time limit armed.
    fn import<'js>(&self, ctx: &Ctx<'js>, name: &str) -> Result<Object<'js>, String> {
        lock(&self.state).failure = None;
        *lock(&self.deadline) = Some(Instant::now() + self.limits.time);
        let result = Module::import(ctx, name)
            .catch(ctx)
            .and_then(|p: Promise<'js>| p.finish::<Object<'js>>().catch(ctx));
        *lock(&self.deadline) = None;
        result.map_err(|e| self.describe(name, e))
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
        if message.contains("interrupted") {
            return format!(
                "evaluation of {name} exceeded the {} s limit",
                self.limits.time.as_secs_f64()
            );
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

impl EmbeddedModules {
    /// The core module plus each lexicon's runtime module.
    pub fn with_lexicons(lexicons: &[Box<dyn chant_core::lexicon::Lexicon>]) -> EmbeddedModules {
        let mut m = EmbeddedModules::new();
        for l in lexicons {
            m.add(
                &format!("@intentius/chant-lexicon-{}", l.name()),
                &l.runtime_module(),
            );
        }
        m
    }
}

impl chant_core::model::Evaluator for Engine {
    fn evaluate(&self, boundary: &Path, files: &[PathBuf]) -> Evaluation {
        Engine::evaluate(self, boundary, files)
    }

    fn evaluate_config(&self, boundary: &Path, file: &Path) -> Result<serde_json::Value, String> {
        self.default_export(boundary, file)
    }
}
