//! Files on paths the user names (`--trace FILE`, `replay FILE`), written and read as
//! someone else on the machine may have prepared the path: a link, a FIFO, a huge file,
//! a file of theirs planted in a shared folder (CONTRACT.md §12).

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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

/// Writes `bytes` as a new file at `path` that only its owner can read (a trace holds
/// whole renders, and renders hold Secrets).
///
/// The bytes go into a new file, created exclusively (mode 0600) beside `path` under a
/// name nobody can have prepared, which is then renamed over `path`: whatever stood at
/// `path` is replaced, never written into, so a FIFO, a link or another user's file
/// planted there receives nothing. Something at `path` that this user would not mean to
/// replace (a link, anything but a regular file, a file another user owns) is refused
/// before anything is written.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), LocalFileError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            let kind = meta.file_type();
            if kind.is_symlink() {
                return Err(refused(
                    path,
                    "it is a symbolic link, which is not followed or replaced; remove it or \
                     name another path",
                ));
            }
            if !kind.is_file() {
                return Err(refused(
                    path,
                    "it is not a regular file (a FIFO, device or folder), which a trace is \
                     never written into; name a file",
                ));
            }
            // SAFETY: geteuid has no preconditions and cannot fail.
            let me = unsafe { libc::geteuid() };
            if meta.uid() != me {
                return Err(refused(
                    path,
                    format!(
                        "it belongs to another user (uid {}), who could read the trace; \
                         remove it or name another path",
                        meta.uid()
                    ),
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(path)(e)),
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| refused(path, "it names no file"))?;
    let (staging, mut file) = create_staging(folder, &name.to_string_lossy()).map_err(io(path))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&staging, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&staging);
        return Err(io(path)(e));
    }
    Ok(())
}

/// A new file in `folder`, created exclusively with mode 0600, named after `name` and a
/// random suffix: a name taken (by anyone) is passed over for another.
fn create_staging(folder: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut last = None;
    for _ in 0..16 {
        let staging = folder.join(format!(".{name}.{}.tmp", random_suffix()?));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&staging)
        {
            Ok(file) => return Ok((staging, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
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
