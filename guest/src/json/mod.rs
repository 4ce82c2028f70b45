//! JSON decoding and encoding with the exact behaviour of Go's `encoding/json` as a
//! Kubernetes controller uses it, so that a renderRef computed here equals the one a Go
//! controller computes. CONTRACT.md §4 states the rules; `tests/vectors/render-ref.json`
//! holds the golden cases.
//!
//! The same decoder and encoder read and write the crate's own JSON (traces, replay
//! reports: [`decode_value`], [`Builder`], [`Escape::Minimal`]).
//!
//! serde_json is not used: its writer differs from Go in float formatting, HTML and
//! U+2028 escaping, and in how invalid UTF-8 and lone surrogates are replaced.

mod build;
mod canonical;
mod decode;
mod encode;
mod line_paths;
mod scan;
mod yaml_form;

pub use build::Builder;
pub use canonical::{Canonicalizer, encode_canonical};
pub use decode::{
    DecodeError, Document, MAX_DEPTH, Node, decode_object, decode_value, split_objects,
};
pub use encode::{
    Escape, encode_document, encode_document_pretty, encode_node, encode_string,
    encode_string_minimal, quote,
};
pub(crate) use encode::{push_float, push_int, push_uint};
pub use line_paths::pretty_line_paths;
pub(crate) use line_paths::{item as line_item, member as line_member};
pub(crate) use scan::{find_byte, text_run};
pub use yaml_form::{encode_document_yaml, encode_document_yaml_with_paths};
