//! Atomic file writes, for every product in the workspace: the bytes go to a fresh temporary
//! file in the target's directory (created if missing), are synced, take the permissions of the
//! file they replace (a new file gets `0666` less the umask, as `File::create` gives), and are
//! renamed over the target; the directory is synced after. A crash at any point leaves either
//! the old file or the new one. It knows nothing of what the files hold or where they may be:
//! callers resolve paths through their walls first.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Before the umask, as a file `File::create` made would have.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename itself is durable once the directory is; a failure here loses nothing.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_keeps_permissions_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sub/a.json");
        write_atomic(&f, b"one").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"one");
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
        assert_ne!(mode, 0o600, "a new file is not private: {mode:o}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.json"]);
    }

    #[test]
    fn a_write_that_fails_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a");
        write_atomic(&f, b"old").unwrap();
        // A directory cannot be replaced by a file: the rename fails after the write.
        let d = dir.path().join("d");
        std::fs::create_dir_all(d.join("x")).unwrap();
        assert!(write_atomic(&d, b"new").is_err());
        assert!(d.is_dir());
        assert_eq!(std::fs::read(&f).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
