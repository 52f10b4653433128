//! The one error of the workspace engine: a closed reason code and a message that names the
//! file, the field and the fix. Every document's `error` block is made from it.

use serde_json::{Value, json};

/// Where in a file an error is, when it is in one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WsError {
    /// The reason code, from the command's closed list (`declaration-invalid`, `record-closed`…).
    pub code: &'static str,
    pub message: String,
    pub location: Option<Location>,
}

impl WsError {
    pub fn new(code: &'static str, message: impl Into<String>) -> WsError {
        WsError {
            code,
            message: message.into(),
            location: None,
        }
    }

    pub fn at(mut self, location: Location) -> WsError {
        self.location = Some(location);
        self
    }

    /// `{code, message}`, with `location` when `with_location` (the `ls` error block has it).
    pub fn block(&self, with_location: bool) -> Value {
        let mut b = json!({"code": self.code, "message": self.message});
        if with_location {
            b["location"] = match &self.location {
                Some(l) => json!({"file": l.file, "line": l.line, "column": l.column}),
                None => Value::Null,
            };
        }
        b
    }
}

pub type Result<T> = std::result::Result<T, WsError>;
