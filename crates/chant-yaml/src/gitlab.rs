//! The GitLab style: byte-compatible with the GitLab lexicon reference's emitter (block style,
//! two-space indents, its own scalar quoting rules and `|` blocks for multi-line strings).

/// A YAML value as the serializer builds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Yaml {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Seq(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
    /// `!tag [a, b]` (array value) or `!tag value`.
    Tagged(String, Box<Yaml>),
}

impl Yaml {
    fn is_block(&self) -> bool {
        match self {
            Yaml::Seq(items) => !items.is_empty(),
            Yaml::Map(entries) => !entries.is_empty(),
            _ => false,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::String(s) => Some(s),
            _ => None,
        }
    }
}

fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || matches!(s, "true" | "false" | "null" | "yes" | "no")
        || s.contains(": ")
        || s.contains('#')
        || s.starts_with(['*', '&', '!', '{', '[', '\'', '"', '$'])
        || s.starts_with(|c: char| c.is_ascii_digit())
}

/// A mapping key as written. Keys are plain, as the reference wrote them (`spaced key`,
/// `123`), except where a plain key could not be read back at all: `: ` or ` #` inside,
/// an indicator first, a `:` last (job names from string exports, such as `test: unit`).
fn key_text(key: &str) -> String {
    let unreadable = key.is_empty()
        || key.contains(": ")
        || key.contains(" #")
        || key.contains('\n')
        || key.ends_with(':')
        || key.starts_with([
            '*', '&', '!', '{', '[', '\'', '"', '%', '@', '`', '|', '>', '#', ',',
        ])
        || key.starts_with("- ")
        || key.starts_with("? ");
    if unreadable {
        format!("'{}'", key.replace('\'', "''").replace('\n', " "))
    } else {
        key.to_owned()
    }
}

/// `String(value)` for scalars, as JavaScript writes them.
pub fn scalar_text(v: &Yaml) -> String {
    match v {
        Yaml::Null => "null".into(),
        Yaml::Bool(b) => b.to_string(),
        Yaml::Number(n) => {
            let mut s = String::new();
            canon::write_f64(&mut s, *n);
            if s == "null" {
                if n.is_nan() {
                    "NaN".into()
                } else if *n > 0.0 {
                    "Infinity".into()
                } else {
                    "-Infinity".into()
                }
            } else {
                s
            }
        }
        Yaml::String(s) => s.clone(),
        Yaml::Seq(items) => items.iter().map(scalar_text).collect::<Vec<_>>().join(","),
        Yaml::Map(_) => "[object Object]".into(),
        Yaml::Tagged(_, v) => scalar_text(v),
    }
}

fn prefix(indent: usize) -> String {
    "  ".repeat(indent)
}

/// Emits `value`; a block value starts with a newline, a scalar does not.
pub fn emit(value: &Yaml, indent: usize) -> String {
    match value {
        Yaml::Null => "null".into(),
        Yaml::Bool(_) | Yaml::Number(_) => scalar_text(value),
        Yaml::String(s) if s.contains('\n') => {
            let p = prefix(indent);
            let mut lines: Vec<&str> = s.split('\n').collect();
            if lines.last() == Some(&"") {
                lines.pop();
            }
            let mut out = String::from("|");
            for line in lines {
                out.push('\n');
                out.push_str(&p);
                out.push_str(line);
            }
            out
        }
        Yaml::String(s) if needs_quotes(s) => format!("'{}'", s.replace('\'', "''")),
        Yaml::String(s) => s.clone(),
        Yaml::Seq(items) if items.is_empty() => "[]".into(),
        Yaml::Map(entries) if entries.is_empty() => "{}".into(),
        Yaml::Tagged(tag, v) => match v.as_ref() {
            Yaml::Seq(items) => format!(
                "{tag} [{}]",
                items.iter().map(scalar_text).collect::<Vec<_>>().join(", ")
            ),
            other => format!("{tag} {}", emit(other, indent)),
        },
        Yaml::Seq(items) => {
            let p = prefix(indent);
            let mut out = String::new();
            for item in items {
                out.push('\n');
                match item {
                    Yaml::Map(entries) if !entries.is_empty() => {
                        for (i, (k, v)) in entries.iter().enumerate() {
                            if i == 0 {
                                out.push_str(&format!("{p}- "));
                            } else {
                                out.push_str(&format!("\n{p}  "));
                            }
                            out.push_str(&entry(k, v, indent + 2));
                        }
                    }
                    other => {
                        let text = emit(other, indent + 1);
                        out.push_str(&format!("{p}- {}", text.trim_start()));
                    }
                }
            }
            out
        }
        Yaml::Map(entries) => {
            let p = prefix(indent);
            let mut out = String::new();
            for (k, v) in entries {
                out.push('\n');
                out.push_str(&p);
                out.push_str(&entry(k, v, indent + 1));
            }
            out
        }
    }
}

/// `key: value`, or `key:` followed by a block value emitted at `value_indent`.
fn entry(key: &str, value: &Yaml, value_indent: usize) -> String {
    let key = key_text(key);
    if value.is_block() {
        format!("{key}:{}", emit(value, value_indent))
    } else {
        format!("{key}: {}", emit(value, value_indent))
    }
}

/// A top-level section: `name:` plus its value at indent 1.
pub fn section(name: &str, value: &Yaml) -> String {
    entry(name, value, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Yaml {
        Yaml::String(x.into())
    }

    #[test]
    fn keys_stay_plain_unless_they_could_not_be_read_back() {
        assert_eq!(key_text("spaced key"), "spaced key");
        assert_eq!(key_text("123"), "123");
        assert_eq!(key_text("test:unit"), "test:unit");
        assert_eq!(key_text("Test: Unit"), "'Test: Unit'");
        assert_eq!(key_text("it's: here"), "'it''s: here'");
        assert_eq!(key_text("@scope"), "'@scope'");
        assert_eq!(key_text(".base"), ".base");
    }

    #[test]
    fn scalar_quoting() {
        for (input, out) in [
            ("true", "'true'"),
            ("True", "True"),
            ("8080", "'8080'"),
            ("-1", "-1"),
            (".5", ".5"),
            ("", "''"),
            (" ", " "),
            ("key: value", "'key: value'"),
            ("host:5432", "host:5432"),
            ("issue#12", "'issue#12'"),
            ("$CI", "'$CI'"),
            ("prefix-$CI", "prefix-$CI"),
            ("'quoted'", "'''quoted'''"),
            ("it's fine", "it's fine"),
            ("@scope/pkg", "@scope/pkg"),
        ] {
            assert_eq!(emit(&s(input), 0), out, "{input:?}");
        }
    }

    #[test]
    fn blocks() {
        let v = Yaml::Map(vec![
            ("script".into(), Yaml::Seq(vec![s("a\n  b\nc\n"), s("x")])),
            (
                "cache".into(),
                Yaml::Seq(vec![Yaml::Map(vec![
                    (
                        "key".into(),
                        Yaml::Map(vec![("files".into(), Yaml::Seq(vec![s("go.sum")]))]),
                    ),
                    ("policy".into(), s("pull")),
                ])]),
            ),
            ("tags".into(), Yaml::Seq(vec![])),
            (
                "ref".into(),
                Yaml::Tagged(
                    "!reference".into(),
                    Box::new(Yaml::Seq(vec![s(".setup"), s("script")])),
                ),
            ),
        ]);
        assert_eq!(
            section("job", &v),
            "job:\n  script:\n    - |\n      a\n        b\n      c\n    - x\n  cache:\n    - key:\n        files:\n          - go.sum\n      policy: pull\n  tags: []\n  ref: !reference [.setup, script]"
        );
    }
}
