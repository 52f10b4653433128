//! `agentxchain`: governed multi-agent runs. Argument parsing and wiring only.

use clap::Parser;

/// Governed multi-agent runs: phases, turns, gates, escalations and intake, with an MCP server
/// that lets agents read run state and learn how a person approves a gate.
#[derive(Parser, Debug)]
#[command(name = "agentxchain", version, about, long_about = None)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
