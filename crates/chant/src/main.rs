//! `chant`: declarative infrastructure as code in TypeScript. Argument parsing and wiring only.

use clap::Parser;

/// Declarative infrastructure as code: declare resources in TypeScript, build them into
/// CloudFormation, GitLab CI, Kubernetes and more, and serve it all to agents over MCP.
#[derive(Parser, Debug)]
#[command(name = "chant", version, about, long_about = None)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
