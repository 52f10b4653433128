//! Helpers for the tests that keep `docs/` in step with what a binary registers: reading a
//! page, the names in its `` ### `tool` `` headings, and a binary's subcommands from `--help`.

use std::path::Path;

/// The workspace's `docs/<name>`, for a crate at `manifest_dir` (`env!("CARGO_MANIFEST_DIR")`).
pub fn page(manifest_dir: &str, name: &str) -> String {
    let p = Path::new(manifest_dir).join("../../docs").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The names in headings written `<prefix>name`` ` ` (e.g. prefix `` ### ` ``).
pub fn headings<'a>(page: &'a str, prefix: &str) -> Vec<&'a str> {
    page.lines()
        .filter_map(|l| l.strip_prefix(prefix)?.strip_suffix('`'))
        .collect()
}

/// The subcommands `<bin> --help` lists under `Commands:` (without `help`), in its order.
pub fn subcommands(bin: &str) -> Vec<String> {
    let out = std::process::Command::new(bin)
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("{bin} --help: {e}"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}
