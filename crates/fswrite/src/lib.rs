//! Atomic file writes, for every product in the workspace: the bytes go to a fresh temporary
//! file in the target's directory (created if missing), are synced, take the permission bits of
//! the regular file they replace (not setuid, setgid or sticky; a new file, or one replacing a
//! link, gets `0666` less the umask, as `File::create` gives), and are renamed over the target
//! (a link there is replaced, never followed); the directory is synced after. A crash at any point leaves either
//! the old file or the new one. It knows nothing of what the files hold or where they may be:
//! callers resolve paths through their walls first.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, true, false)
}

/// [`write_atomic`], with the temporary file made in `staging` (created if missing) and renamed
/// from there: for a target whose own directory must not show a stray file if the writer is
/// killed mid-write (a project's root, where one would read as the user's own work). When
/// `staging` is on another filesystem the rename cannot cross, the write falls back to the
/// target's directory.
pub fn write_atomic_staged(path: &Path, bytes: &[u8], staging: &Path) -> std::io::Result<()> {
    match write_in(path, bytes, true, false, Some(staging)) {
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => write_atomic(path, bytes),
        r => r,
    }
}

/// Writes `bytes` to a new file at `path`, atomically and durably, never over a file (or link)
/// that is there, even one that appears while this runs: `AlreadyExists` then, and the file
/// there is left as it is.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, true, true)
}

/// Writes `bytes` to `path` atomically for readers (they see the old file or the new one,
/// never a part) without waiting for the disk: for files that can be made again from others
/// (caches, bundles, indexes), where a power loss may keep the old file but each sync costs
/// milliseconds.
pub fn write_replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, false, false)
}

fn write(path: &Path, bytes: &[u8], durable: bool, new: bool) -> std::io::Result<()> {
    write_in(path, bytes, durable, new, None)
}

fn write_in(
    path: &Path,
    bytes: &[u8],
    durable: bool,
    new: bool,
    staging: Option<&Path>,
) -> std::io::Result<()> {
    let target_dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(target_dir)?;
    let dir = staging.unwrap_or(target_dir);
    std::fs::create_dir_all(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Before the umask, as a file `File::create` made would have.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    // The temporary file's random name is no name the caller knows: an error says where.
    let mut tmp = builder.tempfile_in(dir).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot create a file in {}: {}",
                dir.display(),
                std::io::Error::from(e.kind())
            ),
        )
    })?;
    tmp.write_all(bytes)?;
    // The mode of the regular file replaced, never of what a link at `path` points to (the link
    // itself is replaced), and without setuid, setgid or sticky bits.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_file()
    {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))?;
        }
        #[cfg(not(unix))]
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    if durable {
        tmp.as_file().sync_all()?;
    }
    if new {
        // A hard link to the full file, which fails when the name is taken.
        tmp.persist_noclobber(path).map_err(|e| e.error)?;
    } else {
        tmp.persist(path).map_err(|e| e.error)?;
    }
    // The rename itself is durable once the directory is; a failure here loses nothing.
    if durable && let Ok(d) = std::fs::File::open(target_dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_staged_write_leaves_nothing_beside_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.json");
        std::fs::write(&p, b"old").unwrap();
        let staging = dir.path().join(".state/tx");
        write_atomic_staged(&p, b"new", &staging).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(std::fs::read_dir(&staging).unwrap().count(), 0);
    }

    #[test]
    fn a_new_file_never_replaces_one_that_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.md");
        write_new(&p, b"first").unwrap();
        let e = write_new(&p, b"second").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left behind");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o600, 0o600);
    }

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
    fn a_link_is_replaced_and_lends_no_mode_and_no_special_bits_are_copied() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("private");
        std::fs::write(&private, b"secret").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("out.yml");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        write_atomic(&link, b"built").unwrap();
        let meta = std::fs::symlink_metadata(&link).unwrap();
        assert!(meta.is_file(), "the link is replaced");
        assert_ne!(
            meta.permissions().mode() & 0o777,
            0o600,
            "not the target's mode"
        );
        assert_eq!(std::fs::read(&private).unwrap(), b"secret");
        let suid = dir.path().join("tool");
        std::fs::write(&suid, b"x").unwrap();
        std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
        write_atomic(&suid, b"y").unwrap();
        let mode = std::fs::metadata(&suid).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o755);
    }

    #[test]
    fn an_error_names_the_directory_not_a_temporary_file() {
        let e = write_atomic(Path::new("/proc/version/x"), b"x").unwrap_err();
        assert!(!e.to_string().contains(".tmp-"), "{e}");
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
