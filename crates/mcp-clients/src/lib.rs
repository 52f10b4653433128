//! MCP client configuration files: where each client keeps its global server list
//! ([`Client::global_config`]), which client a home directory shows ([`detect`]), and
//! [`merge`], which adds or updates one entry of `mcpServers` in such a file's text and keeps
//! every other server, every unknown key and the order they were written in. It reads and
//! returns text only: the caller decides where to write (atomically) and what the entry runs.
//! It knows nothing of chant or of the protocol the servers speak.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// An MCP client whose config file chant can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// Claude Code: `~/.claude/mcp.json`.
    Claude,
    /// Cursor: `~/.cursor/mcp.json`.
    Cursor,
    /// Any other client: `~/.config/mcp/mcp.json`.
    Other,
}

impl Client {
    /// `claude`, `cursor` or `other`.
    pub fn parse(text: &str) -> Option<Client> {
        match text {
            "claude" => Some(Client::Claude),
            "cursor" => Some(Client::Cursor),
            "other" => Some(Client::Other),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Client::Claude => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Other => "other MCP clients",
        }
    }

    /// The client's global config file under `home`.
    pub fn global_config(self, home: &Path) -> PathBuf {
        match self {
            Client::Claude => home.join(".claude/mcp.json"),
            Client::Cursor => home.join(".cursor/mcp.json"),
            Client::Other => home.join(".config/mcp/mcp.json"),
        }
    }

    /// Whether the client's entry should ask for tool names inside `^[a-zA-Z0-9_-]{1,64}$`:
    /// every client but Claude Code (which maps any tool name to one its model accepts), since
    /// Cursor and other clients are not known to accept `:` and may leave such tools out.
    pub fn needs_portable_tool_names(self) -> bool {
        self != Client::Claude
    }
}

/// The client `home` shows: Claude Code when `~/.claude` is a directory, else Cursor when
/// `~/.cursor` is, else [`Client::Other`].
pub fn detect(home: &Path) -> Client {
    if home.join(".claude").is_dir() {
        Client::Claude
    } else if home.join(".cursor").is_dir() {
        Client::Cursor
    } else {
        Client::Other
    }
}

/// What [`merge`] did to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// There was no file (or an empty one): it is made with this one entry.
    Created,
    /// The entry was added beside the others.
    Added,
    /// The entry was there with other values: they are replaced, its other keys kept.
    Updated,
    /// The entry was there as asked: nothing to write.
    Unchanged,
}

/// The text to write and what changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    pub change: Change,
}

/// Why a file cannot be merged into; it is then left as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("line {line}, column {column}: not valid JSON ({message})")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{0}")]
    Shape(String),
}

/// Sets `mcpServers.<name>` in `existing` (a config file's text, `None` when there is none)
/// to hold `entry`'s keys: each key of `entry` is set, any other key the entry already had
/// (`env`, `disabled`, …) is kept, and so is everything else in the file. The text is
/// pretty-printed with two spaces and ends in a newline.
pub fn merge(
    existing: Option<&str>,
    name: &str,
    entry: &Map<String, Value>,
) -> Result<Merged, MergeError> {
    let (mut root, created) = match existing.filter(|t| !t.trim().is_empty()) {
        None => (Map::new(), true),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => (m, false),
            Ok(other) => {
                return Err(MergeError::Shape(format!(
                    "the file holds {}, not an object with \"mcpServers\"",
                    kind(&other)
                )));
            }
            Err(e) => {
                return Err(MergeError::Syntax {
                    line: e.line(),
                    column: e.column(),
                    message: e
                        .to_string()
                        .split(" at line ")
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                });
            }
        },
    };
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(MergeError::Shape(format!(
            "\"mcpServers\" holds {}, not an object of servers",
            kind(servers)
        )));
    };
    let change = match servers.get_mut(name) {
        None => {
            servers.insert(name.to_owned(), Value::Object(entry.clone()));
            if created {
                Change::Created
            } else {
                Change::Added
            }
        }
        Some(Value::Object(current)) => {
            if entry.iter().all(|(k, v)| current.get(k) == Some(v)) {
                Change::Unchanged
            } else {
                for (k, v) in entry {
                    current.insert(k.clone(), v.clone());
                }
                Change::Updated
            }
        }
        Some(other) => {
            return Err(MergeError::Shape(format!(
                "\"mcpServers.{name}\" holds {}, not a server entry",
                kind(other)
            )));
        }
    };
    if change == Change::Unchanged {
        return Ok(Merged {
            text: existing.unwrap_or_default().to_owned(),
            change,
        });
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).expect("JSON serializes");
    text.push('\n');
    Ok(Merged { text, change })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Map<String, Value> {
        json!({"command": "/opt/chant", "args": ["serve", "mcp"]})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn clients_are_detected_by_their_directory_in_that_order() {
        let home = std::env::temp_dir().join(format!("mcp-clients-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        assert_eq!(detect(&home), Client::Other);
        // A file named like the directory is no client.
        std::fs::write(home.join(".claude"), "").unwrap();
        std::fs::create_dir(home.join(".cursor")).unwrap();
        assert_eq!(detect(&home), Client::Cursor);
        std::fs::remove_file(home.join(".claude")).unwrap();
        std::fs::create_dir(home.join(".claude")).unwrap();
        assert_eq!(detect(&home), Client::Claude);
        std::fs::remove_dir_all(&home).unwrap();
        assert_eq!(
            Client::Other.global_config(Path::new("/h")),
            Path::new("/h/.config/mcp/mcp.json")
        );
        assert_eq!(Client::parse("cursor"), Some(Client::Cursor));
        assert_eq!(Client::parse("Cursor"), None);
        assert!(Client::Cursor.needs_portable_tool_names());
        assert!(Client::Other.needs_portable_tool_names());
        assert!(!Client::Claude.needs_portable_tool_names());
    }

    #[test]
    fn a_new_file_holds_the_one_entry() {
        for existing in [None, Some(""), Some("  \n")] {
            let m = merge(existing, "chant", &entry()).unwrap();
            assert_eq!(m.change, Change::Created);
            assert_eq!(
                m.text,
                "{\n  \"mcpServers\": {\n    \"chant\": {\n      \"command\": \"/opt/chant\",\n      \"args\": [\n        \"serve\",\n        \"mcp\"\n      ]\n    }\n  }\n}\n"
            );
        }
    }

    #[test]
    fn other_servers_unknown_keys_and_order_are_kept_and_a_second_merge_changes_nothing() {
        let existing = r#"{"theme": "dark", "mcpServers": {"zed": {"command": "z"}, "chant": {"command": "npx", "args": ["chant", "serve", "mcp"], "env": {"A": "1"}}}, "last": true}"#;
        let m = merge(Some(existing), "chant", &entry()).unwrap();
        assert_eq!(m.change, Change::Updated);
        let v: Value = serde_json::from_str(&m.text).unwrap();
        assert_eq!(
            v,
            json!({"theme": "dark", "mcpServers": {"zed": {"command": "z"}, "chant": {"command": "/opt/chant", "args": ["serve", "mcp"], "env": {"A": "1"}}}, "last": true})
        );
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["theme", "mcpServers", "last"]);
        let again = merge(Some(&m.text), "chant", &entry()).unwrap();
        assert_eq!(
            again,
            Merged {
                text: m.text.clone(),
                change: Change::Unchanged
            }
        );
        let added = merge(Some(r#"{"mcpServers": {"zed": {}}}"#), "chant", &entry()).unwrap();
        assert_eq!(added.change, Change::Added);
        let added: Value = serde_json::from_str(&added.text).unwrap();
        let names: Vec<&String> = added["mcpServers"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["zed", "chant"]);
        let no_servers = merge(Some(r#"{"x": 1}"#), "chant", &entry()).unwrap();
        assert_eq!(no_servers.change, Change::Added);
    }

    #[test]
    fn files_that_are_not_configs_are_refused_with_where() {
        assert_eq!(
            merge(
                Some("{\n  \"mcpServers\": {\n    \"a\": 1,\n  }\n}"),
                "chant",
                &entry()
            )
            .unwrap_err(),
            MergeError::Syntax {
                line: 4,
                column: 3,
                message: "trailing comma".into()
            }
        );
        assert_eq!(
            merge(Some("[1]"), "chant", &entry())
                .unwrap_err()
                .to_string(),
            "the file holds an array, not an object with \"mcpServers\""
        );
        assert_eq!(
            merge(Some(r#"{"mcpServers": []}"#), "chant", &entry())
                .unwrap_err()
                .to_string(),
            "\"mcpServers\" holds an array, not an object of servers"
        );
        assert_eq!(
            merge(Some(r#"{"mcpServers": {"chant": "x"}}"#), "chant", &entry())
                .unwrap_err()
                .to_string(),
            "\"mcpServers.chant\" holds a string, not a server entry"
        );
    }
}
