//! Pretty JSON for large read documents, byte for byte what `serde_json::to_writer_pretty`
//! writes, with the records of each `records` list serialized over both cores: printing 2,000
//! records was a fifth of `chant workspace records --json` (measured, docs/benchmarks.md).
//!
//! Each long `records` list is swapped for a marker string, the rest of the document is
//! written as usual, and each marker's line is replaced by the list, its elements written
//! pretty on their own and indented to the marker's depth. A pretty JSON line never holds a
//! raw newline (strings escape it), so indenting by lines is exact.

use std::io::Write;

use serde_json::Value;

/// A list shorter than this is written in place.
const PARALLEL_FROM: usize = 64;

/// Writes `doc` as `serde_json::to_writer_pretty` would, then a newline.
pub fn write(doc: &mut Value, out: &mut impl Write) -> std::io::Result<()> {
    // A marker no record can hold: it is only ever in the skeleton, which holds no record.
    let nonce = format!(
        "\u{1}chant-records-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    );
    let mut lists: Vec<Vec<Value>> = Vec::new();
    take_lists(doc, &nonce, &mut lists);
    let written = write_with(doc, &nonce, &lists, out);
    // Put the lists back, so the caller's document is as it was.
    restore(doc, &nonce, &mut lists.into_iter());
    written
}

/// Writes the skeleton `doc` with each marker's list in its place.
fn write_with(
    doc: &Value,
    nonce: &str,
    lists: &[Vec<Value>],
    out: &mut impl Write,
) -> std::io::Result<()> {
    let skeleton = serde_json::to_string_pretty(doc).map_err(std::io::Error::other)?;
    if lists.is_empty() {
        out.write_all(skeleton.as_bytes())?;
        return out.write_all(b"\n");
    }
    let marker_json = |i: usize| serde_json::to_string(&format!("{nonce}-{i}")).unwrap_or_default();
    let mut rest = skeleton.as_str();
    for (i, list) in lists.iter().enumerate() {
        let marker = marker_json(i);
        let Some(at) = rest.find(&marker) else {
            continue;
        };
        let line_start = rest[..at].rfind('\n').map_or(0, |n| n + 1);
        let indent = rest[line_start..]
            .bytes()
            .take_while(|b| *b == b' ')
            .count();
        out.write_all(&rest.as_bytes()[..at])?;
        write_list(list, indent, out)?;
        rest = &rest[at + marker.len()..];
    }
    out.write_all(rest.as_bytes())?;
    out.write_all(b"\n")
}

/// Swaps every `records` list of `PARALLEL_FROM` or more items for a marker.
fn take_lists(v: &mut Value, nonce: &str, lists: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if k == "records"
                    && let Value::Array(items) = child
                    && items.len() >= PARALLEL_FROM
                {
                    let marker = format!("{nonce}-{}", lists.len());
                    lists.push(std::mem::take(items));
                    *child = Value::String(marker);
                } else {
                    take_lists(child, nonce, lists);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| take_lists(c, nonce, lists)),
        _ => {}
    }
}

fn restore(v: &mut Value, nonce: &str, lists: &mut impl Iterator<Item = Vec<Value>>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if k == "records" && child.as_str().is_some_and(|s| s.starts_with(nonce)) {
                    *child = Value::Array(lists.next().unwrap_or_default());
                } else {
                    restore(child, nonce, lists);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| restore(c, nonce, lists)),
        _ => {}
    }
}

/// `items` as a pretty list whose key sits at `indent` spaces, over both cores.
fn write_list(items: &[Value], indent: usize, out: &mut impl Write) -> std::io::Result<()> {
    let pad = " ".repeat(indent + 2);
    let chunk = |part: &[Value]| -> Vec<u8> {
        let mut buf = Vec::with_capacity(part.len() * 2048);
        for (i, item) in part.iter().enumerate() {
            if i > 0 {
                buf.extend_from_slice(b",\n");
            }
            let text = serde_json::to_string_pretty(item).unwrap_or_default();
            for (j, line) in text.split('\n').enumerate() {
                if j > 0 {
                    buf.push(b'\n');
                }
                buf.extend_from_slice(pad.as_bytes());
                buf.extend_from_slice(line.as_bytes());
            }
        }
        buf
    };
    let (first, second) = items.split_at(items.len() / 2);
    let (a, b) = std::thread::scope(|s| {
        let other = s.spawn(|| chunk(second));
        let mine = chunk(first);
        (
            mine,
            other
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    });
    out.write_all(b"[\n")?;
    out.write_all(&a)?;
    if !a.is_empty() && !b.is_empty() {
        out.write_all(b",\n")?;
    }
    out.write_all(&b)?;
    out.write_all(b"\n")?;
    out.write_all(" ".repeat(indent).as_bytes())?;
    out.write_all(b"]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same(doc: Value) {
        let mut expected = serde_json::to_vec_pretty(&doc).unwrap();
        expected.push(b'\n');
        let mut d = doc.clone();
        let mut got = Vec::new();
        write(&mut d, &mut got).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(expected).unwrap()
        );
        assert_eq!(d, doc, "the document is given back as it was");
    }

    fn record(i: usize) -> Value {
        json!({"id": format!("ws-{i}"), "data": {"title": "a \"quoted\"\nline", "n": i, "list": [1, {"x": []}], "empty": {}},
               "reasons": [], "quorum": null, "records": "a key named records inside a record"})
    }

    #[test]
    fn writes_what_serde_json_writes() {
        for n in [0, 1, 63, 64, 65, 200] {
            let records: Vec<Value> = (0..n).map(record).collect();
            same(json!({"$schema": "s", "records": records.clone(), "summary": {"total": n}}));
            same(json!({"kinds": [
                {"kind": {"name": "a"}, "records": records.clone()},
                {"error": {"code": "x"}},
                {"kind": {"name": "b"}, "records": records},
            ]}));
        }
    }
}
