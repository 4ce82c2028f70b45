//! Render blobs encrypted at rest (CONTRACT.md, Encryption at rest): a keyring of
//! 256-bit keys, and the blob format that seals canonical bytes under its first key.
//!
//! XChaCha20-Poly1305 with a nonce derived from the key, the release and the renderRef:
//! the same render of a release sealed under the same key gives the same blob, so
//! put-render's size check still deduplicates, while two different renders, or one
//! render of two releases, never share a nonce. The renderRef stays the hash of the
//! plaintext canonical bytes and is checked after decryption, exactly as on a
//! plaintext store.
//!
//! A sealed blob is a header line, then the ciphertext and its tag:
//!
//! ```text
//! render-store-encrypted v2 <key id> <key check>\n<ciphertext><16-byte tag>
//! ```
//!
//! `<key check>` is 16 hex digits derived from the key (not the key, nor anything that
//! helps find it): it tells "the keyring's key of that name is a different key" from
//! "the blob was changed". The header, the release and the renderRef are the cipher's
//! associated data, so none can be edited nor the blob moved under another renderRef
//! or into another release unnoticed: a writer of the bucket who copies a sealed render
//! of one release into another gets a blob that does not open there. Format `v1`, which
//! earlier versions wrote, left the release out; it still opens where encryption is not
//! required, and `rekey` rewrites it as `v2`. A plaintext canonical render is empty or
//! starts with `{`, so the formats never meet.

use crate::error::{Error, Result};
use crate::json::quote;
use base64::Engine as _;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{Tag, XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;

/// The first bytes of every sealed blob.
pub const MAGIC: &[u8] = b"render-store-encrypted ";
/// The blob format this version writes: renders bound to their release.
const VERSION: &str = "v2";
/// The format earlier versions wrote, which left a render's release out of its
/// associated data.
const UNBOUND_VERSION: &str = "v1";
/// Bytes of a key.
pub const KEY_BYTES: usize = 32;
/// Bytes of the Poly1305 tag after the ciphertext.
const TAG_BYTES: usize = 16;
/// XChaCha20's nonce.
const NONCE_BYTES: usize = 24;
/// The longest key id.
const MAX_ID: usize = 64;
/// The largest keyring text read (a few thousand keys).
const MAX_KEYRING_TEXT: usize = 1 << 20;

/// One key of a keyring as the component seals with it: an id that blobs name, its 32
/// secret bytes and the subkeys derived from them. (The WIT's `encryption-key`, the id
/// and secret a host passes in, is `crate::wit::types::EncryptionKey`.)
#[derive(Clone, PartialEq, Eq)]
pub struct SealingKey {
    id: String,
    secret: [u8; KEY_BYTES],
    cipher_key: [u8; KEY_BYTES],
    nonce_key: [u8; KEY_BYTES],
    check: String,
}

/// Never prints the key: only its id.
impl fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealingKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A subkey of `secret` for one purpose, so the cipher key, the nonce key and the key
/// check are independent of each other (HMAC-SHA-256 as the derivation function).
fn derive(secret: &[u8; KEY_BYTES], purpose: &str) -> [u8; KEY_BYTES] {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes any key");
    mac.update(b"convoy render-store v1 ");
    mac.update(purpose.as_bytes());
    mac.finalize().into_bytes().into()
}

impl SealingKey {
    /// A key from its id and its 32 bytes. The id is 1 to 64 characters of `A-Z`,
    /// `a-z`, `0-9`, `.`, `_` and `-` (it is written into every blob's header).
    pub fn new(id: &str, secret: &[u8]) -> Result<Self> {
        validate_id(id)?;
        let secret: &[u8; KEY_BYTES] = secret.try_into().map_err(|_| {
            Error::InvalidInput(format!(
                "encryption key {} is {} bytes; a key is {KEY_BYTES} bytes (256 bits)",
                quote(id),
                secret.len()
            ))
        })?;
        Ok(SealingKey {
            id: id.to_string(),
            secret: *secret,
            cipher_key: derive(secret, "cipher key"),
            nonce_key: derive(secret, "nonce key"),
            check: hex::encode(&derive(secret, "key check")[..8]),
        })
    }

    /// The key's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The key's 32 bytes (what a host passes back in with each call).
    pub fn secret(&self) -> &[u8; KEY_BYTES] {
        &self.secret
    }

    /// The nonce of the blob of `render_ref` of `release` under this key (`None`: a
    /// `v1` blob, whose nonce named the renderRef alone). A bound nonce's input starts
    /// with `bound`, a `v1` one with `sha256:`, a named blob's with `named`: no two
    /// meet, and neither do two releases', which a reused nonce would let forge tags.
    fn nonce(&self, release: Option<&str>, render_ref: &str) -> XNonce {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.nonce_key).expect("HMAC takes any key");
        if let Some(release) = release {
            mac.update(b"bound\0");
            mac.update(release.as_bytes());
            mac.update(b"\0");
        }
        mac.update(render_ref.as_bytes());
        let digest = mac.finalize().into_bytes();
        *XNonce::from_slice(&digest[..24])
    }

    /// The nonce of a blob sealed by [`Keyring::seal_named`]. A render's nonce input
    /// is its renderRef, which starts with `sha256:`; this one starts with `named`, so
    /// the two never meet.
    fn named_nonce(&self, name: &str, plain: &[u8]) -> XNonce {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.nonce_key).expect("HMAC takes any key");
        mac.update(b"named\0");
        mac.update(name.as_bytes());
        mac.update(b"\0");
        mac.update(plain);
        let digest = mac.finalize().into_bytes();
        *XNonce::from_slice(&digest[..NONCE_BYTES])
    }

    fn header(&self) -> String {
        self.header_of(VERSION)
    }

    fn header_of(&self, version: &str) -> String {
        format!(
            "render-store-encrypted {version} {} {}\n",
            self.id, self.check
        )
    }

    /// The key that authenticates history entries (CONTRACT.md §14): a subkey of its
    /// own, so an entry's MAC says nothing about the cipher or nonce keys.
    pub(crate) fn entry_mac_key(&self) -> [u8; KEY_BYTES] {
        derive(&self.secret, "history entry mac")
    }
}

/// The bytes a keyring field holds if it is standard base64.
fn decode_key(field: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(field).ok()
}

fn validate_id(id: &str) -> Result<()> {
    let ok = (1..=MAX_ID).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "encryption key id {} must be 1 to {MAX_ID} characters of A-Z, a-z, 0-9, \
             '.', '_' and '-'",
            quote(id)
        )))
    }
}

/// The refusal of encryption required with an empty keyring: the rule promises that
/// every blob opens under a key of the ring, which an empty ring cannot keep
/// (wit/render-store.wit words it so for every host).
pub const REQUIRED_WITHOUT_KEYS: &str = "encryption is required, and the keyring is empty: a \
     store whose render blobs must all be sealed needs a keyring to seal and open them";

/// The keys a store encrypts with: new blobs under the first, reads under any.
/// Empty: a plaintext store, blobs as they always were. With `required`, every blob
/// must be sealed under one of the keys: a plaintext blob is refused as corrupt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keyring {
    keys: Vec<SealingKey>,
    required: bool,
    /// History entries are neither given nor checked for a MAC: how traces recorded
    /// before entries were authenticated replay (TRACES.md, versions).
    unauthenticated_entries: bool,
}

impl Keyring {
    /// A keyring of `keys`, the first the one new blobs are sealed with. Ids must be
    /// distinct.
    pub fn new(keys: Vec<SealingKey>) -> Result<Self> {
        for (i, key) in keys.iter().enumerate() {
            if keys[..i].iter().any(|k| k.id == key.id) {
                return Err(Error::InvalidInput(format!(
                    "the keyring holds key id {} twice; each key needs an id of its own",
                    quote(&key.id)
                )));
            }
        }
        Ok(Keyring {
            keys,
            required: false,
            unauthenticated_entries: false,
        })
    }

    /// This ring, requiring (or not) that every render blob be sealed under one of its
    /// keys. Where it is required, a plaintext blob is what a writer without the key
    /// may have planted, so it is refused instead of trusted. Requiring it of an empty
    /// ring is [`REQUIRED_WITHOUT_KEYS`].
    pub fn require(self, required: bool) -> Result<Self> {
        if required && self.keys.is_empty() {
            return Err(Error::InvalidInput(REQUIRED_WITHOUT_KEYS.into()));
        }
        Ok(Keyring { required, ..self })
    }

    /// Whether every render blob must be sealed under one of the ring's keys.
    pub fn required(&self) -> bool {
        self.required
    }

    /// Whether history entries are authenticated with this ring (it holds a key):
    /// written with a MAC and judged by it when read (CONTRACT.md §14).
    pub fn authenticates_entries(&self) -> bool {
        !self.keys.is_empty() && !self.unauthenticated_entries
    }

    /// Whether only authenticated history entries count (encryption required, entries
    /// authenticated): what `record`'s dedup, GC's `keep` and the views go by.
    pub fn counts_only_authenticated(&self) -> bool {
        self.required && self.authenticates_entries()
    }

    /// This ring, judging history entries as the builds before entry MACs did: none is
    /// checked, and where encryption is required every entry still counts. Only the
    /// replay of a trace those builds recorded asks for it.
    pub(crate) fn without_entry_authentication(self) -> Self {
        Keyring {
            unauthenticated_entries: true,
            ..self
        }
    }

    /// No keys: a plaintext store.
    pub fn empty() -> Self {
        Keyring::default()
    }

    /// Reads a keyring file: one key a line, `<id> <key>`, the key as standard base64
    /// of 32 bytes (what `head -c 32 /dev/urandom | base64` prints); blank lines and
    /// lines starting with `#` are skipped; the first key seals new blobs. Errors name
    /// the line and what is wrong with it, and never quote any of its fields: a key
    /// pasted where the id belongs must not reach a log through the message.
    pub fn parse(text: &[u8]) -> Result<Self> {
        if text.len() > MAX_KEYRING_TEXT {
            return Err(Error::InvalidInput(format!(
                "the keyring is {} bytes, over the {MAX_KEYRING_TEXT} a keyring may hold",
                text.len()
            )));
        }
        let text = std::str::from_utf8(text)
            .map_err(|_| Error::InvalidInput("the keyring is not UTF-8 text".into()))?;
        let mut keys: Vec<SealingKey> = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |m: &str| Error::InvalidInput(format!("keyring line {}: {m}", n + 1));
            let fields: Vec<&str> = line.split_ascii_whitespace().collect();
            let &[id, key] = fields.as_slice() else {
                return Err(at(&format!(
                    "expected two fields, `<id> <key>`, the key as base64 of 32 bytes; the \
                     line has {}",
                    fields.len()
                )));
            };
            let secret = decode_key(key);
            if validate_id(id).is_err() {
                return Err(at(
                    if decode_key(id).is_some_and(|k| k.len() == KEY_BYTES)
                        && validate_id(key).is_ok()
                    {
                        "the fields look swapped: the key comes first and the id second; \
                         write `<id> <base64 key>`"
                    } else {
                        "the key id (the first field) must be 1 to 64 characters of A-Z, \
                         a-z, 0-9, '.', '_' and '-'"
                    },
                ));
            }
            let Some(secret) = secret else {
                return Err(at(
                    "the key (the second field) is not standard base64; write the base64 \
                     of 32 bytes, as `head -c 32 /dev/urandom | base64` prints it",
                ));
            };
            if secret.len() != KEY_BYTES {
                return Err(at(&format!(
                    "the key (the second field) is {} bytes; a key is {KEY_BYTES} bytes \
                     (256 bits)",
                    secret.len()
                )));
            }
            if let Some(first) = keys.iter().position(|k| k.id == id) {
                return Err(at(&format!(
                    "the key id is the one of line {} too; each key needs an id of its own",
                    lines[first]
                )));
            }
            keys.push(SealingKey::new(id, &secret)?);
            lines.push(n + 1);
        }
        if keys.is_empty() {
            return Err(Error::InvalidInput(
                "the keyring holds no key: write `<id> <key>` lines, the key as base64 of \
                 32 bytes"
                    .into(),
            ));
        }
        Keyring::new(keys)
    }

    /// Whether the ring holds no key (a plaintext store).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys, the sealing one first.
    pub fn keys(&self) -> &[SealingKey] {
        &self.keys
    }

    /// The ids, in ring order.
    pub fn ids(&self) -> Vec<String> {
        self.keys.iter().map(|k| k.id.clone()).collect()
    }

    /// The size of the blob that holds `plain_len` canonical bytes on this store.
    pub fn blob_len(&self, plain_len: usize) -> u64 {
        match self.keys.first() {
            None => plain_len as u64,
            Some(k) => (k.header().len() + plain_len + TAG_BYTES) as u64,
        }
    }

    /// The header a blob sealed on this store starts with (empty on a plaintext store),
    /// in a buffer with room for `plain_len` canonical bytes and the tag after it:
    /// put-render writes the canonical bytes after the header, then
    /// [`Keyring::seal_in_place`] appends the tag without moving the blob.
    pub fn header(&self, plain_len: usize) -> Vec<u8> {
        let mut blob = Vec::with_capacity(self.blob_len(plain_len) as usize);
        if let Some(k) = self.keys.first() {
            blob.extend_from_slice(k.header().as_bytes());
        }
        blob
    }

    /// Seals `blob`, which is [`Keyring::header`] followed by the canonical bytes of
    /// `render_ref` of `release` (`NAMESPACE/NAME`), in place: the bytes encrypted where
    /// they are and the tag appended, bound to the release. Nothing to do on a plaintext
    /// store.
    pub fn seal_in_place(&self, release: &str, render_ref: &str, blob: &mut Vec<u8>) {
        let Some(key) = self.keys.first() else {
            return;
        };
        let header = key.header();
        debug_assert!(blob.starts_with(header.as_bytes()));
        let cipher = XChaCha20Poly1305::new((&key.cipher_key).into());
        let aad = render_associated_data(&header, Some(release), render_ref);
        let tag = cipher
            .encrypt_in_place_detached(
                &key.nonce(Some(release), render_ref),
                &aad,
                &mut blob[header.len()..],
            )
            .expect("a render fits XChaCha20-Poly1305's message limit");
        blob.extend_from_slice(&tag);
    }

    /// The blob that holds `plain` (the canonical bytes of `render_ref` of `release`):
    /// sealed under the first key, bound to the release, or `plain` itself on a
    /// plaintext store.
    pub fn seal(&self, release: &str, render_ref: &str, plain: Vec<u8>) -> Vec<u8> {
        if self.keys.is_empty() {
            return plain;
        }
        let mut blob = self.header(plain.len());
        blob.extend_from_slice(&plain);
        drop(plain);
        self.seal_in_place(release, render_ref, &mut blob);
        blob
    }

    /// Whether `blob` is sealed under this ring's first key in the current format
    /// (bound to its release): rekey leaves it as it is.
    pub fn sealed_under_first(&self, blob: &[u8]) -> bool {
        match (self.keys.first(), Header::read(blob)) {
            (Some(key), Some(Ok(h))) => h.id == key.id && h.check == key.check && h.bound,
            _ => false,
        }
    }

    /// Seals `plain`, a blob the store writes that is not a render (a release's index,
    /// CONTRACT.md §14), stored under the name `name`: under the first key, the header,
    /// then the nonce, the ciphertext and the tag. Its content is not fixed by its key,
    /// so the nonce is derived from the name and the bytes (equal bytes seal to equal
    /// blobs, so a writer can tell an unchanged index; different bytes never share a
    /// nonce) and written into the blob; the associated data is the header and the name,
    /// so a blob moved under another name does not open. `plain` itself on a plaintext
    /// store.
    pub fn seal_named(&self, name: &str, plain: &[u8]) -> Vec<u8> {
        let Some(key) = self.keys.first() else {
            return plain.to_vec();
        };
        let header = key.header();
        let nonce = key.named_nonce(name, plain);
        let mut blob = Vec::with_capacity(header.len() + NONCE_BYTES + plain.len() + TAG_BYTES);
        blob.extend_from_slice(header.as_bytes());
        blob.extend_from_slice(&nonce);
        let at = blob.len();
        blob.extend_from_slice(plain);
        let cipher = XChaCha20Poly1305::new((&key.cipher_key).into());
        let tag = cipher
            .encrypt_in_place_detached(&nonce, &associated_data(&header, name), &mut blob[at..])
            .expect("an index fits XChaCha20-Poly1305's message limit");
        blob.extend_from_slice(&tag);
        blob
    }

    /// The bytes a blob sealed by [`Keyring::seal_named`] under `name` holds (stored
    /// under `blob_key`), or the blob itself when it is plaintext, with the errors of
    /// [`Keyring::open`].
    pub fn open_named(&self, blob_key: &str, name: &str, mut blob: Vec<u8>) -> Result<Vec<u8>> {
        let Some((key, header_len, _)) = self.key_of(blob_key, &blob)? else {
            return Ok(blob);
        };
        if blob.len() < header_len + NONCE_BYTES + TAG_BYTES {
            return Err(Error::Corrupt(format!(
                "blob {blob_key} is shorter than its header, nonce and tag; it was changed \
                 or damaged outside the render store and must not be used"
            )));
        }
        let nonce = *XNonce::from_slice(&blob[header_len..header_len + NONCE_BYTES]);
        let aad = associated_data(&blob_header(&blob, header_len), name);
        let tag_at = blob.len() - TAG_BYTES;
        let tag = *Tag::from_slice(&blob[tag_at..]);
        let cipher = XChaCha20Poly1305::new((&key.cipher_key).into());
        cipher
            .decrypt_in_place_detached(
                &nonce,
                &aad,
                &mut blob[header_len + NONCE_BYTES..tag_at],
                &tag,
            )
            .map_err(|_| {
                Error::Corrupt(format!(
                    "blob {blob_key} fails authentication under key {:?}: it was changed or \
                     damaged outside the render store, or moved, and must not be used",
                    key.id
                ))
            })?;
        blob.truncate(tag_at);
        blob.drain(..header_len + NONCE_BYTES);
        Ok(blob)
    }

    /// The key of the ring that opens `blob` (stored under `blob_key`) and the length of
    /// its header, or `None` for a plaintext blob, which is refused where encryption is
    /// required. A header that does not read, or names a key the ring lacks or holds as
    /// another key, is the error [`Keyring::open`] gives.
    fn key_of(&self, blob_key: &str, blob: &[u8]) -> Result<Option<(&SealingKey, usize, bool)>> {
        let header = match Header::read(blob) {
            None if self.required => {
                return Err(Error::Corrupt(format!(
                    "encryption is required, and blob {blob_key} is plaintext: only a blob \
                     sealed under a key of the keyring is trusted, so it is not used (a \
                     writer without the key may have put it there); a put of this render \
                     with the keyring rewrites it sealed"
                )));
            }
            None => return Ok(None),
            Some(Err(why)) => {
                return Err(Error::Corrupt(format!(
                    "blob {blob_key} starts like an encrypted blob but {why}; it was changed \
                     or damaged outside the render store and must not be used"
                )));
            }
            Some(Ok(h)) => h,
        };
        let Some(key) = self.keys.iter().find(|k| k.id == header.id) else {
            return Err(Error::EncryptionKey(if self.keys.is_empty() {
                format!(
                    "blob {blob_key} is encrypted with key {:?}, and no keyring was given; \
                     open the store with a keyring that holds that key",
                    header.id
                )
            } else {
                format!(
                    "blob {blob_key} is encrypted with key {:?}, which the keyring (keys {}) \
                     does not hold; add that key to the keyring",
                    header.id,
                    quoted_ids(&self.keys)
                )
            }));
        };
        if key.check != header.check {
            return Err(Error::EncryptionKey(format!(
                "blob {blob_key} is encrypted with a key named {:?} that is not the \
                 keyring's key of that name (the key check differs): the keyring's {:?} \
                 was replaced or mistyped",
                header.id, header.id
            )));
        }
        Ok(Some((key, header.len, header.bound)))
    }

    /// The canonical bytes `blob` (stored under `blob_key`, for `render_ref` of
    /// `release`) holds: opened under the ring's key of the id its header names when it
    /// is sealed, or the blob itself when it is plaintext (a store where encryption was
    /// turned on holds both). A blob sealed for another release does not open. A `v1`
    /// blob, sealed before renders were bound to their release, opens unless encryption
    /// is required: it could have been copied from any release. The caller still
    /// checks the renderRef.
    pub fn open(
        &self,
        blob_key: &str,
        release: &str,
        render_ref: &str,
        mut blob: Vec<u8>,
    ) -> Result<Vec<u8>> {
        let Some((key, header_len, bound)) = self.key_of(blob_key, &blob)? else {
            return Ok(blob);
        };
        if !bound && self.required {
            return Err(Error::Corrupt(format!(
                "encryption is required, and blob {blob_key} is sealed in format \
                 {UNBOUND_VERSION}, which does not bind a render to its release: it may have \
                 been copied from another release, so it is not used. After `render-store \
                 verify`, `render-store rekey --all` run without --encryption-required \
                 rewrites such blobs bound"
            )));
        }
        let release = bound.then_some(release);
        let id = key.id.clone();
        let aad = render_associated_data(&blob_header(&blob, header_len), release, render_ref);
        let tag_at = blob.len() - TAG_BYTES;
        let tag = *Tag::from_slice(&blob[tag_at..]);
        let cipher = XChaCha20Poly1305::new((&key.cipher_key).into());
        cipher
            .decrypt_in_place_detached(
                &key.nonce(release, render_ref),
                &aad,
                &mut blob[header_len..tag_at],
                &tag,
            )
            .map_err(|_| {
                Error::Corrupt(format!(
                    "blob {blob_key} fails authentication under key {id:?}: it was changed or \
                     damaged outside the render store, or copied from another renderRef or \
                     another release, and must not be used"
                ))
            })?;
        blob.truncate(tag_at);
        blob.drain(..header_len);
        Ok(blob)
    }
}

/// The header line of a sealed blob whose header is `header_len` bytes (read already).
fn blob_header(blob: &[u8], header_len: usize) -> String {
    String::from_utf8_lossy(&blob[..header_len]).into_owned()
}

/// A render blob's associated data: its header, then (format `v2`) the release and a
/// NUL, then the renderRef. The NUL keeps `a/b` + `c…` apart from `a/bc` + `…`.
fn render_associated_data(header: &str, release: Option<&str>, render_ref: &str) -> Vec<u8> {
    let mut aad = header.as_bytes().to_vec();
    if let Some(release) = release {
        aad.extend_from_slice(release.as_bytes());
        aad.push(0);
    }
    aad.extend_from_slice(render_ref.as_bytes());
    aad
}

fn quoted_ids(keys: &[SealingKey]) -> String {
    keys.iter()
        .map(|k| format!("{:?}", k.id))
        .collect::<Vec<_>>()
        .join(", ")
}

fn associated_data(header: &str, render_ref: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(header.len() + render_ref.len());
    aad.extend_from_slice(header.as_bytes());
    aad.extend_from_slice(render_ref.as_bytes());
    aad
}

/// The header of a sealed blob, read.
#[derive(Debug)]
struct Header<'a> {
    id: &'a str,
    check: &'a str,
    /// Its bytes, the newline included.
    len: usize,
    /// Format `v2`: a render blob's associated data names its release.
    bound: bool,
}

impl<'a> Header<'a> {
    /// `None` for a plaintext blob; the reason when the blob starts with the magic but
    /// the rest is not a header this version reads.
    fn read(blob: &'a [u8]) -> Option<Result<Header<'a>, String>> {
        let rest = blob.strip_prefix(MAGIC)?;
        Some(Self::fields(rest).map(|(bound, id, check, line)| Header {
            id,
            check,
            len: MAGIC.len() + line + 1,
            bound,
        }))
    }

    fn fields(rest: &'a [u8]) -> Result<(bool, &'a str, &'a str, usize), String> {
        let scan = &rest[..rest.len().min(128)];
        let line = scan
            .iter()
            .position(|&b| b == b'\n')
            .ok_or("its header line does not end")?;
        if rest.len() < line + 1 + TAG_BYTES {
            return Err("it is shorter than its authentication tag".into());
        }
        let text = std::str::from_utf8(&rest[..line]).map_err(|_| "its header is not text")?;
        let mut fields = text.split(' ');
        match (fields.next(), fields.next(), fields.next(), fields.next()) {
            // Lowercase, as a key check is written: a header in any other spelling was
            // not written by a render store.
            (Some(v @ (VERSION | UNBOUND_VERSION)), Some(id), Some(check), None)
                if validate_id(id).is_ok()
                    && check.len() == 16
                    && check
                        .bytes()
                        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
            {
                Ok((v == VERSION, id, check, line))
            }
            (Some(v), ..) if v != VERSION && v != UNBOUND_VERSION => Err(format!(
                "its format version {} is not one this render store reads \
                 ({UNBOUND_VERSION} or {VERSION})",
                quote(v)
            )),
            _ => Err("its header is not `<version> <key id> <key check>`".into()),
        }
    }
}

/// Whether `blob` starts with a sealed blob's header that reads (any key, any
/// version this build reads); a plaintext blob does not.
pub fn is_sealed(blob: &[u8]) -> bool {
    matches!(Header::read(blob), Some(Ok(_)))
}

/// Whether `blob`'s header reads as format `v2`, which binds a render to its release.
pub fn is_bound(blob: &[u8]) -> bool {
    matches!(Header::read(blob), Some(Ok(h)) if h.bound)
}

/// Whether a blob of `size` bytes could be `plain_len` canonical bytes sealed under a
/// key of any id.
pub fn may_be_sealed(plain_len: usize, size: u64) -> bool {
    // The header is the magic, the version, the id, the check, two spaces and a newline.
    let fixed = (MAGIC.len() + VERSION.len() + 16 + 3 + plain_len + TAG_BYTES) as u64;
    (fixed + 1..=fixed + MAX_ID as u64).contains(&size)
}

/// The key id of `blob` if it looks like a genuine sealed blob of a render of
/// `plain_len` canonical bytes: its header reads (the version, an id, a lowercase key
/// check) and its size is exactly that header, `plain_len` bytes of ciphertext and the
/// tag. Without the key that is as far as anyone can tell; anything else was never a
/// sealed blob of that render, whatever its first bytes say.
pub fn genuine_sealed_id(blob: &[u8], plain_len: usize) -> Option<&str> {
    match Header::read(blob)? {
        Ok(h) if blob.len() == h.len + plain_len + TAG_BYTES => Some(h.id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(ids: &[(&str, u8)]) -> Keyring {
        Keyring::new(
            ids.iter()
                .map(|&(id, b)| SealingKey::new(id, &[b; 32]).unwrap())
                .collect(),
        )
        .unwrap()
    }

    const REF: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    const REL: &str = "prod/app";

    /// A blob sealed as format v1 wrote it: no release in the nonce or the associated
    /// data.
    fn seal_v1(r: &Keyring, plain: &[u8]) -> Vec<u8> {
        let key = &r.keys()[0];
        let header = key.header_of(UNBOUND_VERSION);
        let mut blob = header.as_bytes().to_vec();
        blob.extend_from_slice(plain);
        let cipher = XChaCha20Poly1305::new((&key.cipher_key).into());
        let aad = render_associated_data(&header, None, REF);
        let tag = cipher
            .encrypt_in_place_detached(&key.nonce(None, REF), &aad, &mut blob[header.len()..])
            .unwrap();
        blob.extend_from_slice(&tag);
        blob
    }

    #[test]
    fn a_sealed_render_opens_only_in_its_own_release_and_v1_only_when_not_required() {
        let r = ring(&[("k1", 1)]);
        let plain = b"{}".to_vec();
        let blob = r.seal(REL, REF, plain.clone());
        assert!(blob.starts_with(b"render-store-encrypted v2 k1 "));
        assert!(r.sealed_under_first(&blob));
        assert_eq!(r.open("k", REL, REF, blob.clone()).unwrap(), plain);
        let moved = r
            .open("k", "kube-system/ops", REF, blob.clone())
            .unwrap_err();
        assert!(
            matches!(&moved, Error::Corrupt(m) if m.contains("another release")),
            "{moved}"
        );
        // Same render, same key, two releases: two nonces, so two ciphertexts.
        assert_ne!(
            r.seal("kube-system/ops", REF, plain.clone())[40..],
            blob[40..]
        );

        let old = seal_v1(&r, &plain);
        assert!(
            !r.sealed_under_first(&old),
            "rekey rewrites a v1 blob bound"
        );
        assert_eq!(r.open("k", "any/where", REF, old.clone()).unwrap(), plain);
        let strict = r.clone().require(true).unwrap();
        let refused = strict.open("k", REL, REF, old).unwrap_err();
        assert!(
            matches!(&refused, Error::Corrupt(m) if m.contains("format v1") && m.contains("rekey")),
            "{refused}"
        );
        assert_eq!(strict.open("k", REL, REF, blob).unwrap(), plain);
    }

    #[test]
    fn a_sealed_blob_opens_to_the_plaintext_and_sealing_is_deterministic() {
        let r = ring(&[("k1", 1), ("k0", 0)]);
        let plain = br#"{"kind":"Secret","data":{"a":"c2VjcmV0"}}"#.to_vec();
        let blob = r.seal(REL, REF, plain.clone());
        assert_eq!(blob, r.seal(REL, REF, plain.clone()));
        assert_eq!(blob.len() as u64, r.blob_len(plain.len()));
        assert!(blob.starts_with(b"render-store-encrypted v2 k1 "));
        assert!(!blob.windows(8).any(|w| w == b"c2VjcmV0"));
        assert_eq!(r.open("k", REL, REF, blob.clone()).unwrap(), plain);
        // Another renderRef gives another nonce, and the blob does not open under it.
        let other = REF.replace("00000000", "11111111");
        assert_ne!(r.seal(REL, &other, plain.clone())[40..], blob[40..]);
        assert!(matches!(
            r.open("k", REL, &other, blob.clone()),
            Err(Error::Corrupt(_))
        ));
    }

    #[test]
    fn every_flipped_byte_of_a_sealed_blob_is_refused() {
        let r = ring(&[("k1", 1)]);
        let blob = r.seal(REL, REF, b"{}".to_vec());
        for i in 0..blob.len() {
            let mut bad = blob.clone();
            bad[i] ^= 0x01;
            match r.open("k", REL, REF, bad.clone()) {
                // No longer a sealed blob: read as plaintext, which get-render's hash
                // check refuses.
                Ok(read) => assert!(i < MAGIC.len() && read == bad, "{i}"),
                Err(Error::Corrupt(_) | Error::EncryptionKey(_)) => {}
                Err(other) => panic!("{i}: {other}"),
            }
        }
    }

    #[test]
    fn a_missing_or_replaced_key_is_named_and_plaintext_still_reads() {
        let writer = ring(&[("k1", 1)]);
        let blob = writer.seal(REL, REF, b"{}".to_vec());
        let err = Keyring::empty()
            .open("k", REL, REF, blob.clone())
            .unwrap_err();
        assert!(
            matches!(&err, Error::EncryptionKey(m) if m.contains("\"k1\"")),
            "{err}"
        );
        let err = ring(&[("k2", 2)])
            .open("k", REL, REF, blob.clone())
            .unwrap_err();
        assert!(
            matches!(&err, Error::EncryptionKey(m) if m.contains("\"k1\"") && m.contains("\"k2\""))
        );
        let err = ring(&[("k1", 9)])
            .open("k", REL, REF, blob.clone())
            .unwrap_err();
        assert!(
            matches!(&err, Error::EncryptionKey(m) if m.contains("replaced")),
            "{err}"
        );
        assert_eq!(
            ring(&[("k2", 2), ("k1", 1)])
                .open("k", REL, REF, blob)
                .unwrap(),
            b"{}"
        );
        assert_eq!(writer.open("k", REL, REF, b"{}".to_vec()).unwrap(), b"{}");
    }

    #[test]
    fn keyring_files_are_read_and_bad_ones_named_by_line_without_any_field() {
        let key = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
        let text = format!("# keys\n\nnew {key}\n  old {key}  \n");
        assert_eq!(
            Keyring::parse(text.as_bytes()).unwrap().ids(),
            ["new", "old"]
        );
        let short = base64::engine::general_purpose::STANDARD.encode([7u8; 16]);
        let unpadded = key.trim_end_matches('=');
        for (text, says) in [
            (
                format!("appkey {short}\n"),
                "line 1: the key (the second field) is 16 bytes; a key is 32 bytes",
            ),
            (
                format!("appkey {key}\n\nbackup {key}\nappkey {key}\n"),
                "line 4: the key id is the one of line 1 too",
            ),
            (
                format!("app/key {key}\n"),
                "line 1: the key id (the first field)",
            ),
            (
                "appkey not-base64!\n".to_string(),
                "line 1: the key (the second field) is not standard base64",
            ),
            (
                format!("appkey {unpadded}\n"),
                "line 1: the key (the second field) is not",
            ),
            (
                format!("appkey {key} extra\n"),
                "line 1: expected two fields",
            ),
            (format!("{key}\n"), "the line has 1"),
            ("# nothing\n".to_string(), "holds no key"),
            // The finding: a key where the id belongs, the id where the key belongs.
            (
                format!("# rotated\n{key} fresh1\n"),
                "line 2: the fields look swapped",
            ),
            // Two keys, or a key and something that is no id: not swapped, but the
            // first field is still never shown.
            (
                format!("{key} {key}\n"),
                "line 1: the key id (the first field)",
            ),
            (
                format!("{key} app/key\n"),
                "line 1: the key id (the first field)",
            ),
            (
                format!("{short} fresh1\n"),
                "line 1: the key id (the first field)",
            ),
        ] {
            let err = Keyring::parse(text.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(says), "{says}: {err}");
            // No field of any line: not the key, nor a piece of it, nor an id.
            for field in text.split_ascii_whitespace().filter(|f| *f != "#") {
                if !["rotated", "keys", "nothing"].contains(&field) {
                    assert!(!err.contains(field), "{field} in {err}");
                }
            }
            assert!(
                !err.contains(&key[..8]) && !err.contains(&short[..8]),
                "{err}"
            );
        }
    }

    #[test]
    fn requiring_encryption_needs_a_key_and_refuses_plaintext() {
        let err = Keyring::empty().require(true).unwrap_err();
        assert_eq!(err, Error::InvalidInput(REQUIRED_WITHOUT_KEYS.into()));
        assert_eq!(Keyring::empty().require(false).unwrap(), Keyring::empty());
        let r = ring(&[("k1", 1)]).require(true).unwrap();
        assert!(r.required());
        let err = r
            .open("ns/app/renders/x", REL, REF, b"{}".to_vec())
            .unwrap_err();
        assert!(
            matches!(&err, Error::Corrupt(m) if m.starts_with("encryption is required, and blob ns/app/renders/x is plaintext")),
            "{err}"
        );
        // The empty render too: it is plaintext all the same.
        assert!(matches!(
            r.open("k", REL, REF, Vec::new()),
            Err(Error::Corrupt(_))
        ));
        // Sealed blobs open as before.
        let blob = r.seal(REL, REF, b"{}".to_vec());
        assert_eq!(r.open("k", REL, REF, blob).unwrap(), b"{}");
    }

    #[test]
    fn only_a_blob_of_the_right_size_under_a_readable_header_looks_genuine() {
        let r = ring(&[("k1", 1)]);
        let plain = b"{\"a\":1}".to_vec();
        let blob = r.seal(REL, REF, plain.clone());
        assert_eq!(genuine_sealed_id(&blob, plain.len()), Some("k1"));
        // One byte more or less, or another render's length: not this render's blob.
        assert_eq!(
            genuine_sealed_id(&blob[..blob.len() - 1], plain.len()),
            None
        );
        assert_eq!(
            genuine_sealed_id(&[&blob[..], b"x"].concat(), plain.len()),
            None
        );
        assert_eq!(genuine_sealed_id(&blob, plain.len() + 1), None);
        assert_eq!(genuine_sealed_id(&plain, plain.len()), None);
        // The forgery of the finding, at the size of a sealed blob of 16 bytes: its
        // header reads, so at that size nothing tells it from a genuine one.
        let forged = [
            &b"render-store-encrypted v1 zz 0123456789abcdef\n"[..],
            &[0x5a; 32],
        ]
        .concat();
        assert_eq!(genuine_sealed_id(&forged, 16), Some("zz"));
        assert_eq!(genuine_sealed_id(&forged, 15), None);
        // Headers that do not read, whatever the size.
        for header in [
            "render-store-encrypted v1 zz 0123456789ABCDEF\n",
            "render-store-encrypted v1 zz 0123456789abcde\n",
            "render-store-encrypted v1 zz 0123456789abcdefa\n",
            "render-store-encrypted v1 zz 0123456789abcdeg\n",
            "render-store-encrypted v3 zz 0123456789abcdef\n",
            "render-store-encrypted v1 z/z 0123456789abcdef\n",
            "render-store-encrypted v1  0123456789abcdef\n",
            "render-store-encrypted v1 zz 0123456789abcdef \n",
            "render-store-encrypted v1 zz\n",
            "render-store-encrypted v1 zz 0123456789abcdef",
        ] {
            for plain_len in [0, 16] {
                let blob = [header.as_bytes(), &[0x5a; 32]].concat();
                let len = blob.len() - header.len() - TAG_BYTES;
                assert_eq!(genuine_sealed_id(&blob, len), None, "{header:?}");
                assert_eq!(genuine_sealed_id(&blob, plain_len), None, "{header:?}");
                assert!(matches!(
                    r.open("k", REL, REF, blob.clone()),
                    Err(Error::Corrupt(_))
                ));
            }
        }
    }

    #[test]
    fn a_header_the_reader_cannot_read_is_corrupt_and_plaintext_is_never_a_header() {
        let r = ring(&[("k1", 1)]);
        for blob in [
            &b"render-store-encrypted v3 k1 0011223344556677\n0123456789abcdef"[..],
            b"render-store-encrypted v1 k1\n0123456789abcdef0123",
            b"render-store-encrypted v1 k1 0011223344556677",
        ] {
            assert!(matches!(
                r.open("k", REL, REF, blob.to_vec()),
                Err(Error::Corrupt(_))
            ));
        }
        assert_eq!(genuine_sealed_id(b"{\"a\":1}\n", 8), None);
        assert_eq!(
            genuine_sealed_id(&r.seal(REL, REF, Vec::new()), 0),
            Some("k1")
        );
    }
}
