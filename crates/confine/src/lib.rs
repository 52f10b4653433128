//! The project's walls: the one place where a path chant reads, evaluates or writes on a
//! project's behalf is resolved and checked.
//!
//! Every path is resolved with its symlinks followed (the part that exists; a part that does not
//! exist yet may not climb with `..`) and then must lie inside the wall's root, itself resolved
//! the same way. Walks of a directory go through [`Walls::walk`], which never follows a symlink
//! out, never visits a directory twice, yields only regular files, and stops with an error at
//! its bounds.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PathError {
    #[error("{param} must be inside the project ({root}): {given}")]
    Outside {
        param: String,
        root: String,
        given: String,
    },
    #[error("{param}: cannot resolve {given}: {reason}")]
    Unresolvable {
        param: String,
        given: String,
        reason: String,
    },
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WalkError {
    #[error(
        "{root}: the walk stopped after {limit} entries; name a smaller directory (a project's own folder, not a parent of many)"
    )]
    TooManyEntries { root: String, limit: usize },
    #[error(
        "{root}: the walk stopped at a depth of {limit} folders; name a smaller directory or flatten the sources"
    )]
    TooDeep { root: String, limit: usize },
    #[error(
        "{root}: the source files add up to more than {limit_mib} MiB; name a smaller directory or move generated data out of the sources"
    )]
    TooLarge { root: String, limit_mib: u64 },
}

/// How far a walk may go.
#[derive(Clone, Copy, Debug)]
pub struct WalkLimits {
    /// Directory entries looked at, in all.
    pub entries: usize,
    /// Folders below the walk's root.
    pub depth: usize,
    /// Total size of the files yielded.
    pub bytes: u64,
}

impl Default for WalkLimits {
    fn default() -> WalkLimits {
        WalkLimits {
            entries: 200_000,
            depth: 48,
            bytes: 256 << 20,
        }
    }
}

/// What a walk's filter says of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// A directory to descend into, or a file to yield.
    Take,
    Skip,
}

/// A directory entry as a walk's filter sees it.
pub struct Entry<'a> {
    /// The path under the walk's root as walked (before symlinks are resolved).
    pub path: &'a Path,
    pub name: &'a str,
    pub is_dir: bool,
}

/// The resolved root everything must stay inside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walls {
    root: PathBuf,
}

/// `path` with every existing part's symlinks resolved; a trailing part that does not exist is
/// appended as written (a `..` in it pops the name before it, which cannot be a link). A
/// dangling symlink is an error: writing through it would create its target.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    let path = std::path::absolute(path).map_err(|e| e.to_string())?;
    // The common case, one `realpath`: everything exists.
    match std::fs::canonicalize(&path) {
        Ok(real) => return Ok(real),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", path.display()));
        }
        Err(_) => {}
    }
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(format!("{} is a link that leads nowhere", path.display()));
    }
    // A name that does not exist yet, under a parent that is resolved the same way.
    if let (Some(parent), Some(Component::Normal(name))) =
        (path.parent(), path.components().next_back())
    {
        return resolve(parent).map(|p| p.join(name));
    }
    resolve_by_parts(&path)
}

/// A path as globs, reports and catalogs name it: its components joined with `/`.
pub fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// [`resolve`] one component at a time, for a path whose part that does not exist holds `..`.
fn resolve_by_parts(path: &Path) -> Result<PathBuf, String> {
    let mut current = PathBuf::from("/");
    let mut tail: Vec<std::ffi::OsString> = Vec::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                if tail.pop().is_none() {
                    current.pop();
                }
            }
            Component::Normal(name) => {
                if !tail.is_empty() {
                    tail.push(name.to_owned());
                    continue;
                }
                let next = current.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(_) => {
                        current = std::fs::canonicalize(&next).map_err(|e| {
                            format!("{} is a link that leads nowhere ({e})", next.display())
                        })?;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        tail.push(name.to_owned())
                    }
                    Err(e) => return Err(format!("{}: {e}", next.display())),
                }
            }
        }
    }
    // A `..` in the tail pops a name that does not exist (so cannot be a link); one that
    // climbs above the tail pops `current`, which exists and was resolved.
    for t in tail {
        current.push(t);
    }
    Ok(current)
}

/// Opens `path` without blocking (a FIFO opened for reading would wait for a writer) and
/// keeps it only if, once open, it is a regular file ([`fsread::open_regular`]).
fn open_regular(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), String> {
    fsread::open_regular(path).map_err(|e| e.to_string())
}

/// The first `n` bytes of the regular file at `path` (fewer if it is shorter); `None` for
/// anything else, never waiting.
pub fn read_head(path: &Path, n: usize) -> Option<Vec<u8>> {
    use std::io::Read;
    let (file, _) = open_regular(path).ok()?;
    let mut head = Vec::with_capacity(n);
    file.take(n as u64).read_to_end(&mut head).ok()?;
    Some(head)
}

/// Reads the regular file at `path` as UTF-8 text, at most `max` bytes. The file is opened
/// without blocking and checked after opening, so a FIFO or device (or one swapped in after a
/// check) is refused, never waited on or read forever.
pub fn read_text(path: &Path, max: u64) -> Result<String, String> {
    use std::io::Read;
    let shown = path.display();
    let (file, meta) = open_regular(path)?;
    if meta.len() > max {
        return Err(format!(
            "{shown}: {} bytes, over the {} KiB chant reads of such a file",
            meta.len(),
            max >> 10
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{shown}: grew past {} KiB while it was read",
            max >> 10
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown}: not UTF-8 text"))
}

impl Walls {
    /// Resolves `given` as [`Walls::resolve`] does and reads it with [`read_text`].
    pub fn read_text(
        &self,
        base: &Path,
        param: &str,
        given: &str,
        max: u64,
    ) -> Result<(PathBuf, String), String> {
        let path = self
            .resolve_from(base, param, given)
            .map_err(|e| e.to_string())?;
        let text = read_text(&path, max)?;
        Ok((path, text))
    }

    /// Walls around `root` (resolved).
    pub fn new(root: &Path) -> Result<Walls, PathError> {
        let root = resolve(root).map_err(|reason| PathError::Unresolvable {
            param: "root".into(),
            given: root.display().to_string(),
            reason,
        })?;
        Ok(Walls { root })
    }

    /// Walls around a root already resolved (by [`resolve`] or `canonicalize`).
    pub fn resolved(root: PathBuf) -> Walls {
        Walls { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `given` (relative to the root when relative) and refuses anything outside,
    /// naming `param`: `<param> must be inside the project (<root>): <given>`.
    pub fn resolve(&self, param: &str, given: &str) -> Result<PathBuf, PathError> {
        self.resolve_from(&self.root.clone(), param, given)
    }

    /// [`Walls::resolve`] with a relative `given` taken from `base`.
    pub fn resolve_from(
        &self,
        base: &Path,
        param: &str,
        given: &str,
    ) -> Result<PathBuf, PathError> {
        let p = Path::new(given);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        };
        let resolved = resolve(&joined).map_err(|reason| PathError::Unresolvable {
            param: param.to_owned(),
            given: given.to_owned(),
            reason,
        })?;
        if resolved.starts_with(&self.root) {
            Ok(resolved)
        } else {
            Err(PathError::Outside {
                param: param.to_owned(),
                root: self.root.display().to_string(),
                given: given.to_owned(),
            })
        }
    }

    /// Whether `path` (absolute) is inside, symlinks resolved.
    pub fn contains(&self, path: &Path) -> bool {
        resolve(path).is_ok_and(|p| p.starts_with(&self.root))
    }

    /// Walks `start` (a directory inside the walls) depth first, each directory's entries by
    /// byte order of name. `filter` decides per entry; yields regular files it takes, as the
    /// paths walked. Symlinks are followed only where they stay inside the walls, and a
    /// directory reached twice (a link loop) is walked once.
    pub fn walk(
        &self,
        start: &Path,
        limits: WalkLimits,
        filter: &mut dyn FnMut(&Entry<'_>) -> Visit,
    ) -> Result<Vec<PathBuf>, WalkError> {
        Ok(self
            .walk_files(start, limits, filter)?
            .into_iter()
            .map(|w| w.path)
            .collect())
    }

    /// [`Walls::walk`], with what the walk learnt of each file on the way.
    pub fn walk_files(
        &self,
        start: &Path,
        limits: WalkLimits,
        filter: &mut dyn FnMut(&Entry<'_>) -> Visit,
    ) -> Result<Vec<Walked>, WalkError> {
        let mut w = Walker {
            walls: self,
            limits,
            root: start.display().to_string(),
            seen: HashSet::new(),
            entries: 0,
            bytes: 0,
            out: Vec::new(),
        };
        if let Ok(real) = std::fs::canonicalize(start)
            && real.starts_with(&self.root)
            && real.is_dir()
        {
            let canonical = real == start;
            w.seen.insert(real);
            w.dir(start, canonical, 0, filter)?;
        }
        Ok(w.out)
    }
}

/// A file a walk took.
#[derive(Clone, Debug)]
pub struct Walked {
    /// The path walked.
    pub path: PathBuf,
    /// The file's metadata, its links followed.
    pub meta: std::fs::Metadata,
    /// No link on the way: `path` is the file's own resolved path.
    pub canonical: bool,
}

struct Walker<'a> {
    walls: &'a Walls,
    limits: WalkLimits,
    root: String,
    seen: HashSet<PathBuf>,
    entries: usize,
    bytes: u64,
    out: Vec<Walked>,
}

impl Walker<'_> {
    /// `canonical`: `dir` is its own resolved path (no link on the way to it).
    fn dir(
        &mut self,
        dir: &Path,
        canonical: bool,
        depth: usize,
        filter: &mut dyn FnMut(&Entry<'_>) -> Visit,
    ) -> Result<(), WalkError> {
        if depth > self.limits.depth {
            return Err(WalkError::TooDeep {
                root: self.root.clone(),
                limit: self.limits.depth,
            });
        }
        let Ok(read) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        let mut entries: Vec<std::fs::DirEntry> = Vec::new();
        for e in read.flatten() {
            self.entries += 1;
            if self.entries > self.limits.entries {
                return Err(WalkError::TooManyEntries {
                    root: self.root.clone(),
                    limit: self.limits.entries,
                });
            }
            entries.push(e);
        }
        entries.sort_by(|a, b| {
            a.file_name()
                .as_encoded_bytes()
                .cmp(b.file_name().as_encoded_bytes())
        });
        for e in entries {
            let path = e.path();
            let Ok(kind) = e.file_type() else { continue };
            // What the entry is once its links are followed, and only if that stays inside;
            // a plain entry's kind is known without a stat, which waits until it is taken.
            let (is_dir, real) = if kind.is_symlink() {
                match std::fs::canonicalize(&path) {
                    Ok(real) if real.starts_with(&self.walls.root) => {
                        match std::fs::metadata(&real) {
                            Ok(m) if m.is_dir() || m.is_file() => (m.is_dir(), Some(real)),
                            _ => continue,
                        }
                    }
                    _ => continue,
                }
            } else if kind.is_dir() || kind.is_file() {
                (kind.is_dir(), None)
            } else {
                continue; // FIFOs, sockets, devices: never opened
            };
            let name = e.file_name();
            let name = name.to_str().unwrap_or_default();
            if filter(&Entry {
                path: &path,
                name,
                is_dir,
            }) == Visit::Skip
            {
                continue;
            }
            let plain = canonical && real.is_none();
            if is_dir {
                let real = match real {
                    Some(r) => r,
                    None if plain => path.clone(),
                    None => match std::fs::canonicalize(&path) {
                        Ok(r) => r,
                        Err(_) => continue,
                    },
                };
                if self.seen.insert(real) {
                    self.dir(&path, plain, depth + 1, filter)?;
                }
            } else {
                // A plain entry's stat through its directory (no path lookup); a link's
                // through the path, its target's.
                let meta = if real.is_some() {
                    std::fs::metadata(&path)
                } else {
                    e.metadata()
                };
                let Ok(meta) = meta else {
                    continue;
                };
                if !meta.is_file() {
                    continue;
                }
                self.bytes += meta.len();
                if self.bytes > self.limits.bytes {
                    return Err(WalkError::TooLarge {
                        root: self.root.clone(),
                        limit_mib: self.limits.bytes >> 20,
                    });
                }
                self.out.push(Walked {
                    path,
                    meta,
                    canonical: plain,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_paths_and_heads() {
        assert_eq!(slash_path(Path::new("a/b/c.txt")), "a/b/c.txt");
        assert_eq!(slash_path(Path::new("./a//b")), "./a/b");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"hello world").unwrap();
        assert_eq!(read_head(&f, 5).unwrap(), b"hello");
        assert_eq!(read_head(&f, 100).unwrap(), b"hello world");
        assert_eq!(read_head(dir.path(), 5), None);
    }

    #[test]
    fn a_walk_marks_canonical_only_what_is_and_visits_a_directory_once_from_any_start() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("p/sub")).unwrap();
        std::fs::write(real.join("p/sub/a.txt"), "a").unwrap();
        std::fs::write(real.join("p/b.txt"), "b").unwrap();
        std::os::unix::fs::symlink(real.join("p/b.txt"), real.join("p/link.txt")).unwrap();
        // A loop back to the top, and a start reached through a link.
        std::os::unix::fs::symlink(real.join("p"), real.join("p/sub/up")).unwrap();
        // A second way into `sub`: it is walked once, through whichever way comes first.
        std::os::unix::fs::symlink(real.join("p/sub"), real.join("p/zlink")).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("via")).unwrap();
        let walls = Walls::new(&real.join("p")).unwrap();
        let limits = WalkLimits {
            entries: 1000,
            bytes: 1 << 20,
            depth: 10,
        };
        for (start, canonical_start) in [
            (std::fs::canonicalize(real.join("p")).unwrap(), true),
            (dir.path().join("via/p"), false),
        ] {
            let walked = walls
                .walk_files(&start, limits, &mut |_| Visit::Take)
                .unwrap();
            let mut names: Vec<String> = walked
                .iter()
                .map(|w| w.path.strip_prefix(&start).unwrap().display().to_string())
                .collect();
            names.sort();
            assert_eq!(names, ["b.txt", "link.txt", "sub/a.txt"], "{start:?}");
            for w in &walked {
                let is_link = w.path.ends_with("link.txt");
                assert_eq!(w.canonical, canonical_start && !is_link, "{:?}", w.path);
            }
        }
    }

    #[test]
    fn paths_resolve_inside_or_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        let outside = dir.path().join("o");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        let walls = Walls::new(&root).unwrap();
        let real = walls.root().to_path_buf();
        assert_eq!(walls.resolve("path", "src").unwrap(), real.join("src"));
        assert_eq!(
            walls.resolve("output", "new/dir/a.ts").unwrap(),
            real.join("new/dir/a.ts")
        );
        assert_eq!(
            walls.resolve("path", "src/../src").unwrap(),
            real.join("src")
        );
        for bad in [
            "..",
            "../o",
            "/",
            "link",
            "link/x.ts",
            "src/../../o",
            "new/../../o",
        ] {
            let e = walls.resolve("path", bad).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "path must be inside the project ({}): {bad}",
                    real.display()
                ),
                "{bad}"
            );
        }
        let abs = outside.display().to_string();
        assert!(walls.resolve("source", &abs).is_err());
        assert!(matches!(
            walls.resolve("path", "dangling/x"),
            Err(PathError::Unresolvable { .. })
        ));
    }

    #[test]
    fn resolution_keeps_what_exists_and_appends_what_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(real.join("src")).unwrap();
        std::fs::write(real.join("f"), "x").unwrap();
        // `..` in the part that does not exist, resolved by parts.
        assert_eq!(resolve(&real.join("new/../src")).unwrap(), real.join("src"));
        assert_eq!(
            resolve_by_parts(&real.join("src/../new/x/../y")).unwrap(),
            real.join("new/y")
        );
        assert_eq!(
            resolve_by_parts(&real.join("src")).unwrap(),
            real.join("src")
        );
        // A failure other than "not found" is an error, not a name to append.
        assert!(
            resolve(&real.join("f/x")).is_err(),
            "a file is not a folder"
        );
        assert!(resolve_by_parts(&real.join("f/x/../y")).is_err());
        // Parts that exist are resolved physically: `..` after a link leaves the link's target.
        std::fs::create_dir_all(real.join("other/sub")).unwrap();
        std::os::unix::fs::symlink(real.join("other/sub"), real.join("link")).unwrap();
        assert_eq!(
            resolve_by_parts(&real.join("link/../new/z/..")).unwrap(),
            real.join("other/new")
        );
        let walls = Walls::new(&real.join("src")).unwrap();
        assert!(walls.contains(&real.join("src/a")));
        assert!(!walls.contains(&real.join("f")));
    }

    #[test]
    fn text_is_read_up_to_its_limit_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(real.join("a.json"), "{}").unwrap();
        assert_eq!(read_text(&real.join("a.json"), 2).unwrap(), "{}");
        assert!(read_text(&real.join("a.json"), 1).is_err());
        let walls = Walls::new(&real).unwrap();
        assert_eq!(
            walls.read_text(&real, "file", "a.json", 2).unwrap(),
            (real.join("a.json"), "{}".to_owned())
        );
        assert!(walls.read_text(&real, "file", "../x.json", 2).is_err());
        // A file longer than its size said (as /proc's are) is refused, not cut short.
        let e = read_text(Path::new("/proc/self/status"), 16).unwrap_err();
        assert!(e.contains("grew past"), "{e}");
    }

    #[test]
    fn walks_stop_just_past_their_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("a/x.ts"), "12345").unwrap();
        let walls = Walls::new(&root).unwrap();
        let walk = |limits: WalkLimits| walls.walk(&root, limits, &mut |_| Visit::Take);
        let exact = WalkLimits {
            entries: 2,
            depth: 1,
            bytes: 5,
        };
        assert_eq!(walk(exact).unwrap(), [root.join("a/x.ts")]);
        assert!(matches!(
            walk(WalkLimits {
                entries: 1,
                ..exact
            }),
            Err(WalkError::TooManyEntries { limit: 1, .. })
        ));
        assert!(matches!(
            walk(WalkLimits { depth: 0, ..exact }),
            Err(WalkError::TooDeep { limit: 0, .. })
        ));
        assert!(matches!(
            walk(WalkLimits { bytes: 4, ..exact }),
            Err(WalkError::TooLarge { .. })
        ));
        // The size limit is reported in MiB.
        std::fs::write(root.join("a/big.ts"), vec![b'x'; (3 << 20) + 1]).unwrap();
        let e = walk(WalkLimits {
            entries: 10,
            depth: 5,
            bytes: 3 << 20,
        })
        .unwrap_err();
        assert!(e.to_string().contains("more than 3 MiB"), "{e}");
    }

    #[test]
    fn text_is_read_only_from_small_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.json");
        std::fs::write(&f, "{}").unwrap();
        assert_eq!(read_text(&f, 10).unwrap(), "{}");
        assert!(read_text(&f, 1).unwrap_err().contains("over the"));
        let fifo = dir.path().join("fifo.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert!(
            read_text(&fifo, 10)
                .unwrap_err()
                .contains("not a regular file")
        );
        assert!(
            read_text(Path::new("/dev/zero"), 10)
                .unwrap_err()
                .contains("not a regular file")
        );
        assert!(read_text(dir.path(), 10).is_err());
    }

    #[test]
    fn walks_stay_inside_visit_once_and_stop_at_their_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        let outside = dir.path().join("o");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.ts"), "x").unwrap();
        std::fs::write(root.join("a/b/x.ts"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.ts"), root.join("s.ts")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("a/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("a/b/x.ts"), root.join("in.ts")).unwrap();
        let walls = Walls::new(&root).unwrap();
        let files = walls
            .walk(&root, WalkLimits::default(), &mut |_| Visit::Take)
            .unwrap();
        let rel: Vec<String> = files
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(rel, ["a/b/x.ts", "in.ts"]);
        let tight = WalkLimits {
            entries: 2,
            ..WalkLimits::default()
        };
        let e = walls.walk(&root, tight, &mut |_| Visit::Take).unwrap_err();
        assert!(matches!(e, WalkError::TooManyEntries { .. }), "{e}");
        let shallow = WalkLimits {
            depth: 0,
            ..WalkLimits::default()
        };
        assert!(matches!(
            walls.walk(&root, shallow, &mut |_| Visit::Take),
            Err(WalkError::TooDeep { .. })
        ));
        let small = WalkLimits {
            bytes: 0,
            ..WalkLimits::default()
        };
        assert!(matches!(
            walls.walk(&root, small, &mut |_| Visit::Take),
            Err(WalkError::TooLarge { .. })
        ));
    }
}
