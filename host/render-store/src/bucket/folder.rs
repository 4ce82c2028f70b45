//! The `file://` bucket: one file per key under a root folder, reached only through
//! descriptors, never through a symbolic link.
//!
//! The store holds every Secret a release applies and often runs as root, so a link
//! planted in the folder by another user must not let it read, write, list or delete
//! anything outside the root. Every path is walked one component at a time from the
//! root's descriptor with `openat(O_NOFOLLOW)`: a component that is a link fails the
//! open itself, so there is no window between a check and a use. A key that crosses a
//! link is refused, naming the key.
//!
//! A listing feeds GC and delete-release, which read what it leaves out as "not there":
//! so a listing that meets, inside its prefix, something it will not walk (a link, a
//! file or FIFO where a folder should be, a folder it cannot read) fails as a whole
//! (CONTRACT.md §12, fail closed). Only files that cannot be keys (a FIFO at a key, a
//! name that is not UTF-8 or holds a control character) are left out, and logged.
//!
//! Blobs are written to a staging file `<name>#<pid>.<n>` (created exclusively, mode
//! 0600) and renamed over the key, so a reader sees the old content or the new. A
//! writer killed mid-put leaves its staging file behind: staging files are listed like
//! any other file, so GC leaves them alone (they do not parse as keys) and
//! delete-release removes them. Folders are created 0700.

use super::messages::{self, LeftOut, Unwalkable};
use super::{Bucket, BucketError, Delimited, Denial, ObjectMeta, check_folder_prefix};
use crate::types::SyncTime;
use async_trait::async_trait;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashSet;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A bucket over a local folder that never follows a symbolic link.
#[derive(Clone)]
pub struct FolderBucket {
    inner: Arc<Folder>,
}

struct Folder {
    root: OwnedFd,
    /// Shown in log lines only: errors returned to callers never carry local paths.
    path: PathBuf,
    staging: AtomicU64,
    /// Entries a listing left out that were already reported, so the log names each
    /// once per process.
    reported: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for FolderBucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FolderBucket")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Separates a key's file name from the staging suffix of its writer.
const STAGING_MARK: char = '#';

/// Why a walk to a key's folder stopped.
enum WalkError {
    /// A folder on the way does not exist.
    Missing,
    /// The component at `at` (its index in the walked names) is a link or not a folder:
    /// the walk would leave the tree.
    Link {
        at: usize,
    },
    /// The folder at `at` cannot be opened by this user.
    Unreadable {
        at: usize,
    },
    Io(std::io::Error),
}

impl FolderBucket {
    /// Opens the folder at `path` (which must exist). The root itself is the operator's
    /// choice and may be reached through links; nothing beneath it is.
    pub fn open(path: &Path) -> std::io::Result<FolderBucket> {
        let root = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(FolderBucket {
            inner: Arc::new(Folder {
                root,
                path: path.to_path_buf(),
                staging: AtomicU64::new(0),
                reported: Mutex::new(HashSet::new()),
            }),
        })
    }

    /// Runs blocking file-system work off the async workers.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Folder) -> Result<T, BucketError> + Send + 'static,
    ) -> Result<T, BucketError> {
        let folder = self.inner.clone();
        tokio::task::spawn_blocking(move || work(&folder))
            .await
            .map_err(|e| BucketError::Failed(format!("file-system task failed: {e}")))?
    }
}

/// A key's components: clean `/`-separated names, or a refusal naming the key.
fn components(key: &str) -> Result<Vec<&str>, BucketError> {
    super::check_key(key)?;
    Ok(key.split('/').collect())
}

/// Whether a file name can be part of a key: no control characters (they would let a
/// name forge lines in human output and are never made by the store).
fn representable(name: &str) -> bool {
    !name.chars().any(char::is_control)
}

fn io(call: &'static str, key: &str, e: impl Into<std::io::Error>) -> BucketError {
    BucketError::Backend {
        call,
        key: key.to_string(),
        source: Box::new(e.into()),
    }
}

fn crosses_link(key: &str, component: &str) -> BucketError {
    BucketError::Denied(Denial::CrossesLink {
        key: key.to_string(),
        component: component.to_string(),
    })
}

fn modified(st: &rustix::fs::Stat) -> SyncTime {
    SyncTime {
        seconds: st.st_mtime,
        nanoseconds: st.st_mtime_nsec as u32,
    }
}

impl Folder {
    /// Opens the folders of `dirs` one by one from the root, never following a link;
    /// with `create`, makes the missing ones (mode 0700). Returns every folder opened,
    /// the root first.
    fn walk(&self, dirs: &[&str], create: bool) -> Result<Vec<OwnedFd>, WalkError> {
        let mut fds = vec![rustix::io::dup(&self.root).map_err(|e| WalkError::Io(e.into()))?];
        for dir in dirs {
            let here = fds.last().expect("the root is first");
            let opened = match rustix::fs::openat(here, *dir, DIR_FLAGS, Mode::empty()) {
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(here, *dir, Mode::from_raw_mode(0o700)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(WalkError::Io(e.into())),
                    }
                    rustix::fs::openat(here, *dir, DIR_FLAGS, Mode::empty())
                }
                other => other,
            };
            let at = fds.len() - 1;
            match opened {
                Ok(fd) => fds.push(fd),
                Err(Errno::NOENT) => return Err(WalkError::Missing),
                Err(Errno::LOOP | Errno::NOTDIR) => return Err(WalkError::Link { at }),
                Err(Errno::ACCESS | Errno::PERM) => return Err(WalkError::Unreadable { at }),
                Err(e) => return Err(WalkError::Io(e.into())),
            }
        }
        Ok(fds)
    }

    /// The descriptor of a key's folder and the key's file name; `None` when a folder
    /// on the way is missing.
    fn parent<'k>(
        &self,
        call: &'static str,
        key: &'k str,
        create: bool,
    ) -> Result<Option<(Vec<OwnedFd>, &'k str)>, BucketError> {
        let parts = components(key)?;
        let (name, dirs) = parts.split_last().expect("a key has a component");
        match self.walk(dirs, create) {
            Ok(fds) => Ok(Some((fds, name))),
            Err(WalkError::Missing) => Ok(None),
            Err(WalkError::Link { at }) => Err(crosses_link(key, dirs[at])),
            Err(WalkError::Unreadable { .. }) => Err(io(call, key, Errno::ACCESS)),
            Err(WalkError::Io(e)) => Err(io(call, key, e)),
        }
    }

    fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        let not_found = || BucketError::NotFound {
            key: key.to_string(),
        };
        let Some((fds, name)) = self.parent("get", key, false)? else {
            return Err(not_found());
        };
        let dir = fds.last().expect("the key's folder");
        // NONBLOCK: opening a FIFO planted at a key must not hang the call.
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Err(not_found()),
            Err(Errno::LOOP) => return Err(crosses_link(key, name)),
            Err(e) => return Err(io("get", key, e)),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| io("get", key, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(BucketError::Denied(Denial::NotPlainFile {
                key: key.to_string(),
            }));
        }
        let size = st.st_size as u64;
        if size > limit {
            return Err(BucketError::TooLarge {
                key: key.to_string(),
                size,
                limit,
            });
        }
        // Bounded again while reading: the file may grow after the fstat.
        let mut bytes = Vec::with_capacity(size as usize);
        std::fs::File::from(fd)
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| io("get", key, e))?;
        if bytes.len() as u64 > limit {
            return Err(BucketError::TooLarge {
                key: key.to_string(),
                size: bytes.len() as u64,
                limit,
            });
        }
        Ok(bytes)
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<(), BucketError> {
        if key.contains(STAGING_MARK) {
            return Err(BucketError::Denied(Denial::StagingMark {
                key: key.to_string(),
            }));
        }
        // A concurrent delete may remove a folder this walk opened (it removes folders
        // it leaves empty): then the staging file cannot be created, and the walk is
        // made again.
        let mut attempts = 0;
        loop {
            attempts += 1;
            let Some((fds, name)) = self.parent("put", key, true)? else {
                return Err(io("put", key, Errno::NOENT));
            };
            let dir = fds.last().expect("the key's folder");
            let n = self.staging.fetch_add(1, Ordering::Relaxed);
            let staging = format!("{name}{STAGING_MARK}{}.{n}", std::process::id());
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = match rustix::fs::openat(dir, &staging, flags, Mode::from_raw_mode(0o600)) {
                Ok(fd) => fd,
                Err(Errno::NOENT) if attempts < 3 => continue,
                Err(e) => return Err(io("put", key, e)),
            };
            let written = std::io::Write::write_all(&mut std::fs::File::from(fd), value);
            // rename replaces a link at the key itself, never what it points to.
            let renamed = written
                .and_then(|()| rustix::fs::renameat(dir, &staging, dir, name).map_err(Into::into));
            return match renamed {
                Ok(()) => Ok(()),
                Err(e) => {
                    let _ = rustix::fs::unlinkat(dir, &staging, AtFlags::empty());
                    Err(io("put", key, e))
                }
            };
        }
    }

    fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        let Some((fds, name)) = self.parent("exists", key, false)? else {
            return Ok(None);
        };
        let dir = fds.last().expect("the key's folder");
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Ok(Some(st.st_size as u64)),
                FileType::Symlink => Err(crosses_link(key, name)),
                // A folder made by a deeper key is not a key.
                FileType::Directory => Ok(None),
                _ => Err(BucketError::Denied(Denial::NotPlainFile {
                    key: key.to_string(),
                })),
            },
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(io("exists", key, e)),
        }
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        let parts = components(key)?;
        let (name, dirs) = parts.split_last().expect("a key has a component");
        let fds = match self.walk(dirs, false) {
            Ok(fds) => fds,
            Err(WalkError::Missing) => return Ok(()),
            Err(WalkError::Link { at }) => return Err(crosses_link(key, dirs[at])),
            Err(WalkError::Unreadable { .. }) => return Err(io("delete", key, Errno::ACCESS)),
            Err(WalkError::Io(e)) => return Err(io("delete", key, e)),
        };
        // unlinkat removes a link itself, never its target; a folder is refused.
        match rustix::fs::unlinkat(
            fds.last().expect("the key's folder"),
            *name,
            AtFlags::empty(),
        ) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(Errno::ISDIR) => {
                return Err(BucketError::Denied(Denial::FolderNotBlob {
                    key: key.to_string(),
                }));
            }
            Err(e) => return Err(io("delete", key, e)),
        }
        // Folders left empty go too, deepest first, so a deleted release leaves no trace;
        // a folder that is not empty (or already gone) ends the climb, and so does one
        // another user owns: it was theirs before this store wrote under it (a shared
        // namespace folder), and removing it would take it from them.
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        for (i, dir) in dirs.iter().enumerate().rev() {
            let ours = rustix::fs::statat(&fds[i], *dir, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| st.st_uid == me);
            if !ours || rustix::fs::unlinkat(&fds[i], *dir, AtFlags::REMOVEDIR).is_err() {
                break;
            }
        }
        Ok(())
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        // Walk to the deepest folder the prefix names whole; filter by the string prefix.
        let (dir_part, _) = prefix.rsplit_once('/').unwrap_or(("", prefix));
        let dirs: Vec<&str> = if dir_part.is_empty() {
            Vec::new()
        } else {
            components(dir_part)?
        };
        let refused = |path: &str, why| {
            BucketError::Denied(Denial::Unwalkable {
                prefix: prefix.to_string(),
                path: path.to_string(),
                why,
            })
        };
        let start = match self.walk(&dirs, false) {
            Ok(mut fds) => fds.pop().expect("the root is first"),
            Err(WalkError::Missing) => return Ok(Vec::new()),
            Err(WalkError::Link { at }) => {
                let path = dirs[..=at].join("/");
                let why = self.link_or_not_folder(&path);
                return Err(refused(&path, why));
            }
            Err(WalkError::Unreadable { at }) => {
                return Err(refused(&dirs[..=at].join("/"), Unwalkable::Unreadable));
            }
            Err(WalkError::Io(e)) => return Err(io("list", prefix, e)),
        };
        let mut listed = Vec::new();
        // An explicit stack: depth is bounded by the file system, not by our stack.
        let mut pending = vec![(start, dir_part.to_string())];
        while let Some((fd, folder)) = pending.pop() {
            let base = if folder.is_empty() {
                String::new()
            } else {
                format!("{folder}/")
            };
            self.each_name(&fd, prefix, &base, |name| {
                let key = format!("{base}{name}");
                if !key.starts_with(prefix) && !prefix.starts_with(&format!("{key}/")) {
                    return Ok(());
                }
                let st = match rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => st,
                    // Deleted since the folder was read.
                    Err(Errno::NOENT) => return Ok(()),
                    Err(Errno::ACCESS | Errno::PERM) => {
                        return Err(refused(&folder, Unwalkable::Unreadable));
                    }
                    Err(e) => return Err(io("list", &key, e)),
                };
                match FileType::from_raw_mode(st.st_mode) {
                    FileType::RegularFile if key.starts_with(prefix) => listed.push(ObjectMeta {
                        key,
                        size: st.st_size as u64,
                        modified: modified(&st),
                    }),
                    FileType::RegularFile => {}
                    FileType::Directory => {
                        match rustix::fs::openat(&fd, name, DIR_FLAGS, Mode::empty()) {
                            Ok(sub) => pending.push((sub, key)),
                            Err(Errno::NOENT) => {}
                            // Swapped for a link since the stat: never followed.
                            Err(Errno::LOOP | Errno::NOTDIR) => {
                                return Err(refused(&key, Unwalkable::Link));
                            }
                            Err(Errno::ACCESS | Errno::PERM) => {
                                return Err(refused(&key, Unwalkable::Unreadable));
                            }
                            Err(e) => return Err(io("list", &key, e)),
                        }
                    }
                    FileType::Symlink => return Err(refused(&key, Unwalkable::Link)),
                    // A FIFO, socket or device where the prefix needs a folder.
                    _ if !key.starts_with(prefix) => {
                        return Err(refused(&key, Unwalkable::NotFolder));
                    }
                    _ => self.report(messages::entry(key.as_bytes()), LeftOut::NotPlainFile),
                }
                Ok(())
            })?;
        }
        listed.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        Ok(listed)
    }

    /// Whether what stopped a walk at `path` is a link or something else that is not a
    /// folder: the walk's open cannot tell (`O_DIRECTORY | O_NOFOLLOW` answers `ENOTDIR`
    /// for both), and the message should.
    fn link_or_not_folder(&self, path: &str) -> Unwalkable {
        match rustix::fs::statat(&self.root, path, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) != FileType::Symlink => {
                Unwalkable::NotFolder
            }
            _ => Unwalkable::Link,
        }
    }

    /// What lies directly in the folder `prefix` names (empty: the root): its
    /// sub-folders as `prefix + name + "/"` and its files as objects, each sorted. As
    /// `list` does, it fails on a link or a non-folder on the way to the prefix or a link
    /// inside it (fail closed: what lies beyond may be a release), and leaves out, with
    /// a line in the log, FIFOs and names that cannot be keys.
    fn list_delimited(&self, prefix: &str) -> Result<Delimited, BucketError> {
        check_folder_prefix(prefix)?;
        let dirs: Vec<&str> = match prefix.strip_suffix('/') {
            Some(folder) => components(folder)?,
            None => Vec::new(),
        };
        let refused = |path: &str, why| {
            BucketError::Denied(Denial::Unwalkable {
                prefix: prefix.to_string(),
                path: path.to_string(),
                why,
            })
        };
        let fd = match self.walk(&dirs, false) {
            Ok(mut fds) => fds.pop().expect("the root is first"),
            Err(WalkError::Missing) => return Ok(Delimited::default()),
            Err(WalkError::Link { at }) => {
                let path = dirs[..=at].join("/");
                let why = self.link_or_not_folder(&path);
                return Err(refused(&path, why));
            }
            Err(WalkError::Unreadable { at }) => {
                return Err(refused(&dirs[..=at].join("/"), Unwalkable::Unreadable));
            }
            Err(WalkError::Io(e)) => return Err(io("list", prefix, e)),
        };
        let mut out = Delimited::default();
        self.each_name(&fd, prefix, prefix, |name| {
            let key = format!("{prefix}{name}");
            // statat without following: a link is never taken for what it points to.
            let st = match rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                // Deleted since the folder was read.
                Err(Errno::NOENT) => return Ok(()),
                Err(Errno::ACCESS | Errno::PERM) => {
                    return Err(refused(
                        prefix.trim_end_matches('/'),
                        Unwalkable::Unreadable,
                    ));
                }
                Err(e) => return Err(io("list", &key, e)),
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => out.folders.push(format!("{key}/")),
                FileType::RegularFile => out.objects.push(ObjectMeta {
                    key,
                    size: st.st_size as u64,
                    modified: modified(&st),
                }),
                FileType::Symlink => return Err(refused(&key, Unwalkable::Link)),
                _ => self.report(messages::entry(key.as_bytes()), LeftOut::NotPlainFile),
            }
            Ok(())
        })?;
        out.folders.sort_unstable();
        out.objects.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// Calls `each` with the name of every entry of the folder `fd` that can be part of
    /// a key, skipping `.` and `..`; a name that is not UTF-8 or holds a control
    /// character is reported (as `base` + name) and left out. Errors name `prefix`, the
    /// listing's.
    fn each_name(
        &self,
        fd: &OwnedFd,
        prefix: &str,
        base: &str,
        mut each: impl FnMut(&str) -> Result<(), BucketError>,
    ) -> Result<(), BucketError> {
        let mut dir = rustix::fs::Dir::read_from(fd).map_err(|e| io("list", prefix, e))?;
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| io("list", prefix, e))?;
            let raw = entry.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            match std::str::from_utf8(raw).ok().filter(|n| representable(n)) {
                Some(name) => each(name)?,
                None => {
                    let path = [base.as_bytes(), raw].concat();
                    self.report(messages::entry(&path), LeftOut::OddName);
                }
            }
        }
        Ok(())
    }

    /// Logs, once per process, an entry a listing left out; `entry` is quoted
    /// ([`messages::entry`]), so a name cannot forge a log line.
    fn report(&self, entry: String, why: LeftOut) {
        let line = messages::left_out(&entry, why);
        let first = self
            .reported
            .lock()
            .map(|mut seen| seen.insert(entry))
            .unwrap_or(true);
        if first {
            tracing::warn!(store = %self.path.display(), "{line}");
        }
    }
}

#[async_trait]
impl Bucket for FolderBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        let key = key.to_string();
        self.blocking(move |f| f.get(&key, limit)).await
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        let key = key.to_string();
        self.blocking(move |f| f.put(&key, &value)).await
    }

    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        let key = key.to_string();
        self.blocking(move |f| f.exists(&key)).await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        let prefix = prefix.to_string();
        self.blocking(move |f| f.list(&prefix)).await
    }

    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        let key = key.to_string();
        self.blocking(move |f| f.delete(&key)).await
    }

    /// One `delete` a key, each with every check of a single delete, all in one
    /// blocking task: a file system has no batch request, but 1,000 hops to the
    /// blocking pool would cost more than the unlinks.
    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let keys = keys.to_vec();
        self.blocking(move |f| Ok(keys.iter().map(|k| f.delete(k)).collect()))
            .await
    }

    async fn list_delimited(&self, prefix: &str) -> Result<Delimited, BucketError> {
        let prefix = prefix.to_string();
        self.blocking(move |f| f.list_delimited(&prefix)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn bucket() -> (tempfile::TempDir, FolderBucket) {
        let dir = tempfile::tempdir().unwrap();
        let bucket = FolderBucket::open(dir.path()).unwrap();
        (dir, bucket)
    }

    #[tokio::test]
    async fn a_delimited_listing_names_what_lies_directly_under_and_never_follows_a_link() {
        let (dir, bucket) = bucket();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(outside.path().join("secret")).unwrap();
        for key in ["a/x/history/1", "a/y/renders/2", "b/z/k", "top"] {
            bucket.put(key, b"v".to_vec()).await.unwrap();
        }
        let folders = |d: Delimited| d.folders;
        let keys = |d: Delimited| d.objects.into_iter().map(|o| o.key).collect::<Vec<_>>();
        assert_eq!(
            folders(bucket.list_delimited("").await.unwrap()),
            ["a/", "b/"]
        );
        assert_eq!(keys(bucket.list_delimited("").await.unwrap()), ["top"]);
        assert_eq!(
            folders(bucket.list_delimited("a/").await.unwrap()),
            ["a/x/", "a/y/"]
        );
        assert_eq!(
            bucket.list_delimited("missing/").await.unwrap(),
            Delimited::default()
        );
        assert!(
            bucket.list_delimited("a").await.is_err(),
            "not a folder prefix"
        );
        // A link, on the way to the prefix or inside it, fails the listing: what lies
        // beyond it may be a release, and a listing never leaves out what it cannot see.
        symlink(outside.path(), dir.path().join("linked")).unwrap();
        symlink(outside.path(), dir.path().join("a/l")).unwrap();
        for prefix in ["", "a/", "linked/"] {
            let e = bucket.list_delimited(prefix).await.unwrap_err();
            assert!(matches!(e, BucketError::Denied(_)), "{prefix}: {e}");
        }
        assert_eq!(
            folders(bucket.list_delimited("b/").await.unwrap()),
            ["b/z/"]
        );
    }

    #[tokio::test]
    async fn a_key_through_a_planted_link_is_refused_and_the_target_survives() {
        let (dir, bucket) = bucket();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        std::fs::create_dir(dir.path().join("ns")).unwrap();
        symlink(outside.path(), dir.path().join("ns/app")).unwrap();
        for result in [
            bucket.get("ns/app/victim", 1 << 20).await.map(|_| ()),
            bucket.put("ns/app/victim", b"x".to_vec()).await,
            bucket.exists("ns/app/victim").await.map(|_| ()),
            bucket.delete("ns/app/victim").await,
        ] {
            match result {
                Err(BucketError::Denied(m)) => {
                    assert!(m.to_string().contains("symbolic link"), "{m}")
                }
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
        for prefix in ["ns/", "ns/app/", "ns/app/victim", ""] {
            match bucket.list(prefix).await {
                Err(BucketError::Denied(m)) => {
                    assert!(m.to_string().contains("\"ns/app\", a symbolic link"), "{m}")
                }
                other => panic!("list {prefix:?}: expected a refusal, got {other:?}"),
            }
        }
        assert_eq!(
            std::fs::read(outside.path().join("victim")).unwrap(),
            b"keep"
        );
    }

    #[tokio::test]
    async fn a_link_inside_the_prefix_fails_the_listing_and_odd_files_do_not() {
        let (dir, bucket) = bucket();
        bucket.put("ns/app/history/a", b"1".to_vec()).await.unwrap();
        bucket.put("ns/app/renders/r", b"1".to_vec()).await.unwrap();
        let history = dir.path().join("ns/app/history");
        std::fs::write(history.join("tab\there"), b"x").unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            history.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let keys = |listed: Vec<ObjectMeta>| listed.into_iter().map(|o| o.key).collect::<Vec<_>>();
        assert_eq!(
            keys(bucket.list("ns/app/").await.unwrap()),
            ["ns/app/history/a", "ns/app/renders/r"]
        );
        for (name, target) in [("proc", "/proc"), ("loop", "loop"), ("a2", "a")] {
            symlink(target, history.join(name)).unwrap();
            for prefix in ["ns/app/", "ns/app/history/", "ns/app/h", ""] {
                match bucket.list(prefix).await {
                    Err(BucketError::Denied(m)) => assert!(
                        m.to_string()
                            .contains(&format!("\"ns/app/history/{name}\", a symbolic link")),
                        "{m}"
                    ),
                    other => panic!("list {prefix:?}: expected a refusal, got {other:?}"),
                }
            }
            // A listing that does not reach the link still answers.
            assert_eq!(
                keys(bucket.list("ns/app/renders/").await.unwrap()),
                ["ns/app/renders/r"]
            );
            std::fs::remove_file(history.join(name)).unwrap();
        }
    }

    #[tokio::test]
    async fn a_file_or_fifo_where_the_prefix_needs_a_folder_fails_the_listing() {
        let (dir, bucket) = bucket();
        bucket.put("ns/app/history", b"1".to_vec()).await.unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("ns/app/renders"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for (prefix, path) in [
            ("ns/app/history/", "ns/app/history"),
            ("ns/app/history/x/", "ns/app/history"),
            ("ns/app/renders/", "ns/app/renders"),
        ] {
            match bucket.list(prefix).await {
                Err(BucketError::Denied(m)) => assert!(
                    m.to_string()
                        .contains(&format!("\"{path}\", which is not a folder")),
                    "{m}"
                ),
                other => panic!("list {prefix:?}: expected a refusal, got {other:?}"),
            }
        }
        let listed = bucket.list("ns/app/").await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].key, "ns/app/history");
    }

    #[tokio::test]
    async fn delete_leaves_an_empty_folder_another_user_owns() {
        // Only root can give a folder away.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let (dir, bucket) = bucket();
        bucket
            .put("shared/app/renders/r", b"x".to_vec())
            .await
            .unwrap();
        let nobody = 65534;
        std::os::unix::fs::chown(dir.path().join("shared"), Some(nobody), Some(nobody)).unwrap();
        bucket.delete("shared/app/renders/r").await.unwrap();
        assert!(!dir.path().join("shared/app").exists());
        assert!(
            dir.path().join("shared").is_dir(),
            "another user's folder was removed"
        );
    }

    #[tokio::test]
    async fn files_are_private_and_staging_files_are_listed() {
        let (dir, bucket) = bucket();
        bucket
            .put("ns/app/renders/r", b"secret".to_vec())
            .await
            .unwrap();
        let mode = |p: &str| {
            std::fs::metadata(dir.path().join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("ns/app/renders/r") & 0o077, 0);
        assert_eq!(mode("ns") & 0o077, 0);
        assert_eq!(mode("ns/app/renders") & 0o077, 0);
        std::fs::write(dir.path().join("ns/app/renders/r#1.0"), b"torn").unwrap();
        let keys: Vec<_> = bucket
            .list("ns/app/")
            .await
            .unwrap()
            .into_iter()
            .map(|o| o.key)
            .collect();
        assert_eq!(keys, ["ns/app/renders/r", "ns/app/renders/r#1.0"]);
        assert!(matches!(
            bucket.put("ns/app/renders/r#2", vec![]).await,
            Err(BucketError::Denied(_))
        ));
    }

    #[tokio::test]
    async fn a_read_larger_than_the_limit_is_refused_before_it_is_read() {
        let (dir, bucket) = bucket();
        bucket
            .put("ns/app/history/e", b"{}".to_vec())
            .await
            .unwrap();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("ns/app/history/e"))
            .unwrap();
        file.set_len(1 << 40).unwrap();
        match bucket.get("ns/app/history/e", 1 << 30).await {
            Err(BucketError::TooLarge { size, limit, .. }) => {
                assert_eq!((size, limit), (1 << 40, 1 << 30))
            }
            other => panic!("expected TooLarge, got {:?}", other.map(|v| v.len())),
        }
    }

    #[tokio::test]
    async fn a_fifo_at_a_key_does_not_hang_a_read() {
        let (dir, bucket) = bucket();
        std::fs::create_dir_all(dir.path().join("ns/app/renders")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("ns/app/renders/fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(
            bucket.get("ns/app/renders/fifo", 1 << 20).await,
            Err(BucketError::Denied(_))
        ));
        assert!(bucket.list("ns/").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn delete_removes_the_folders_it_empties() {
        let (dir, bucket) = bucket();
        bucket.put("ns/app/renders/r", b"x".to_vec()).await.unwrap();
        bucket
            .put("ns/other/renders/r", b"x".to_vec())
            .await
            .unwrap();
        bucket.delete("ns/app/renders/r").await.unwrap();
        bucket.delete("ns/app/renders/r").await.unwrap();
        assert!(!dir.path().join("ns/app").exists());
        assert!(dir.path().join("ns/other/renders/r").exists());
    }

    #[tokio::test]
    async fn a_batch_delete_refuses_a_key_through_a_link_alone() {
        let (dir, bucket) = bucket();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        bucket.put("ns/app/a", b"x".to_vec()).await.unwrap();
        bucket.put("ns/app/b", b"x".to_vec()).await.unwrap();
        symlink(outside.path(), dir.path().join("ns/app/l")).unwrap();
        let keys = ["ns/app/a", "ns/app/l/victim", "ns/app/absent", "ns/app/b"].map(String::from);
        let answers = bucket.delete_many(&keys).await.unwrap();
        assert_eq!(answers.len(), 4);
        assert!(answers[0].is_ok() && answers[2].is_ok() && answers[3].is_ok());
        match &answers[1] {
            Err(BucketError::Denied(m)) => assert!(m.to_string().contains("symbolic link"), "{m}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert_eq!(
            std::fs::read(outside.path().join("victim")).unwrap(),
            b"keep"
        );
        assert!(bucket.exists("ns/app/a").await.unwrap().is_none());
        assert!(bucket.exists("ns/app/b").await.unwrap().is_none());
    }
}
