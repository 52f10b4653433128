//! The `agentxchain` binary answers --version and --help.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_agentxchain");

#[test]
fn version_prints_the_crate_version() {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        concat!("agentxchain ", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_explains_the_program() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Usage: agentxchain"), "{text}");
}

#[test]
fn an_unknown_argument_is_a_usage_error() {
    let out = Command::new(BIN).arg("--no-such-flag").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}
