//! Seals: ssh signatures a person makes over a verdict (`chant-review`) or over a record's
//! author (`chant-record`) with `ssh-keygen -Y sign`, stored as `seal: {signer, key,
//! signature}`, and their check against the signers file at base with `ssh-keygen -Y verify`.
//!
//! What is signed is a few lines, not the file: a verdict's record id, the digest it judged,
//! the verdict, the reviewer and the day (`<id>\n<digest>\n<verdict>\n<reviewer>\n<on>`); an
//! author seal's record id, the record's digest, its author and its state
//! (`<id>\n<digest>\n<author>\n<state>`). The digest leaves the seals out, so sealing moves
//! nothing a seal covers. The write does not judge the key; a read says whether the seal counts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::error::{Result, WsError};
use crate::principal::principal;
use crate::trust::Trust;

pub const REVIEW_NAMESPACE: &str = "chant-review";
pub const RECORD_NAMESPACE: &str = "chant-record";

/// The key a seal is made with: a key file (private, or public with its private half in
/// ssh-agent), or a public key written out literally (`key::ssh-ed25519 …`), held by the agent.
#[derive(Debug, Clone)]
pub enum Key {
    File(PathBuf),
    Literal(String),
}

/// Where a signing key's configuration is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyConfig {
    /// Every git config, the repository's included (a person's `--sign` at a shell).
    Any,
    /// The host's only (`--global`, then `--system`): what a client over MCP asks to seal with
    /// can never be a key a file in the project names, since the project is what an agent
    /// writes.
    Host,
}

fn git_config(cwd: &Path, key: &str, from: KeyConfig) -> Option<String> {
    let get = |scope: Option<&str>| {
        let mut args = vec!["config"];
        args.extend(scope);
        args.extend(["--get", key]);
        crate::tree::git_out(cwd, &args)
            .map(|o| String::from_utf8_lossy(&o).trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    match from {
        KeyConfig::Any => get(None),
        KeyConfig::Host => get(Some("--global")).or_else(|| get(Some("--system"))),
    }
}

fn home_path(p: &str, cwd: &Path) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(|h| Path::new(&h).join(rest))
            .unwrap_or_else(|| cwd.join(p)),
        None => cwd.join(p),
    }
}

/// The key `--sign` seals with: `file` when given, else git's `user.signingkey` when
/// `gpg.format` is `ssh` (read `from` the configs it names); refused with `code` and the
/// remedy otherwise.
pub fn key(cwd: &Path, file: Option<&str>, code: &'static str, from: KeyConfig) -> Result<Key> {
    if let Some(f) = file.filter(|f| !f.is_empty()) {
        return Ok(Key::File(home_path(f, cwd)));
    }
    let format = git_config(cwd, "gpg.format", from);
    let configured = git_config(cwd, "user.signingkey", from);
    let (Some(k), Some("ssh")) = (configured, format.as_deref()) else {
        return Err(WsError::new(
            code,
            match from {
                KeyConfig::Any => {
                    "no ssh signing key is configured on this host; set one with `git config user.signingkey ~/.ssh/id_ed25519.pub` and `git config gpg.format ssh`, or write without signing"
                }
                KeyConfig::Host => {
                    "no ssh signing key is configured on this host; set one with `git config --global user.signingkey ~/.ssh/id_ed25519.pub` and `git config --global gpg.format ssh` (over MCP only the host's own git config names the key, never the repository's), or write without signing"
                }
            },
        ));
    };
    Ok(match k.strip_prefix("key::") {
        Some(lit) => Key::Literal(lit.to_owned()),
        None if k.starts_with("ssh-") || k.starts_with("ecdsa-") || k.starts_with("sk-") => {
            Key::Literal(k)
        }
        None => Key::File(home_path(&k, cwd)),
    })
}

/// Runs `cmd` with `input` on standard input: the output, or `None` when it could not start.
/// The input is a file, not a pipe: ssh-keygen exits on a bad signature before reading it,
/// and writing into a closed pipe would end this process (SIGPIPE).
fn run(cmd: &mut Command, input: &str) -> Option<std::process::Output> {
    cmd.stdin(crate::tree::stdin_file(input)?)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .ok()
}

/// The largest signature a seal is checked with: an ssh signature is a few hundred bytes.
const MAX_SIGNATURE: usize = 16 * 1024;

fn fingerprint(text: &str) -> Option<String> {
    let at = text.find("SHA256:")?;
    let rest = &text[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, ':' | '+' | '/' | '=')))
        .unwrap_or(rest.len());
    Some(rest[..end].to_owned())
}

/// A file holding `text`, removed when dropped.
fn temp_with(text: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let mut f = tempfile::NamedTempFile::new()?;
    f.write_all(text.as_bytes())?;
    f.flush()?;
    Ok(f)
}

/// The seal of `payload` by `signer` in `namespace`: `{signer, key, signature}`, the key's
/// fingerprint read back from the signature; refused with `code` when it cannot be made.
pub fn seal(
    key: &Key,
    signer: &str,
    namespace: &str,
    payload: &str,
    code: &'static str,
) -> Result<Value> {
    let fail = |m: String| WsError::new(code, m);
    let literal;
    let (file, shown) = match key {
        Key::File(p) => (p.clone(), p.display().to_string()),
        Key::Literal(k) => {
            literal = temp_with(&format!("{k}\n"))
                .map_err(|e| fail(format!("cannot write the public key for ssh-keygen: {e}")))?;
            (
                literal.path().to_path_buf(),
                "git's user.signingkey".to_owned(),
            )
        }
    };
    let mut cmd = Command::new("ssh-keygen");
    cmd.args(["-q", "-Y", "sign", "-n", namespace]);
    if matches!(key, Key::Literal(_)) {
        cmd.arg("-U");
    }
    cmd.arg("-f").arg(&file);
    let out = run(&mut cmd, payload)
        .ok_or_else(|| fail("--sign needs ssh-keygen, and it is not installed here".into()))?;
    let signature = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !signature.starts_with("-----BEGIN SSH SIGNATURE-----") {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(fail(format!(
            "ssh-keygen could not sign with {shown}: {}",
            if err.is_empty() {
                format!("exit {}", out.status)
            } else {
                err
            }
        )));
    }
    let key = match check_novalidate(namespace, &signature, payload) {
        Ok(k) => k,
        Err(why) => {
            return Err(fail(format!(
                "the signature ssh-keygen made with {shown} does not check: {why}"
            )));
        }
    };
    Ok(json!({"signer": signer, "key": key, "signature": signature}))
}

/// Whether `signature` is intact over `payload` in `namespace`, whoever made it: the key's
/// fingerprint, or why not.
fn check_novalidate(
    namespace: &str,
    signature: &str,
    payload: &str,
) -> std::result::Result<String, String> {
    let sig = temp_with(signature).map_err(|e| e.to_string())?;
    let out = run(
        Command::new("ssh-keygen")
            .args(["-Y", "check-novalidate", "-n", namespace, "-s"])
            .arg(sig.path()),
        payload,
    )
    .ok_or("ssh-keygen is not installed here")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match (out.status.success(), fingerprint(&text)) {
        (true, Some(k)) => Ok(k),
        _ => Err(text.trim().to_owned()),
    }
}

/// What a verdict's seal signs.
pub fn verdict_payload(id: &str, digest: &str, verdict: &str, reviewer: &str, on: &str) -> String {
    format!("{id}\n{digest}\n{verdict}\n{reviewer}\n{on}")
}

/// What a record's author seal signs.
pub fn record_payload(id: &str, digest: &str, author: &str, state: Option<&str>) -> String {
    format!("{id}\n{digest}\n{author}\n{}", state.unwrap_or(""))
}

/// What a seal establishes: `attested` true when it verifies for its principal against the
/// signers at base, false when it fails (or is missing under an active policy), null when
/// nothing here can say.
#[derive(Debug, Clone, PartialEq)]
pub struct Attestation {
    pub attested: Option<bool>,
    pub code: Option<&'static str>,
    pub message: String,
    pub key: Option<String>,
}

impl Attestation {
    fn no(
        attested: Option<bool>,
        code: &'static str,
        message: String,
        key: Option<String>,
    ) -> Self {
        Attestation {
            attested,
            code: Some(code),
            message,
            key,
        }
    }

    /// The `attestation` block of a read.
    pub fn block(&self) -> Value {
        let mut b = json!({"message": self.message});
        if let Some(c) = self.code {
            b["code"] = json!(c);
        }
        if let Some(k) = &self.key {
            b["key"] = json!(k);
        }
        b
    }
}

/// One line of a signers file, as `ssh-keygen` reads it: its principals, options and key.
struct SignerLine {
    principals: Vec<String>,
    options: Option<String>,
    key: String,
}

/// Splits a signers line into fields at spaces outside double quotes.
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ' ' | '\t' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn is_key_type(s: &str) -> bool {
    s.starts_with("ssh-") || s.starts_with("ecdsa-") || s.starts_with("sk-")
}

fn signer_lines(text: &str) -> Vec<SignerLine> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let f = fields(l);
            let (options, ty, key) = if is_key_type(f.get(1)?) {
                (None, f.get(1)?, f.get(2)?)
            } else {
                (Some(f.get(1)?.clone()), f.get(2)?, f.get(3)?)
            };
            Some(SignerLine {
                principals: f[0]
                    .trim_matches('"')
                    .split(',')
                    .map(str::to_owned)
                    .collect(),
                options,
                key: format!("{ty} {key}"),
            })
        })
        .collect()
}

/// The `namespaces="…"` option of a line whose options are that alone; `Err` for a line with
/// any other option (validity dates, a certificate authority), which a seal does not trust.
fn namespaces_only(options: Option<&str>) -> std::result::Result<Option<&str>, ()> {
    match options {
        None => Ok(None),
        Some(o) => {
            let v = o.strip_prefix("namespaces=").ok_or(())?;
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .ok_or(())?;
            if v.contains('"') {
                return Err(());
            }
            Ok(Some(v))
        }
    }
}

/// Checks `seal` (the value of a `seal` field, if any) by `who` over `payload` in `namespace`
/// against the signers at base. `what` names the verdict or record in messages; `payload` is
/// `None` when a value the seal covers is missing (`covers` says which).
pub fn check(
    seal: Option<&Value>,
    who: &str,
    payload: Option<&str>,
    namespace: &str,
    trust: &Trust,
    what: &str,
    covers: &str,
) -> Attestation {
    let seal = seal.filter(|s| !s.is_null());
    let Some(seal) = seal else {
        return if trust.active {
            Attestation::no(
                Some(false),
                "seal-missing",
                format!("{what} carries no seal"),
                None,
            )
        } else {
            Attestation::no(
                None,
                "seal-missing",
                format!(
                    "{what} carries no seal; there is no signers file at base, so none is needed"
                ),
                None,
            )
        };
    };
    let (Some(signer), Some(signature)) = (
        seal.get("signer").and_then(Value::as_str),
        seal.get("signature").and_then(Value::as_str),
    ) else {
        return Attestation::no(
            Some(false),
            "seal-signature-invalid",
            format!("the seal on {what} is malformed: it needs signer and signature"),
            None,
        );
    };
    if signature.len() > MAX_SIGNATURE {
        return Attestation::no(
            Some(false),
            "seal-signature-invalid",
            format!(
                "the seal on {what} holds a signature of {} bytes, and an ssh signature is a few hundred",
                signature.len()
            ),
            None,
        );
    }
    if principal(signer) != principal(who) {
        return Attestation::no(
            Some(false),
            "seal-signature-invalid",
            format!("the seal on {what} is by {signer}, and {what} is {who}'s"),
            None,
        );
    }
    let Some(payload) = payload else {
        return Attestation::no(
            Some(false),
            "seal-signature-invalid",
            format!("a seal covers {covers}, and {what} lacks one"),
            None,
        );
    };
    if !trust.active {
        return match check_novalidate(namespace, signature, payload) {
            Ok(key) => Attestation::no(
                None,
                "seal-unverifiable",
                format!(
                    "the signature is intact ({key}), and there is no signers file at base to say whose key it is"
                ),
                Some(key),
            ),
            Err(why) if why == "ssh-keygen is not installed here" => {
                Attestation::no(None, "seal-unverifiable", why, None)
            }
            Err(why) => Attestation::no(
                Some(false),
                "seal-signature-invalid",
                format!("the seal on {what} does not verify: {why}"),
                None,
            ),
        };
    }
    // Only lines naming the principal itself (no pattern), with no option but namespaces.
    let me = principal(who);
    let text = String::from_utf8_lossy(trust.signers.as_deref().unwrap_or_default()).into_owned();
    let listed: Vec<String> = signer_lines(&text)
        .into_iter()
        .filter(|l| {
            l.principals
                .iter()
                .any(|p| !p.contains(['*', '?', '!']) && principal(p) == me)
        })
        .filter_map(|l| {
            let ns = namespaces_only(l.options.as_deref()).ok()?;
            Some(match ns {
                Some(ns) => format!("\"{me}\" namespaces=\"{ns}\" {}", l.key),
                None => format!("\"{me}\" {}", l.key),
            })
        })
        .collect();
    if listed.is_empty() {
        return Attestation::no(
            Some(false),
            "seal-signer-unlisted",
            format!(
                "{who} has no key in {} at base, so the seal can't count",
                trust.signers_path
            ),
            None,
        );
    }
    let (Ok(allowed), Ok(sig)) = (temp_with(&(listed.join("\n") + "\n")), temp_with(signature))
    else {
        return Attestation::no(
            None,
            "seal-unverifiable",
            "cannot write the files ssh-keygen reads".into(),
            None,
        );
    };
    let out = run(
        Command::new("ssh-keygen")
            .args(["-Y", "verify", "-f"])
            .arg(allowed.path())
            .args(["-I", &me, "-n", namespace, "-s"])
            .arg(sig.path()),
        payload,
    );
    let Some(out) = out else {
        return Attestation::no(
            None,
            "seal-unverifiable",
            "ssh-keygen is not installed here".into(),
            None,
        );
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        let key = fingerprint(&text);
        Attestation {
            attested: Some(true),
            code: None,
            message: format!(
                "sealed by {who} with {}, a signer {} at base lists",
                key.as_deref().unwrap_or("a listed key"),
                trust.signers_path
            ),
            key,
        }
    } else {
        Attestation::no(
            Some(false),
            "seal-signature-invalid",
            format!(
                "the seal does not verify for {who} against {} at base: the signature does not verify in the {namespace} namespace for a key the policy lists",
                trust.signers_path
            ),
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signers_lines_read_as_ssh_keygen_reads_them() {
        let lines = signer_lines(
            "# comment\nalice@example.com ssh-ed25519 AAAA one\n\"bob,carol\" namespaces=\"chant-review\" ssh-ed25519 BBBB\n*@x.com ssh-ed25519 CCCC\ndan valid-after=\"20250101\" ssh-ed25519 DDDD\n",
        );
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].principals, ["alice@example.com"]);
        assert_eq!(lines[0].key, "ssh-ed25519 AAAA");
        assert_eq!(lines[1].principals, ["bob", "carol"]);
        assert_eq!(
            namespaces_only(lines[1].options.as_deref()),
            Ok(Some("chant-review"))
        );
        assert!(namespaces_only(lines[3].options.as_deref()).is_err());
    }

    #[test]
    fn payloads_are_lines_without_a_final_newline() {
        assert_eq!(
            verdict_payload("ws-1", "d", "agree", "alice", "2026-12-07"),
            "ws-1\nd\nagree\nalice\n2026-12-07"
        );
        assert_eq!(record_payload("ws-1", "d", "lex", None), "ws-1\nd\nlex\n");
    }
}
