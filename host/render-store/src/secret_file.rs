//! Files that hold a secret the user gives by path (a keyring, the observer's token),
//! read as another user of the machine may have prepared the path.

use std::path::Path;

/// The bytes of the secret file at `path`, or why it is refused (a phrase to follow
/// the file's name: "is not a regular file").
///
/// The file must be a regular file (a link is followed, as a Kubernetes Secret volume
/// needs), owned by this user or by root, with no permission for group or others
/// (mode 0600 or 0400), and at most `max_bytes`. Whoever else owns such a file chose
/// what it holds (a token they know, keys of theirs); whoever else can read it knows
/// the secret. A FIFO at the path does not block the open, and nothing beyond
/// `max_bytes` is read even if the file grows.
pub fn read_secret_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("cannot be opened: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me && meta.uid() != 0 {
            return Err(format!(
                "is owned by user {}, not by this user ({me}) or root: whoever owns it \
                 chooses what it holds",
                meta.uid()
            ));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(format!(
                "has mode {:04o}: others can read or write it; make it readable by its \
                 owner alone (chmod 600; in Kubernetes, defaultMode: 0400)",
                meta.mode() & 0o7777
            ));
        }
    }
    if meta.len() > max_bytes {
        return Err(format!(
            "is {} bytes, over the {max_bytes} it may hold",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "grew past the {max_bytes} bytes it may hold while it was read"
        ));
    }
    Ok(bytes)
}
