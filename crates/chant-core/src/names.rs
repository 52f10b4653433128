//! JavaScript names, for the TypeScript an importer writes: whether a name can be written bare
//! (an identifier, not a reserved word), one home for every lexicon's generator.

/// Words a declaration may not be named: JavaScript's reserved and strict-mode words, and the
/// globals generated modules or their readers rely on.
pub const RESERVED_WORDS: &[&str] = &[
    "arguments",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "eval",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "Infinity",
    "instanceof",
    "interface",
    "let",
    "NaN",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "Array",
    "JSON",
    "Number",
    "Object",
    "String",
];

/// Whether `name` is a JavaScript identifier (ASCII letters, digits, `_`, `$`).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Whether `name` is a word a declaration may not take.
pub fn is_reserved(name: &str) -> bool {
    RESERVED_WORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_reserved_words() {
        assert!(is_identifier("a_b$1") && !is_identifier("1a") && !is_identifier("a-b"));
        assert!(!is_identifier(""));
        assert!(is_reserved("delete") && is_reserved("await") && !is_reserved("Queue"));
    }
}
