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

mod compose;
mod decode;
mod error;
mod fast;
mod resolve;
mod split;
mod to_json;

pub use error::{Stage, YamlError};

use crate::json::{MAX_DEPTH, decode_object, encode_document};
use error::Located;

/// Whether the fast composer is used; the slow path alone is always correct.
const FAST: bool = true;
use sha2::{Digest, Sha256};

/// Calls `each` with the index and JSON bytes of every object of the stream, in order,
/// after checking that the bytes decode as the canonical encoding needs; hands it the
/// decoded document too. `fast` lets [`fast::compose`] take the documents it knows.
fn each_object(
    stream: &[u8],
    fast: bool,
    mut each: impl FnMut(&[u8], &crate::json::Document<'_>),
) -> Result<(), YamlError> {
    let chunks = split::split(stream).map_err(|bad| YamlError {
        stage: Stage::Split,
        document: bad.document,
        line: bad.line + 1,
        column: 4,
        message: format!("invalid Yaml document separator: {}", bad.rest),
    })?;
    for (document, chunk) in chunks.iter().enumerate() {
        // The fast composer when it takes the document. It leaves positions out, so
        // any error after it sends the document through libyaml-safer again, which
        // reports the error with its position.
        if fast && let Some(tree) = fast::compose(&chunk.bytes) {
            match document_json(tree, chunk, document) {
                Ok(None) => continue,
                Ok(Some(json)) => {
                    if let Ok(doc) = decode_object(&json) {
                        each(&json, &doc);
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
            document,
            line: chunk.first_line + 1,
            column: 1,
            message: if e.message.contains("depth") {
                format!("nested deeper than {MAX_DEPTH} levels: {e}")
            } else {
                e.to_string()
            },
        })?;
        each(&json, &doc);
    }
    Ok(())
}

fn locate(e: Located, chunk: &split::Chunk, document: usize) -> YamlError {
    YamlError {
        stage: e.stage,
        document,
        line: chunk.first_line + e.line + 1,
        column: e.column + 1,
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
    each_object(stream, FAST, |json, _| objects.push(json.to_vec()))?;
    Ok(objects)
}

/// The canonical bytes of the render a YAML stream holds: the same bytes as
/// [`crate::canonical`] of [`yaml_objects`].
pub fn yaml_canonical(stream: &[u8]) -> Result<Vec<u8>, YamlError> {
    let mut out = Vec::with_capacity(stream.len());
    each_object(stream, FAST, |_, doc| {
        encode_document(doc, &mut out);
        out.push(b'\n');
    })?;
    Ok(out)
}

/// The renderRef of the render a YAML stream holds: the same as [`crate::render_ref`]
/// of [`yaml_objects`].
pub fn yaml_render_ref(stream: &[u8]) -> Result<String, YamlError> {
    let mut hasher = Sha256::new();
    let mut buffer = Vec::new();
    each_object(stream, FAST, |_, doc| {
        buffer.clear();
        encode_document(doc, &mut buffer);
        buffer.push(b'\n');
        hasher.update(&buffer);
    })?;
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// [`yaml_objects`] through libyaml-safer alone, never the fast composer: the reference
/// the differential tests compare the fast path with.
#[doc(hidden)]
pub fn yaml_objects_reference(stream: &[u8]) -> Result<Vec<Vec<u8>>, YamlError> {
    let mut objects = Vec::new();
    each_object(stream, false, |json, _| objects.push(json.to_vec()))?;
    Ok(objects)
}

/// How many of the stream's documents the fast composer takes, and how many there are
/// (none when the stream does not split): what the differential tests cover.
#[doc(hidden)]
pub fn yaml_fast_coverage(stream: &[u8]) -> (usize, usize) {
    match split::split(stream) {
        Ok(chunks) => (
            chunks
                .iter()
                .filter(|c| fast::compose(&c.bytes).is_some())
                .count(),
            chunks.len(),
        ),
        Err(_) => (0, 0),
    }
}
