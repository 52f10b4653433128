//! The rules of an AgentXchain governed run, as data in and verdicts out: phase-exit and
//! run-completion gates with the workflow artifacts' semantic checks (`gates`, `semantics`),
//! run events and their ordering (`events`), decision-ledger entries (`decisions`), and
//! dispatch bundles' manifests (`manifest`).
//!
//! It sits beside `axc-core` (which owns the files on disk and the read model) and below the
//! CLI, the MCP server and the conformance adapter. It knows nothing of command lines, MCP or
//! fixtures: a gate reads the artifacts it names under the project root it is given and
//! returns a [`gates::GateResult`]; callers decide what to write and how to say it. The state
//! machine's writes (assign, accept, transitions) are the next part to move here.

pub mod coordinator;
pub mod decisions;
pub mod events;
pub mod gates;
pub mod hooks;
pub mod js;
pub mod manifest;
pub mod process;
pub mod run;
pub mod semantics;
pub mod transitions;
pub mod turn_result;
