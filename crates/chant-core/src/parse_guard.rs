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
    Bracket,
    /// `${` … `}` inside a template literal.
    Substitution,
}

/// The byte offset where `text` nests deeper than [`MAX_NESTING`] brackets or
/// [`MAX_CHAIN`] chained operations, and the message. Strings, comments and template text
/// are skipped; template substitutions are code.
pub fn nesting_error(text: &str) -> Option<(usize, String)> {
    let b = text.as_bytes();
    // Per open bracket: its kind and the chain of the expression it sits in.
    let mut frames: Vec<(Frame, usize)> = Vec::new();
    let mut chain = 0usize;
    let mut total = 0usize; // the chains of the enclosing frames
    let mut in_template = false;
    let mut i = 0;
    let deep = |at: usize, what: &str| {
        Some((
            at,
            format!("{what}; chant does not parse sources nested this far"),
        ))
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
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
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
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                chain += 1;
                if total + chain > MAX_CHAIN {
                    return deep(
                        i,
                        &format!(
                            "an expression chains more than {MAX_CHAIN} operations, calls or member accesses"
                        ),
                    );
                }
                if frames.len() >= MAX_NESTING {
                    return deep(
                        i,
                        &format!("brackets nested more than {MAX_NESTING} levels deep"),
                    );
                }
                frames.push((Frame::Bracket, chain));
                total += chain;
                chain = 0;
            }
            b')' | b']' | b'}' => {
                if let Some((kind, outer)) = frames.pop() {
                    total -= outer;
                    chain = outer;
                    if kind == Frame::Substitution {
                        in_template = true;
                    }
                }
            }
            b',' | b';' => chain = 0,
            b'.' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'<' | b'>' | b'?'
            | b'!' | b'~' | b'=' => {
                chain += 1;
                if total + chain > MAX_CHAIN {
                    return deep(
                        i,
                        &format!(
                            "an expression chains more than {MAX_CHAIN} operations, calls or member accesses"
                        ),
                    );
                }
            }
            _ => {}
        }
        i += 1;
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
    }
}
