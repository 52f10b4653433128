//! Applying fixes: per file, from the end backwards, skipping any fix that overlaps one already
//! applied, so each replacement sees the text its range was computed on.

use crate::Fix;

/// `text` with `fixes` applied (byte ranges); returns the new text and how many were applied.
pub fn apply(text: &str, fixes: &[&Fix]) -> (String, usize) {
    let mut sorted: Vec<&Fix> = fixes
        .iter()
        .copied()
        .filter(|f| f.range.0 <= f.range.1 && f.range.1 <= text.len())
        .filter(|f| text.is_char_boundary(f.range.0) && text.is_char_boundary(f.range.1))
        .collect();
    sorted.sort_by(|a, b| b.range.0.cmp(&a.range.0).then(b.range.1.cmp(&a.range.1)));
    let mut out = text.to_owned();
    let mut floor = usize::MAX;
    let mut applied = 0;
    for f in sorted {
        if f.range.1 > floor {
            continue;
        }
        out.replace_range(f.range.0..f.range.1, &f.replacement);
        floor = f.range.0;
        applied += 1;
    }
    (out, applied)
}

/// The byte range of the whole line holding `at`, with its newline: what a fix that deletes a
/// line removes, never joining its neighbours.
pub fn line_range(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| at + i + 1);
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(s: usize, e: usize, r: &str) -> Fix {
        Fix {
            range: (s, e),
            replacement: r.into(),
            kind: None,
        }
    }

    #[test]
    fn back_to_front_and_overlaps_skipped() {
        let text = "abcdef";
        let (a, b, c) = (fix(0, 1, "X"), fix(4, 6, "YY-"), fix(3, 5, "overlap"));
        let (out, n) = apply(text, &[&a, &b, &c]);
        assert_eq!((out.as_str(), n), ("XbcdYY-", 2));
        let ins = fix(3, 3, ", \"Name\"");
        assert_eq!(apply("f(x)", &[&ins]).0, "f(x, \"Name\")");
    }

    #[test]
    fn deleting_a_line_keeps_its_neighbours_apart() {
        let text = "import * as gl from \"x\";\nimport type { Job } from \"x\";\nimport { C } from \"y\";\n";
        let second = text.find("import type").unwrap();
        let range = line_range(text, second + 3);
        assert_eq!(range, (second, text.find("import { C").unwrap()));
        let (out, _) = apply(text, &[&fix(range.0, range.1, "")]);
        assert_eq!(
            out,
            "import * as gl from \"x\";\nimport { C } from \"y\";\n"
        );
        // The last line without a newline.
        assert_eq!(line_range("a\nb", 2), (2, 3));
    }
}
