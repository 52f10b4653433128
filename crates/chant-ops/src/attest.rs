//! Approvals that can be believed: sealing a resolution with the approver's SSH key, and the
//! policy that, once a project lists its signers, lets only sealed resolutions pass a gate.
//!
//! A seal is an SSH signature (`ssh-keygen -Y sign`, namespace [`NAMESPACE`]) over the
//! resolution's canonical compact JSON without its `signature` member: op, gate, planDigest,
//! resolvedBy, timestamp, origin, note and url are all covered, so none can be edited after the
//! fact. The signers are `.chant/allowed_signers` (ssh-keygen's allowed-signers format) read at
//! base — `origin/HEAD`, else `main`, else `master` — never from the working tree an agent
//! can write. Anything with a shell can append lines to the ledger; only a holder of a listed
//! key can append a line that verifies.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use base64::Engine as _;
use gitledger::Ledger;
use serde_json::{Value as Json, json};

/// The signature namespace: a chant approval signature verifies as nothing else.
pub const NAMESPACE: &str = "chant-approval";
/// Where the signers are listed, at base.
pub const SIGNERS_PATH: &str = ".chant/allowed_signers";
/// The bases the signers file is read at, first found wins.
pub const BASES: [&str; 3] = [
    "refs/remotes/origin/HEAD",
    "refs/heads/main",
    "refs/heads/master",
];

/// The bytes a seal covers: the record's canonical compact JSON without `signature`.
pub fn payload(record: &Json) -> String {
    let mut r = record.clone();
    if let Some(o) = r.as_object_mut() {
        o.shift_remove("signature");
    }
    canon::to_canonical_compact(&r)
}

/// The project's signers, as read at base.
#[derive(Debug)]
pub struct Signers {
    /// The base it was read at (`main`, `origin/HEAD`, …).
    pub base: String,
    /// Each line: its principals, key blob (base64), and whether it is plain (no options such
    /// as `namespaces=`, `valid-before=` or `cert-authority`, which only ssh-keygen judges).
    entries: Vec<Entry>,
    /// The file as read, for ssh-keygen.
    file: tempfile::NamedTempFile,
    /// Verdicts already reached, by the record's canonical text: one decision asks about the
    /// same resolution more than once, and each answer costs an `ssh-keygen`.
    seen: std::cell::RefCell<std::collections::HashMap<String, Attestation>>,
}

impl Signers {
    /// `.chant/allowed_signers` at the first base that has it, or `None` (no policy).
    pub fn at_base(ledger: &Ledger) -> Result<Option<Signers>, String> {
        let found = ledger
            .read_first(&BASES, SIGNERS_PATH)
            .map_err(|e| format!("cannot read {SIGNERS_PATH} at base: {e}"))?;
        let Some((rev, bytes)) = found else {
            return Ok(None);
        };
        Signers::parse(short(&rev), &bytes).map(Some)
    }

    /// Signers from the bytes of an allowed-signers file.
    pub fn parse(base: &str, bytes: &[u8]) -> Result<Signers, String> {
        let text = String::from_utf8_lossy(bytes);
        let mut entries = Vec::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let tokens: Vec<&str> = line.split_whitespace().collect();
            let Some(i) = tokens.iter().position(|t| is_key_type(t)) else {
                continue;
            };
            if let (Some(principals), Some(key)) = (tokens.first(), tokens.get(i + 1)) {
                entries.push(Entry {
                    principals: (*principals).to_owned(),
                    key: (*key).to_owned(),
                    plain: i == 1 && tokens[i] == "ssh-ed25519",
                });
            }
        }
        let mut file = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
        file.write_all(bytes).map_err(|e| e.to_string())?;
        Ok(Signers {
            base: base.to_owned(),
            entries,
            file,
            seen: Default::default(),
        })
    }

    /// Whether `record` carries a seal that verifies against these signers, and whose.
    pub fn check(&self, record: &Json) -> Attestation {
        let key = canon::to_canonical_compact(record);
        if let Some(a) = self.seen.borrow().get(&key) {
            return a.clone();
        }
        let verdict = self.check_uncached(record);
        self.seen.borrow_mut().insert(key, verdict.clone());
        verdict
    }

    fn check_uncached(&self, record: &Json) -> Attestation {
        let unattested = |reason: String| Attestation::Unattested { reason };
        let Some(armored) = record
            .get("signature")
            .and_then(|s| s.get("signature"))
            .and_then(Json::as_str)
        else {
            return unattested("unsigned".into());
        };
        let Some(key) = signing_key(armored) else {
            return unattested("the signature is not an SSH signature".into());
        };
        let Some(entry) = self.entries.iter().find(|e| e.key == key) else {
            return unattested(format!(
                "signed by a key not listed in {SIGNERS_PATH} at {}",
                self.base
            ));
        };
        let principals = &entry.principals;
        // A pattern (`*@example.com`) is matched by ssh-keygen against the approver's name.
        let pattern = principals.contains(['*', '?', '!']);
        let identity = if pattern {
            record["resolvedBy"].as_str().unwrap_or_default().to_owned()
        } else {
            principals.split(',').next().unwrap_or_default().to_owned()
        };
        // A plain ed25519 line is verified here (no process); anything ssh-keygen has more
        // rules for (options, patterns, other key types) is left to ssh-keygen.
        let checked = if entry.plain && !pattern {
            verify_ed25519(armored, &payload(record))
        } else {
            verify(self.file.path(), &identity, armored, &payload(record))
        };
        match checked {
            Ok(()) => Attestation::Attested {
                principal: identity,
            },
            Err(e) => unattested(format!(
                "the signature does not verify against {SIGNERS_PATH} at {}: {e}",
                self.base
            )),
        }
    }
}

/// One line of an allowed-signers file.
#[derive(Debug)]
struct Entry {
    principals: String,
    key: String,
    plain: bool,
}

/// Reads an SSH wire `string` (uint32 length, bytes) off the front of `b`.
fn take<'b>(b: &mut &'b [u8]) -> Option<&'b [u8]> {
    let len = u32::from_be_bytes(b.get(..4)?.try_into().ok()?) as usize;
    let s = b.get(4..4 + len)?;
    *b = &b[4 + len..];
    Some(s)
}

/// Verifies an armored SSHSIG (PROTOCOL.sshsig) made by an ed25519 key over `message` in
/// [`NAMESPACE`], in process: the same answer `ssh-keygen -Y verify` gives for a plain
/// allowed-signers line, without its ~10 ms process. Hand-parsed because the format is five
/// wire strings and a crate for it would bring RSA and ECDSA along.
fn verify_ed25519(armored: &str, message: &str) -> Result<(), String> {
    use ed25519_dalek::{Signature, VerifyingKey};
    use sha2::Digest as _;
    let bad = |what: &str| Err(format!("the signature is malformed: {what}"));
    // As ssh-keygen reads it: armored, version 1, an empty reserved field, nothing after the
    // last field (of the signature or of the blobs inside it).
    let raw = match dearmor(armored) {
        Ok(raw) => raw,
        Err(what) => return bad(what),
    };
    let Some(mut b) = raw.strip_prefix(b"SSHSIG") else {
        return bad("no SSHSIG preamble");
    };
    if b.get(..4) != Some(&[0, 0, 0, 1]) {
        return bad("not version 1");
    }
    b = &b[4..];
    let (Some(mut key), Some(namespace), Some(reserved), Some(hash), Some(mut sig)) = (
        take(&mut b),
        take(&mut b),
        take(&mut b),
        take(&mut b),
        take(&mut b),
    ) else {
        return bad("truncated");
    };
    if !b.is_empty() {
        return bad("trailing data");
    }
    if !reserved.is_empty() {
        return bad("a reserved field that is not empty");
    }
    if namespace != NAMESPACE.as_bytes() {
        return Err(format!(
            "made for namespace {:?}, not {NAMESPACE}",
            String::from_utf8_lossy(namespace)
        ));
    }
    let digest = match hash {
        b"sha512" => sha2::Sha512::digest(message.as_bytes()).to_vec(),
        b"sha256" => sha2::Sha256::digest(message.as_bytes()).to_vec(),
        _ => return bad("unknown hash algorithm"),
    };
    let (Some(b"ssh-ed25519"), Some(pk), true) = (
        take(&mut key).map(|k| k as &[u8]),
        take(&mut key),
        key.is_empty(),
    ) else {
        return bad("not an ed25519 key");
    };
    let (Some(b"ssh-ed25519"), Some(sig_bytes), true) = (
        take(&mut sig).map(|k| k as &[u8]),
        take(&mut sig),
        sig.is_empty(),
    ) else {
        return bad("not an ed25519 signature");
    };
    let (Ok(pk), Ok(sig_bytes)) = (<[u8; 32]>::try_from(pk), <[u8; 64]>::try_from(sig_bytes))
    else {
        return bad("wrong key or signature length");
    };
    let Ok(key) = VerifyingKey::from_bytes(&pk) else {
        return bad("not a valid ed25519 key");
    };
    let wire = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend_from_slice(&(s.len() as u32).to_be_bytes());
        out.extend_from_slice(s);
    };
    let mut signed = b"SSHSIG".to_vec();
    wire(&mut signed, namespace);
    wire(&mut signed, reserved);
    wire(&mut signed, hash);
    wire(&mut signed, &digest);
    key.verify_strict(&signed, &Signature::from_bytes(&sig_bytes))
        .map_err(|_| "Signature verification failed".to_owned())
}

fn short(rev: &str) -> &str {
    rev.strip_prefix("refs/remotes/")
        .or_else(|| rev.strip_prefix("refs/heads/"))
        .unwrap_or(rev)
}

fn is_key_type(t: &str) -> bool {
    t.starts_with("ssh-") || t.starts_with("ecdsa-sha2-") || t.starts_with("sk-")
}

/// The bytes of an armored SSH signature, read as ssh-keygen reads it (BEGIN and END lines
/// around base64), or why it is not one.
fn dearmor(armored: &str) -> Result<Vec<u8>, &'static str> {
    let text = armored.trim();
    let (Some(body), true) = (
        text.strip_prefix("-----BEGIN SSH SIGNATURE-----")
            .and_then(|t| t.strip_suffix("-----END SSH SIGNATURE-----")),
        text.lines().count() >= 3,
    ) else {
        return Err("not an armored SSH signature");
    };
    let body: String = body.lines().map(str::trim).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| "not base64")
}

/// The base64 public key blob an armored SSHSIG was made with (`None`: not one).
fn signing_key(armored: &str) -> Option<String> {
    let raw = dearmor(armored).ok()?;
    // "SSHSIG", uint32 version, string publickey, …
    let mut rest = raw.strip_prefix(b"SSHSIG")?.get(4..)?;
    let blob = take(&mut rest)?;
    Some(base64::engine::general_purpose::STANDARD.encode(blob))
}

/// The system's ssh-keygen, by absolute path: a verdict must not come from whatever program
/// named ssh-keygen is first on a `PATH` the agent may have set.
const SSH_KEYGENS: [&str; 5] = [
    "/usr/bin/ssh-keygen",
    "/bin/ssh-keygen",
    "/usr/local/bin/ssh-keygen",
    "/opt/homebrew/bin/ssh-keygen",
    "/run/current-system/sw/bin/ssh-keygen",
];

/// Runs `cmd` with `input` on its stdin; `why` names it when it cannot start.
fn run_with_input(
    cmd: &mut Command,
    input: &str,
    why: &str,
) -> Result<std::process::Output, String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{why}: {e}"))?;
    // Written from a thread of its own with SIGPIPE blocked: `chant` restores SIGPIPE's
    // default (a closed `| head` ends it quietly), so an ssh-keygen that exits before reading
    // (a key that is not there, a bad signers file) would kill chant with no word. A write it
    // did not read is left to its exit status and stderr to explain. (axc-kernel's
    // `process::block_sigpipe` is the same for agentxchain; the two products share no
    // process crate.)
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        // SAFETY: a signal set built with the libc calls and applied to this thread only.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().map_err(|e| e.to_string());
    let _ = writer.join();
    out
}

fn verify(signers: &Path, identity: &str, armored: &str, payload: &str) -> Result<(), String> {
    let Some(keygen) = SSH_KEYGENS.iter().find(|p| Path::new(p).is_file()) else {
        return Err(format!(
            "no ssh-keygen at {} to verify it with",
            SSH_KEYGENS.join(", ")
        ));
    };
    let mut sig = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    sig.write_all(armored.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = run_with_input(
        Command::new(keygen)
            .args(["-Y", "verify", "-n", NAMESPACE, "-I", identity, "-f"])
            .arg(signers)
            .arg("-s")
            .arg(sig.path()),
        payload,
        "cannot run ssh-keygen",
    )?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// The digest a resolution names in `answers`: `sha256:` and the hex SHA-256 of the pending
/// fact's canonical compact JSON.
pub fn answers(pending: &Json) -> String {
    format!(
        "sha256:{}",
        canon::sha256_hex(canon::to_canonical_compact(pending).as_bytes())
    )
}

/// Whether `resolution` is believed as the answer to `pending`: always without signers;
/// with them, only when its seal verifies and it names that pending fact in `answers`.
pub fn judge(signers: Option<&Signers>, pending: &Json, resolution: &Json) -> Attestation {
    let Some(signers) = signers else {
        return Attestation::Attested {
            principal: String::new(),
        };
    };
    match signers.check(resolution) {
        Attestation::Attested { .. }
            if resolution.get("answers").and_then(Json::as_str)
                != Some(answers(pending).as_str()) =>
        {
            Attestation::Unattested {
                reason:
                    "its seal answers another pending fact (an approval copied from another run)"
                        .into(),
            }
        }
        verdict => verdict,
    }
}

/// Whether a resolution is believed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attestation {
    /// Sealed by a key listed for `principal`.
    Attested { principal: String },
    /// Not sealed, or the seal does not verify; `reason` says which.
    Unattested { reason: String },
}

impl Attestation {
    pub fn attested(&self) -> bool {
        matches!(self, Attestation::Attested { .. })
    }
}

/// What an output says about a resolution: `attested` always, `signedBy` when it verifies,
/// `signed` whether it carries a seal at all (true but not attested: a seal that does not
/// verify, or no signers file to verify it against).
pub fn describe(record: &Json, signers: Option<&Signers>) -> Json {
    let signed = record.get("signature").is_some();
    match signers.map(|s| s.check(record)) {
        Some(Attestation::Attested { principal }) => {
            json!({"attested": true, "signed": true, "signedBy": principal})
        }
        Some(Attestation::Unattested { reason }) => {
            json!({"attested": false, "signed": signed, "unattested": reason})
        }
        None => json!({"attested": false, "signed": signed}),
    }
}

/// Seals `payload` with git's signing key (`gpg.format ssh`, `user.signingkey`), as
/// `git commit -S` would: the armored signature, or the refusal with its remedy.
pub fn seal(repo_root: &Path, payload: &str) -> Result<Json, String> {
    let config = |key: &str| {
        Command::new("git")
            .arg("-C")
            .arg(repo_root)
            .args(["config", "--get", key])
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let remedy = "set one with `git config gpg.format ssh` and `git config user.signingkey ~/.ssh/id_ed25519.pub` (a key file, or `key::ssh-ed25519 …` with the private key in ssh-agent), and list its public key for your name in .chant/allowed_signers on main";
    if config("gpg.format").as_deref() != Some("ssh") {
        return Err(format!(
            "--sign seals the approval with git's SSH signing key, and gpg.format is not ssh: {remedy}"
        ));
    }
    let Some(key) = config("user.signingkey") else {
        return Err(format!(
            "--sign seals the approval with git's SSH signing key, and user.signingkey is not set: {remedy}"
        ));
    };
    let literal;
    let mut cmd = Command::new("ssh-keygen");
    cmd.args(["-Y", "sign", "-n", NAMESPACE, "-q"]);
    if let Some(k) = key.strip_prefix("key::") {
        let mut f = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
        f.write_all(k.as_bytes()).map_err(|e| e.to_string())?;
        cmd.arg("-U").arg("-f").arg(f.path());
        literal = Some(f);
    } else {
        let path = match key.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|h| Path::new(&h).join(rest))
                .unwrap_or_else(|| key.clone().into()),
            None => key.clone().into(),
        };
        cmd.arg("-f").arg(path);
        literal = None;
    }
    let out = run_with_input(
        &mut cmd,
        payload,
        "--sign needs ssh-keygen, which could not run",
    )?;
    drop(literal);
    let armored = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !armored.contains("BEGIN SSH SIGNATURE") {
        return Err(format!(
            "--sign could not sign with user.signingkey ({key}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(json!({"format": "ssh", "namespace": NAMESPACE, "signature": armored}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keypair(dir: &Path, name: &str) -> (std::path::PathBuf, String) {
        keypair_of(dir, name, "ed25519")
    }

    fn keypair_of(dir: &Path, name: &str, kind: &str) -> (std::path::PathBuf, String) {
        let key = dir.join(name);
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-t", kind, "-N", "", "-C", name, "-f"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(ok.success());
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        let mut parts = public.split_whitespace();
        (
            key,
            format!("{} {}", parts.next().unwrap(), parts.next().unwrap()),
        )
    }

    fn sign_with(key: &Path, payload: &str) -> String {
        let mut child = Command::new("ssh-keygen")
            .args(["-Y", "sign", "-q", "-n", NAMESPACE, "-f"])
            .arg(key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    }

    #[test]
    fn seal_signs_with_the_repositorys_ssh_key_and_refuses_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| {
            assert!(
                Command::new("git")
                    .arg("-C")
                    .arg(&repo)
                    .args(args)
                    .status()
                    .unwrap()
                    .success()
            );
        };
        git(&["init", "-q"]);
        let (key, _) = keypair(dir.path(), "sam");
        // Not the ssh format: refused with the remedy (set here, whatever the user's own
        // settings say).
        git(&["config", "gpg.format", "openpgp"]);
        let e = seal(&repo, "payload").unwrap_err();
        assert!(e.contains("gpg.format is not ssh"), "{e}");
        git(&["config", "gpg.format", "ssh"]);
        // An empty setting is no key.
        git(&["config", "user.signingkey", ""]);
        assert!(
            seal(&repo, "payload")
                .unwrap_err()
                .contains("user.signingkey is not set")
        );
        // A key that is not there: ssh-keygen fails, and the refusal says with which key.
        git(&[
            "config",
            "user.signingkey",
            &dir.path().join("absent").display().to_string(),
        ]);
        let e = seal(&repo, "payload").unwrap_err();
        assert!(e.contains("could not sign with user.signingkey"), "{e}");
        // The key: an armored signature in the namespace.
        git(&["config", "user.signingkey", &key.display().to_string()]);
        let sealed = seal(&repo, "payload").unwrap();
        assert_eq!(sealed["format"], "ssh");
        assert_eq!(sealed["namespace"], NAMESPACE);
        assert!(
            sealed["signature"]
                .as_str()
                .unwrap()
                .contains("BEGIN SSH SIGNATURE")
        );
    }

    #[test]
    fn only_a_listed_key_over_the_unedited_record_is_attested() {
        let dir = tempfile::tempdir().unwrap();
        let (sam, sam_pub) = keypair(dir.path(), "sam");
        let (eve, _) = keypair(dir.path(), "eve");
        let signers = Signers::parse(
            "main",
            format!("# team\nsam@example.com namespaces=\"chant-approval\" {sam_pub}\n").as_bytes(),
        )
        .unwrap();
        let mut record = json!({"version": 1, "kind": "resolution", "op": "o", "gate": "g",
            "resolvedBy": "sam", "timestamp": "2026-11-29T00:00:00.000Z", "origin": "cli",
            "planDigest": format!("sha256:{}", "a".repeat(64))});
        assert_eq!(
            signers.check(&record),
            Attestation::Unattested {
                reason: "unsigned".into()
            }
        );
        record["signature"] = json!({"format": "ssh", "namespace": NAMESPACE, "signature": sign_with(&sam, &payload(&record))});
        assert_eq!(
            signers.check(&record),
            Attestation::Attested {
                principal: "sam@example.com".into()
            }
        );
        // Any edit after sealing breaks it: another plan, another name, another time.
        for (k, v) in [
            ("planDigest", json!(format!("sha256:{}", "b".repeat(64)))),
            ("resolvedBy", json!("alex")),
            ("timestamp", json!("2026-11-30T00:00:00.000Z")),
        ] {
            let mut edited = record.clone();
            edited[k] = v;
            match signers.check(&edited) {
                Attestation::Unattested { reason } => {
                    assert!(
                        reason.starts_with(
                            "the signature does not verify against .chant/allowed_signers at main"
                        ),
                        "{reason}"
                    )
                }
                other => panic!("{k}: {other:?}"),
            }
        }
        // A key nobody listed.
        let mut forged = record.clone();
        forged["signature"]["signature"] = json!(sign_with(&eve, &payload(&record)));
        assert_eq!(
            signers.check(&forged),
            Attestation::Unattested {
                reason: "signed by a key not listed in .chant/allowed_signers at main".into()
            }
        );
        forged["signature"]["signature"] =
            json!("-----BEGIN SSH SIGNATURE-----\nnot base64!\n-----END SSH SIGNATURE-----");
        assert!(!signers.check(&forged).attested());
        assert_eq!(
            describe(&record, Some(&signers)),
            json!({"attested": true, "signed": true, "signedBy": "sam@example.com"})
        );
        assert_eq!(
            describe(&record, None),
            json!({"attested": false, "signed": true})
        );
    }

    #[test]
    fn a_commented_out_key_signs_nothing_and_other_key_types_go_to_ssh_keygen() {
        let dir = tempfile::tempdir().unwrap();
        let (sam, sam_pub) = keypair(dir.path(), "sam");
        let (ann, ann_pub) = keypair_of(dir.path(), "ann", "ecdsa");
        let signers = Signers::parse(
            "main",
            format!("#sam@example.com {sam_pub}\n\nann@example.com {ann_pub}\n").as_bytes(),
        )
        .unwrap();
        let mut record = json!({"op": "o", "resolvedBy": "sam"});
        record["signature"] = json!({"signature": sign_with(&sam, &payload(&record))});
        assert!(
            !signers.check(&record).attested(),
            "a key listed only in a comment is not listed"
        );
        // An ECDSA line is verified by ssh-keygen (the in-process check knows ed25519 only).
        let mut record = json!({"op": "o", "resolvedBy": "ann"});
        record["signature"] = json!({"signature": sign_with(&ann, &payload(&record))});
        assert_eq!(
            signers.check(&record),
            Attestation::Attested {
                principal: "ann@example.com".into()
            }
        );
    }

    #[test]
    fn a_pattern_principal_must_match_the_approver_and_sha256_seals_verify() {
        let dir = tempfile::tempdir().unwrap();
        let (sam, sam_pub) = keypair(dir.path(), "sam");
        let signers =
            Signers::parse("main", format!("*@example.com {sam_pub}\n").as_bytes()).unwrap();
        let sealed = |who: &str| {
            let mut r = json!({"op": "o", "resolvedBy": who});
            r["signature"] = json!({"signature": sign_with(&sam, &payload(&r))});
            r
        };
        assert_eq!(
            signers.check(&sealed("sam@example.com")),
            Attestation::Attested {
                principal: "sam@example.com".into()
            }
        );
        assert!(
            !signers.check(&sealed("mallory")).attested(),
            "the pattern names who may approve with that key"
        );
        // A seal made with SHA-256 (ssh-keygen -O hashalg=sha256) verifies in process too.
        let message = "m";
        let mut child = Command::new("ssh-keygen")
            .args([
                "-Y",
                "sign",
                "-q",
                "-n",
                NAMESPACE,
                "-O",
                "hashalg=sha256",
                "-f",
            ])
            .arg(&sam)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(message.as_bytes())
            .unwrap();
        let sig = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        assert_eq!(verify_ed25519(&sig, message), Ok(()));
        assert!(verify_ed25519(&sig, "n").is_err());
    }

    #[test]
    fn a_seal_counts_only_for_the_pending_fact_it_answers() {
        let dir = tempfile::tempdir().unwrap();
        let (sam, sam_pub) = keypair(dir.path(), "sam");
        let signers =
            Signers::parse("main", format!("sam@example.com {sam_pub}\n").as_bytes()).unwrap();
        let pending = json!({"kind": "pending", "op": "o", "gate": "g", "timestamp": "t"});
        let other = json!({"kind": "pending", "op": "o", "gate": "g", "timestamp": "u"});
        assert_eq!(
            answers(&pending),
            format!(
                "sha256:{}",
                canon::sha256_hex(canon::to_canonical_compact(&pending).as_bytes())
            )
        );
        assert_ne!(answers(&pending), answers(&other));
        let mut r = json!({"op": "o", "resolvedBy": "sam", "answers": answers(&pending)});
        r["signature"] = json!({"signature": sign_with(&sam, &payload(&r))});
        assert_eq!(
            judge(Some(&signers), &pending, &r),
            Attestation::Attested {
                principal: "sam@example.com".into()
            }
        );
        assert!(!judge(Some(&signers), &other, &r).attested());
        assert!(
            judge(None, &other, &r).attested(),
            "without signers every approval counts"
        );
    }

    #[test]
    fn signers_are_read_at_base_never_from_the_working_tree() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}");
        };
        git(&["init", "-q", "-b", "work"]);
        std::fs::create_dir_all(dir.path().join(".chant")).unwrap();
        std::fs::write(dir.path().join(SIGNERS_PATH), "a@x ssh-ed25519 AAAA\n").unwrap();
        let ledger = Ledger::open(dir.path()).unwrap();
        assert!(
            Signers::at_base(&ledger).unwrap().is_none(),
            "the working tree is not a base"
        );
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "signers"]);
        assert!(
            Signers::at_base(&ledger).unwrap().is_none(),
            "nor is another branch"
        );
        git(&["branch", "master"]);
        assert_eq!(Signers::at_base(&ledger).unwrap().unwrap().base, "master");
        git(&["branch", "main"]);
        let s = Signers::at_base(&ledger).unwrap().unwrap();
        assert_eq!(s.base, "main");
        assert_eq!(s.entries.len(), 1);
        git(&["update-ref", "refs/remotes/origin/HEAD", "main"]);
        assert_eq!(
            Signers::at_base(&ledger).unwrap().unwrap().base,
            "origin/HEAD"
        );
    }

    #[test]
    fn the_in_process_check_agrees_with_ssh_keygen() {
        let dir = tempfile::tempdir().unwrap();
        let (sam, sam_pub) = keypair(dir.path(), "sam");
        let message = r#"{"gate":"g","op":"o"}"#;
        let good = sign_with(&sam, message);
        let file = dir.path().join("allowed");
        std::fs::write(&file, format!("sam@example.com {sam_pub}\n")).unwrap();
        for (armored, msg) in [
            (good.clone(), message),
            (good.clone(), r#"{"gate":"g","op":"other"}"#),
            (good.replace('A', "B"), message),
        ] {
            let ours = verify_ed25519(&armored, msg).is_ok();
            let theirs = verify(&file, "sam@example.com", &armored, msg).is_ok();
            assert_eq!(ours, theirs, "{msg}");
        }
        assert!(verify_ed25519(&good, message).is_ok());
        // What ssh-keygen refuses is refused here too: trailing data, a missing armor.
        let body: String = good.lines().filter(|l| !l.starts_with("-----")).collect();
        let mut raw = base64::engine::general_purpose::STANDARD
            .decode(&body)
            .unwrap();
        raw.extend_from_slice(b"TRAILING");
        let trailing = format!(
            "-----BEGIN SSH SIGNATURE-----\n{}\n-----END SSH SIGNATURE-----\n",
            base64::engine::general_purpose::STANDARD.encode(&raw)
        );
        assert_eq!(
            verify_ed25519(&trailing, message),
            Err("the signature is malformed: trailing data".into())
        );
        assert!(verify(&file, "sam@example.com", &trailing, message).is_err());
        assert_eq!(
            verify_ed25519(&body, message),
            Err("the signature is malformed: not an armored SSH signature".into())
        );
        // Another namespace: a git commit signature is not an approval.
        let mut child = Command::new("ssh-keygen")
            .args(["-Y", "sign", "-q", "-n", "git", "-f"])
            .arg(&sam)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(message.as_bytes())
            .unwrap();
        let git_sig = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        assert_eq!(
            verify_ed25519(&git_sig, message),
            Err("made for namespace \"git\", not chant-approval".into())
        );
        // A line with options goes to ssh-keygen, which applies them.
        let s = Signers::parse(
            "main",
            format!("sam@example.com namespaces=\"git\" {sam_pub}\n").as_bytes(),
        )
        .unwrap();
        let mut record = json!({"op": "o"});
        record["signature"] = json!({"signature": sign_with(&sam, &payload(&record))});
        assert!(
            !s.check(&record).attested(),
            "namespaces=git excludes approvals"
        );
    }
}
