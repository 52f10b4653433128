//! A principal's name as every rule compares it (quorum, trust roles, seals): one home, so a
//! reviewer, a role and a signer are the same person by the same rule.

use unicode_normalization::UnicodeNormalization;

/// A principal's name as compared: NFKC, trimmed, lower-cased.
pub fn principal(name: &str) -> String {
    name.nfkc()
        .filter(|c| !invisible(*c))
        .collect::<String>()
        .trim()
        .to_lowercase()
}

/// Characters that show nothing (format controls, soft hyphen, joiners, bidi marks): left out
/// of a compared name, so `lex\u{200b}00` is `lex00`.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{E0000}'..='\u{E007F}')
}
