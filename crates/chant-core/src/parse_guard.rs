//! Guards for parsing project TypeScript, whose parser and AST walks recurse once per level of
//! nesting: a limit on bracket nesting that names where it was passed, and a thread with a
//! stack deep enough for everything under that limit (and for long operator chains that
//! recurse too), so no source text can overflow a stack and abort the process.

/// The deepest bracket nesting (`(`, `[`, `{`) a source may have.
pub const MAX_NESTING: usize = 1000;

/// The stack of a parsing thread. Only the pages a parse touches are ever resident.
pub const PARSE_STACK_BYTES: usize = 256 << 20;

/// The byte offset where `text` nests brackets deeper than [`MAX_NESTING`], and the message.
/// Brackets are counted as written (inside strings and comments too): a real source never
/// comes near the limit either way.
pub fn nesting_error(text: &str) -> Option<(usize, String)> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some((
                        i,
                        format!(
                            "brackets nested more than {MAX_NESTING} levels deep; chant does not parse sources nested this far"
                        ),
                    ));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
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
}
