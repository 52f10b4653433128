//! The single writer every reply and notification goes through: one whole line per message,
//! flushed at once, never interleaved with another worker's line.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use canon::Integers;

pub(crate) struct Output {
    sink: Mutex<Box<dyn Write + Send>>,
    broken: AtomicBool,
}

impl Output {
    pub(crate) fn new(sink: Box<dyn Write + Send>) -> Output {
        Output {
            sink: Mutex::new(sink),
            broken: AtomicBool::new(false),
        }
    }

    /// Writes `value` as one compact JSON line. Integers are written exactly, so request ids are
    /// echoed digit for digit.
    pub(crate) fn write_value(&self, value: &Value) {
        let mut line = String::with_capacity(256);
        canon::write_compact(&mut line, value, Integers::Exact);
        line.push('\n');
        self.write_line(line.as_bytes());
    }

    fn write_line(&self, line: &[u8]) {
        if self.is_broken() {
            return;
        }
        // A poisoned lock only means another writer panicked mid-call; the sink is still usable.
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        if sink.write_all(line).and_then(|()| sink.flush()).is_err() {
            // The client is gone (EPIPE or closed pipe): stop writing, end quietly.
            self.broken.store(true, Ordering::SeqCst);
        }
    }

    /// True once a write failed; the serve loop then stops reading.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
    }
}
