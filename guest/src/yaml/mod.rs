//! Renders as users hold them: a multi-document Kubernetes YAML stream (`helm template`,
//! `kustomize build`, a `deploy.yaml`) turned into the render's objects exactly as a Go
//! controller and kubectl do it (CONTRACT.md §11, tests/vectors/YAML-RULES.md):
//!
//! 1. [`split`]: apimachinery's `YAMLReader` cuts the stream into documents;
//! 2. [`compose`]: the first YAML document of each is parsed (libyaml-safer, a port of
//!    the libyaml that go-yaml v2 is a port of);
//! 3. [`decode`] and [`resolve`]: go-yaml v2 resolves it into Go values;
//! 4. [`to_json`]: `sigs.k8s.io/yaml` makes JSON of it;
//! 5. an empty or `null` document is skipped, any other must be a JSON object, and the
//!    objects go through the canonical encoding of [`crate::render`] unchanged.
//!
//! Those are the general steps, always right. Most documents of real streams take a
//! fast path that gives the same bytes: [`fast`] composes the YAML real manifests are
//! written in, and [`direct`] writes its JSON, canonical or not, with no steps between.
//! Either gives up on what it is not sure of, and the general steps take the document.

mod compose;
mod decode;
mod direct;
mod end;
mod error;
mod fast;
mod flow;
mod reader;
mod resolve;
mod split;
mod to_json;

pub use error::{Stage, YamlError};

use crate::json::{MAX_DEPTH, decode_object, encode_document};
use direct::{Form, Written};
use error::Located;

/// Whether the fast path is used; the general steps alone are always correct.
const FAST: bool = true;
use sha2::{Digest, Sha256};

/// Calls `each` with the JSON bytes of every object of the stream, in order, in `form`
/// (the general steps check that they decode as the canonical encoding needs). `fast`
/// lets the fast path take the documents it knows.
fn each_object(
    stream: &[u8],
    fast: bool,
    form: Form,
    mut each: impl FnMut(&[u8]),
) -> Result<(), YamlError> {
    let (chunks, bad) = split::split(stream);
    let mut buffer = Vec::new();
    for (document, chunk) in chunks.iter().enumerate() {
        // The fast path when it takes the document. It leaves positions out, so any
        // error after it sends the document through libyaml-safer again, which reports
        // the error with its position.
        if fast && let Some(tree) = fast::compose(&chunk.bytes) {
            buffer.clear();
            match direct::write(&tree, form, &mut buffer) {
                Some(Written::Object) => {
                    each(&buffer);
                    continue;
                }
                Some(Written::Skipped) => continue,
                None => {}
            }
            match document_json(tree.into_composed(), chunk, document) {
                Ok(None) => continue,
                Ok(Some(json)) => {
                    if let Ok(doc) = decode_object(&json) {
                        each(in_form(form, &json, &doc, &mut buffer));
                        continue;
                    }
                }
                Err(_) => {}
            }
        }
        let tree = compose::compose(&chunk.bytes).map_err(|e| locate(e, chunk, document))?;
        let Some(json) = document_json(tree, chunk, document)? else {
            continue;
        };
        // The JSON decoder's depth limit counts the object itself, one level more than
        // go-yaml's: a document can pass YAML and fail here, at the object stage.
        let doc = decode_object(&json).map_err(|e| YamlError {
            stage: Stage::Object,
            document: count(document),
            line: count(chunk.first_line + 1),
            column: 1,
            message: if e.message.contains("depth") {
                format!("nested deeper than {MAX_DEPTH} levels: {e}")
            } else {
                e.to_string()
            },
        })?;
        each(in_form(form, &json, &doc, &mut buffer));
    }
    // Go's reader meets a bad separator only once the documents before it are read.
    match bad {
        Some(bad) => Err(YamlError {
            stage: Stage::Split,
            document: count(bad.document),
            line: count(bad.line + 1),
            column: 4,
            message: format!("invalid Yaml document separator: {}", bad.rest),
        }),
        None => Ok(()),
    }
}

/// A document, line or column number as the WIT's `u32` says it; a stream within the
/// render cap never reaches the cap.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The general steps' object in `form`: their JSON, or its canonical encoding.
fn in_form<'b>(
    form: Form,
    json: &'b [u8],
    doc: &crate::json::Document<'_>,
    buffer: &'b mut Vec<u8>,
) -> &'b [u8] {
    match form {
        Form::Objects => json,
        Form::Canonical => {
            buffer.clear();
            encode_document(doc, buffer);
            buffer
        }
    }
}

fn locate(e: Located, chunk: &split::Chunk, document: usize) -> YamlError {
    YamlError {
        stage: e.stage,
        document: count(document),
        line: count(chunk.first_line + e.line + 1),
        column: count(e.column + 1),
        message: e.message,
    }
}

/// The JSON of one composed document; `None` when it is skipped (empty or null).
fn document_json(
    tree: compose::Tree,
    chunk: &split::Chunk,
    document: usize,
) -> Result<Option<Vec<u8>>, YamlError> {
    let Some(values) = decode::decode(&tree).map_err(|e| locate(e, chunk, document))? else {
        return Ok(None);
    };
    drop(tree);
    to_json::to_json(&values).map_err(|e| locate(e, chunk, document))
}

/// The objects of a YAML stream, in order: each as the compact JSON
/// `sigs.k8s.io/yaml.YAMLToJSON` writes for its document. Empty and `null` documents
/// are skipped; any other document must be an object.
///
/// Fails with the first failing document's index (counting skipped documents), the
/// line and column in the stream, and the stage.
pub fn yaml_objects(stream: &[u8]) -> Result<Vec<Vec<u8>>, YamlError> {
    let mut objects = Vec::new();
    each_object(stream, FAST, Form::Objects, |json| {
        objects.push(json.to_vec())
    })?;
    Ok(objects)
}

/// The canonical bytes of the render a YAML stream holds: the same bytes as
/// [`crate::canonical`] of [`yaml_objects`].
pub fn yaml_canonical(stream: &[u8]) -> Result<Vec<u8>, YamlError> {
    let mut out = Vec::with_capacity(stream.len());
    each_object(stream, FAST, Form::Canonical, |object| {
        out.extend_from_slice(object);
        out.push(b'\n');
    })?;
    Ok(out)
}

/// The renderRef of the render a YAML stream holds: the same as [`crate::render_ref`]
/// of [`yaml_objects`].
pub fn yaml_render_ref(stream: &[u8]) -> Result<String, YamlError> {
    let mut hasher = Sha256::new();
    each_object(stream, FAST, Form::Canonical, |object| {
        hasher.update(object);
        hasher.update(b"\n");
    })?;
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// [`yaml_objects`] through the general steps alone, never the fast path: the reference
/// the differential tests compare the fast path with.
#[doc(hidden)]
pub fn yaml_objects_reference(stream: &[u8]) -> Result<Vec<Vec<u8>>, YamlError> {
    let mut objects = Vec::new();
    each_object(stream, false, Form::Objects, |json| {
        objects.push(json.to_vec())
    })?;
    Ok(objects)
}

/// [`yaml_canonical`] through the general steps alone.
#[doc(hidden)]
pub fn yaml_canonical_reference(stream: &[u8]) -> Result<Vec<u8>, YamlError> {
    let mut out = Vec::new();
    each_object(stream, false, Form::Canonical, |object| {
        out.extend_from_slice(object);
        out.push(b'\n');
    })?;
    Ok(out)
}

/// What the fast path does with a stream: how many documents the fast composer takes,
/// how many of those it also writes (the general steps never see them), and how many
/// documents there are (none when the stream does not split). What the differential
/// tests cover.
#[doc(hidden)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FastCoverage {
    pub composed: usize,
    pub written: usize,
    pub documents: usize,
}

#[doc(hidden)]
pub fn yaml_fast_coverage(stream: &[u8]) -> FastCoverage {
    let (chunks, None) = split::split(stream) else {
        return FastCoverage::default();
    };
    let mut coverage = FastCoverage {
        documents: chunks.len(),
        ..FastCoverage::default()
    };
    for chunk in &chunks {
        if let Some(tree) = fast::compose(&chunk.bytes) {
            coverage.composed += 1;
            if direct::write(&tree, Form::Canonical, &mut Vec::new()).is_some() {
                coverage.written += 1;
            }
        }
    }
    coverage
}
