//! Guards for parsing project TypeScript, whose parser and AST walks recurse once per level of
//! nesting: a bound on how deep a source's syntax tree can be, checked by one linear scan before
//! anything parses it, and a thread with a stack deep enough for every tree under that bound, so
//! no source text can overflow a stack and abort the process.

/// The deepest bracket nesting (`(`, `[`, `{`) a source may have.
pub const MAX_NESTING: usize = 1000;

/// The deepest a source's operator and call chains may nest once brackets are added in: an
/// upper bound on the tree's depth, counting every operator, call, member access and bracket
/// of one expression (`,` and `;` start the count again).
pub const MAX_CHAIN: usize = 5_000;

/// The stack of a parsing thread. Only the pages a parse touches are ever resident.
pub const PARSE_STACK_BYTES: usize = 256 << 20;

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    /// `(`, `[` or `{`: the byte that opened it.
    Bracket(u8),
    /// `${` … `}` inside a template literal.
    Substitution,
}

/// Words that chain like operators (each nests the tree one level more).
const KEYWORD_OPERATORS: &[&[u8]] = &[
    b"typeof",
    b"void",
    b"delete",
    b"await",
    b"new",
    b"in",
    b"instanceof",
    b"keyof",
    b"yield",
    b"as",
    b"satisfies",
    b"infer",
    b"extends",
    b"readonly",
    b"unique",
    b"is",
    b"asserts",
    b"of",
];

fn is_operator(c: u8) -> bool {
    matches!(
        c,
        b'.' | b'+'
            | b'-'
            | b'*'
            | b'/'
            | b'%'
            | b'&'
            | b'|'
            | b'^'
            | b'<'
            | b'>'
            | b'?'
            | b'!'
            | b'~'
            | b'='
            | b':'
    )
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// The byte offset where `text` nests deeper than [`MAX_NESTING`] brackets or
/// [`MAX_CHAIN`] chained operations, and the message. Strings, comments and template text
/// are skipped; template substitutions are code; a closing bracket closes only the kind that
/// opened (so brackets in a regular expression cannot hide real ones); a line break ends a
/// chain only where neither side of it is an operator.
pub fn nesting_error(text: &str) -> Option<(usize, String)> {
    let b = text.as_bytes();
    // Per open bracket: its kind and the chain of the expression it sits in.
    let mut frames: Vec<(Frame, usize)> = Vec::new();
    let mut chain = 0usize;
    let mut total = 0usize; // the chains of the enclosing frames
    let mut in_template = false;
    // A line break was passed since the last token; and whether that token was an operator.
    let (mut line_break, mut after_operator) = (false, true);
    let mut i = 0;
    let deep = |at: usize, what: String| {
        Some((
            at,
            format!("{what}; chant does not parse sources nested this far"),
        ))
    };
    let chained = |at: usize| {
        deep(
            at,
            format!(
                "an expression chains more than {MAX_CHAIN} operations, calls or member accesses"
            ),
        )
    };
    while i < b.len() {
        let c = b[i];
        if in_template {
            match c {
                b'\\' => i += 1,
                b'`' => in_template = false,
                b'$' if b.get(i + 1) == Some(&b'{') => {
                    frames.push((Frame::Substitution, chain));
                    total += chain;
                    chain = 0;
                    in_template = false;
                    after_operator = true;
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        // Comments and white space are not tokens.
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                if b[i] == b'\n' {
                    line_break = true;
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        if c.is_ascii_whitespace() {
            if c == b'\n' {
                line_break = true;
            }
            i += 1;
            continue;
        }
        // The token's kind, for the line-break rule; words are read whole.
        let (operator, len) = if is_word(c) {
            let end = b[i..]
                .iter()
                .position(|&x| !is_word(x))
                .map_or(b.len(), |n| i + n);
            (KEYWORD_OPERATORS.contains(&&b[i..end]), end - i)
        } else {
            (is_operator(c), 1)
        };
        if line_break && !after_operator && !operator {
            chain = 0; // a new statement (automatic semicolon insertion)
        }
        line_break = false;
        after_operator = operator || matches!(c, b'(' | b'[' | b'{' | b',' | b';');
        match c {
            b'"' | b'\'' => {
                i += 1;
                while i < b.len() && b[i] != c && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => in_template = true,
            // In code a backslash is only met inside a regular expression: skip what it escapes.
            b'\\' => i += 1,
            b'(' | b'[' | b'{' => {
                chain += 1;
                if total + chain > MAX_CHAIN {
                    return chained(i);
                }
                if frames.len() >= MAX_NESTING {
                    return deep(
                        i,
                        format!("brackets nested more than {MAX_NESTING} levels deep"),
                    );
                }
                frames.push((Frame::Bracket(c), chain));
                total += chain;
                chain = 0;
            }
            b')' | b']' | b'}' => {
                let opener = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                let closes = match frames.last() {
                    Some((Frame::Bracket(o), _)) => *o == opener,
                    Some((Frame::Substitution, _)) => c == b'}',
                    None => false,
                };
                if closes && let Some((kind, outer)) = frames.pop() {
                    total -= outer;
                    chain = outer;
                    if kind == Frame::Substitution {
                        in_template = true;
                    }
                }
            }
            b',' | b';' => chain = 0,
            _ if operator => {
                chain += 1;
                if total + chain > MAX_CHAIN {
                    return chained(i);
                }
            }
            _ => {}
        }
        i += len;
    }
    None
}

/// Runs `f` on a thread with a [`PARSE_STACK_BYTES`] stack (inline if none can be started).
pub fn on_parse_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("chant-parse".into())
            .stack_size(PARSE_STACK_BYTES)
            .spawn_scoped(scope, f)
        {
            Ok(handle) => match handle.join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => unreachable_thread(),
        }
    })
}

#[cold]
fn unreachable_thread() -> ! {
    panic!("cannot start a parsing thread")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_limited_where_it_passes_the_limit() {
        let ok = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert_eq!(nesting_error(&ok), None);
        let deep = "[".repeat(MAX_NESTING + 5);
        assert_eq!(nesting_error(&deep).map(|e| e.0), Some(MAX_NESTING));
        assert_eq!(on_parse_stack(|| 7), 7);
    }

    #[test]
    fn chains_are_limited_and_flat_lists_strings_and_comments_are_not() {
        for chain in [
            format!("f{}", "()".repeat(MAX_CHAIN + 1)),
            format!("Object{}", ".a".repeat(MAX_CHAIN + 1)),
            format!("1{}", "+1".repeat(MAX_CHAIN + 1)),
            format!("`${{f{}}}`", "()".repeat(MAX_CHAIN + 1)),
        ] {
            let e = nesting_error(&chain).expect("refused");
            assert!(e.1.contains("chains more than"), "{}", e.1);
        }
        let flat = format!("export const a = [{}];\n", "f(1), ".repeat(200_000));
        assert_eq!(nesting_error(&flat), None);
        let strings = format!(
            "const s = \"{}\"; // {}\n/* {} */ const t = `{}`;\n",
            ".".repeat(100_000),
            "+".repeat(100_000),
            "(".repeat(100_000),
            ".".repeat(100_000)
        );
        assert_eq!(nesting_error(&strings), None);
        let statements = "a.b.c.d();\n".repeat(100_000);
        assert_eq!(nesting_error(&statements), None);
        // Statements without semicolons end at line breaks.
        let asi = "export const a = new Job({ stage: \"x\" })\n".repeat(50_000);
        assert_eq!(nesting_error(&asi), None);
        // Keyword operators chain, across line breaks too; regex brackets hide nothing.
        for chain in [
            format!("{}1", "typeof ".repeat(MAX_CHAIN + 1)),
            format!("{}1", "void\n".repeat(MAX_CHAIN + 1)),
            format!("1{}", "\nin 1".repeat(MAX_CHAIN + 1)),
            format!("type T = {}{{}}", "keyof ".repeat(MAX_CHAIN + 1)),
        ] {
            let e = nesting_error(&chain).expect("refused");
            assert!(e.1.contains("chains more than"), "{}", e.1);
        }
        let regex = format!(
            "{}1{}",
            "(/\\)/, ".repeat(MAX_NESTING + 1),
            ")".repeat(MAX_NESTING + 1)
        );
        assert!(
            nesting_error(&regex).is_some(),
            "escaped brackets in a regex do not close"
        );
        let class = format!(
            "{}1{}",
            "(/[)]/, ".repeat(MAX_NESTING + 1),
            ")".repeat(MAX_NESTING + 1)
        );
        assert!(
            nesting_error(&class).is_some(),
            "a bracket closes only its own kind"
        );
    }
}
