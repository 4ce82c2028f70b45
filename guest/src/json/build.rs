//! Building a [`Document`] in code, for JSON this crate writes itself (traces, replay
//! reports): objects are sorted by key bytes as the decoder sorts them, so any value
//! built here encodes with its keys in one order whatever order they were given in.

use super::decode::{Document, Node};
use std::borrow::Cow;

/// Collects nodes bottom-up: each method adds a value and returns its index, to be used
/// as a member or element of a container added later.
#[derive(Debug, Default)]
pub struct Builder<'a> {
    nodes: Vec<Node<'a>>,
}

impl<'a> Builder<'a> {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, node: Node<'a>) -> u32 {
        self.nodes.push(node);
        u32::try_from(self.nodes.len() - 1).expect("fewer than 2^32 nodes")
    }

    /// `null`.
    pub fn null(&mut self) -> u32 {
        self.push(Node::Null)
    }

    /// `true` or `false`.
    pub fn bool(&mut self, value: bool) -> u32 {
        self.push(Node::Bool(value))
    }

    /// A signed integer.
    pub fn int(&mut self, value: i64) -> u32 {
        self.push(Node::Int(value))
    }

    /// An unsigned integer, exact up to `u64::MAX`.
    pub fn uint(&mut self, value: u64) -> u32 {
        self.push(match i64::try_from(value) {
            Ok(i) => Node::Int(i),
            Err(_) => Node::Uint(value),
        })
    }

    /// A string.
    pub fn string(&mut self, value: impl Into<Cow<'a, str>>) -> u32 {
        self.push(Node::Str(value.into()))
    }

    /// An array of strings.
    pub fn strings<S: Into<Cow<'a, str>>>(&mut self, values: impl IntoIterator<Item = S>) -> u32 {
        let items = values.into_iter().map(|s| self.string(s)).collect();
        self.array(items)
    }

    /// An array of values added before.
    pub fn array(&mut self, items: Vec<u32>) -> u32 {
        self.push(Node::Array(items))
    }

    /// An object of values added before. A key given twice keeps its last value, as
    /// the decoder does.
    pub fn object(&mut self, members: Vec<(&'a str, u32)>) -> u32 {
        let mut members: Vec<(Cow<'a, str>, u32)> = members
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), v))
            .collect();
        members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        members.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 = later.1;
            }
            same
        });
        self.push(Node::Object(members))
    }

    /// The document whose root is `root`.
    pub fn finish(self, root: u32) -> Document<'a> {
        Document {
            nodes: self.nodes,
            root,
        }
    }
}
