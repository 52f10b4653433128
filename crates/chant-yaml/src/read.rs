//! Reading a YAML template into JSON values, as GitLab reads `.gitlab-ci.yml`: anchors and
//! aliases expanded, `<<` merge keys applied (the mapping's own keys win, then earlier merge
//! sources), plain scalars resolved by the YAML 1.2 core schema, and `!reference [...]` kept as
//! `{"!reference": [...]}` so an importer can carry it through. Alias bombs and runaway
//! nesting are refused with a clear error.

use serde_json::{Map, Value as Json};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Nodes a document may expand to (aliases included) before it is refused.
pub const MAX_NODES: usize = 2_000_000;
/// Nesting depth a document may reach.
pub const MAX_DEPTH: usize = 200;

enum Frame {
    Seq(Vec<Json>, usize, Option<Tag>),
    /// Entries, a key waiting for its value, merge sources, anchor, tag.
    Map(
        Map<String, Json>,
        Option<Key>,
        Vec<Json>,
        usize,
        Option<Tag>,
    ),
}

/// A mapping key read, waiting for its value.
enum Key {
    /// A plain, untagged `<<`: the merge key. A quoted `"<<"` is a key like any other.
    Merge,
    Name(String),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    /// Anchor id, its value and that value's [`size`].
    anchors: Vec<(usize, Json, usize)>,
    docs: Vec<Json>,
    nodes: usize,
    /// Whether an alias was expanded (the refusal then says so).
    aliased: bool,
    error: Option<String>,
    /// The scalar being pushed is a plain, untagged `<<`.
    merge_key: bool,
    /// Only the part of YAML that JSON can also express: no alias, tag, merge key or
    /// repeated key ([`parse_json_subset`]).
    strict: bool,
}

fn tag_name(tag: &Option<Tag>) -> Option<String> {
    tag.as_ref().map(|t| format!("{}{}", t.handle, t.suffix))
}

/// The long form of a CloudFormation short-form tag (`!Ref` → `Ref`, `!Sub` → `Fn::Sub`,
/// `!Condition` → `Condition`), for the functions CloudFormation documents.
fn cfn_function(tag: &str) -> Option<String> {
    let name = tag.strip_prefix('!')?;
    match name {
        "Ref" | "Condition" => Some(name.to_owned()),
        "Sub" | "GetAtt" | "Join" | "If" | "Select" | "Split" | "Base64" | "GetAZs" | "Cidr"
        | "ImportValue" | "FindInMap" | "Equals" | "And" | "Or" | "Not" | "Transform"
        | "Length" | "ToJsonString" | "ForEach" => Some(format!("Fn::{name}")),
        _ => None,
    }
}

/// `{function: value}`; a scalar `!GetAtt a.b.c` becomes `["a", "b.c"]`.
fn cfn_call(function: String, value: Json) -> Json {
    let value = match (function.as_str(), value) {
        ("Fn::GetAtt", Json::String(s)) => match s.split_once('.') {
            Some((resource, attribute)) => Json::Array(vec![
                Json::String(resource.to_owned()),
                Json::String(attribute.to_owned()),
            ]),
            None => Json::String(s),
        },
        (_, v) => v,
    };
    let mut m = Map::new();
    m.insert(function, value);
    Json::Object(m)
}

/// A plain scalar by the core schema: null, booleans, integers, floats; else a string.
pub fn resolve_plain(s: &str) -> Json {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Json::Null,
        "true" | "True" | "TRUE" => return Json::Bool(true),
        "false" | "False" | "FALSE" => return Json::Bool(false),
        _ => {}
    }
    let digits = |t: &str, radix: u32| !t.is_empty() && t.chars().all(|c| c.is_digit(radix));
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let int = if digits(unsigned, 10) {
        s.parse::<i64>().ok()
    } else if let Some(h) = s.strip_prefix("0x").filter(|h| digits(h, 16)) {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = s.strip_prefix("0o").filter(|o| digits(o, 8)) {
        i64::from_str_radix(o, 8).ok()
    } else {
        None
    };
    if let Some(i) = int {
        return Json::from(i);
    }
    // An integer of the core schema too large for i64: the nearest number, as JavaScript
    // reads it (not a string).
    if digits(unsigned, 10)
        && let Ok(f) = s.parse::<f64>()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Json::Number(n);
    }
    let float_like = {
        let body = unsigned;
        let (mantissa, exp) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let m_ok = match mantissa.split_once('.') {
            Some((a, b)) => {
                (digits(a, 10) || a.is_empty())
                    && (digits(b, 10) || b.is_empty())
                    && !(a.is_empty() && b.is_empty())
            }
            None => digits(mantissa, 10),
        };
        let e_ok = exp.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e), 10));
        m_ok && e_ok && (mantissa.contains('.') || exp.is_some())
    };
    if float_like
        && let Ok(f) = s.parse::<f64>()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Json::Number(n);
    }
    Json::String(s.to_owned())
}

/// What a value costs: one per node, and a string one more per 64 bytes (an alias of a long
/// string repeated many times is as large as what it expands to).
fn size(v: &Json) -> usize {
    match v {
        Json::Array(a) => 1 + a.iter().map(size).sum::<usize>(),
        Json::Object(o) => 1 + o.iter().map(|(k, v)| k.len() / 64 + size(v)).sum::<usize>(),
        Json::String(s) => 1 + s.len() / 64,
        _ => 1,
    }
}

impl Builder {
    fn fail(&mut self, message: String) {
        if self.error.is_none() {
            self.error = Some(message);
        }
    }

    /// Adds `n` to the values read so far; past [`MAX_NODES`] the template is refused. Each
    /// value is counted once, when it is read (a container for itself and its keys, its items
    /// having been counted as they came), and an alias for all it expands to.
    fn count_size(&mut self, n: usize) -> bool {
        self.nodes += n;
        if self.nodes > MAX_NODES {
            let how = if self.aliased {
                " (through aliases)"
            } else {
                ""
            };
            self.fail(format!(
                "Template expands to more than {MAX_NODES} values{how} — refusing to import it"
            ));
            return false;
        }
        true
    }

    /// Places a finished node into its parent (or the document list).
    fn push(&mut self, value: Json, anchor: usize, mark: Marker) {
        if anchor > 0 {
            self.anchors.push((anchor, value.clone(), size(&value)));
        }
        match self.stack.last_mut() {
            None => self.docs.push(value),
            Some(Frame::Seq(items, _, _)) => items.push(value),
            Some(Frame::Map(entries, pending, merges, _, _)) => match pending.take() {
                None if std::mem::take(&mut self.merge_key) && !self.strict => {
                    *pending = Some(Key::Merge)
                }
                None => match value {
                    Json::String(k) => *pending = Some(Key::Name(k)),
                    Json::Number(n) => *pending = Some(Key::Name(n.to_string())),
                    Json::Bool(b) => *pending = Some(Key::Name(b.to_string())),
                    Json::Null => *pending = Some(Key::Name("null".to_owned())),
                    _ => {
                        let msg = format!(
                            "a mapping or sequence used as a key at line {} column {} — keys must be scalars",
                            mark.line(),
                            mark.col() + 1
                        );
                        self.fail(msg);
                    }
                },
                Some(Key::Merge) => merges.push(value),
                Some(Key::Name(k)) => {
                    if self.strict && entries.contains_key(&k) {
                        let msg = format!(
                            "the key {} appears twice in one mapping (line {})",
                            Json::String(k),
                            mark.line()
                        );
                        self.fail(msg);
                        return;
                    }
                    entries.insert(k, value);
                }
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        // Only the scalar this event is may be the merge key (an alias or a `<<` value is not).
        self.merge_key = false;
        if self.error.is_some() {
            return;
        }
        if self.strict
            && let Some(why) = outside_json(&ev)
        {
            self.fail(format!(
                "{why} at line {} — JSON cannot hold it",
                mark.line()
            ));
            return;
        }
        match ev {
            Event::SequenceStart(..) | Event::MappingStart(..) if self.stack.len() >= MAX_DEPTH => {
                self.fail(format!(
                    "Template nests deeper than {MAX_DEPTH} levels (line {})",
                    mark.line()
                ));
            }
            Event::SequenceStart(anchor, tag) => {
                self.stack.push(Frame::Seq(Vec::new(), anchor, tag));
            }
            Event::MappingStart(anchor, tag) => {
                self.stack
                    .push(Frame::Map(Map::new(), None, Vec::new(), anchor, tag));
            }
            Event::SequenceEnd => {
                if let Some(Frame::Seq(items, anchor, tag)) = self.stack.pop() {
                    let value = match tag_name(&tag).as_deref() {
                        Some("!reference") => {
                            let mut m = Map::new();
                            m.insert("!reference".into(), Json::Array(items));
                            Json::Object(m)
                        }
                        Some(t) if cfn_function(t).is_some() => {
                            cfn_call(cfn_function(t).unwrap_or_default(), Json::Array(items))
                        }
                        _ => Json::Array(items),
                    };
                    if self.count_size(1) {
                        self.push(value, anchor, mark);
                    }
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map(mut entries, pending, merges, anchor, tag)) =
                    self.stack.pop()
                {
                    match pending {
                        Some(Key::Name(k)) => {
                            entries.insert(k, Json::Null);
                        }
                        // `<<:` with nothing after it merges nothing.
                        Some(Key::Merge) | None => {}
                    }
                    // `<<`: the mapping's own keys win, then earlier sources over later ones.
                    let sources: Vec<Json> = merges
                        .into_iter()
                        .flat_map(|m| match m {
                            Json::Array(a) => a,
                            other => vec![other],
                        })
                        .collect();
                    let mut merged = Map::new();
                    for source in &sources {
                        match source {
                            Json::Object(o) => {
                                for (k, v) in o {
                                    if !merged.contains_key(k) {
                                        merged.insert(k.clone(), v.clone());
                                    }
                                }
                            }
                            _ => {
                                self.fail(format!(
                                    "a `<<` merge key needs a mapping or a list of mappings (line {})",
                                    mark.line()
                                ));
                                return;
                            }
                        }
                    }
                    let keys: usize = entries.keys().map(|k| k.len() / 64).sum();
                    let value = if merged.is_empty() {
                        Json::Object(entries)
                    } else {
                        for (k, v) in entries {
                            merged.insert(k, v);
                        }
                        Json::Object(merged)
                    };
                    let value = match tag_name(&tag).as_deref().and_then(cfn_function) {
                        Some(f) => cfn_call(f, value),
                        None => value,
                    };
                    // Merged-in entries were counted where they came from (an alias, or the
                    // mapping written there).
                    if self.count_size(1 + keys) {
                        self.push(value, anchor, mark);
                    }
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.merge_key = style == TScalarStyle::Plain && tag.is_none() && text == "<<";
                let value = match (tag_name(&tag).as_deref(), style) {
                    (Some("tag:yaml.org,2002:str" | "!!str"), _) => Json::String(text),
                    (Some(t), _) if cfn_function(t).is_some() => {
                        cfn_call(cfn_function(t).unwrap_or_default(), Json::String(text))
                    }
                    (Some(t), _)
                        if t.ends_with(":int")
                            || t.ends_with(":float")
                            || t.ends_with(":bool")
                            || t.ends_with(":null") =>
                    {
                        resolve_plain(&text)
                    }
                    (_, TScalarStyle::Plain) => resolve_plain(&text),
                    _ => Json::String(text),
                };
                if self.count_size(size(&value)) {
                    self.push(value, anchor, mark);
                }
            }
            Event::Alias(id) => match self.anchors.iter().rposition(|(a, _, _)| *a == id) {
                Some(at) => {
                    // Counted before it is copied: a refused alias costs nothing.
                    self.aliased = true;
                    if self.count_size(self.anchors[at].2) {
                        let v = self.anchors[at].1.clone();
                        self.push(v, 0, mark);
                    }
                }
                None => self.fail(format!("an alias at line {} names no anchor", mark.line())),
            },
            _ => {}
        }
    }
}

/// What in `ev` JSON has no form for, if anything: an alias, a tag, or a float that is not a
/// number (`.inf`, `.nan`).
fn outside_json(ev: &Event) -> Option<&'static str> {
    match ev {
        Event::Alias(_) => Some("a YAML alias"),
        Event::SequenceStart(_, Some(_)) | Event::MappingStart(_, Some(_)) => Some("a YAML tag"),
        Event::Scalar(_, _, _, Some(_)) => Some("a YAML tag"),
        Event::Scalar(text, TScalarStyle::Plain, _, None)
            if matches!(
                text.trim_start_matches(['+', '-']),
                ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN"
            ) =>
        {
            Some("a float that is not a number")
        }
        _ => None,
    }
}

/// The single document of `text` as JSON.
pub fn parse(text: &str) -> Result<Json, String> {
    parse_with(text, false)
}

/// The single document of `text` as JSON, read as the part of YAML that JSON can also
/// express: an alias, a tag, a repeated key or a value JSON cannot hold is refused, and `<<`
/// is a key like any other. Front matter of workspace records is read this way.
pub fn parse_json_subset(text: &str) -> Result<Json, String> {
    parse_with(text, true)
}

fn parse_with(text: &str, strict: bool) -> Result<Json, String> {
    let mut b = Builder {
        strict,
        ..Builder::default()
    };
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut b, true).map_err(|e| {
        format!(
            "{} at line {} column {}",
            e.info(),
            e.marker().line(),
            e.marker().col() + 1
        )
    })?;
    if let Some(e) = b.error {
        return Err(e);
    }
    match b.docs.len() {
        0 => Ok(Json::Null),
        1 => Ok(b.docs.pop().unwrap_or(Json::Null)),
        n => Err(format!(
            "the file holds {n} YAML documents; a template is one"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_json_subset_refuses_what_json_cannot_hold() {
        assert_eq!(
            parse_json_subset("a: 1\nb: [x, \"y\"]\n<<: 3\n").unwrap(),
            json!({"a": 1, "b": ["x", "y"], "<<": 3})
        );
        for (text, why) in [
            ("a: &x 1\nb: *x\n", "alias"),
            ("a: 1\na: 2\n", "appears twice"),
            ("'<<': 1\n<<: 2\n", "appears twice"),
            ("a: !Ref x\n", "tag"),
            ("a: !!str 1\n", "tag"),
            ("a: .inf\n", "not a number"),
            ("a: -.NaN\n", "not a number"),
        ] {
            let e = parse_json_subset(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
        assert_eq!(
            parse("a: 1\na: 2\n").unwrap(),
            json!({"a": 2}),
            "templates keep the last"
        );
    }

    #[test]
    fn only_a_plain_merge_key_merges_and_big_integers_are_numbers() {
        let v = parse("n: &n name\nm:\n  a: <<\n  *n : {y: 2}\n").unwrap();
        assert_eq!(v, json!({"n": "name", "m": {"a": "<<", "name": {"y": 2}}}));
        let v = parse(
            "b: &b {x: 1}\na:\n  <<: *b\n  \"<<\": kept\n  '<<': also\nbig: 18446744073709552000\n",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"b": {"x": 1}, "a": {"x": 1, "<<": "also"}, "big": 18446744073709552000.0})
        );
    }

    #[test]
    fn scalars_by_the_core_schema() {
        let v = parse("a: 1\nb: -2.5\nc: true\nd: ~\ne: '1'\nf: 0x1F\ng: 1e3\nh: yes\ni: \"true\"\nj: 1.2.3\nk:\nl: .5\n").unwrap();
        assert_eq!(
            v,
            json!({"a": 1, "b": -2.5, "c": true, "d": null, "e": "1", "f": 31, "g": 1000.0, "h": "yes", "i": "true", "j": "1.2.3", "k": null, "l": 0.5})
        );
    }

    #[test]
    fn aliases_of_a_long_string_count_by_its_length() {
        let big = "x".repeat(1 << 20);
        let aliases = vec!["*s"; 10_000].join(", ");
        let text = format!("big: &s \"{big}\"\njob:\n  script: [{aliases}]\n");
        let t = std::time::Instant::now();
        let e = parse(&text).unwrap_err();
        assert_eq!(
            e,
            "Template expands to more than 2000000 values (through aliases) — refusing to import it"
        );
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn each_value_is_counted_once_however_deep() {
        // 600,000 items read once are 600,000 values, not one count per enclosing level.
        let text = format!("job:\n  script:\n{}", "    - x\n".repeat(600_000));
        assert_eq!(
            parse(&text).unwrap()["job"]["script"]
                .as_array()
                .unwrap()
                .len(),
            600_000
        );
        // 20,000 scalars 150 levels down.
        let mut deep = String::new();
        for d in 0..150 {
            deep.push_str(&format!("{}k{d}:\n", "  ".repeat(d)));
        }
        deep.push_str(&format!("{}items:\n", "  ".repeat(150)));
        deep.push_str(&format!("{}- y\n", "  ".repeat(150)).repeat(20_000));
        assert!(parse(&deep).is_ok());
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let text = "\
.defaults: &defaults
  image: node:22
  retry: 2
  tags: [docker]
.extra: &extra
  retry: 5
  interruptible: true
build:
  <<: [*defaults, *extra]
  retry: 1
  script: &steps
    - npm ci
test:
  <<: *defaults
  script: *steps
";
        let v = parse(text).unwrap();
        assert_eq!(
            v["build"],
            json!({"image": "node:22", "retry": 1, "tags": ["docker"], "interruptible": true, "script": ["npm ci"]})
        );
        assert_eq!(
            v["test"],
            json!({"image": "node:22", "retry": 2, "tags": ["docker"], "script": ["npm ci"]})
        );
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [".defaults", ".extra", "build", "test"],
            "document order kept"
        );
    }

    #[test]
    fn gitlab_reference_tags_survive() {
        let v = parse("test:\n  script:\n    - !reference [.setup, script]\n    - make test\n")
            .unwrap();
        assert_eq!(
            v["test"]["script"],
            json!([{"!reference": [".setup", "script"]}, "make test"])
        );
    }

    #[test]
    fn bad_input_is_refused_clearly() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.contains("line"), "{e}");
        assert_eq!(
            parse("a: *nope\n").unwrap_err(),
            "while parsing node, found unknown anchor at line 1 column 4"
        );
        assert!(
            parse("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .contains("2 YAML documents")
        );
        assert!(
            parse("? [a]\n: 1\n")
                .unwrap_err()
                .contains("keys must be scalars")
        );
        // A billion laughs stops at the limit instead of eating memory.
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (i, name) in ["b", "c", "d", "e", "f", "g", "h"].iter().enumerate() {
            let prev = ["a", "b", "c", "d", "e", "f", "g"][i];
            bomb.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        assert!(
            parse(&bomb).unwrap_err().contains("more than"),
            "alias bomb refused"
        );
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let e = parse(&deep).unwrap_err();
        assert!(
            e.contains("deeper than") || e.contains("recursion limit"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod cfn_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cloudformation_short_forms_read_as_their_long_forms() {
        let text = "A: !Ref Env\nB: !GetAtt Queue.Arn\nC: !Sub '${AWS::StackName}-x'\nD: !Join ['-', [!Ref Env, b]]\nE: !If [IsProd, 1, 2]\nF: !Equals [!Ref Env, prod]\nG: !Condition IsProd\nH: !Base64 {'Fn::Sub': x}\nI: !GetAtt [Db, Endpoint.Address]\nJ: !Select [0, !GetAZs '']\n";
        assert_eq!(
            parse(text).unwrap(),
            json!({
                "A": {"Ref": "Env"},
                "B": {"Fn::GetAtt": ["Queue", "Arn"]},
                "C": {"Fn::Sub": "${AWS::StackName}-x"},
                "D": {"Fn::Join": ["-", [{"Ref": "Env"}, "b"]]},
                "E": {"Fn::If": ["IsProd", 1, 2]},
                "F": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
                "G": {"Condition": "IsProd"},
                "H": {"Fn::Base64": {"Fn::Sub": "x"}},
                "I": {"Fn::GetAtt": ["Db", "Endpoint.Address"]},
                "J": {"Fn::Select": [0, {"Fn::GetAZs": ""}]}
            })
        );
    }
}
