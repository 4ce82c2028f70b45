//! Files on paths the user names (`--trace FILE`, `replay FILE`), written and read as
//! someone else on the machine may have prepared the path: a link, a FIFO, a huge file,
//! a file of theirs planted in a shared folder (CONTRACT.md §12).

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Why a file on a named path was not written or read.
#[derive(Debug, thiserror::Error)]
pub enum LocalFileError {
    /// Something is at the path that this command will not write over or read.
    #[error("{path}: {why}")]
    Refused {
        /// The path as given.
        path: PathBuf,
        /// What is there, and what to do.
        why: String,
    },
    /// The file system failed.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LocalFileError + '_ {
    move |source| LocalFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn refused(path: &Path, why: impl Into<String>) -> LocalFileError {
    LocalFileError::Refused {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

/// Who may read a file written by [`write_file`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readers {
    /// Its owner alone (mode 0600): traces hold whole renders, and renders hold Secrets.
    Owner,
    /// Everyone (mode 0644): what holds nothing secret, such as the component.
    Everyone,
}

/// Writes `bytes` as a new file at `path` that only its owner can read (a trace holds
/// whole renders, and renders hold Secrets): [`write_file`] with [`Readers::Owner`].
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), LocalFileError> {
    write_file(path, bytes, Readers::Owner)
}

/// Writes `bytes` as a new file at `path`, readable by `readers`.
///
/// The folders on the way are opened one at a time from the root (or the current
/// folder, for a relative path) without following a symbolic link: a link anywhere in
/// the path, which another user may have planted to send the file where they choose,
/// is refused with an error naming it, and a link swapped in during the walk is met
/// as a link too (no check-then-use window).
///
/// The bytes go into a new file, created exclusively beside `path` under a name nobody
/// can have prepared, which is then renamed over `path` within the folder already
/// opened: whatever stood at `path` is replaced, never written into, so a FIFO, a link
/// or another user's file planted there receives nothing. Something at `path` that this
/// user would not mean to replace (a link, anything but a regular file, a file another
/// user owns) is refused before anything is written.
pub fn write_file(path: &Path, bytes: &[u8], readers: Readers) -> Result<(), LocalFileError> {
    let name = match path.components().next_back() {
        Some(Component::Normal(name)) => name,
        _ => return Err(refused(path, "it names no file")),
    };
    let folder = open_folder_of(path)?;
    match rustix::fs::statat(&folder, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => check_replaceable(path, &st)?,
        Err(Errno::NOENT) => {}
        Err(e) => return Err(io(path)(e.into())),
    }
    let mode = match readers {
        Readers::Owner => 0o600,
        Readers::Everyone => 0o644,
    };
    let (staging, mut file) =
        create_staging(&folder, &name.to_string_lossy(), mode).map_err(io(path))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| Ok(rustix::fs::renameat(&folder, &staging, &folder, name)?));
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(&folder, &staging, AtFlags::empty());
        return Err(io(path)(e));
    }
    Ok(())
}

/// Why what stands at a path may not be replaced, if it may not.
fn check_replaceable(path: &Path, st: &rustix::fs::Stat) -> Result<(), LocalFileError> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => Err(refused(
            path,
            "it is a symbolic link, which is not followed or replaced; remove it or name \
             another path",
        )),
        FileType::RegularFile if st.st_uid != euid() => Err(refused(
            path,
            format!(
                "it belongs to another user (uid {}), who could read the file; remove it or \
                 name another path",
                st.st_uid
            ),
        )),
        FileType::RegularFile => Ok(()),
        _ => Err(refused(
            path,
            "it is not a regular file (a FIFO, device or folder), which is never written \
             into; name a file",
        )),
    }
}

/// The folder `path`'s file goes in, opened component by component without following a
/// link.
fn open_folder_of(path: &Path) -> Result<OwnedFd, LocalFileError> {
    let mut parts: Vec<Component> = path.components().collect();
    parts.pop();
    let start = if path.is_absolute() { "/" } else { "." };
    let mut folder = rustix::fs::openat(rustix::fs::CWD, start, WALK_FLAGS, Mode::empty())
        .map_err(|e| io(path)(e.into()))?;
    let mut walked = PathBuf::new();
    for part in parts {
        walked.push(part);
        let name = match part {
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir => std::ffi::OsStr::new(".."),
            Component::Normal(name) => name,
            Component::Prefix(_) => return Err(refused(path, "it is not a Unix path")),
        };
        folder = match rustix::fs::openat(&folder, name, WALK_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let what = match rustix::fs::statat(&folder, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                        "a symbolic link, which is not followed (another user may have \
                         planted it to send the file elsewhere); name the folder it leads \
                         to instead"
                    }
                    _ => "not a folder",
                };
                return Err(refused(path, format!("{} is {what}", walked.display())));
            }
            Err(e) => {
                return Err(LocalFileError::Io {
                    path: walked,
                    source: e.into(),
                });
            }
        };
    }
    Ok(folder)
}

/// Folders are walked through without reading them (`O_PATH` needs no read permission:
/// a home folder may be 0711) and without following a link.
#[cfg(target_os = "linux")]
const WALK_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
#[cfg(not(target_os = "linux"))]
const WALK_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// A new file in `folder`, created exclusively with `mode`, named after `name` and a
/// random suffix: a name taken (by anyone) is passed over for another.
fn create_staging(
    folder: &OwnedFd,
    name: &str,
    mode: u32,
) -> std::io::Result<(String, std::fs::File)> {
    let mut last = None;
    for _ in 0..16 {
        let staging = format!(".{name}.{}.tmp", random_suffix()?);
        match rustix::fs::openat(
            folder,
            staging.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        ) {
            Ok(fd) => return Ok((staging, std::fs::File::from(fd))),
            Err(Errno::EXIST) => last = Some(std::io::Error::from(Errno::EXIST)),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free staging name")))
}

/// 64 random bits as hex, from the operating system.
fn random_suffix() -> std::io::Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The text of the regular file at `path`, if it is at most `limit` bytes. A FIFO,
/// device or folder is refused without blocking on it (a FIFO's open would wait for a
/// writer), and a larger file before it is read.
pub fn read_regular(path: &Path, limit: u64) -> Result<String, LocalFileError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(io(path))?;
    let meta = file.metadata().map_err(io(path))?;
    if !meta.is_file() {
        return Err(refused(
            path,
            "it is not a regular file (a FIFO, device or folder); a trace is read from a file",
        ));
    }
    if meta.len() > limit {
        return Err(refused(
            path,
            format!(
                "it is {} bytes, over the call's memory cap of {limit} bytes that a replay \
                 must hold it in; raise --memory-cap-mib if the trace is legitimate",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // Bounded again while reading: the file may grow after the fstat.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() as u64 > limit {
        return Err(refused(
            path,
            format!("it grew past the call's memory cap of {limit} bytes while it was read"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        refused(
            path,
            format!(
                "it is not UTF-8 text (at byte {}), so not a trace",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn a_trace_replaces_what_was_there_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // Another name for the old file: it must not see the trace.
        std::fs::hard_link(&path, dir.path().join("other-name")).unwrap();
        write_private(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(
            std::fs::read(dir.path().join("other-name")).unwrap(),
            b"old"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // No staging file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn links_fifos_and_folders_are_refused_and_receive_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.path().join("link");
        symlink(&target, &link).unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o666),
            0,
        )
        .unwrap();
        for path in [&link, &fifo, &dir.path().to_path_buf()] {
            match write_private(path, b"secret") {
                Err(LocalFileError::Refused { .. }) => {}
                other => panic!("{}: {other:?}", path.display()),
            }
            match read_regular(path, 1 << 20) {
                Err(LocalFileError::Refused { .. }) if path != &link => {}
                // A link to a regular file is read: reading gives nothing away.
                Ok(text) if path == &link => assert_eq!(text, "keep"),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_link_anywhere_on_the_way_is_refused_and_receives_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // Another user's `ln -s /root/private out`: the file must not land in private/.
        let private = dir.path().join("private");
        std::fs::create_dir_all(private.join("deeper")).unwrap();
        std::fs::write(private.join("trace.jsonl"), b"keep").unwrap();
        symlink(&private, dir.path().join("out")).unwrap();
        for (path, named) in [
            (dir.path().join("out/trace.jsonl"), "out"),
            (dir.path().join("out/deeper/trace.jsonl"), "out"),
            (dir.path().join("out/../trace.jsonl"), "out"),
        ] {
            match write_private(&path, b"secret") {
                Err(LocalFileError::Refused { why, .. }) => {
                    assert!(why.contains("symbolic link"), "{why}");
                    assert!(
                        why.starts_with(&format!("{}", dir.path().join(named).display())),
                        "{why}"
                    );
                }
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        assert_eq!(std::fs::read(private.join("trace.jsonl")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(&private).unwrap().count(), 2);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        // A file where a folder should be is refused too, and named.
        std::fs::write(dir.path().join("plain"), b"x").unwrap();
        match write_private(&dir.path().join("plain/t.jsonl"), b"secret") {
            Err(LocalFileError::Refused { why, .. }) => {
                assert!(why.contains("not a folder"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        // The same walk writes where no link is in the way, `..` included.
        let through_parent = private.join("deeper/../written.jsonl");
        write_private(&through_parent, b"ok").unwrap();
        assert_eq!(std::fs::read(private.join("written.jsonl")).unwrap(), b"ok");
    }

    #[test]
    fn a_public_file_is_readable_by_everyone_the_umask_allows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("component.wasm");
        write_file(&path, b"\0asm", Readers::Everyone).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o600, 0o600);
        assert_eq!(
            mode & 0o133,
            0,
            "never executable or writable by others: {mode:o}"
        );
    }

    #[test]
    fn a_file_over_the_cap_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(1 << 40).unwrap();
        match read_regular(&path, 1 << 20) {
            Err(LocalFileError::Refused { why, .. }) => {
                assert!(why.contains("1099511627776 bytes"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }
}
