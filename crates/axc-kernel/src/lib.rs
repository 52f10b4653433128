//! The rules of an AgentXchain governed run, and the run on disk. As data in and verdicts out:
//! phase-exit and run-completion gates with the workflow artifacts' semantic checks (`gates`,
//! `semantics`), the state machine's pure transitions (`transitions`), the budget (`budget`),
//! staged turn results (`turn_result`), run events and their ordering (`events`),
//! decision-ledger entries (`decisions`), dispatch bundles' manifests (`manifest`), hooks
//! (`hooks`) and the multi-repo coordinator (`coordinator`). On disk, `run`: the commands that change a run (init, resume,
//! accept, checkpoint, reject, reissue, approvals, escalations), each under one lock, writing the
//! reference's files whole, through the project's walls.
//!
//! It sits beside `axc-core` (the read model the MCP server and `status` use) and below the CLI,
//! the MCP server and the conformance adapter. It knows nothing of command lines, MCP or
//! fixtures: operations return data (`run::Refusal` with the reference's text, or an outcome);
//! callers decide how to say it.

pub mod budget;
pub mod coordinator;
pub mod decisions;
pub mod events;
pub mod gates;
pub mod hooks;
pub mod intent_coverage;
pub mod js;
pub mod manifest;
pub mod process;
pub mod run;
pub mod semantics;
pub mod transitions;
pub mod turn_result;
pub mod views;
