//! Renders: canonical bytes and renderRef.
//!
//! `canonical(render)` is, for each object in render order, Go's re-encoding of its
//! decoded value followed by `\n`; `renderRef` is `sha256:` and the lowercase hex
//! SHA-256 of those bytes.

use crate::error::{Error, Result};
use crate::json::Canonicalizer;
use sha2::{Digest, Sha256};

/// Appends each object's canonical bytes (its re-encoding and `\n`) to `out`, handing
/// `out` to `emit` after each one.
///
/// Fails with [`Error::InvalidObject`] naming the first object that does not decode.
fn each_canonical_object<O: AsRef<[u8]>>(
    objects: &[O],
    out: &mut Vec<u8>,
    mut emit: impl FnMut(&mut Vec<u8>),
) -> Result<()> {
    let mut canonicalizer = Canonicalizer::default();
    for (index, object) in objects.iter().enumerate() {
        canonicalizer
            .encode(object.as_ref(), out)
            .map_err(|e| Error::InvalidObject {
                index,
                message: e.to_string(),
            })?;
        out.push(b'\n');
        emit(out);
    }
    Ok(())
}

/// The canonical bytes of a render given as its objects' JSON bytes.
///
/// Fails with [`Error::InvalidObject`] naming the first object that does not decode.
pub fn canonical<O: AsRef<[u8]>>(objects: &[O]) -> Result<Vec<u8>> {
    let capacity = objects.iter().map(|o| o.as_ref().len() + 1).sum();
    let mut out = Vec::with_capacity(capacity);
    each_canonical_object(objects, &mut out, |_| {})?;
    Ok(out)
}

/// Appends the canonical bytes of a render to `out` and returns its renderRef: each
/// object is hashed as soon as it is written, while it is still in cache, and the
/// bytes are written once, after whatever `out` already holds (put-render's blob
/// header).
pub fn canonical_into<O: AsRef<[u8]>>(objects: &[O], out: &mut Vec<u8>) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut hashed = out.len();
    out.reserve(objects.iter().map(|o| o.as_ref().len() + 1).sum());
    each_canonical_object(objects, out, |bytes| {
        hasher.update(&bytes[hashed..]);
        hashed = bytes.len();
    })?;
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// The 64 lowercase hex digits of SHA-256 over `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `sha256:` and the 64 lowercase hex digits of SHA-256 over `canonical`.
pub fn render_ref_of_canonical(canonical: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(canonical))
}

/// The renderRef of a render given as its objects' JSON bytes.
///
/// The canonical bytes are hashed object by object from one reused buffer, never held
/// whole: no allocation the size of the render, and each object is hashed while it is
/// still in cache.
pub fn render_ref<O: AsRef<[u8]>>(objects: &[O]) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut buffer = Vec::new();
    each_canonical_object(objects, &mut buffer, |object| {
        hasher.update(&object[..]);
        object.clear();
    })?;
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// The objects of a render sent joined (WIT `joined-objects`): object `i` is
/// `bytes[ends[i - 1]..ends[i]]`, from 0 for the first.
///
/// Fails with [`Error::InvalidInput`] when an end lies before the previous one or past
/// `bytes`, or the last end leaves bytes over.
pub fn joined_objects<'a>(bytes: &'a [u8], ends: &[u32]) -> Result<Vec<&'a [u8]>> {
    let mut objects = Vec::with_capacity(ends.len());
    let mut start = 0usize;
    for (index, &end) in ends.iter().enumerate() {
        let end = end as usize;
        if end < start || end > bytes.len() {
            return Err(crate::error::invalid(format!(
                "joined objects: object {index} ends at byte {end}, outside {start}..={} \
                 (each end at least the previous one, at most the {} bytes given)",
                bytes.len(),
                bytes.len()
            )));
        }
        objects.push(&bytes[start..end]);
        start = end;
    }
    if start != bytes.len() {
        return Err(crate::error::invalid(format!(
            "joined objects: the last object ends at byte {start}, but {} bytes were given",
            bytes.len()
        )));
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_objects_split_at_their_ends() {
        let bytes = b"{}{\"a\":1}{}";
        let objects = joined_objects(bytes, &[2, 9, 9, 11]).unwrap();
        assert_eq!(objects, [&b"{}"[..], b"{\"a\":1}", b"", b"{}"]);
        assert!(joined_objects(b"", &[]).unwrap().is_empty());
    }

    #[test]
    fn joined_objects_refuse_ends_that_do_not_fit() {
        for (bytes, ends) in [
            (&b"{}{}"[..], &[3u32, 2][..]),
            (b"{}{}", &[2, 5]),
            (b"{}{}", &[2]),
            (b"{}", &[]),
        ] {
            let e = joined_objects(bytes, ends).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidInput(m) if m.starts_with("joined objects: ")),
                "{ends:?}: {e}"
            );
        }
    }

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
    fn render_ref_hashes_the_canonical_bytes() {
        let objects = [
            &br#"{"b":1,"a":[1.50,"\u00e9"]}"#[..],
            b"{}",
            b"{\"z\":null}",
        ];
        assert_eq!(
            render_ref(&objects).unwrap(),
            render_ref_of_canonical(&canonical(&objects).unwrap())
        );
        assert!(matches!(
            render_ref(&[&b"{}"[..], b"[]"]),
            Err(Error::InvalidObject { index: 1, .. })
        ));
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
