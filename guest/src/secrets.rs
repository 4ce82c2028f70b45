//! Secret values kept out of the forms made for people: in a `v1` `Secret`, every value
//! of `data` and `stringData`, and the same values inside its
//! `kubectl.kubernetes.io/last-applied-configuration` annotation, which holds the whole
//! Secret as JSON text, are replaced by a marker.
//!
//! A Secret is found wherever kubectl would see one: the object itself, or an item of a
//! list — `List` or any `*List` kind with `items` (a `SecretList`, a `ConfigMapList`),
//! lists inside lists included. An item with neither `apiVersion` nor `kind` is of the
//! list's group and version and of its kind without `List`, as kubectl reads a typed
//! list (the items of a `v1` `SecretList` are Secrets).
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

pub use crate::wit::types::SecretValues;
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

/// Whether `doc` is something masking changes: it is a v1 Secret or holds one.
pub(crate) fn may_hold_secrets(doc: &Document<'_>) -> bool {
    !secrets_in(doc).is_empty()
}

/// The object's `apiVersion` and `kind`, or `inherited` when it has neither.
fn type_of<'d>(
    doc: &'d Document<'_>,
    object: u32,
    inherited: Option<(&'d str, &'d str)>,
) -> Option<(&'d str, &'d str)> {
    match (text(doc, object, "apiVersion"), text(doc, object, "kind")) {
        (None, None) => inherited,
        (api, kind) => Some((api.unwrap_or_default(), kind.unwrap_or_default())),
    }
}

/// Every v1 Secret in `doc`, in document order: the document itself, or the items of
/// its lists, however deep. Walked with a stack of its own: lists may nest as deep as
/// the decoder allows, deeper than the call stack should go.
fn secrets_in(doc: &Document<'_>) -> Vec<u32> {
    let mut found = Vec::new();
    let mut stack = vec![(doc.root_index(), None)];
    while let Some((object, inherited)) = stack.pop() {
        let Some((api, kind)) = type_of(doc, object, inherited) else {
            continue;
        };
        if api == "v1" && kind == "Secret" {
            found.push(object);
            continue;
        }
        let Some(item_kind) = kind.strip_suffix("List") else {
            continue;
        };
        let Some(Node::Array(items)) = doc.member(doc.node(object), "items").map(|i| doc.node(i))
        else {
            continue;
        };
        // Items of `List` name their own kind; those of a typed list may leave it out.
        let for_items = (!item_kind.is_empty()).then_some((api, item_kind));
        for &item in items.iter().rev() {
            if matches!(doc.node(item), Node::Object(_)) {
                stack.push((item, for_items));
            }
        }
    }
    found
}

/// The namespace and name (`ns/name`, or the name alone) of the first v1 Secret in `doc`
/// that holds a marker in place of a value (in `data`, `stringData` or its last-applied
/// copy), if any: an object copied from a masked view. A `data` value is base64, which
/// never holds `*`; a `stringData` value that is exactly a marker is taken for one too.
pub(crate) fn masked_secret(doc: &Document<'_>) -> Option<String> {
    let is_marker = |s: &str| [MARKER, MARKER_BEFORE, MARKER_AFTER].contains(&s);
    let holds_marker = |d: &Document<'_>, object: u32| {
        VALUE_FIELDS.iter().any(|field| {
            let Some(value) = d.member(d.node(object), field) else {
                return false;
            };
            match d.node(value) {
                Node::Object(members) => members
                    .iter()
                    .any(|(_, m)| d.node(*m).as_str().is_some_and(is_marker)),
                other => other.as_str().is_some_and(is_marker),
            }
        })
    };
    secrets_in(doc).into_iter().find_map(|object| {
        let applied = doc
            .member(doc.node(object), "metadata")
            .and_then(|m| doc.member(doc.node(m), "annotations"))
            .and_then(|a| doc.member(doc.node(a), LAST_APPLIED))
            .and_then(|i| doc.node(i).as_str());
        let applied_masked = applied.is_some_and(|text| {
            is_marker(text)
                || decode_object(text.as_bytes())
                    .is_ok_and(|inner| holds_marker(&inner, inner.root_index()))
        });
        (holds_marker(doc, object) || applied_masked).then(|| match identity(doc, object) {
            (Some(ns), Some(name)) => format!("{ns}/{name}"),
            (_, Some(name)) => name.to_string(),
            _ => "(no name)".to_string(),
        })
    })
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

/// The replacements that mask every v1 Secret in `doc` ([`secrets_in`]), each paired
/// with the other side's Secret of the same namespace and name, if any.
fn whole<'a>(doc: &Document<'a>, other: Option<&Document<'_>>, side: Side) -> Vec<(u32, Node<'a>)> {
    let mut out = Vec::new();
    let mut others: Vec<(&Document<'_>, u32)> = other
        .map(|o| secrets_in(o).into_iter().map(|i| (o, i)).collect())
        .unwrap_or_default();
    for object in secrets_in(doc) {
        let name = identity(doc, object);
        let paired = others
            .iter()
            .position(|&(o, i)| identity(o, i) == name)
            .map(|at| others.remove(at));
        secret(doc, object, paired, side, &mut out);
    }
    out
}

fn text<'d>(doc: &'d Document<'_>, object: u32, key: &str) -> Option<&'d str> {
    doc.member(doc.node(object), key)
        .and_then(|i| doc.node(i).as_str())
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

    fn masked_one(json: &str) -> String {
        let mut doc = decode_object(json.as_bytes()).unwrap();
        mask_one(&mut doc);
        let mut b = Vec::new();
        encode_document(&doc, &mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn secrets_in_typed_and_nested_lists_are_masked() {
        // A SecretList as the API server answers it: the items name no kind.
        let text = masked_one(
            r#"{"apiVersion":"v1","kind":"SecretList","items":[{"metadata":{"name":"a"},"data":{"password":"aHVudGVyMg=="}},{"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"},"stringData":{"password":"hunter2"}}]}"#,
        );
        assert!(
            !text.contains("aHVudGVyMg==") && !text.contains("hunter2"),
            "{text}"
        );
        assert_eq!(text.matches(r#""password":"***""#).count(), 2, "{text}");
        // A List in a List in a List, the Secret's last-applied copy included.
        let applied = serde_json_string(
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"hunter2-applied"}}"#,
        );
        let deep = format!(
            r#"{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"example.com/v1","kind":"ThingList","items":[{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"s","annotations":{{"{LAST_APPLIED}":{applied}}}}},"stringData":{{"password":"hunter2-deep"}}}}]}}]}}]}}"#
        );
        let text = masked_one(&deep);
        assert!(
            !text.contains("hunter2-deep") && !text.contains("hunter2-applied"),
            "{text}"
        );
        // Items of a typed list of another kind are not Secrets, nor is a list's
        // item without a kind of its own in a `List`.
        let text = masked_one(
            r#"{"apiVersion":"v1","kind":"ConfigMapList","items":[{"metadata":{"name":"c"},"data":{"k":"plain-1"}}]}"#,
        );
        assert!(text.contains("plain-1"), "{text}");
        let text = masked_one(
            r#"{"apiVersion":"v1","kind":"List","items":[{"metadata":{"name":"c"},"data":{"k":"plain-2"}}]}"#,
        );
        assert!(text.contains("plain-2"), "{text}");
    }

    #[test]
    fn secrets_of_lists_pair_by_name_across_a_diff() {
        let list = |a: &str, b: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"SecretList","items":[{{"metadata":{{"name":"a"}},"data":{{"k":"{a}"}}}},{{"metadata":{{"name":"b"}},"data":{{"k":"{b}"}}}}]}}"#
            )
        };
        let (old, new) = masked_pair(&list("c2FtZQ==", "b2xk"), &list("c2FtZQ==", "bmV3"));
        assert!(
            !old.contains("b2xk") && !new.contains("bmV3"),
            "{old}\n{new}"
        );
        assert_eq!(old.matches("*** (before)").count(), 1, "{old}");
        assert_eq!(new.matches("*** (after)").count(), 1, "{new}");
        assert_eq!(old.matches(r#""k":"***""#).count(), 1, "{old}");
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
