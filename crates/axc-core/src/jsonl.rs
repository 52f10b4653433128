//! Tolerant JSONL readers: blank lines and lines that are not strict JSON are skipped.
//!
//! [`read_last`] reads from the end of the file backwards, so taking the last 50 entries of a
//! 1 GB log costs about as much as taking them from a small one.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

const CHUNK: usize = 64 * 1024;

fn parse_line(line: &[u8]) -> Option<Value> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return None;
    }
    serde_json::from_slice(trimmed).ok()
}

/// Every parseable entry, in file order. A missing file reads as empty.
pub fn read_all(path: &Path) -> io::Result<Vec<Value>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter_map(parse_line)
        .collect())
}

/// The last `n` parseable entries, oldest first. A missing file reads as empty.
pub fn read_last(path: &Path, n: usize) -> io::Result<Vec<Value>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut newest_first = Vec::new();
    if n == 0 {
        return Ok(newest_first);
    }
    let mut pos = file.seek(SeekFrom::End(0))?;
    // Bytes of the line that straddles the boundary between the chunk just read and the one
    // before it (the start of the file region already seen).
    let mut partial: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    while pos > 0 && newest_first.len() < n {
        let size = (pos as usize).min(CHUNK);
        pos -= size as u64;
        file.seek(SeekFrom::Start(pos))?;
        file.read_exact(&mut chunk[..size])?;
        let data = &chunk[..size];
        // Complete lines are those after a newline inside this chunk.
        let mut end = size;
        let mut first_tail = true;
        while let Some(nl) = data[..end].iter().rposition(|&b| b == b'\n') {
            let piece = &data[nl + 1..end];
            let entry = if first_tail {
                first_tail = false;
                let mut line = piece.to_vec();
                line.extend_from_slice(&partial);
                partial.clear();
                parse_line(&line)
            } else {
                parse_line(piece)
            };
            if let Some(v) = entry {
                newest_first.push(v);
                if newest_first.len() == n {
                    newest_first.reverse();
                    return Ok(newest_first);
                }
            }
            end = nl;
        }
        // What precedes the first newline continues into the previous chunk.
        let mut head = data[..end].to_vec();
        if first_tail {
            head.extend_from_slice(&partial);
        }
        partial = head;
    }
    if pos == 0
        && newest_first.len() < n
        && let Some(v) = parse_line(&partial)
    {
        newest_first.push(v);
    }
    newest_first.reverse();
    Ok(newest_first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::Write;

    fn file_with(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        f
    }

    #[test]
    fn last_n_skips_blank_and_malformed_lines() {
        let f = file_with(b"{\"a\":1}\n\n{broken\n{\"a\":2}\r\n  \n{\"a\":3}\n{\"a\":4}");
        assert_eq!(
            read_last(f.path(), 2).unwrap(),
            [json!({"a":3}), json!({"a":4})]
        );
        assert_eq!(read_last(f.path(), 10).unwrap().len(), 4);
        assert_eq!(read_last(f.path(), 0).unwrap(), Vec::<Value>::new());
        assert_eq!(read_all(f.path()).unwrap().len(), 4);
    }

    #[test]
    fn lines_straddling_chunks_are_joined() {
        let mut content = Vec::new();
        for i in 0..5000 {
            content.extend_from_slice(
                format!("{{\"i\":{i},\"pad\":\"{}\"}}\n", "x".repeat(i % 97)).as_bytes(),
            );
        }
        let f = file_with(&content);
        let all = read_last(f.path(), usize::MAX).unwrap();
        assert_eq!(all.len(), 5000);
        for (i, v) in all.iter().enumerate() {
            assert_eq!(v["i"], i);
        }
        assert_eq!(read_last(f.path(), 3).unwrap()[0]["i"], 4997);
    }

    #[test]
    fn a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_last(&dir.path().join("nope"), 5).unwrap().is_empty());
        assert!(read_all(&dir.path().join("nope")).unwrap().is_empty());
    }

    #[test]
    fn a_truncated_last_line_is_skipped() {
        let f = file_with(b"{\"a\":1}\n{\"a\":2}\n{\"a\":");
        assert_eq!(read_last(f.path(), 1).unwrap(), [json!({"a":2})]);
    }
}
