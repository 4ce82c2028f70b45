//! The keyring a store encrypts its render blobs with (CONTRACT.md, Encryption at rest):
//! read from a file this host checks, parsed by the component, and passed back into the
//! component with every call that reads or writes a render blob.

use crate::error::{Error, Result};
use crate::runtime::{Runtime, wit};
use std::path::Path;

/// The largest keyring file read; the component refuses larger texts too.
const MAX_FILE: u64 = 1 << 20;

/// The refusal of encryption required without a keyring, in the words of the
/// component's `encryption` record (wit/render-store.wit), which gives it too.
pub(crate) const REQUIRED_WITHOUT_KEYS: &str = "encryption is required, and the keyring is \
     empty: a store whose render blobs must all be sealed needs a keyring to seal and open \
     them";

/// The keys of an encrypted store, the one new blobs are sealed with first; empty for a
/// plaintext store ([`Keyring::default`]). Never printed: `Debug` shows the ids alone.
#[derive(Clone, Default)]
pub struct Keyring {
    keys: Vec<wit::EncryptionKey>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("ids", &self.ids())
            .finish_non_exhaustive()
    }
}

impl Keyring {
    /// Reads a keyring from the text of a keyring file (`<id> <base64 key>` lines), as
    /// the component parses it.
    pub async fn parse(runtime: &Runtime, text: &[u8]) -> Result<Keyring> {
        let keys = runtime.logic().parse_keyring(text).await?;
        Ok(Keyring { keys })
    }

    /// Reads the keyring file at `path`. The file must be a regular file (links are
    /// followed, as a Kubernetes Secret volume needs), owned by this user or by root,
    /// and readable by its owner alone (mode 0600 or 0400): anyone else who could read
    /// it could read every Secret of the store, and anyone else who could write it
    /// could make the store seal new renders under a key of their own.
    pub async fn from_file(runtime: &Runtime, path: &Path) -> Result<Keyring> {
        let text = crate::secret_file::read_secret_file(path, MAX_FILE).map_err(|reason| {
            Error::InvalidInput(format!("the keyring file {}: {reason}", path.display()))
        })?;
        Keyring::parse(runtime, &text).await.map_err(|e| match e {
            Error::InvalidInput(m) => {
                Error::InvalidInput(format!("the keyring file {}: {m}", path.display()))
            }
            other => other,
        })
    }

    /// Whether the ring holds no key (a plaintext store).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key ids, in ring order: what a trace records, never a key.
    pub fn ids(&self) -> Vec<String> {
        self.keys.iter().map(|k| k.id.clone()).collect()
    }

    pub(crate) fn wit(&self) -> &Vec<wit::EncryptionKey> {
        &self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;

    const KEY: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";

    fn write(dir: &Path, name: &str, text: &str, mode: u32) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[tokio::test]
    async fn a_private_keyring_file_is_read_and_an_open_or_odd_one_is_refused() {
        let rt = Runtime::new(Limits::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let good = write(dir.path(), "keys", &format!("k1 {KEY}\nk0 {KEY}\n"), 0o600);
        let ring = Keyring::from_file(&rt, &good).await.unwrap();
        assert_eq!(ring.ids(), ["k1", "k0"]);
        assert!(!format!("{ring:?}").contains(KEY));
        let open = write(dir.path(), "open", &format!("k1 {KEY}\n"), 0o644);
        let err = Keyring::from_file(&rt, &open)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mode 0644") && err.contains("chmod 600"),
            "{err}"
        );
        let bad = write(dir.path(), "bad", "k1 nope\n", 0o600);
        let err = Keyring::from_file(&rt, &bad).await.unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("bad"), "{err}");
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let err = Keyring::from_file(&rt, &fifo)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a regular file"), "{err}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        assert_eq!(
            Keyring::from_file(&rt, &link).await.unwrap().ids(),
            ["k1", "k0"]
        );
    }

    #[tokio::test]
    async fn encryption_required_needs_a_keyring_in_the_library_and_the_component_alike() {
        let store = crate::RenderStore::open("mem://").unwrap().unwrap();
        let app = crate::Release::new("ns", "app");
        let early = store.with_encryption_required(true).unwrap_err();
        let ring = Keyring::parse(store.runtime(), format!("k1 {KEY}\n").as_bytes())
            .await
            .unwrap();
        let required = store
            .with_keyring(ring)
            .with_encryption_required(true)
            .unwrap();
        assert!(required.encryption_required());
        // A keyring taken away afterwards keeps the flag: the component refuses it, in
        // the same words, before any bucket call.
        let emptied = required.with_keyring(Keyring::default());
        let late = emptied
            .put_render(&app, &[b"{}".to_vec()])
            .await
            .unwrap_err();
        for err in [&early, &late] {
            assert!(
                matches!(err, crate::Error::InvalidInput(m) if m == REQUIRED_WITHOUT_KEYS),
                "{err}"
            );
        }
        assert!(store.bucket().list("").await.unwrap().is_empty());
    }
}
