//! Tolerant JSONL readers: blank lines are ignored; a line that is not a JSON object (not
//! JSON, an array or a number, or longer than [`MAX_LINE`]) is skipped and counted.
//!
//! Files are opened with [`fsread::open_inside`]: regular files inside the project only, never
//! waited on (a FIFO is refused at once). [`read_last`] reads from the end of the file
//! backwards, so taking the last 50 entries of a 1 GB log costs about as much as taking them
//! from a small one, and a line of any length costs time linear in its length.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use fsread::ReadError;
use serde_json::Value;

const CHUNK: usize = 64 * 1024;
/// A backward read's first read: the answers most reads want (the last entry, a few recent
/// events) lie in it, and each further read doubles, up to [`CHUNK`]. Starting at `CHUNK`
/// zeroed and copied 64 KiB for each of a `status`'s three reads back (16 fresh pages each).
const FIRST_CHUNK: usize = 8 * 1024;
// A line within one chunk is never over the line cap, so only a line read in pieces is
// measured against it.
const _: () = assert!(CHUNK <= MAX_LINE);
/// The longest line read as an entry; a longer one is skipped (and counted) unread.
pub const MAX_LINE: usize = 16 << 20;
/// How far back from its end [`read_last`] reads a log (a sparse 100 GB file must not keep a
/// call, or the pool behind it, busy for minutes), and how many bytes of entries one answer
/// holds at most.
pub const MAX_SCAN: u64 = 64 << 20;
pub const MAX_ANSWER: usize = 32 << 20;
/// The largest file [`read_all`] reads whole.
pub const MAX_ALL: u64 = 256 << 20;

/// Entries read, oldest first, and how many lines were skipped on the way.
#[derive(Debug, PartialEq)]
pub struct Tail<T = Value> {
    pub entries: Vec<T>,
    pub skipped: usize,
    /// Reading stopped at [`MAX_SCAN`] or [`MAX_ANSWER`] before `n` entries were found.
    pub truncated: bool,
}

impl<T> Default for Tail<T> {
    fn default() -> Self {
        Tail {
            entries: Vec::new(),
            skipped: 0,
            truncated: false,
        }
    }
}

enum Parsed<T> {
    Blank,
    Entry(T),
    Bad,
}

/// One line as an entry: a JSON object, read as `T`. A type that takes only some fields is
/// read without building the rest; a line it refuses that is still an object (a key given
/// twice, which a `Value` keeps the last of) is read through a `Value`, so every type accepts
/// the lines a `Value` does.
fn parse_line<T: serde::de::DeserializeOwned>(line: &[u8]) -> Parsed<T> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Parsed::Blank;
    }
    if trimmed.first() != Some(&b'{') {
        return Parsed::Bad;
    }
    match serde_json::from_slice::<T>(trimmed) {
        Ok(v) => Parsed::Entry(v),
        // Starting with `{`, whatever parses is an object.
        Err(_) => match serde_json::from_slice::<Value>(trimmed) {
            Ok(v) => serde_json::from_value(v).map_or(Parsed::Bad, Parsed::Entry),
            Err(_) => Parsed::Bad,
        },
    }
}

fn open(root: &Path, rel: &str) -> Result<Option<File>, ReadError> {
    match fsread::open_inside(root, Path::new(rel)) {
        Ok((file, _)) => Ok(Some(file)),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(e),
    }
}

fn io_error(root: &Path, rel: &str, source: std::io::Error) -> ReadError {
    ReadError::Io {
        path: root.join(rel).display().to_string(),
        source,
    }
}

/// Every entry of `root/rel`, in file order, read in chunks (a long line is never held past
/// [`MAX_LINE`]). A missing file reads as empty.
pub fn read_all(root: &Path, rel: &str) -> Result<Tail, ReadError> {
    let mut tail = Tail::default();
    let Some(mut file) = open(root, rel)? else {
        return Ok(tail);
    };
    let len = file.metadata().map_err(|e| io_error(root, rel, e))?.len();
    if len > MAX_ALL {
        return Err(ReadError::TooLarge {
            path: root.join(rel).display().to_string(),
            len,
            max: MAX_ALL,
        });
    }
    let mut chunk = vec![0u8; CHUNK];
    let mut line: Vec<u8> = Vec::new();
    let mut oversize = false;
    let finish = |line: &mut Vec<u8>, oversize: &mut bool, tail: &mut Tail| {
        if std::mem::take(oversize) {
            tail.skipped += 1;
        } else {
            match parse_line(line) {
                Parsed::Entry(v) => tail.entries.push(v),
                Parsed::Bad => tail.skipped += 1,
                Parsed::Blank => {}
            }
        }
        line.clear();
    };
    loop {
        let n = file.read(&mut chunk).map_err(|e| io_error(root, rel, e))?;
        if n == 0 {
            break;
        }
        let mut rest = &chunk[..n];
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            if !oversize {
                line.extend_from_slice(&rest[..nl]);
                oversize = line.len() > MAX_LINE;
            }
            finish(&mut line, &mut oversize, &mut tail);
            rest = &rest[nl + 1..];
        }
        if !oversize {
            line.extend_from_slice(rest);
            if line.len() > MAX_LINE {
                oversize = true;
                line = Vec::new();
            }
        }
    }
    finish(&mut line, &mut oversize, &mut tail);
    Ok(tail)
}

/// The last `n` entries of `root/rel`, oldest first. A missing file reads as empty.
pub fn read_last(root: &Path, rel: &str, n: usize) -> Result<Tail, ReadError> {
    read_last_where(root, rel, n, |_| true)
}

/// The last `n` entries of `root/rel` that `keep` accepts, oldest first: read backwards as
/// [`read_last`] does, so a filter that matches often costs what the unfiltered read does, and
/// one that matches rarely reads at most [`MAX_SCAN`] bytes. Only kept entries count towards
/// [`MAX_ANSWER`].
pub fn read_last_where(
    root: &Path,
    rel: &str,
    n: usize,
    mut keep: impl FnMut(&Value) -> bool,
) -> Result<Tail, ReadError> {
    read_back(root, rel, n, |v| {
        if keep(v) { Visit::Keep } else { Visit::Skip }
    })
}

/// What [`read_back`] does with an entry it met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    Keep,
    Skip,
    /// Leave it out and read no further back.
    Stop,
}

/// Reads `root/rel` from its end, newest entry first, asking `visit` about each: up to `n`
/// kept entries (returned oldest first), stopping early at [`Visit::Stop`] — so "the events of
/// the last 15 minutes" costs what those events cost, whatever the log's size.
pub fn read_back(
    root: &Path,
    rel: &str,
    n: usize,
    visit: impl FnMut(&Value) -> Visit,
) -> Result<Tail, ReadError> {
    read_back_as(root, rel, n, visit)
}

/// A line read backwards in pieces (newest piece first), joined in file order; the pieces
/// are taken.
fn joined(pieces: &mut Vec<Vec<u8>>) -> Vec<u8> {
    if pieces.len() == 1 {
        return pieces.pop().unwrap_or_default();
    }
    let mut line = Vec::with_capacity(pieces.iter().map(Vec::len).sum());
    for p in pieces.drain(..).rev() {
        line.extend_from_slice(&p);
    }
    line
}

/// [`read_back`] with each entry read as `T` (a type of the few fields a caller needs reads a
/// line without building the rest of it).
pub fn read_back_as<T: serde::de::DeserializeOwned>(
    root: &Path,
    rel: &str,
    n: usize,
    visit: impl FnMut(&T) -> Visit,
) -> Result<Tail<T>, ReadError> {
    read_back_admitting(root, rel, n, false, |_| true, visit)
}

/// The last `n` entries of `root/rel` that name `id` (a plain id: letters, digits, `_`, `-`,
/// `.`) somewhere and that `keep` accepts, oldest first. Only the lines holding `id`'s bytes are
/// parsed — or a `\u` escape, the one other way JSON can spell those characters, so no line
/// that names `id` is passed by: a long log costs a byte scan, not a parse of every line. An
/// id that is not plain is looked for line by line, parsing each.
pub fn read_last_naming(
    root: &Path,
    rel: &str,
    n: usize,
    id: &str,
    mut keep: impl FnMut(&Value) -> bool,
) -> Result<Tail, ReadError> {
    let visit = |v: &Value| if keep(v) { Visit::Keep } else { Visit::Skip };
    if !crate::util::is_plain_id(id) {
        return read_back_admitting(root, rel, n, false, |_| true, visit);
    }
    let named = memchr::memmem::Finder::new(id.as_bytes());
    let escaped = memchr::memmem::Finder::new(b"\\u");
    read_back_admitting(
        root,
        rel,
        n,
        true,
        |line| named.find(line).is_some() || escaped.find(line).is_some(),
        visit,
    )
}

/// [`read_back_as`], parsing only the lines `admit` lets through. `simd`: lines are found with
/// `memchr` (for a scan of megabytes; its first call's CPU probe costs more than a short read).
fn read_back_admitting<T: serde::de::DeserializeOwned>(
    root: &Path,
    rel: &str,
    n: usize,
    simd: bool,
    admit: impl FnMut(&[u8]) -> bool,
    visit: impl FnMut(&T) -> Visit,
) -> Result<Tail<T>, ReadError> {
    let tail = Tail::default();
    let Some(mut file) = open(root, rel)? else {
        return Ok(tail);
    };
    if n == 0 {
        return Ok(tail);
    }
    let err = |e| io_error(root, rel, e);
    let mut g = Gather {
        visit,
        admit,
        newest_first: Vec::new(),
        tail,
        answer_bytes: 0,
        stopped: false,
    };
    let mut pos = file.seek(SeekFrom::End(0)).map_err(err)?;
    let floor = pos.saturating_sub(MAX_SCAN);
    // The line that straddles the boundary between the chunk just read and the one before
    // it, as pieces in reverse order (joined once, when the line is complete: prepending to
    // one buffer would copy it again for every chunk), or nothing once it is known too long.
    let mut partial: Vec<Vec<u8>> = Vec::new();
    let mut partial_len = 0usize;
    let mut oversize = false;
    let mut chunk = Vec::new();
    let mut want = FIRST_CHUNK;
    while pos > floor && g.newest_first.len() < n {
        if g.answer_bytes > MAX_ANSWER {
            g.tail.truncated = true;
            break;
        }
        let size = ((pos - floor) as usize).min(want);
        want = (want * 2).min(CHUNK);
        if chunk.len() < size {
            chunk.resize(size, 0);
        }
        pos -= size as u64;
        file.seek(SeekFrom::Start(pos)).map_err(err)?;
        file.read_exact(&mut chunk[..size]).map_err(err)?;
        let data = &chunk[..size];
        let mut end = size;
        // A plain backward scan, not the `memchr` crate: its first call detects the CPU's
        // features (`cpuid`, which traps to the hypervisor on a virtual machine), and that
        // cost more than the scan of a status's few recent events (measured: 0.05 ms).
        while let Some(nl) = if simd {
            memchr::memrchr(b'\n', &data[..end])
        } else {
            data[..end].iter().rposition(|&b| b == b'\n')
        } {
            let piece = &data[nl + 1..end];
            if partial.is_empty() && !oversize {
                // The whole line is in this chunk: parsed where it lies, never copied (never
                // over the line cap: a chunk is shorter).
                g.line(piece);
            } else {
                // The line after this newline: its last part is what was pending.
                if !oversize {
                    partial_len += piece.len();
                    oversize = partial_len > MAX_LINE;
                    partial.push(piece.to_vec());
                }
                g.assembled(&mut partial, std::mem::take(&mut oversize));
            }
            partial_len = 0;
            if g.newest_first.len() == n || g.stopped {
                return Ok(g.done());
            }
            end = nl;
        }
        if !oversize {
            partial.push(data[..end].to_vec());
            partial_len += end;
            if partial_len > MAX_LINE {
                oversize = true;
                partial.clear();
            }
        }
    }
    if pos == 0 && g.newest_first.len() < n && !g.tail.truncated && !g.stopped {
        g.assembled(&mut partial, oversize);
    } else if pos > 0 && g.newest_first.len() < n {
        // Stopped at the scan limit: what is before it was not read.
        g.tail.truncated = true;
    }
    Ok(g.done())
}

/// What a backward read has gathered so far.
struct Gather<T, F, L> {
    visit: F,
    /// Lines it lets through to be parsed (the rest are passed by unparsed, not counted).
    admit: L,
    newest_first: Vec<T>,
    tail: Tail<T>,
    answer_bytes: usize,
    stopped: bool,
}

impl<T: serde::de::DeserializeOwned, F: FnMut(&T) -> Visit, L: FnMut(&[u8]) -> bool>
    Gather<T, F, L>
{
    /// One whole line: parsed and offered to `visit`.
    fn line(&mut self, line: &[u8]) {
        if !(self.admit)(line) {
            return;
        }
        match parse_line(line) {
            Parsed::Entry(v) => match (self.visit)(&v) {
                Visit::Keep => {
                    self.answer_bytes += line.len();
                    self.newest_first.push(v);
                }
                Visit::Skip => {}
                Visit::Stop => self.stopped = true,
            },
            Parsed::Bad => self.tail.skipped += 1,
            Parsed::Blank => {}
        }
    }

    /// A line read in pieces, now whole: skipped when it was too long (its pieces are
    /// dropped), else joined and read.
    fn assembled(&mut self, pieces: &mut Vec<Vec<u8>>, oversize: bool) {
        if oversize {
            pieces.clear();
            self.tail.skipped += 1;
        } else {
            let line = joined(pieces);
            self.line(&line);
        }
    }

    fn done(mut self) -> Tail<T> {
        self.newest_first.reverse();
        self.tail.entries = self.newest_first;
        self.tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::Write;

    /// A project directory holding `f.jsonl` with `content`.
    fn file_with(content: &[u8]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::File::create(d.path().join("f.jsonl"))
            .unwrap()
            .write_all(content)
            .unwrap();
        d
    }

    fn last(d: &tempfile::TempDir, n: usize) -> Vec<Value> {
        read_last(d.path(), "f.jsonl", n).unwrap().entries
    }

    #[test]
    fn naming_reads_every_line_that_names_the_id_however_it_is_spelled() {
        let f = file_with(
            b"{\"turn_id\":\"turn_a\",\"n\":1}\n{\"turn_id\":\"turn_b\",\"n\":2}\n{\"turn_id\":\"\\u0074urn_a\",\"n\":3}\n{\"turn_id\":\"turn_c\",\"n\":4}\n",
        );
        let named = |id: &str| {
            read_last_naming(f.path(), "f.jsonl", 5, id, |e| e["turn_id"] == id)
                .unwrap()
                .entries
                .iter()
                .map(|e| e["n"].as_i64().unwrap())
                .collect::<Vec<_>>()
        };
        // The copy that spells the id with an escape is found beside the plain one.
        assert_eq!(named("turn_a"), [1, 3]);
        assert_eq!(named("turn_c"), [4]);
        assert!(named("turn_z").is_empty());
        // An id that is not plain is looked for in every line.
        let g = file_with(b"{\"turn_id\":\"a\\\"b\",\"n\":9}\n");
        let e =
            read_last_naming(g.path(), "f.jsonl", 5, "a\"b", |e| e["turn_id"] == "a\"b").unwrap();
        assert_eq!(e.entries.len(), 1);
    }

    /// A type of a few fields reads the lines a `Value` reads, as a `Value` reads them.
    #[test]
    fn entries_read_as_a_type_are_the_values_entries() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Stamp {
            #[serde(default)]
            timestamp: Value,
        }
        let f = file_with(
            b"{\"timestamp\":\"a\",\"x\":[1,{\"y\":2}]}\n[\"b\"]\n{\"timestamp\":\"c\",\"timestamp\":\"d\"}\n{broken\n{}\n7\n  {\"timestamp\":5}  \n",
        );
        let typed =
            read_back_as::<Stamp>(f.path(), "f.jsonl", usize::MAX, |_| Visit::Keep).unwrap();
        let values = read_back(f.path(), "f.jsonl", usize::MAX, |_| Visit::Keep).unwrap();
        let stamps: Vec<Value> = typed.entries.into_iter().map(|s| s.timestamp).collect();
        assert_eq!(stamps, [json!("a"), json!("d"), Value::Null, json!(5)]);
        let theirs: Vec<Value> = values
            .entries
            .iter()
            .map(|v| v["timestamp"].clone())
            .collect();
        assert_eq!(stamps, theirs);
        assert_eq!(typed.skipped, values.skipped);
        assert_eq!(typed.skipped, 3, "an array, a broken line, a number");
    }

    #[test]
    fn last_n_skips_blank_and_malformed_lines() {
        let f = file_with(b"{\"a\":1}\n\n{broken\n{\"a\":2}\r\n  \n[1,2]\n7\n{\"a\":3}\n{\"a\":4}");
        assert_eq!(last(&f, 2), [json!({"a":3}), json!({"a":4})]);
        let all = read_last(f.path(), "f.jsonl", 10).unwrap();
        assert_eq!(
            (all.entries.len(), all.skipped),
            (4, 3),
            "an array or a number is no event"
        );
        assert_eq!(last(&f, 0), Vec::<Value>::new());
        let all = read_all(f.path(), "f.jsonl").unwrap();
        assert_eq!((all.entries.len(), all.skipped), (4, 3));
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
        let all = last(&f, usize::MAX);
        assert_eq!(all.len(), 5000);
        for (i, v) in all.iter().enumerate() {
            assert_eq!(v["i"], i);
        }
        assert_eq!(last(&f, 3)[0]["i"], 4997);
        assert_eq!(read_all(f.path(), "f.jsonl").unwrap().entries, all);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Read backwards, a log holds what reading it forwards finds: lines of any length
        /// (within a chunk, straddling one or several), blank and malformed ones, with or
        /// without a last newline.
        #[test]
        fn reading_back_finds_what_reading_forward_finds(
            lines in proptest::collection::vec((0u8..4, 0usize..150_000), 0..24),
            last_newline in proptest::bool::ANY,
            n in proptest::sample::select(vec![1usize, 2, 5, usize::MAX]),
        ) {
            let mut content = Vec::new();
            for (i, (kind, pad)) in lines.iter().enumerate() {
                match kind {
                    0 | 1 => content.extend_from_slice(
                        format!("{{\"i\":{i},\"pad\":\"{}\"}}", "x".repeat(*pad)).as_bytes(),
                    ),
                    2 => content.extend_from_slice(" ".repeat(pad % 3).as_bytes()),
                    _ => content.extend_from_slice(format!("{{broken {}", "y".repeat(*pad)).as_bytes()),
                }
                if i + 1 < lines.len() || last_newline {
                    content.push(b'\n');
                }
            }
            let f = file_with(&content);
            let forward = read_all(f.path(), "f.jsonl").unwrap();
            let back = read_last(f.path(), "f.jsonl", n).unwrap();
            let want = &forward.entries[forward.entries.len().saturating_sub(n)..];
            proptest::prop_assert_eq!(&back.entries[..], want);
            if n == usize::MAX {
                proptest::prop_assert_eq!(back.skipped, forward.skipped);
            }
        }
    }

    #[test]
    fn a_filter_keeps_the_last_n_matching_entries() {
        let mut content = Vec::new();
        for i in 0..3000 {
            let kind = if i % 7 == 0 { "rare" } else { "common" };
            content.extend_from_slice(format!("{{\"i\":{i},\"k\":\"{kind}\"}}\n").as_bytes());
        }
        content.extend_from_slice(b"not json\n");
        let f = file_with(&content);
        let rare = |v: &Value| v["k"] == "rare";
        let tail = read_last_where(f.path(), "f.jsonl", 3, rare).unwrap();
        let got: Vec<_> = tail
            .entries
            .iter()
            .map(|v| v["i"].as_u64().unwrap())
            .collect();
        assert_eq!(got, [2982, 2989, 2996], "the newest three, oldest first");
        assert_eq!(tail.skipped, 1, "a bad line is still counted");
        let all = read_last_where(f.path(), "f.jsonl", usize::MAX, rare).unwrap();
        assert_eq!(all.entries.len(), 3000usize.div_ceil(7));
        assert!(!all.truncated);
        assert!(
            read_last_where(f.path(), "f.jsonl", 5, |_| false)
                .unwrap()
                .entries
                .is_empty()
        );
        // Stopping: what was kept before the stop, nothing older, no truncation said.
        let mut seen = 0;
        let tail = read_back(f.path(), "f.jsonl", usize::MAX, |v| {
            seen += 1;
            if v["i"].as_u64().unwrap() < 2990 {
                Visit::Stop
            } else if v["k"] == "rare" {
                Visit::Keep
            } else {
                Visit::Skip
            }
        })
        .unwrap();
        let got: Vec<_> = tail
            .entries
            .iter()
            .map(|v| v["i"].as_u64().unwrap())
            .collect();
        assert_eq!(got, [2996]);
        assert_eq!(seen, 11, "read no further back than the first stop");
        assert!(!tail.truncated);
        // A stop at the file's first line.
        let tail = read_back(f.path(), "f.jsonl", usize::MAX, |v| {
            if v["i"] == 0 {
                Visit::Stop
            } else {
                Visit::Keep
            }
        })
        .unwrap();
        assert_eq!(tail.entries.len(), 2999);
        assert_eq!(tail.entries[0]["i"], 1);
    }

    #[test]
    fn a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_last(dir.path(), "nope", 5).unwrap(), Tail::default());
        assert_eq!(read_all(dir.path(), "nope").unwrap(), Tail::default());
    }

    #[test]
    fn a_truncated_last_line_is_skipped() {
        let f = file_with(b"{\"a\":1}\n{\"a\":2}\n{\"a\":");
        assert_eq!(last(&f, 1), [json!({"a":2})]);
    }

    #[test]
    fn a_line_over_the_cap_is_skipped_and_counted_in_linear_time() {
        let mut content = b"{\"a\":1}\n{\"big\":\"".to_vec();
        content.resize(content.len() + MAX_LINE + 10, b'x');
        content.extend_from_slice(b"\"}\n{\"a\":2}\n");
        let f = file_with(&content);
        let t = std::time::Instant::now();
        let tail = read_last(f.path(), "f.jsonl", 10).unwrap();
        assert_eq!(tail.entries, [json!({"a":1}), json!({"a":2})]);
        assert_eq!(tail.skipped, 1);
        let all = read_all(f.path(), "f.jsonl").unwrap();
        assert_eq!((all.entries.len(), all.skipped), (2, 1));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t.elapsed()
        );
        // Just under the cap is read.
        let mut ok = b"{\"big\":\"".to_vec();
        ok.resize(MAX_LINE - 2, b'y');
        ok.extend_from_slice(b"\"}");
        let f = file_with(&ok);
        assert_eq!(read_last(f.path(), "f.jsonl", 1).unwrap().entries.len(), 1);
        assert_eq!(read_all(f.path(), "f.jsonl").unwrap().entries.len(), 1);
    }

    /// A JSON object line of exactly `len` bytes (no newline).
    fn object_line(len: usize, fill: u8) -> Vec<u8> {
        let mut line = b"{\"big\":\"".to_vec();
        line.resize(len - 2, fill);
        line.extend_from_slice(b"\"}");
        line
    }

    #[test]
    fn the_line_and_answer_caps_hold_at_their_exact_bounds() {
        // Two lines of exactly MAX_LINE bytes: each is read, and together they are exactly
        // MAX_ANSWER, which does not stop the read; the small lines before them are read too
        // (a blank stretch puts them in later chunks than the one the big lines end in: the
        // cap is looked at between chunks).
        assert_eq!(2 * MAX_LINE, MAX_ANSWER);
        let mut content = b"{\"a\":1}\n{\"a\":2}\n".to_vec();
        content.resize(content.len() + 4 * CHUNK, b' ');
        content.push(b'\n');
        for fill in [b'x', b'y'] {
            content.extend(object_line(MAX_LINE, fill));
            content.push(b'\n');
        }
        let f = file_with(&content);
        let tail = read_last(f.path(), "f.jsonl", 10).unwrap();
        assert_eq!(
            (tail.entries.len(), tail.skipped, tail.truncated),
            (4, 0, false)
        );
        assert_eq!(tail.entries[0], json!({"a": 1}));
        let all = read_all(f.path(), "f.jsonl").unwrap();
        assert_eq!((all.entries.len(), all.skipped), (4, 0));
        // One byte over: a valid object, yet skipped and counted, never returned — also as
        // the file's first line (read last, at the file's start).
        let mut content = object_line(MAX_LINE + 1, b'z');
        content.extend_from_slice(b"\n{\"a\":3}\n");
        content.extend(object_line(MAX_LINE + 1, b'w'));
        content.extend_from_slice(b"\n{\"a\":4}\n");
        let f = file_with(&content);
        let tail = read_last(f.path(), "f.jsonl", 10).unwrap();
        assert_eq!(tail.entries, [json!({"a": 3}), json!({"a": 4})]);
        assert_eq!((tail.skipped, tail.truncated), (2, false));
        let all = read_all(f.path(), "f.jsonl").unwrap();
        assert_eq!((all.entries.len(), all.skipped), (2, 2));
    }

    #[test]
    fn an_oversized_line_is_skipped_even_when_its_start_is_an_object() {
        // `{"a":9}` then more than 16 MiB of blanks: valid JSON, but over the line cap. Read
        // back, the line is known too long before its start is reached (its later chunks
        // alone are over the cap): it is skipped whole, its start never read as an entry.
        let mut content = b"{\"c\":0}\n{\"a\":9}".to_vec();
        content.resize(content.len() + MAX_LINE + 2 * CHUNK, b' ');
        content.extend_from_slice(b"\n{\"b\":1}\n");
        let f = file_with(&content);
        let tail = read_last(f.path(), "f.jsonl", 10).unwrap();
        assert_eq!(tail.entries, [json!({"c": 0}), json!({"b": 1})]);
        assert_eq!(tail.skipped, 1);
    }

    #[test]
    fn an_answer_over_its_byte_cap_stops_the_read() {
        // Three 12 MiB entries are over MAX_ANSWER: the read stops there (at the next chunk:
        // a blank stretch keeps the small entries out of the chunk it ends in), truncated.
        let mut content = b"{\"a\":1}\n{\"a\":2}\n".to_vec();
        content.resize(content.len() + 4 * CHUNK, b' ');
        content.push(b'\n');
        for fill in [b'x', b'y', b'z'] {
            content.extend(object_line(12 << 20, fill));
            content.push(b'\n');
        }
        let f = file_with(&content);
        let tail = read_last(f.path(), "f.jsonl", 10).unwrap();
        assert_eq!((tail.entries.len(), tail.truncated), (3, true));
        assert!(tail.entries.iter().all(|e| e["big"].is_string()));
    }

    #[test]
    fn what_is_not_an_object_is_skipped_and_a_whole_small_file_is_not_truncated() {
        let f = file_with(b"[1]\n3\n\"s\"\nnull\n{\"a\":1}\n");
        let tail = read_last(f.path(), "f.jsonl", 100).unwrap();
        assert_eq!(tail.entries, [json!({"a": 1})]);
        assert_eq!((tail.skipped, tail.truncated), (4, false));
        let all = read_all(f.path(), "f.jsonl").unwrap();
        assert_eq!((all.entries.len(), all.skipped), (1, 4));
    }

    #[test]
    fn a_whole_read_takes_a_file_of_exactly_its_cap_and_not_one_byte_more() {
        let d = file_with(b"");
        let path = d.path().join("f.jsonl");
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        // Sparse: no disk is spent on the zeros (one line, over the line cap, skipped).
        f.set_len(MAX_ALL).unwrap();
        let all = read_all(d.path(), "f.jsonl").unwrap();
        assert_eq!((all.entries.len(), all.skipped), (0, 1));
        f.set_len(MAX_ALL + 1).unwrap();
        assert!(matches!(
            read_all(d.path(), "f.jsonl"),
            Err(ReadError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_huge_sparse_log_is_read_only_near_its_end() {
        let d = file_with(b"");
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(d.path().join("f.jsonl"))
            .unwrap();
        f.set_len(100 << 30).unwrap();
        drop(f);
        std::fs::OpenOptions::new()
            .append(true)
            .open(d.path().join("f.jsonl"))
            .unwrap()
            .write_all(b"\n{\"a\":1}\n")
            .unwrap();
        let t = std::time::Instant::now();
        let tail = read_last(d.path(), "f.jsonl", 5).unwrap();
        assert_eq!(tail.entries, [json!({"a":1})]);
        assert!(tail.truncated, "only the last MAX_SCAN bytes were read");
        assert!(
            t.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            t.elapsed()
        );
        assert!(matches!(
            read_all(d.path(), "f.jsonl"),
            Err(ReadError::TooLarge { .. })
        ));
    }

    #[test]
    fn nothing_before_the_scan_floor_is_read() {
        // An entry, a hole, the last entry: `extra` bytes over MAX_SCAN. The reads back grow
        // from FIRST_CHUNK and end at the floor, MAX_SCAN bytes from the end.
        let first = b"{\"b\":1}\n";
        let last = b"\n{\"a\":1}\n";
        let log = |extra: u64| {
            let d = file_with(first);
            let path = d.path().join("f.jsonl");
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.set_len(MAX_SCAN + extra - last.len() as u64).unwrap();
            drop(f);
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap()
                .write_all(last)
                .unwrap();
            read_last(d.path(), "f.jsonl", 5).unwrap()
        };
        // The whole first entry lies before the floor: not read.
        let tail = log(first.len() as u64);
        assert_eq!(tail.entries, [json!({"a":1})]);
        assert!(tail.truncated);
        // A file of exactly MAX_SCAN bytes is read whole.
        let tail = log(0);
        assert_eq!(tail.entries, [json!({"b":1}), json!({"a":1})]);
        assert!(!tail.truncated);
    }

    #[test]
    fn a_fifo_or_a_link_out_of_the_project_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let c = std::ffi::CString::new(dir.path().join("f.jsonl").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) reads the NUL-terminated path only.
        assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(read_last(dir.path(), "f.jsonl", 5).is_err());
        assert!(read_all(dir.path(), "f.jsonl").is_err());
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("e.jsonl"), "{\"secret\":1}").unwrap();
        std::os::unix::fs::symlink(out.path(), dir.path().join("link")).unwrap();
        let e = read_last(dir.path(), "link/e.jsonl", 5).unwrap_err();
        assert!(e.to_string().contains("leads outside"), "{e}");
    }

    unsafe extern "C" {
        #[link_name = "mkfifo"]
        fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }
}
