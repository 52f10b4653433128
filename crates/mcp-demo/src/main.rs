//! `mcp-demo [--page-size N] [--instructions TEXT]`: the demo MCP server on stdio.

use std::process::ExitCode;

const USAGE: &str = "mcp-demo: a demonstration MCP server on stdio (for tests and benchmarks)

Usage: mcp-demo [--page-size N] [--instructions TEXT]

Options:
  --page-size N        split tools/list and resources/list into pages of N
  --instructions TEXT  instructions to return from initialize
  -h, --help           print this help
  -V, --version        print the version";

fn main() -> ExitCode {
    let mut options = mcp_demo::Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "-V" | "--version" => {
                println!("mcp-demo {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--page-size" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => options.page_size = Some(n),
                _ => return usage_error("--page-size takes a whole number above 0"),
            },
            "--instructions" => match args.next() {
                Some(text) => options.instructions = Some(text),
                None => return usage_error("--instructions takes a text"),
            },
            other => return usage_error(&format!("unknown argument '{other}'")),
        }
    }
    match mcp_demo::server(&options).serve_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-demo: reading stdin failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}\n\n{USAGE}");
    ExitCode::from(2)
}
