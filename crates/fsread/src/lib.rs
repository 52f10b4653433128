//! Opening files that someone else controls: a project an agent can write, a state directory
//! another process may swap. It owns three rules, for every product that reads such files:
//! a file is opened first only as a place (`O_PATH`) and opened for reading only once it is
//! known to be a regular file (a FIFO is never waited on nor its writer released, a device
//! never opened); a file meant to be inside a root is judged where it really is (so a
//! symlink, or one swapped in between a check and the open, cannot lead outside), and one
//! with other names (a hard link) is not read as the root's own; and reads are capped. It
//! knows nothing of what the files mean. It also says when a file is unchanged without
//! reading it ([`Stamp`]).

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why a file was not read. `Display` names the file and the reason.
#[derive(Debug, Error)]
pub enum ReadError {
    #[error("{0}: not a regular file")]
    NotRegular(String),
    #[error("{path}: leads outside {root} (to {real})")]
    Outside {
        path: String,
        root: String,
        real: String,
    },
    #[error("{path}: {len} bytes, over the {max} this reads of such a file")]
    TooLarge { path: String, len: u64, max: u64 },
    #[error(
        "{path}: one of {links} names of the same file (a hard link); only a file of its own is read"
    )]
    HardLinked { path: String, links: u64 },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl ReadError {
    /// Whether the file simply is not there (readers often treat that as empty).
    pub fn is_missing(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

fn io(path: &Path, source: std::io::Error) -> ReadError {
    ReadError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Opens `path` without blocking and keeps it only if it is a regular file: opened first only
/// as a place (`O_PATH`, its links followed), and opened for reading only once that place is
/// known to be a regular file — so a FIFO's writer is never released, a device never opened
/// (no tty becomes a controlling terminal, no serial line is raised).
pub fn open_regular(path: &Path) -> Result<(File, Metadata), ReadError> {
    let place = open_place(path)?;
    let meta = regular_meta(&place, path)?;
    Ok((reopen(&place, &meta, path)?, meta))
}

/// The metadata of `place` (opened at `path`), when it is a regular file.
fn regular_meta(place: &File, path: &Path) -> Result<Metadata, ReadError> {
    let meta = place.metadata().map_err(|e| io(path, e))?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(path.display().to_string()));
    }
    Ok(meta)
}

/// `path` opened as a place only (`O_PATH`): nothing is read, no permission needed, nothing
/// waited on.
fn open_place(path: &Path) -> Result<File, ReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)
        .map_err(|e| io(path, e))
}

/// The regular file `place` (opened at `path`, `meta` its metadata) opened for reading: through
/// the kernel's name for the descriptor, so it is that very file whatever was swapped in at
/// `path` since; where `/proc` is not mounted, `path` again, kept only if it is the same file.
fn reopen(place: &File, meta: &Metadata, path: &Path) -> Result<File, ReadError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let open = |p: &Path| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(p)
    };
    match open(Path::new(&format!("/proc/self/fd/{}", place.as_raw_fd()))) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(path, e)),
        Err(_) => {
            let f = open(path).map_err(|e| io(path, e))?;
            let now = f.metadata().map_err(|e| io(path, e))?;
            if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
                return Err(ReadError::NotRegular(path.display().to_string()));
            }
            Ok(f)
        }
    }
}

/// Where an open file really is: the kernel's name for the descriptor (Linux), else the
/// path resolved now.
fn real_path(file: &File, path: &Path) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .ok()
        .or_else(|| path.canonicalize().ok())
}

/// Opens `root/rel` as [`open_regular`] does, and keeps it only if the file opened is inside
/// `root` (both resolved: a symlink anywhere on the way that leads out is refused) and is a
/// file of its own: a hard link shares its content with a name that may be anywhere, so it is
/// refused too ([`open_inside_linked`] reads one where only the content's digest is wanted).
/// Judged before the file is opened for reading.
pub fn open_inside(root: &Path, rel: &Path) -> Result<(File, Metadata), ReadError> {
    use std::os::unix::fs::MetadataExt;
    let path = root.join(rel);
    let (place, meta) = inside_place(root, &path)?;
    if meta.nlink() > 1 {
        return Err(ReadError::HardLinked {
            path: path.display().to_string(),
            links: meta.nlink(),
        });
    }
    Ok((reopen(&place, &meta, &path)?, meta))
}

/// [`open_inside`] of a file that may have other names (hard links): for a reader that takes
/// only a digest of the content, where refusing would hide a change to the file.
pub fn open_inside_linked(root: &Path, rel: &Path) -> Result<(File, Metadata), ReadError> {
    let path = root.join(rel);
    let (place, meta) = inside_place(root, &path)?;
    Ok((reopen(&place, &meta, &path)?, meta))
}

/// `path` opened as a place, kept when it is a regular file inside `root`.
fn inside_place(root: &Path, path: &Path) -> Result<(File, Metadata), ReadError> {
    let place = open_place(path)?;
    judge_inside(root, path, &place)?;
    let meta = regular_meta(&place, path)?;
    Ok((place, meta))
}

/// What `root/rel` is (a file or a directory, its links followed) when it is inside `root` as
/// [`open_inside`] judges it: opened only as a place (`O_PATH`), so nothing is read, no
/// permission is needed and a FIFO is never waited on. One open and a `readlink`, where
/// resolving the path first costs a `readlink` per component.
pub fn locate_inside(root: &Path, rel: &Path) -> Result<Metadata, ReadError> {
    let path = root.join(rel);
    let place = open_place(&path)?;
    let meta = place.metadata().map_err(|e| io(&path, e))?;
    judge_inside(root, &path, &place)?;
    Ok(meta)
}

/// Refuses `file` (opened at `path`) unless it really is inside `root`.
fn judge_inside(root: &Path, path: &Path, file: &File) -> Result<(), ReadError> {
    let real = real_path(file, path).unwrap_or_default();
    // The file's real path never passes through a link, nor names `.` or `..`: when it starts
    // with `root` as given, `root` is where the file really is, and resolving `root` (a
    // `readlink` per component, for every file read) would only give `root` back.
    if real.is_absolute() && real.starts_with(root) {
        return Ok(());
    }
    let root_real = root.canonicalize().map_err(|e| io(root, e))?;
    if !real.starts_with(&root_real) {
        return Err(ReadError::Outside {
            path: path.display().to_string(),
            root: root_real.display().to_string(),
            real: real.display().to_string(),
        });
    }
    Ok(())
}

/// The bytes of `root/rel` (see [`open_inside`]), at most `max`: a longer file, or one that
/// grows past `max` while it is read, is refused rather than read in part.
pub fn read_inside(root: &Path, rel: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open_inside(root, rel)?;
    read_open(file, &meta, &root.join(rel), max)
}

/// The bytes of the regular file at `path` (see [`open_regular`]), at most `max`.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open_regular(path)?;
    read_open(file, &meta, path, max)
}

/// The bytes of `file`, opened (at `path`) by [`open_regular`] or [`open_inside`] with `meta`
/// its metadata, at most `max`, as [`read_regular`] reads them.
pub fn read_open(file: File, meta: &Metadata, path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let too_large = |len| ReadError::TooLarge {
        path: path.display().to_string(),
        len,
        max,
    };
    if meta.len() > max {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io(path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A temporary directory holding a `root` and a directory `outside` it, both made.
    fn root_and_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        (dir, root, outside)
    }

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) reads the NUL-terminated path and touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn the_cap_admits_exactly_max_bytes_and_names_the_whole_length() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_regular(&f, 10).unwrap(), b"0123456789");
        match read_regular(&f, 3) {
            Err(ReadError::TooLarge { len, max, .. }) => assert_eq!((len, max), (10, 3)),
            other => panic!("{other:?}"),
        }
        // A regular file whose stat says less than it holds (procfs says 0) is cut at the cap
        // as it is read, never returned longer.
        match read_regular(Path::new("/proc/self/status"), 10) {
            Err(ReadError::TooLarge { len, .. }) => assert_eq!(len, 11),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_stamp_is_trusted_only_once_the_racy_window_has_passed() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let meta = std::fs::metadata(&f).unwrap();
        let ctime = Stamp::of(&meta).ctime.0;
        assert!(Stamp::trusted(&meta, ctime + RACY_SECS).is_none());
        assert!(Stamp::trusted(&meta, ctime + RACY_SECS + 1).is_some());
    }

    #[test]
    fn a_root_named_through_a_link_or_dots_is_judged_where_it_really_is() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(d.join("root/sub")).unwrap();
        std::fs::create_dir_all(d.join("root2")).unwrap();
        std::fs::write(d.join("root/sub/a"), "a").unwrap();
        std::fs::write(d.join("root2/secret"), "s").unwrap();
        symlink(d.join("root"), d.join("alias")).unwrap();
        for root in [
            d.join("alias"),
            d.join("root/sub/.."),
            d.join("root/./sub/.."),
        ] {
            assert_eq!(
                read_inside(&root, Path::new("sub/a"), 10).unwrap(),
                b"a",
                "{root:?}"
            );
        }
        // A sibling whose name starts with the root's is outside it.
        symlink(d.join("root2/secret"), d.join("root/l")).unwrap();
        for root in [d.join("root"), d.join("alias")] {
            let e = read_inside(&root, Path::new("l"), 10).unwrap_err();
            assert!(matches!(e, ReadError::Outside { .. }), "{root:?}: {e}");
        }
        // A root that is a link is where it leads: its files are inside it.
        symlink(d.join("root2"), d.join("to2")).unwrap();
        assert_eq!(
            read_inside(&d.join("to2"), Path::new("secret"), 10).unwrap(),
            b"s"
        );
    }

    #[test]
    fn a_place_is_located_only_inside_the_root_and_never_waited_on() {
        let (_dir, root, outside) = root_and_outside();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a"), "a").unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        assert!(locate_inside(&root, Path::new("sub")).unwrap().is_dir());
        assert!(locate_inside(&root, Path::new("sub/a")).unwrap().is_file());
        assert!(
            locate_inside(&root, Path::new("nope"))
                .unwrap_err()
                .is_missing()
        );
        // A FIFO is a place too: located at once (never opened for reading), said as what it is.
        mkfifo(&root.join("fifo"));
        let m = locate_inside(&root, Path::new("fifo")).unwrap();
        assert!(!m.is_file() && !m.is_dir());
        // Links out, to a directory, a file, or through a directory, are outside.
        symlink(&outside, root.join("link")).unwrap();
        symlink(outside.join("secret"), root.join("secret")).unwrap();
        for rel in ["link", "link/secret", "secret", "sub/../link"] {
            let e = locate_inside(&root, Path::new(rel)).unwrap_err();
            assert!(matches!(e, ReadError::Outside { .. }), "{rel}: {e}");
        }
        // A link that stays inside is where it leads.
        symlink(root.join("sub"), root.join("alias")).unwrap();
        assert!(locate_inside(&root, Path::new("alias")).unwrap().is_dir());
    }

    #[test]
    fn a_fifo_or_link_out_is_judged_before_it_is_opened_for_reading() {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let (_dir, root, outside) = root_and_outside();
        // A process outside waits to write into a FIFO; the project links to it.
        let fifo = outside.join("fifo");
        mkfifo(&fifo);
        symlink(&fifo, root.join("state.json")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let writer_fifo = fifo.clone();
        std::thread::spawn(move || {
            // Blocks until a reader opens the FIFO.
            let mut w = std::fs::OpenOptions::new()
                .write(true)
                .open(&writer_fifo)
                .unwrap();
            tx.send(()).unwrap();
            let _ = w.write_all(b"x");
        });
        assert!(open_inside(&root, Path::new("state.json")).is_err());
        assert!(open_regular(&fifo).is_err());
        assert!(open_regular(&root.join("state.json")).is_err());
        // Neither read opened it: the writer still waits.
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err()
        );
        // (Released here, so the thread ends.)
        let _r = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
    }

    #[test]
    fn a_hard_link_is_not_read_as_the_roots_own_file() {
        let (_dir, root, outside) = root_and_outside();
        std::fs::write(outside.join("secret"), "s").unwrap();
        std::fs::hard_link(outside.join("secret"), root.join("events.jsonl")).unwrap();
        let e = read_inside(&root, Path::new("events.jsonl"), 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: one of 2 names of the same file (a hard link); only a file of its own is read",
                root.join("events.jsonl").display()
            )
        );
        // A digest-only reader still reads it (a change to it must show).
        let (mut f, _) = open_inside_linked(&root, Path::new("events.jsonl")).unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        assert_eq!(text, "s");
        // Its own file again once the other name is gone.
        std::fs::remove_file(outside.join("secret")).unwrap();
        assert_eq!(
            read_inside(&root, Path::new("events.jsonl"), 10).unwrap(),
            b"s"
        );
    }

    #[test]
    fn only_regular_files_inside_the_root_are_read() {
        let (_dir, root, outside) = root_and_outside();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.json"), "{}").unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        assert_eq!(
            read_inside(&root, Path::new("sub/a.json"), 10).unwrap(),
            b"{}"
        );
        assert!(
            read_inside(&root, Path::new("nope"), 10)
                .unwrap_err()
                .is_missing()
        );
        // A FIFO is refused at once, never waited on.
        let fifo = root.join("fifo");
        mkfifo(&fifo);
        assert!(matches!(
            read_inside(&root, Path::new("fifo"), 10),
            Err(ReadError::NotRegular(_))
        ));
        // A directory symlinked out, and a file symlinked out.
        symlink(&outside, root.join("link")).unwrap();
        symlink(outside.join("secret"), root.join("secret")).unwrap();
        for rel in ["link/secret", "secret"] {
            let e = read_inside(&root, Path::new(rel), 10).unwrap_err();
            assert!(matches!(e, ReadError::Outside { .. }), "{rel}: {e}");
        }
        // A symlink that stays inside is fine.
        symlink(root.join("sub/a.json"), root.join("alias")).unwrap();
        assert_eq!(read_inside(&root, Path::new("alias"), 10).unwrap(), b"{}");
        // Over the cap.
        assert_eq!(
            read_inside(&root, Path::new("sub/a.json"), 1)
                .unwrap_err()
                .to_string(),
            format!(
                "{}: 2 bytes, over the 1 this reads of such a file",
                root.join("sub/a.json").display()
            )
        );
    }
}

/// What a stat says of a file without reading it: a change of content changes its ctime
/// (which no user can set) and a rewrite through a rename its inode, so equal stamps mean the
/// same content — once the file last changed long enough ago ([`Stamp::trusted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// How long after a file's last change its stat stands for its content: a change within the
/// same tick of the file system's clock could leave the stat as it was (git's "racy clean"
/// case), so a file changed this recently must be read instead.
pub const RACY_SECS: i64 = 2;

impl Stamp {
    pub fn of(meta: &Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The stamp of `meta`, stat'ed at `taken` (epoch seconds), if the file last changed more
    /// than [`RACY_SECS`] before: a later change is then sure to move its ctime.
    pub fn trusted(meta: &Metadata, taken: i64) -> Option<Stamp> {
        let s = Stamp::of(meta);
        (s.ctime.0 + RACY_SECS < taken).then_some(s)
    }

    /// The current time in epoch seconds (what [`Stamp::trusted`] compares with).
    pub fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    }
}

#[cfg(test)]
mod stamp_tests {
    use super::*;

    #[test]
    fn a_stamp_changes_with_the_content_and_is_trusted_only_once_old() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a");
        std::fs::write(&f, "one").unwrap();
        let before = std::fs::metadata(&f).unwrap();
        assert_eq!(Stamp::trusted(&before, Stamp::now()), None, "just changed");
        assert!(Stamp::trusted(&before, Stamp::now() + RACY_SECS + 1).is_some());
        std::fs::write(dir.path().join("b"), "two").unwrap();
        std::fs::rename(dir.path().join("b"), &f).unwrap();
        let after = std::fs::metadata(&f).unwrap();
        assert_ne!(Stamp::of(&before), Stamp::of(&after), "a rewrite is seen");
        assert_eq!(
            Stamp::of(&after),
            Stamp::of(&std::fs::metadata(&f).unwrap())
        );
    }
}
