//! What a handler knows about the request it serves: the revision, the client, cancellation and
//! a way to report progress.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::output::Output;
use crate::version::ProtocolVersion;

/// Set when the client sends `notifications/cancelled` for the request. Long handlers poll it and
/// stop early; whatever they return afterwards is not sent.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// The flag itself, for code that polls an `AtomicBool`.
    pub fn as_atomic(&self) -> &AtomicBool {
        &self.0
    }
}

/// The per-request context handed to tool handlers and the resource reader.
#[derive(Clone)]
pub struct RequestContext {
    /// The revision this request is served at.
    pub version: ProtocolVersion,
    /// `clientInfo` from the request's envelope, else from the last `initialize`.
    pub client_info: Option<Value>,
    pub cancel: CancelToken,
    pub(crate) progress_token: Option<Value>,
    pub(crate) output: Option<Arc<Output>>,
    /// Set when the connection's input ended: the client is gone.
    pub(crate) closed: Arc<Closed>,
}

/// How long work in flight at end of input may still take before it is asked to stop: a
/// client that sends its last requests and closes its input gets their replies, and a server
/// busy with work that never ends still exits promptly.
pub const EOF_GRACE: Duration = Duration::from_millis(500);

/// When the connection's input ended, if it has.
#[derive(Debug, Default)]
pub struct Closed(OnceLock<Instant>);

impl Closed {
    pub(crate) fn close(&self) {
        let _ = self.0.set(Instant::now());
    }

    fn is_closed(&self) -> bool {
        self.0.get().is_some()
    }

    fn past_grace(&self) -> bool {
        self.0.get().is_some_and(|t| t.elapsed() >= EOF_GRACE)
    }
}

impl RequestContext {
    /// A context for calling handlers outside a server (tests, benchmarks, other front ends).
    pub fn detached(version: ProtocolVersion) -> RequestContext {
        RequestContext {
            version,
            client_info: None,
            cancel: CancelToken::new(),
            progress_token: None,
            output: None,
            closed: Arc::default(),
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Whether the connection's input has ended (the client closed it, or went away).
    pub fn input_closed(&self) -> bool {
        self.closed.is_closed()
    }

    /// Whether work for this request should stop: it was cancelled, or the input ended
    /// [`EOF_GRACE`] ago. A handler whose work is bounded only by what a project does
    /// (evaluating its code) stops on either; its reply, if the request was not cancelled, is
    /// still written.
    pub fn should_stop(&self) -> bool {
        self.is_cancelled() || self.closed.past_grace()
    }

    /// [`RequestContext::should_stop`] as a function another thread can call.
    pub fn stop_signal(&self) -> Arc<dyn Fn() -> bool + Send + Sync> {
        let cancel = self.cancel.clone();
        let closed = Arc::clone(&self.closed);
        Arc::new(move || cancel.is_cancelled() || closed.past_grace())
    }

    /// Whether the client asked for progress (the request carried `_meta.progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.progress_token.is_some() && self.output.is_some()
    }

    /// Sends `notifications/progress` when the client asked for it; otherwise does nothing.
    /// `message` is sent only at revisions that have it (2025-03-26 and later).
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(output)) = (&self.progress_token, &self.output) else {
            return;
        };
        if self.is_cancelled() {
            return;
        }
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(progress));
        if let Some(t) = total {
            params.insert("total".into(), number(t));
        }
        if let (Some(m), true) = (message, self.version.has_annotations()) {
            params.insert("message".into(), Value::String(m.to_owned()));
        }
        let mut note = Map::new();
        note.insert("jsonrpc".into(), "2.0".into());
        note.insert("method".into(), "notifications/progress".into());
        note.insert("params".into(), Value::Object(params));
        output.write_value(&Value::Object(note));
    }
}

fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}
