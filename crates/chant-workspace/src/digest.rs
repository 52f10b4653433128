//! A record's text: line endings, its front matter, and its digest, the hash reviews name.
//!
//! The digest is the lowercase hex SHA-256 of the file with LF line endings and without its
//! reviews (the front-matter block of the reviews key, or a JSON record's top-level reviews
//! member and one comma), so adding or editing a verdict leaves it where it was and any other
//! edit moves it.

pub use canon::sha256_hex;

/// `text` with every CRLF and lone CR made one LF.
pub fn lf(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_owned();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// The front matter of LF text: the byte range of the lines between a first line `---` and the
/// next line that is exactly `---` (`None` when the text has none), and where the body starts.
pub fn front_matter(text: &str) -> Option<(std::ops::Range<usize>, usize)> {
    let rest = text.strip_prefix("---\n")?;
    let start = 4;
    let mut at = start;
    for line in rest.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        if bare == "---" {
            return Some((start..at, at + line.len()));
        }
        at += line.len();
    }
    None
}

/// Whether a front-matter line opens the block of `key` (bare or quoted, then optional spaces
/// or tabs, then `:`).
fn opens_block(line: &str, key: &str) -> bool {
    let after = if let Some(r) = line.strip_prefix(key) {
        r
    } else if let Some(r) = line
        .strip_prefix('"')
        .and_then(|r| r.strip_prefix(key))
        .and_then(|r| r.strip_prefix('"'))
    {
        r
    } else if let Some(r) = line
        .strip_prefix('\'')
        .and_then(|r| r.strip_prefix(key))
        .and_then(|r| r.strip_prefix('\''))
    {
        r
    } else {
        return false;
    };
    after.trim_start_matches([' ', '\t']).starts_with(':')
}

/// Whether a line continues a block: empty, or starting with a space, a tab, `#` or `-`.
fn continues_block(line: &str) -> bool {
    let bare = line.strip_suffix('\n').unwrap_or(line);
    bare.is_empty() || bare.starts_with([' ', '\t', '#', '-'])
}

/// The byte range of the front-matter block of `key` in LF text, if it has one: from the line
/// that opens it through every line that continues it.
pub fn block_range(text: &str, key: &str) -> Option<std::ops::Range<usize>> {
    let (fm, _) = front_matter(text)?;
    let mut at = fm.start;
    let mut lines = text[fm.clone()].split_inclusive('\n');
    while let Some(line) = lines.next() {
        if opens_block(line, key) {
            let start = at;
            let mut end = at + line.len();
            for next in lines.by_ref() {
                if !continues_block(next) {
                    break;
                }
                end += next.len();
            }
            return Some(start..end);
        }
        at += line.len();
    }
    None
}

/// The digest of a markdown record's text without the front-matter blocks of `keys`.
pub fn markdown_digest_without(text: &str, keys: &[&str]) -> String {
    let mut text = lf(text);
    for key in keys {
        if let Some(r) = block_range(&text, key) {
            text.replace_range(r, "");
        }
    }
    sha256_hex(text.as_bytes())
}

/// The closing seal of a record: `sha256:` and the SHA-256 of the canonical JSON of
/// `{core, body}`, the front matter without the seal field and the LF text below it.
pub fn closing_seal(
    core: &serde_json::Map<String, serde_json::Value>,
    seal_field: &str,
    text: &str,
) -> String {
    let mut core = core.clone();
    core.remove(seal_field);
    let text = lf(text);
    let body = front_matter(&text).map_or(String::new(), |(_, b)| text[b..].to_owned());
    let v = serde_json::json!({"core": core, "body": body});
    format!(
        "sha256:{}",
        sha256_hex(canon::to_canonical_compact(&v).as_bytes())
    )
}

/// The digest of a markdown record's text by the digest rule, `reviews` naming the reviews key.
pub fn markdown_digest(text: &str, reviews: &str) -> String {
    markdown_digest_without(text, &[reviews])
}

/// The digest of a JSON record's text: its top-level `reviews` member removed with one comma.
pub fn json_digest(text: &str, reviews: &str) -> String {
    let mut text = lf(text);
    if let Some(r) = json_member_cut(&text, reviews) {
        text.replace_range(r, "");
    }
    sha256_hex(text.as_bytes())
}

/// The bytes to cut for the top-level member `name` of a JSON object text: the whitespace
/// before its name through the end of its value, with the comma after it (and the whitespace
/// before that comma) when another member follows, else the comma before it (with the
/// whitespace before that). `None` when the text is no object or has no such member.
fn json_member_cut(text: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    let mut i = 0;
    ws(&mut i);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    // The comma before the member being read, and where the whitespace before it began.
    let mut comma_before: Option<(usize, usize)> = None;
    loop {
        let ws_start = i;
        ws(&mut i);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let name_start = i;
        i = skip_string(b, i)?;
        let key: String = serde_json::from_str(&text[name_start..i]).ok()?;
        ws(&mut i);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        ws(&mut i);
        i = skip_value(b, i)?;
        let value_end = i;
        let mut j = i;
        ws(&mut j);
        let next = b.get(j).copied();
        if key == name {
            return match next {
                Some(b',') => Some(ws_start..j + 1),
                _ => match comma_before {
                    Some((before_ws, _)) => Some(before_ws..value_end),
                    None => Some(ws_start..value_end),
                },
            };
        }
        match next {
            Some(b',') => {
                comma_before = Some((value_end, j));
                i = j + 1;
            }
            _ => return None,
        }
    }
}

fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                i += 1;
            }
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str = "---\nid: \"ws-001\"\nreviews:\n  - reviewer: \"a\"\n\n    verdict: \"agree\"\n# a comment\nstate: \"proposed\"\n---\n\n# Title\n";

    #[test]
    fn the_reviews_block_and_line_endings_do_not_move_the_digest() {
        let without = "---\nid: \"ws-001\"\nstate: \"proposed\"\n---\n\n# Title\n";
        assert_eq!(
            markdown_digest(RECORD, "reviews"),
            sha256_hex(without.as_bytes())
        );
        assert_eq!(
            markdown_digest(&RECORD.replace('\n', "\r\n"), "reviews"),
            markdown_digest(RECORD, "reviews")
        );
        let quoted = RECORD.replace("reviews:", "\"reviews\" :");
        assert_eq!(
            markdown_digest(&quoted, "reviews"),
            markdown_digest(RECORD, "reviews")
        );
        // Any other edit moves it.
        assert_ne!(
            markdown_digest(&RECORD.replace("Title", "Titles"), "reviews"),
            markdown_digest(RECORD, "reviews")
        );
        // A `reviews` in the body is not the block.
        let body = "---\nid: 1\n---\nreviews: x\n";
        assert_eq!(
            markdown_digest(body, "reviews"),
            sha256_hex(body.as_bytes())
        );
        // The block ends at the closing line.
        let last = "---\nid: 1\nreviews:\n- a\n---\nbody\n";
        assert_eq!(
            markdown_digest(last, "reviews"),
            sha256_hex(b"---\nid: 1\n---\nbody\n")
        );
    }

    #[test]
    fn a_json_record_loses_its_reviews_member_and_one_comma() {
        let mid = "{\n  \"a\": 1,\n  \"reviews\": [{\"x\": \"]\"}],\n  \"b\": 2\n}\n";
        assert_eq!(
            json_digest(mid, "reviews"),
            sha256_hex(b"{\n  \"a\": 1,\n  \"b\": 2\n}\n")
        );
        let last = "{\n  \"a\": 1,\n  \"reviews\": []\n}\n";
        assert_eq!(
            json_digest(last, "reviews"),
            sha256_hex(b"{\n  \"a\": 1\n}\n")
        );
        let only = "{\"reviews\": []}";
        assert_eq!(json_digest(only, "reviews"), sha256_hex(b"{}"));
        let first = "{\"reviews\": [] , \"a\": 1}";
        assert_eq!(json_digest(first, "reviews"), sha256_hex(b"{ \"a\": 1}"));
        let none = "{\"a\": {\"reviews\": 1}}";
        assert_eq!(json_digest(none, "reviews"), sha256_hex(none.as_bytes()));
    }
}
