//! What a ledger reader passed by: a line (or a file) it could not believe, where, and why.
//! Every reader says what it skipped; a reply lists the first [`SKIPPED_SHOWN`] and counts all.

use serde_json::{Value as Json, json};

/// How many skipped lines a reply lists (`skippedTotal` counts them all): a ledger of bad
/// lines must not flood the reader's screen or a model's context.
pub const SKIPPED_SHOWN: usize = 100;

/// A value from a bad line, as a reason quotes it: JSON-escaped, at most 40 characters.
pub fn shown(v: &str) -> String {
    let mut cut: String = v.chars().take(40).collect();
    if cut.len() < v.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

/// A ledger line a reader skipped: the file on `chant/lifecycle`, its 1-based line, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub file: String,
    pub line: usize,
    pub reason: String,
}

impl Skipped {
    pub fn list(file: &str, lines: Vec<(usize, String)>) -> Vec<Skipped> {
        lines
            .into_iter()
            .map(|(line, reason)| Skipped {
                file: file.to_owned(),
                line,
                reason,
            })
            .collect()
    }

    /// A record file too large to be one, skipped whole (as its line 1).
    pub fn whole(file: &str, size: u64) -> Skipped {
        Skipped {
            file: file.to_owned(),
            line: 1,
            reason: format!(
                "the file is {size} bytes, more than the {} MiB a record may be; not read",
                gitledger::MAX_RECORD_BYTES >> 20
            ),
        }
    }

    /// A file that could not be read at all (too large for a ledger file, or git's error),
    /// skipped whole (as its line 1).
    pub fn unread(file: &str, e: &gitledger::LedgerError) -> Skipped {
        Skipped {
            file: file.to_owned(),
            line: 1,
            reason: match e {
                gitledger::LedgerError::TooLarge { size, max, .. } => format!(
                    "the file is {size} bytes, more than the {} MiB a ledger file may be; not read",
                    max >> 20
                ),
                e => e.to_string(),
            },
        }
    }

    /// `{file, line, reason}`.
    pub fn to_json(&self) -> Json {
        json!({"file": self.file, "line": self.line, "reason": self.reason})
    }

    /// The `skipped` array of a reply: the first [`SKIPPED_SHOWN`].
    pub fn array(all: &[Skipped]) -> Json {
        Json::Array(
            all.iter()
                .take(SKIPPED_SHOWN)
                .map(Skipped::to_json)
                .collect(),
        )
    }
}
