//! The path of the node each line of an object's text for people belongs to, so a diff
//! can say where a hunk is: `spec.template.spec.containers[name=calico-node].image`.
//!
//! A member is `.key` (or `["key"]`, quoted as JSON, when the key is not a plain word),
//! a sequence item `[name=VALUE]` when it is an object with a string `name` (the way
//! Kubernetes names containers, ports and volumes, and how a reader looks for them), and
//! `[INDEX]` otherwise.

use super::decode::{Document, Node};
use super::encode::encode_string_minimal;

/// The path of member `key` of the node at `parent`.
pub(crate) fn member(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain {
        if parent.is_empty() {
            key.to_string()
        } else {
            format!("{parent}.{key}")
        }
    } else {
        let mut quoted = Vec::new();
        encode_string_minimal(key, &mut quoted);
        format!(
            "{parent}[{}]",
            String::from_utf8(quoted).expect("the encoder writes UTF-8")
        )
    }
}

/// The path of item `position` (the node `value`) of the sequence at `parent`.
pub(crate) fn item(doc: &Document<'_>, parent: &str, position: usize, value: u32) -> String {
    let node = doc.node(value);
    let name = doc
        .member(node, "name")
        .and_then(|n| doc.node(n).as_str())
        .filter(|n| !n.is_empty() && !n.contains([']', '\n']));
    match name {
        Some(name) => format!("{parent}[name={name}]"),
        None => format!("{parent}[{position}]"),
    }
}

/// The path of each line of the document as `encode_document_pretty` writes it (Go's
/// `MarshalIndent` with two spaces): a line for each member and item, whose node it
/// names, and a line closing each non-empty container, which names the container.
pub fn pretty_line_paths(doc: &Document<'_>) -> Vec<String> {
    // The root's opening line.
    let mut lines = vec![String::new()];
    let mut stack: Vec<(u32, usize, String)> = Vec::new();
    if container_len(doc.root()) > 0 {
        stack.push((doc.root_index(), 0, String::new()));
    }
    while let Some((node, next, path)) = stack.last_mut() {
        let parent = doc.node(*node);
        let position = *next;
        let child = match parent {
            Node::Object(members) => members
                .get(position)
                .map(|(key, child)| (member(path, key), *child)),
            Node::Array(items) => items
                .get(position)
                .map(|&child| (item(doc, path, position, child), child)),
            _ => None,
        };
        match child {
            Some((child_path, child)) => {
                *next += 1;
                lines.push(child_path.clone());
                if container_len(doc.node(child)) > 0 {
                    stack.push((child, 0, child_path));
                }
            }
            None => {
                // The closing line of a non-empty container.
                let (_, _, path) = stack.pop().expect("a frame is open");
                lines.push(path);
            }
        }
    }
    lines
}

fn container_len(node: &Node<'_>) -> usize {
    match node {
        Node::Object(members) => members.len(),
        Node::Array(items) => items.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode_object, encode_document_pretty, encode_document_yaml_with_paths};

    const DAEMONSET: &str = r#"{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"annotations":{"a.b/c":"x"},"name":"calico-node"},"spec":{"template":{"spec":{"containers":[{"image":"calico/node:v1","name":"calico-node"},{"image":"calico/cni:v1","name":"install-cni"}],"volumes":[{"hostPath":{"path":"/x"}}]}}}}"#;

    #[test]
    fn yaml_lines_name_their_nodes() {
        let doc = decode_object(DAEMONSET.as_bytes()).unwrap();
        let mut out = Vec::new();
        let paths = encode_document_yaml_with_paths(&doc, &mut out);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), paths.len(), "{text}");
        let path_of = |line: &str| &paths[lines.iter().position(|l| l.trim() == line).unwrap()];
        assert_eq!(path_of("a.b/c: x"), r#"metadata.annotations["a.b/c"]"#);
        assert_eq!(
            path_of("- image: calico/node:v1"),
            "spec.template.spec.containers[name=calico-node].image"
        );
        assert_eq!(
            path_of("- image: calico/cni:v1"),
            "spec.template.spec.containers[name=install-cni].image"
        );
        assert_eq!(
            path_of("path: /x"),
            "spec.template.spec.volumes[0].hostPath.path"
        );
        assert_eq!(path_of("kind: DaemonSet"), "kind");
    }

    #[test]
    fn literal_block_lines_belong_to_their_member() {
        let doc = decode_object(br#"{"data":{"script":"one\ntwo\n"},"z":1}"#).unwrap();
        let mut out = Vec::new();
        let paths = encode_document_yaml_with_paths(&doc, &mut out);
        assert_eq!(
            paths,
            ["data", "data.script", "data.script", "data.script", "z"]
        );
    }

    #[test]
    fn pretty_json_lines_name_their_nodes() {
        let doc = decode_object(DAEMONSET.as_bytes()).unwrap();
        let mut out = Vec::new();
        encode_document_pretty(&doc, &mut out);
        let text = String::from_utf8(out).unwrap();
        let paths = pretty_line_paths(&doc);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), paths.len(), "{text}");
        let image = lines
            .iter()
            .position(|l| l.contains("calico/cni:v1"))
            .unwrap();
        assert_eq!(
            paths[image],
            "spec.template.spec.containers[name=install-cni].image"
        );
        assert_eq!(paths[0], "");
        assert_eq!(paths[paths.len() - 1], "");
    }
}
