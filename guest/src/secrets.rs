//! Secret values kept out of the forms made for people: in a `v1` `Secret`
//! (also one among the items of a `v1` `List`), every value of `data` and `stringData`,
//! and the same values inside its `kubectl.kubernetes.io/last-applied-configuration`
//! annotation, which holds the whole Secret as JSON text, are replaced by a marker.
//!
//! The marker is kubectl diff's: `***` where a value is the same on both sides of a diff
//! (or there is one side only), `*** (before)` and `*** (after)` where it changed. A
//! reader learns which keys a Secret has and whether each value changed, which a diff
//! must say, and nothing of the values: no length, no digest (a digest would let anyone
//! confirm a guessed password offline).
//!
//! Only what people read is masked: renderRefs, canonical bytes and whether an object
//! counts as changed come from the objects as they are.

use crate::json::{Document, Node, decode_object, encode_document, encode_node};
use std::borrow::Cow;

/// Whether a form made for people shows the values of Secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SecretValues {
    /// Every value replaced by a marker that says only whether it changed.
    #[default]
    Masked,
    /// As stored: only when the user asked for it.
    Shown,
}

/// A value that is the same on both sides, or has one side only.
pub const MARKER: &str = "***";
/// A changed value, on the old side of a diff.
pub const MARKER_BEFORE: &str = "*** (before)";
/// A changed value, on the new side of a diff.
pub const MARKER_AFTER: &str = "*** (after)";

/// The annotation `kubectl apply` writes the whole object into.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The members whose values are a Secret's secrets.
const VALUE_FIELDS: [&str; 2] = ["data", "stringData"];

/// Which side of a diff a document is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

impl Side {
    fn changed(self) -> &'static str {
        match self {
            Side::Old => MARKER_BEFORE,
            Side::New => MARKER_AFTER,
        }
    }
}

/// Whether `doc` is something masking changes: a v1 Secret or a v1 List.
pub(crate) fn may_hold_secrets(doc: &Document<'_>) -> bool {
    let root = doc.root_index();
    is_v1(doc, root, "Secret") || is_v1(doc, root, "List")
}

/// Masks the Secret values of one object shown on its own.
pub(crate) fn mask_one(doc: &mut Document<'_>) {
    let replacements = whole(doc, None, Side::New);
    apply(doc, replacements);
}

/// Masks the Secret values of the two sides of a changed object, each marker saying
/// whether its value differs from the other side's.
pub(crate) fn mask_pair(old: &mut Document<'_>, new: &mut Document<'_>) {
    let for_old = whole(old, Some(new), Side::Old);
    let for_new = whole(new, Some(old), Side::New);
    apply(old, for_old);
    apply(new, for_new);
}

fn apply<'a>(doc: &mut Document<'a>, replacements: Vec<(u32, Node<'a>)>) {
    for (index, node) in replacements {
        doc.replace(index, node);
    }
}

/// The replacements that mask `doc`: itself if it is a v1 Secret, else each v1 Secret
/// among its items if it is a v1 List, paired with the other side's by name.
fn whole<'a>(doc: &Document<'a>, other: Option<&Document<'_>>, side: Side) -> Vec<(u32, Node<'a>)> {
    let mut out = Vec::new();
    let root = doc.root_index();
    if is_v1(doc, root, "Secret") {
        let other = other.filter(|o| is_v1(o, o.root_index(), "Secret"));
        secret(
            doc,
            root,
            other.map(|o| (o, o.root_index())),
            side,
            &mut out,
        );
    } else if is_v1(doc, root, "List") {
        let other_items: Vec<(&Document<'_>, u32)> = other
            .filter(|o| is_v1(o, o.root_index(), "List"))
            .map(|o| items(o).into_iter().map(|i| (o, i)).collect())
            .unwrap_or_default();
        for item in items(doc) {
            if !is_v1(doc, item, "Secret") {
                continue;
            }
            let name = identity(doc, item);
            let paired = other_items
                .iter()
                .copied()
                .find(|&(o, i)| is_v1(o, i, "Secret") && identity(o, i) == name);
            secret(doc, item, paired, side, &mut out);
        }
    }
    out
}

fn items(doc: &Document<'_>) -> Vec<u32> {
    match doc.member(doc.root(), "items").map(|i| doc.node(i)) {
        Some(Node::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}

fn text<'d>(doc: &'d Document<'_>, object: u32, key: &str) -> Option<&'d str> {
    doc.member(doc.node(object), key)
        .and_then(|i| doc.node(i).as_str())
}

fn is_v1(doc: &Document<'_>, object: u32, kind: &str) -> bool {
    text(doc, object, "apiVersion") == Some("v1") && text(doc, object, "kind") == Some(kind)
}

/// `metadata.namespace` and `metadata.name`.
fn identity<'d>(doc: &'d Document<'_>, object: u32) -> (Option<&'d str>, Option<&'d str>) {
    match doc.member(doc.node(object), "metadata") {
        Some(metadata) => (
            text(doc, metadata, "namespace"),
            text(doc, metadata, "name"),
        ),
        None => (None, None),
    }
}

/// The replacements of one Secret's values, against the other side's Secret if any.
fn secret<'a>(
    doc: &Document<'a>,
    object: u32,
    other: Option<(&Document<'_>, u32)>,
    side: Side,
    out: &mut Vec<(u32, Node<'a>)>,
) {
    values(doc, object, other, side, out);
    let annotation = |d: &Document<'_>, o: u32| {
        let metadata = d.member(d.node(o), "metadata")?;
        let annotations = d.member(d.node(metadata), "annotations")?;
        d.member(d.node(annotations), LAST_APPLIED)
    };
    let Some(index) = annotation(doc, object) else {
        return;
    };
    let other_text = other
        .and_then(|(o, i)| annotation(o, i).and_then(|a| o.node(a).as_str()))
        .map(str::to_string);
    let masked = match doc.node(index).as_str() {
        Some(applied) => mask_applied(applied, other_text.as_deref(), side),
        // Not text: nothing kubectl wrote, so all of it is hidden.
        None => marker(
            same(
                doc,
                index,
                other.and_then(|(o, i)| annotation(o, i).map(|a| (o, a))),
            ),
            side,
        )
        .to_string(),
    };
    out.push((index, Node::Str(Cow::Owned(masked))));
}

/// The `data` and `stringData` values of a Secret.
fn values<'a>(
    doc: &Document<'a>,
    object: u32,
    other: Option<(&Document<'_>, u32)>,
    side: Side,
    out: &mut Vec<(u32, Node<'a>)>,
) {
    for field in VALUE_FIELDS {
        let Some(value) = doc.member(doc.node(object), field) else {
            continue;
        };
        let other_value = other.and_then(|(o, i)| o.member(o.node(i), field).map(|v| (o, v)));
        match doc.node(value) {
            Node::Object(members) => {
                for (key, member) in members {
                    let other_member =
                        other_value.and_then(|(o, v)| o.member(o.node(v), key).map(|m| (o, m)));
                    let shown = marker(same(doc, *member, other_member), side);
                    out.push((*member, Node::PlainStr(shown)));
                }
            }
            // Not a map of values (no Secret the API server accepts): hidden whole.
            _ => out.push((
                value,
                Node::PlainStr(marker(same(doc, value, other_value), side)),
            )),
        }
    }
}

/// The last-applied annotation's JSON text with the Secret values inside masked; text
/// that is not a JSON object is replaced whole.
fn mask_applied(applied: &str, other: Option<&str>, side: Side) -> String {
    let Ok(mut inner) = decode_object(applied.as_bytes()) else {
        let unchanged = other.is_none_or(|o| o == applied);
        return marker(unchanged, side).to_string();
    };
    let other_inner = other.and_then(|o| decode_object(o.as_bytes()).ok());
    let mut replacements = Vec::new();
    let root = inner.root_index();
    values(
        &inner,
        root,
        other_inner.as_ref().map(|o| (o, o.root_index())),
        side,
        &mut replacements,
    );
    apply(&mut inner, replacements);
    let mut bytes = Vec::new();
    encode_document(&inner, &mut bytes);
    String::from_utf8(bytes).expect("the encoder writes UTF-8")
}

/// Whether node `index` of `doc` has the same value as the other side's node (true
/// when there is no other side: nothing changed that a reader could see).
fn same(doc: &Document<'_>, index: u32, other: Option<(&Document<'_>, u32)>) -> bool {
    let Some((o, i)) = other else {
        return true;
    };
    let compact = |d: &Document<'_>, n: u32| {
        let mut bytes = Vec::new();
        encode_node(d, n, &mut bytes, false, crate::json::Escape::Go);
        bytes
    };
    compact(doc, index) == compact(o, i)
}

fn marker(unchanged: bool, side: Side) -> &'static str {
    if unchanged { MARKER } else { side.changed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked_pair(old: &str, new: &str) -> (String, String) {
        let mut o = decode_object(old.as_bytes()).unwrap();
        let mut n = decode_object(new.as_bytes()).unwrap();
        mask_pair(&mut o, &mut n);
        let encode = |d: &Document<'_>| {
            let mut b = Vec::new();
            encode_document(d, &mut b);
            String::from_utf8(b).unwrap()
        };
        (encode(&o), encode(&n))
    }

    #[test]
    fn values_become_markers_that_say_only_whether_they_changed() {
        let (old, new) = masked_pair(
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"data":{"password":"aHVudGVyMg==","user":"YWRtaW4="},"stringData":{"gone":"x"}}"#,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"data":{"password":"czNjcjN0","user":"YWRtaW4=","new":"eA=="}}"#,
        );
        assert_eq!(
            old,
            r#"{"apiVersion":"v1","data":{"password":"*** (before)","user":"***"},"kind":"Secret","metadata":{"name":"db"},"stringData":{"gone":"***"}}"#
        );
        assert_eq!(
            new,
            r#"{"apiVersion":"v1","data":{"new":"***","password":"*** (after)","user":"***"},"kind":"Secret","metadata":{"name":"db"}}"#
        );
    }

    #[test]
    fn the_last_applied_annotation_is_masked_inside() {
        let secret = |value: &str| {
            let applied = format!(
                r#"{{"apiVersion":"v1","data":{{"password":"{value}"}},"kind":"Secret","metadata":{{"name":"db"}}}}"#
            );
            format!(
                r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","annotations":{{"{LAST_APPLIED}":{}}}}},"data":{{"password":"c2FtZQ=="}}}}"#,
                serde_json_string(&applied)
            )
        };
        let (old, new) = masked_pair(&secret("b2xk"), &secret("bmV3"));
        assert!(
            !old.contains("b2xk") && !new.contains("bmV3"),
            "{old}\n{new}"
        );
        assert!(old.contains(r#"\"password\":\"*** (before)\""#), "{old}");
        assert!(new.contains(r#"\"password\":\"*** (after)\""#), "{new}");
        // The value outside the annotation did not change.
        assert!(old.contains(r#""data":{"password":"***"}"#), "{old}");
        // Text that is not JSON is hidden whole.
        let (old, _) = masked_pair(
            &format!(
                r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"annotations":{{"{LAST_APPLIED}":"pass=hunter2"}}}}}}"#
            ),
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{}}"#,
        );
        assert!(!old.contains("hunter2"), "{old}");
    }

    #[test]
    fn secrets_in_a_list_are_masked_and_other_kinds_are_not() {
        let mut doc = decode_object(
            br#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"},"data":{"k":"djE="}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"plain"}}]}"#,
        )
        .unwrap();
        mask_one(&mut doc);
        let mut b = Vec::new();
        encode_document(&doc, &mut b);
        let text = String::from_utf8(b).unwrap();
        assert!(!text.contains("djE=") && text.contains("plain"), "{text}");
        // A Secret of another API group is not the core Secret.
        let mut other = decode_object(
            br#"{"apiVersion":"example.com/v1","kind":"Secret","data":{"k":"shown"}}"#,
        )
        .unwrap();
        mask_one(&mut other);
        let mut b = Vec::new();
        encode_document(&other, &mut b);
        assert!(String::from_utf8(b).unwrap().contains("shown"));
    }

    /// A JSON string literal (the test's own, so as not to depend on the encoder
    /// under test).
    fn serde_json_string(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
}
