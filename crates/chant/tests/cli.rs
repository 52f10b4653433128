//! The `chant` binary answers --version and --help.

const BIN: &str = env!("CARGO_BIN_EXE_chant");

#[test]
fn version_help_and_usage_errors() {
    mcp_testkit::assert_cli_basics(BIN, "chant", env!("CARGO_PKG_VERSION"));
}
