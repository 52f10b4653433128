//! `init --governed --template <id>` against the JavaScript reference's scaffolds
//! (`scripts/capture-reference-templates` into `tests/reference-templates.tar.gz`): every file
//! the reference writes, byte for byte, no other file, and init's lines less the commands this
//! binary does not have. Then the `--dev-command` / `--dev-prompt-transport` rules.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const TEMPLATES: [&str; 7] = [
    "generic",
    "api-service",
    "cli-tool",
    "library",
    "web-app",
    "full-local-cli",
    "enterprise-app",
];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_agentxchain")
}

fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap() == ".git" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

fn init(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .args(["init", "--governed", "-y"])
        .args(args)
        .current_dir(dir)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap()
}

/// The lines of the reference's init that name commands this binary does not have.
fn ours_omits(line: &str) -> bool {
    [
        "agentxchain template validate",
        "agentxchain connector ",
        "agentxchain config --set",
        "agentxchain init --governed --goal",
        "Tip: Add a project goal",
        "Guide: https://",
    ]
    .iter()
    .any(|s| line.contains(s))
}

#[test]
fn every_template_scaffolds_what_the_reference_scaffolds() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference-templates.tar.gz");
    let ok = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(tmp.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let reference = tmp.path().join("reference-templates");
    let ours = tmp.path().join("ours");
    for t in TEMPLATES {
        let dir = ours.join(t);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(
            Command::new("git")
                .args(["init", "-q"])
                .current_dir(&dir)
                .status()
                .unwrap()
                .success()
        );
        let out = init(&dir, &["--template", t, "--dir", "."]);
        assert!(
            out.status.success(),
            "{t}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want_files = files(&reference.join(t));
        assert_eq!(files(&dir), want_files, "{t}: the files written");
        for f in &want_files {
            let (a, b) = (
                std::fs::read(reference.join(t).join(f)).unwrap(),
                std::fs::read(dir.join(f)).unwrap(),
            );
            assert!(
                a == b,
                "{t}: {} differs\n--- reference\n{}\n--- ours\n{}",
                f.display(),
                String::from_utf8_lossy(&a),
                String::from_utf8_lossy(&b)
            );
        }
        let want: String = std::fs::read_to_string(reference.join(format!("{t}.out")))
            .unwrap()
            .lines()
            .filter(|l| !ours_omits(l))
            .map(|l| format!("{l}\n"))
            .collect();
        // The reference's trailing tip block leaves one blank line more.
        let got = String::from_utf8(out.stdout).unwrap();
        assert_eq!(got.trim_end(), want.trim_end(), "{t}: init's output");
    }
}

#[test]
fn an_unknown_template_lists_the_seven_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let out = init(tmp.path(), &["--template", "nope", "--dir", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("  Error: Unknown template \"nope\".\n\n  Available templates:\n"),
        "{err}"
    );
    for t in TEMPLATES {
        assert!(err.contains(&format!("    {t}")), "{t}: {err}");
    }
    assert!(!tmp.path().join("x").exists(), "nothing is written");
}

#[test]
fn the_dev_runtime_flags_follow_the_references_rules() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, message) in [
        (
            vec!["--dev-command", "mycli"],
            "Custom --dev-command must either include {prompt} or set --dev-prompt-transport explicitly.",
        ),
        (
            vec!["--dev-prompt-transport", "argv"],
            "Default local dev command does not include {prompt}. Use --dev-command ... {prompt} for argv mode.",
        ),
        (
            vec!["--dev-prompt-transport", "bogus"],
            "Unknown --dev-prompt-transport \"bogus\". Valid values: argv, stdin, dispatch_bundle_only",
        ),
        (
            vec![
                "--dev-command",
                "mycli",
                "{prompt}",
                "--dev-prompt-transport",
                "stdin",
            ],
            "--dev-prompt-transport stdin must not be combined with {prompt} in --dev-command.",
        ),
        (
            vec!["--dev-command", "mycli", "--dev-prompt-transport", "argv"],
            "--dev-prompt-transport argv requires {prompt} in --dev-command.",
        ),
    ] {
        let mut a = vec!["--dir", "p"];
        a.extend(&args);
        let out = init(tmp.path(), &a);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!("  Error: {message}\n"),
            "{args:?}"
        );
        assert!(
            !tmp.path().join("p").exists(),
            "{args:?}: nothing is written"
        );
    }
    // A command head is split on whitespace; the generic template's manual dev moves to it.
    let out = init(
        tmp.path(),
        &["--dir", "p", "--dev-command", "my cli --fast", "{prompt}"],
    );
    assert!(out.status.success());
    let config: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("p/agentxchain.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        config["runtimes"]["local-dev"],
        json!({"type": "local_cli", "command": ["my", "cli", "--fast", "{prompt}"], "cwd": ".", "prompt_transport": "argv"})
    );
    assert_eq!(config["roles"]["dev"]["runtime"], "local-dev");
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("  Dev runtime: my cli --fast {prompt} (argv)\n")
    );
}
