//! Typed reads of a tool call's arguments, for every server: the object the client sent (or
//! none), and its members as the types a handler asks for. A member of another type reads as
//! absent here; a server that must say so checks types against its schema first.

use serde_json::{Map, Value};

use crate::registry::Arguments;

/// A tool call's arguments as an object (empty when the client sent none, or not an object).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args(Map<String, Value>);

impl Args {
    pub fn of(arguments: &Arguments) -> Args {
        match arguments {
            Some(Value::Object(m)) => Args(m.clone()),
            _ => Args::default(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        self.0.get(key).and_then(Value::as_bool)
    }

    pub fn f64(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(Value::as_f64)
    }

    /// The members, as sent.
    pub fn map(&self) -> &Map<String, Value> {
        &self.0
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_read_as_their_types_or_not_at_all() {
        let a = Args::of(&Some(json!({"s": "x", "b": true, "n": 2.5, "wrong": 1})));
        assert_eq!(
            (a.str("s"), a.bool("b"), a.f64("n")),
            (Some("x"), Some(true), Some(2.5))
        );
        assert_eq!(
            (a.str("wrong"), a.bool("s"), a.str("missing")),
            (None, None, None)
        );
        assert_eq!(Args::of(&None), Args::default());
        assert_eq!(Args::of(&Some(json!([1]))).map().len(), 0);
    }
}
