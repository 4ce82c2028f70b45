//! Renders: canonical bytes and renderRef.
//!
//! `canonical(render)` is, for each object in render order, Go's re-encoding of its
//! decoded value followed by `\n`; `renderRef` is `sha256:` and the lowercase hex
//! SHA-256 of those bytes.

use crate::error::{Error, Result};
use crate::json::{decode_object, encode_document};
use sha2::{Digest, Sha256};

/// The canonical bytes of a render given as its objects' JSON bytes.
///
/// Fails with [`Error::InvalidObject`] naming the first object that does not decode.
pub fn canonical<O: AsRef<[u8]>>(objects: &[O]) -> Result<Vec<u8>> {
    let capacity = objects.iter().map(|o| o.as_ref().len() + 1).sum();
    let mut out = Vec::with_capacity(capacity);
    for (index, object) in objects.iter().enumerate() {
        let doc = decode_object(object.as_ref()).map_err(|e| Error::InvalidObject {
            index,
            message: e.to_string(),
        })?;
        encode_document(&doc, &mut out);
        out.push(b'\n');
    }
    Ok(out)
}

/// The 64 lowercase hex digits of SHA-256 over `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from_digit((byte >> 4) as u32, 16).expect("nibble"));
        out.push(char::from_digit((byte & 0xf) as u32, 16).expect("nibble"));
    }
    out
}

/// `sha256:` and the 64 lowercase hex digits of SHA-256 over `canonical`.
pub fn render_ref_of_canonical(canonical: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(canonical))
}

/// The renderRef of a render given as its objects' JSON bytes.
pub fn render_ref<O: AsRef<[u8]>>(objects: &[O]) -> Result<String> {
    Ok(render_ref_of_canonical(&canonical(objects)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_render() {
        let none: [&[u8]; 0] = [];
        assert_eq!(canonical(&none).unwrap(), b"");
        assert_eq!(
            render_ref(&none).unwrap(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn names_the_first_bad_object() {
        let err = canonical(&[&b"{}"[..], b"{", b"["]).unwrap_err();
        assert!(
            matches!(err, Error::InvalidObject { index: 1, .. }),
            "{err}"
        );
    }
}
