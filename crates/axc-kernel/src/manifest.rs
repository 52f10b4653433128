//! Dispatch bundles' `MANIFEST.json`: the SHA-256 digest and size of every file a turn's bundle
//! (`.agentxchain/dispatch/turns/<turn>/`) holds, sealed once the bundle is complete and
//! verified before an adapter consumes it.
//!
//! Unlike the reference, only regular files count (a symbolic link in a bundle is reported as
//! unexpected, never followed), and a manifest entry that names anything but a file directly
//! in the bundle makes the manifest invalid — verification never reads outside the bundle.

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

pub const MANIFEST: &str = "MANIFEST.json";
const VERSION: &str = "1.0";

/// A turn's bundle directory under `root`, when `turn_id` is one path segment.
pub fn bundle_dir(root: &Path, turn_id: &str) -> Option<PathBuf> {
    let plain = !turn_id.is_empty()
        && turn_id != "."
        && turn_id != ".."
        && !turn_id.contains(['/', '\\', '\0']);
    plain.then(|| root.join(".agentxchain/dispatch/turns").join(turn_id))
}

/// The bundle's regular files other than the manifest, by name (symbolic links apart).
fn scan(dir: &Path) -> std::io::Result<(Vec<String>, Vec<String>)> {
    let (mut files, mut links) = (Vec::new(), Vec::new());
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        if name == MANIFEST {
            continue;
        }
        let ty = e.file_type()?;
        if ty.is_file() {
            files.push(name);
        } else if ty.is_symlink() {
            links.push(name);
        }
    }
    files.sort();
    links.sort();
    Ok((files, links))
}

/// The bundle's file `name`, read as every project file is (`fsread`): a FIFO, a device or a
/// link out of the bundle in its place is refused, never waited on or read; at most 256 MiB.
fn read_in(dir: &Path, name: &str) -> Result<Vec<u8>, fsread::ReadError> {
    fsread::read_inside(dir, Path::new(name), 256 << 20)
}

/// Seals the bundle: writes `MANIFEST.json` (written whole to a temporary file, then renamed)
/// listing every file with its digest and size. The number of files, or why not.
pub fn finalize(root: &Path, turn_id: &str, run_id: &str, role: &str) -> Result<usize, String> {
    let dir = bundle_dir(root, turn_id)
        .ok_or_else(|| format!("turn id \"{turn_id}\" is not one path segment"))?;
    if !dir.is_dir() {
        return Err("Bundle directory does not exist".to_owned());
    }
    let (names, _) = scan(&dir).map_err(|e| e.to_string())?;
    if names.is_empty() {
        return Err("Bundle directory is empty — no files to manifest".to_owned());
    }
    let mut files = Vec::new();
    for n in &names {
        let bytes = read_in(&dir, n).map_err(|e| format!("{n}: {e}"))?;
        files.push(json!({"path": n, "sha256": canon::sha256_hex(&bytes), "size": bytes.len()}));
    }
    let manifest = json!({
        "manifest_version": VERSION,
        "run_id": run_id,
        "turn_id": turn_id,
        "role": role,
        "finalized_at": humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
        "files": files,
    });
    let tmp = dir.join(format!(".{MANIFEST}.tmp"));
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&tmp, text).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, dir.join(MANIFEST)).map_err(|e| e.to_string())?;
    Ok(names.len())
}

fn problem(kind: &str, path: Option<&str>, detail: String) -> Json {
    let mut e = json!({"type": kind, "detail": detail});
    if let Some(p) = path {
        e["path"] = json!(p);
    }
    e
}

/// What verifying a bundle found: the manifest (when it could be read) and every problem
/// (`missing_manifest`, `invalid_manifest`, `missing_file`, `size_mismatch`,
/// `digest_mismatch`, `unexpected_file`); no problems means the bundle is as sealed.
pub struct Verification {
    pub manifest: Option<Json>,
    pub errors: Vec<Json>,
}

/// Checks the bundle of `turn_id` against its manifest.
pub fn verify(root: &Path, turn_id: &str) -> Verification {
    let fail = |errors: Vec<Json>| Verification {
        manifest: None,
        errors,
    };
    let Some(dir) = bundle_dir(root, turn_id) else {
        return fail(vec![problem(
            "invalid_manifest",
            None,
            format!("turn id \"{turn_id}\" is not one path segment"),
        )]);
    };
    let text = match read_in(&dir, MANIFEST) {
        Ok(t) => t,
        Err(e) if e.is_missing() => {
            return fail(vec![problem(
                "missing_manifest",
                None,
                "MANIFEST.json does not exist in bundle directory".to_owned(),
            )]);
        }
        Err(e) => {
            return fail(vec![problem(
                "invalid_manifest",
                None,
                format!("MANIFEST.json cannot be read: {e}"),
            )]);
        }
    };
    let manifest: Json = match serde_json::from_slice(&text) {
        Ok(m) => m,
        Err(e) => {
            return fail(vec![problem(
                "invalid_manifest",
                None,
                format!("MANIFEST.json is malformed: {e}"),
            )]);
        }
    };
    let version_ok = match &manifest["manifest_version"] {
        Json::String(s) => !s.is_empty(),
        Json::Null | Json::Bool(false) => false,
        Json::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    };
    let Some(entries) = manifest["files"].as_array().filter(|_| version_ok) else {
        return fail(vec![problem(
            "invalid_manifest",
            None,
            "MANIFEST.json missing required fields (manifest_version, files)".to_owned(),
        )]);
    };
    let mut errors = Vec::new();
    let mut declared = std::collections::HashSet::new();
    for entry in entries {
        let Some(path) = entry["path"]
            .as_str()
            .filter(|p| !p.is_empty() && !p.contains(['/', '\\', '\0']) && *p != "." && *p != "..")
        else {
            errors.push(problem(
                "invalid_manifest",
                None,
                format!("manifest entry {entry} does not name a file in the bundle"),
            ));
            continue;
        };
        declared.insert(path.to_owned());
        let file = dir.join(path);
        let regular = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file());
        if !regular {
            errors.push(problem(
                "missing_file",
                Some(path),
                format!("Declared file \"{path}\" is missing from bundle"),
            ));
            continue;
        }
        let bytes = match read_in(&dir, path) {
            Ok(b) => b,
            Err(e) => {
                errors.push(problem(
                    "missing_file",
                    Some(path),
                    format!("Declared file \"{path}\" cannot be read: {e}"),
                ));
                continue;
            }
        };
        if entry["size"].as_u64() != Some(bytes.len() as u64) {
            errors.push(problem(
                "size_mismatch",
                Some(path),
                format!(
                    "\"{path}\" size mismatch: manifest={}, actual={}",
                    entry["size"],
                    bytes.len()
                ),
            ));
        }
        let digest = canon::sha256_hex(&bytes);
        if entry["sha256"].as_str() != Some(digest.as_str()) {
            errors.push(problem(
                "digest_mismatch",
                Some(path),
                format!(
                    "\"{path}\" SHA-256 mismatch: manifest={}, actual={digest}",
                    entry["sha256"].as_str().unwrap_or("none")
                ),
            ));
        }
    }
    match scan(&dir) {
        Ok((files, links)) => {
            for f in files.iter().filter(|f| !declared.contains(*f)) {
                errors.push(problem(
                    "unexpected_file",
                    Some(f),
                    format!("Unexpected file \"{f}\" not declared in manifest"),
                ));
            }
            for l in &links {
                errors.push(problem(
                    "unexpected_file",
                    Some(l),
                    format!("\"{l}\" is a symbolic link; a bundle holds only files"),
                ));
            }
        }
        Err(e) => errors.push(problem(
            "invalid_manifest",
            None,
            format!("the bundle cannot be listed: {e}"),
        )),
    }
    Verification {
        manifest: Some(manifest),
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_bundle_verifies_and_every_change_is_named() {
        let root = tempfile::tempdir().unwrap();
        let dir = bundle_dir(root.path(), "turn_1").unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(
            finalize(root.path(), "turn_1", "run_1", "dev").unwrap_err(),
            "Bundle directory is empty — no files to manifest"
        );
        std::fs::write(dir.join("PROMPT.md"), "p").unwrap();
        std::fs::write(dir.join("CONTEXT.md"), "c").unwrap();
        assert_eq!(finalize(root.path(), "turn_1", "run_1", "dev"), Ok(2));
        let v = verify(root.path(), "turn_1");
        assert!(v.errors.is_empty(), "{:?}", v.errors);
        assert_eq!(v.manifest.unwrap()["files"][0]["path"], "CONTEXT.md");
        std::fs::write(dir.join("PROMPT.md"), "changed").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).unwrap();
        let kinds: Vec<String> = verify(root.path(), "turn_1")
            .errors
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            kinds,
            ["size_mismatch", "digest_mismatch", "unexpected_file"]
        );
        // An entry naming a path outside the bundle makes the manifest invalid, unread.
        let mut m: Json =
            serde_json::from_slice(&std::fs::read(dir.join(MANIFEST)).unwrap()).unwrap();
        m["files"][0]["path"] = json!("../../../../etc/passwd");
        std::fs::write(dir.join(MANIFEST), m.to_string()).unwrap();
        assert_eq!(
            verify(root.path(), "turn_1").errors[0]["type"],
            "invalid_manifest"
        );
        assert!(bundle_dir(root.path(), "../x").is_none());
    }
}
