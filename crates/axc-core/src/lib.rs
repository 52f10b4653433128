//! AgentXchain's governed project as it lies on disk, and the read model built on it.
//!
//! This crate owns `agentxchain.json` (root discovery, version detection, validation, the
//! normalized project), `.agentxchain/state.json` (v1.0 shapes normalized in memory, never written
//! back), the JSONL logs (events read from the end of the file, run history newest first),
//! `continuous-session.json`, the human-escalation log and its current-blocker rule, the status /
//! events / history / approve-gate reports, and intake recording (validated, deduplicated, written
//! atomically). Reads never write. It knows nothing of MCP or of command-line parsing: callers get
//! JSON values and warning lines and decide where they go.

pub mod config;
pub mod escalations;
pub mod intake;
pub mod jsonl;
pub mod read;
pub mod state;
pub mod util;
