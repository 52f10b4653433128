//! A parsed source file: its text, oxc AST, and byte-offset ↔ line/column mapping.

use oxc::allocator::Allocator;
use oxc::ast::ast::Program;
use oxc::parser::Parser;
use oxc::span::SourceType;

/// Line starts of a text, for 1-based line and UTF-16 column positions.
#[derive(Clone, Debug)]
pub struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> LineIndex<'t> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The 1-based line of byte offset `at`.
    pub fn line(&self, at: usize) -> usize {
        self.starts.partition_point(|s| *s <= at)
    }

    /// `(line, column)`, both 1-based; the column counts UTF-16 code units.
    pub fn position(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.text.len());
        let line = self.line(at);
        let start = self.starts[line - 1];
        let column = self.text.get(start..at).map_or(at - start, utf16_len);
        (line, column + 1)
    }

    /// Byte offset of the start of 1-based `line` (the text's end past the last line).
    pub fn line_start(&self, line: usize) -> usize {
        self.starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len())
    }

    /// The byte offset `at` in UTF-16 code units from the start of the text.
    pub fn utf16_offset(&self, at: usize) -> usize {
        self.text.get(..at).map_or(at, utf16_len)
    }
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// A source file parsed once for every rule.
pub struct SourceFile<'a> {
    pub text: &'a str,
    pub program: Program<'a>,
    pub lines: LineIndex<'a>,
    /// The first syntax error: byte offset and message.
    pub syntax_error: Option<(usize, String)>,
}

impl<'a> SourceFile<'a> {
    /// Parses `text` as a TypeScript module.
    pub fn parse(allocator: &'a Allocator, text: &'a str) -> SourceFile<'a> {
        let parsed = Parser::new(allocator, text, SourceType::ts().with_module(true)).parse();
        let syntax_error = match parsed.diagnostics.first() {
            Some(e) => {
                let at = e.labels.first().map_or(0, |l| l.offset() as usize);
                Some((at, format!("Syntax error: {}", e.message)))
            }
            None if parsed.panicked => Some((0, "Syntax error: unparseable source".to_owned())),
            None => None,
        };
        SourceFile {
            text,
            program: parsed.program,
            lines: LineIndex::new(text),
            syntax_error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_count_utf16() {
        let text = "ab\n// é😀x\nlast";
        let l = LineIndex::new(text);
        assert_eq!(l.position(0), (1, 1));
        assert_eq!(l.position(2), (1, 3));
        assert_eq!(l.position(3), (2, 1));
        let x = text.find('x').unwrap();
        // "// " 3 + é 1 + 😀 2 = 6 units before x.
        assert_eq!(l.position(x), (2, 7));
        assert_eq!(l.position(text.len()), (3, 5));
        assert_eq!(l.line_start(3), text.find("last").unwrap());
        assert_eq!(l.utf16_offset(x), 3 + 6);
    }
}
