//! AgentXchain protocol conformance (protocol v7, `stdio-fixture-v1`): the adapter that runs
//! one fixture of the corpus through this implementation's kernel and says whether the
//! outcome matches (`adapter`), the corpus's matcher (`matcher`), and the runner that drives
//! any implementation's adapter over the corpus (`runner`).
//!
//! The adapter decides what to do from a fixture's `setup` and `input` alone; `expected` is
//! read only to compare. It knows nothing of command lines: the binary wires stdin/stdout and
//! exit codes.

pub mod adapter;
pub mod matcher;
pub mod runner;
