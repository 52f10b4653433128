//! Splitting a JSONL blob into lines, one line at a time: a bad byte costs its line only.

/// One line of a JSONL blob: its 1-based number in the blob, and its text, or why it has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    pub number: usize,
    pub text: Result<&'a str, &'static str>,
}

/// The reason given for a line that is not UTF-8.
pub const NOT_UTF8: &str = "not UTF-8";

/// Every non-blank line of `bytes` (with or without a trailing newline; a `\r` before the
/// `\n` dropped), numbered from 1 as an editor counts them, each decoded on its own.
pub fn numbered(bytes: &[u8]) -> impl Iterator<Item = Line<'_>> {
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter_map(|(i, raw)| {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(u8::is_ascii_whitespace) {
                return None;
            }
            Some(Line {
                number: i + 1,
                text: std::str::from_utf8(raw).map_err(|_| NOT_UTF8),
            })
        })
}

/// The non-blank lines of `bytes` that are UTF-8 (see [`numbered`] for the others).
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = &str> {
    numbered(bytes).filter_map(|l| l.text.ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_skip_blanks() {
        assert_eq!(lines(b"a\n\nb\r\n").collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn one_bad_byte_costs_its_line_only() {
        let got: Vec<_> = numbered(b"{\"a\":1}\n\xff\xfe\n\n  \n{\"b\":2}").collect();
        assert_eq!(
            got,
            [
                Line {
                    number: 1,
                    text: Ok("{\"a\":1}")
                },
                Line {
                    number: 2,
                    text: Err(NOT_UTF8)
                },
                Line {
                    number: 5,
                    text: Ok("{\"b\":2}")
                },
            ]
        );
        assert_eq!(lines(b"x\n\xc3\ny").collect::<Vec<_>>(), ["x", "y"]);
    }
}
