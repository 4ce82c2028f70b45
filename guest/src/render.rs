//! Renders: canonical bytes and renderRef.
//!
//! `canonical(render)` is, for each object in render order, Go's re-encoding of its
//! decoded value followed by `\n`; `renderRef` is `sha256:` and the lowercase hex
//! SHA-256 of those bytes.

use crate::error::{Error, Result};
use crate::json::Canonicalizer;
use sha2::{Digest, Sha256};

/// The largest render the store takes, in canonical bytes: 64 MiB. Every render it
/// takes can then be held by a call within the default memory cap (its objects, its
/// canonical bytes and a decoded tree at once), passed across the component boundary,
/// and sent whole within the observer's default response cap. A larger one is refused
/// by every operation that computes canonical bytes, in every host alike, as soon as
/// it passes the size: no work is spent on the rest.
pub const MAX_RENDER_BYTES: usize = 64 << 20;

/// Appends each object's canonical bytes (its re-encoding and `\n`) to `out`, handing
/// `out` to `emit` after each one (which may take them out of `out`).
///
/// Fails with [`Error::InvalidObject`] naming the first object that does not decode, and
/// with [`Error::InvalidInput`] once the canonical bytes pass [`MAX_RENDER_BYTES`].
fn each_canonical_object<O: AsRef<[u8]>>(
    objects: &[O],
    out: &mut Vec<u8>,
    mut emit: impl FnMut(&mut Vec<u8>),
) -> Result<()> {
    let mut canonicalizer = Canonicalizer::default();
    let mut total = 0usize;
    for (index, object) in objects.iter().enumerate() {
        let before = out.len();
        canonicalizer
            .encode(object.as_ref(), out)
            .map_err(|e| Error::invalid_object(index, e.to_string()))?;
        out.push(b'\n');
        total += out.len() - before;
        if total > MAX_RENDER_BYTES {
            return Err(too_large(index));
        }
        emit(out);
    }
    Ok(())
}

fn too_large(index: usize) -> Error {
    crate::error::invalid(format!(
        "the render is over {MAX_RENDER_BYTES} bytes (64 MiB) of canonical JSON, the \
         largest render the store takes; object {index} (from 0) takes it past that. Split \
         the release, or keep large data out of its objects"
    ))
}

/// Refuses canonical bytes over [`MAX_RENDER_BYTES`], as [`canonical`] does, for a path
/// that made them otherwise (a YAML stream's).
pub fn check_render_size(canonical: &[u8]) -> Result<()> {
    if canonical.len() <= MAX_RENDER_BYTES {
        return Ok(());
    }
    let mut total = 0;
    let index = canonical
        .split_inclusive(|&b| b == b'\n')
        .position(|line| {
            total += line.len();
            total > MAX_RENDER_BYTES
        })
        .unwrap_or(0);
    Err(too_large(index))
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

/// The canonical bytes of a render given joined (object `i` is `bytes[ends[i - 1]..
/// ends[i]]`, from 0), made in `bytes` itself: each object is encoded into a small
/// buffer, hashed, and written back over the input already read. Canonical text is
/// almost always shorter than what it was made from (white space, key order); should an
/// object's text overtake the input not yet read, the rest is written to a new buffer.
/// So a render is held once where the other forms hold it twice. Returns the
/// renderRef; `bytes` then holds the canonical bytes. Errors as [`canonical`], and ends
/// that do not fit `bytes` as [`joined_objects`].
pub fn canonical_in_place(bytes: &mut Vec<u8>, ends: &[u32]) -> Result<String> {
    joined_objects(bytes, ends)?;
    let mut canonicalizer = Canonicalizer::default();
    let mut hasher = Sha256::new();
    let mut object = Vec::new();
    let mut spilled: Option<Vec<u8>> = None;
    let (mut written, mut start) = (0usize, 0usize);
    for (index, &end) in ends.iter().enumerate() {
        let end = end as usize;
        object.clear();
        canonicalizer
            .encode(&bytes[start..end], &mut object)
            .map_err(|e| Error::invalid_object(index, e.to_string()))?;
        object.push(b'\n');
        if written + object.len() > MAX_RENDER_BYTES {
            return Err(too_large(index));
        }
        hasher.update(&object);
        match &mut spilled {
            Some(out) => out.extend_from_slice(&object),
            // What lies before `end` has been read: it may be written over.
            None if written + object.len() <= end => {
                bytes[written..written + object.len()].copy_from_slice(&object)
            }
            None => {
                let mut out = Vec::with_capacity(written + object.len() + (bytes.len() - end));
                out.extend_from_slice(&bytes[..written]);
                out.extend_from_slice(&object);
                spilled = Some(out);
            }
        }
        written += object.len();
        start = end;
    }
    match spilled {
        Some(out) => *bytes = out,
        None => bytes.truncate(written),
    }
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

pub use crate::wit::types::JoinedObjects;

impl JoinedObjects {
    /// How many objects.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no object.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Object `i`'s bytes.
    pub fn object(&self, i: usize) -> &[u8] {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// Each object's bytes, copied: for what takes objects one by one (a trace records
    /// them so).
    pub fn to_objects(&self) -> Vec<Vec<u8>> {
        (0..self.len()).map(|i| self.object(i).to_vec()).collect()
    }

    /// Appends an object.
    pub fn push(&mut self, object: &[u8]) {
        self.bytes.extend_from_slice(object);
        // An end past 4 GiB cannot be said in the WIT's u32: the component refuses the
        // render (its ends then do not fit), as it refuses any render that large.
        self.ends
            .push(u32::try_from(self.bytes.len()).unwrap_or(u32::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_over_the_largest_size_is_refused_as_soon_as_it_passes_it() {
        let value = "x".repeat(1 << 20);
        let object = format!(r#"{{"v":"{value}"}}"#);
        let objects = vec![object.as_bytes(); 64];
        // 64 objects of just over 1 MiB: the 64th passes 64 MiB.
        for e in [
            canonical(&objects).unwrap_err(),
            render_ref(&objects).unwrap_err(),
            canonical_into(&objects, &mut b"header".to_vec()).unwrap_err(),
        ] {
            match e {
                Error::InvalidInput(m) => {
                    assert!(m.contains("67108864") && m.contains("object 63"), "{m}")
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(canonical(&objects[..63]).is_ok());
    }

    #[test]
    fn canonical_bytes_made_in_place_are_the_canonical_bytes() {
        let cases: [(&[u8], &[u32]); 4] = [
            (b"{ \"b\" : 1 , \"a\" : 2 }\n{}", &[22, 24]),
            // Longer than its input: HTML-safe escaping of `<`, then more objects.
            (b"{\"a\":\"<<<<\"}{\"b\":1}{ }", &[12, 19, 22]),
            (b"", &[]),
            (b"{}", &[2]),
        ];
        for (bytes, ends) in cases {
            let objects = joined_objects(bytes, ends).unwrap();
            let want = canonical(&objects).unwrap();
            let mut buffer = bytes.to_vec();
            let r = canonical_in_place(&mut buffer, ends).unwrap();
            assert_eq!(buffer, want, "{:?}", String::from_utf8_lossy(bytes));
            assert_eq!(r, render_ref_of_canonical(&want));
        }
        let mut bad = b"{}[]".to_vec();
        assert!(matches!(
            canonical_in_place(&mut bad, &[2, 4]),
            Err(Error::InvalidObject(crate::error::ObjectError {
                index: 1,
                ..
            }))
        ));
        assert!(matches!(
            canonical_in_place(&mut b"{}".to_vec(), &[3]),
            Err(Error::InvalidInput(_))
        ));
    }

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
            Err(Error::InvalidObject(crate::error::ObjectError {
                index: 1,
                ..
            }))
        ));
    }

    #[test]
    fn names_the_first_bad_object() {
        let err = canonical(&[&b"{}"[..], b"{", b"["]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidObject(crate::error::ObjectError { index: 1, .. })
            ),
            "{err}"
        );
    }
}
