//! The server's secrets: the token it is given or makes (a file only its owner can
//! read, in a folder only its owner can enter) and the random secrets of logins.

/// The largest token file read: a token is a line, never more than a few hundred bytes.
const MAX_TOKEN_FILE: u64 = 64 << 10;

/// Reads a bearer token from a file: its content without surrounding whitespace (a
/// trailing newline is common). The file is checked as a keyring file is
/// ([`render_store::read_secret_file`]): one another user owns holds a token they know,
/// and one others can read gives the token away, so both are refused. An empty token
/// is refused too: it would let anyone in.
pub fn read_token_file(path: &std::path::Path) -> Result<String, String> {
    let bytes = render_store::read_secret_file(path, MAX_TOKEN_FILE)
        .map_err(|why| format!("the token file {} {why}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("the token file {} is not UTF-8 text", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("the token file {} is empty", path.display()));
    }
    if token.chars().any(|c| c.is_control() || c == ' ') {
        return Err(format!(
            "the token in {} has a space or control character inside: a client cannot \
             send it in an Authorization header",
            path.display()
        ));
    }
    Ok(token.to_string())
}

/// A new secret from the operating system's CSPRNG: 256 bits as 64 lowercase hex
/// digits, which are safe in a URL, a header and a cookie as they are.
pub fn random_secret() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| format!("the operating system gave no random bytes: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A token written for this server alone, and the login file that gives it to a
/// browser: files only their owner can read, in a new folder only its owner can enter,
/// all removed when this is dropped (the server stops). A server killed outright leaves
/// them; the folder is private, and a runtime folder is emptied when the user's last
/// session ends.
#[derive(Debug)]
pub struct TokenFile {
    path: std::path::PathBuf,
    login: std::path::PathBuf,
    // Removed, with the files, when dropped.
    _dir: tempfile::TempDir,
}

impl TokenFile {
    /// Writes `token` into a new file `token`, and the page
    /// [`login_file_html`](super::login_file_html) that posts it to `login_url` into
    /// `login.html` (both mode 0600), in a new folder (mode 0700) under
    /// `$XDG_RUNTIME_DIR` when it is a folder of the user's that nobody else can write,
    /// else under the temporary folder.
    pub fn create(token: &str, login_url: &str) -> Result<TokenFile, String> {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let parent = private_runtime_dir().unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("render-store-serve.")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&parent)
            .map_err(|e| {
                format!(
                    "making a private folder for the token in {}: {e} (or give \
                     --token-file)",
                    parent.display()
                )
            })?;
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
                .and_then(|mut file| file.write_all(text.as_bytes()))
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            Ok::<_, String>(path)
        };
        let path = write("token", token)?;
        let login = write("login.html", &super::login_file_html(login_url, token))?;
        Ok(TokenFile {
            path,
            login,
            _dir: dir,
        })
    }

    /// Where the token is.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Where the login file is.
    pub fn login_path(&self) -> &std::path::Path {
        &self.login
    }
}

/// `$XDG_RUNTIME_DIR`, when it is an absolute path to a folder of this user's that no
/// group or other user can write (so nobody else can swap what is made inside).
pub(super) fn private_runtime_dir() -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dir = std::path::PathBuf::from(std::env::var_os("XDG_RUNTIME_DIR")?);
    let meta = std::fs::metadata(&dir).ok()?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    (dir.is_absolute() && meta.is_dir() && meta.uid() == me && meta.mode() & 0o022 == 0)
        .then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_hex() {
        let a = random_secret().unwrap();
        let b = random_secret().unwrap();
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }
}
