//! What counts as a Kubernetes object in a render a person gives (CONTRACT.md §4): the
//! rule every host that checks input applies (the CLI, the HTTP preview, and the APIs'
//! opt-in check), decided here once. The controller's own path (put-render of what it
//! applied) takes any JSON object, as a Go controller stores it.
//!
//! As kubectl reads objects:
//!
//! - every object has `apiVersion` and `kind`, non-empty strings;
//! - an object whose kind is `List` or ends in `List` and that has an `items` array is a
//!   list: it needs no name, and each of its items is an object checked by the same
//!   rule (lists in lists included). An item with neither `apiVersion` nor `kind` is of
//!   the list's group and version and of its kind without `List`, as kubectl reads a
//!   typed list (`v1` `ConfigMapList` items are ConfigMaps); a `List`'s items name their
//!   own;
//! - any other object has `metadata.name`, or `metadata.generateName` (the server picks
//!   the name, as `kubectl create` and a controller creating objects let it);
//! - no v1 Secret holds the markers a masked view writes in place of its values
//!   ([`crate::secrets`]): such an object was copied from a view for people, and
//!   storing it would store `***` as the Secret's values.

use crate::error::{Error, Result};
use crate::json::{Document, Node, decode_object, split_objects};

/// The objects of a stream of JSON objects, each starting on a line of its own (white
/// space around them): what `render-store get` writes, one object a line, and `jq -c`
/// too. Each is the bytes of the stream it came from. A value that is not a JSON object,
/// or two objects on one line, is `invalid-object` naming its position.
pub fn json_objects(stream: &[u8]) -> Result<Vec<Vec<u8>>> {
    let ranges =
        split_objects(stream).map_err(|(index, e)| Error::invalid_object(index, e.to_string()))?;
    Ok(ranges.into_iter().map(|r| stream[r].to_vec()).collect())
}

/// Where each object of a stream of JSON objects ends, as [`json_objects`] splits it:
/// object `i` is `stream[ends[i - 1]..ends[i]]` (from 0), the white space after it
/// included (up to where the next begins; the last end is the stream's length). So the stream is itself the joined
/// form of its objects (WIT `object-list`) and a host copies nothing to pass them on.
/// An empty stream (or white space alone) has no object; errors as [`json_objects`].
pub fn json_object_ends(stream: &[u8]) -> Result<Vec<u32>> {
    let ranges =
        split_objects(stream).map_err(|(index, e)| Error::invalid_object(index, e.to_string()))?;
    let fit = |n: usize| {
        u32::try_from(n).map_err(|_| {
            crate::error::invalid(format!(
                "a stream of {} bytes: an object list ends within 4 GiB",
                stream.len()
            ))
        })
    };
    // Each object ends where the next begins, the line break after it its own: its
    // canonical text (which ends in a line break) is then rarely longer than it, and a
    // host's buffer can take the canonical bytes in place.
    let mut ends = ranges
        .iter()
        .skip(1)
        .map(|r| fit(r.start))
        .collect::<Result<Vec<u32>>>()?;
    if !ranges.is_empty() {
        ends.push(fit(stream.len())?);
    }
    Ok(ends)
}

/// Checks each object by the rule of this module; the first one that breaks it is
/// `invalid-object`, its message saying what is wrong and where ("is not a Kubernetes
/// object: item 3 of it has no metadata.name").
pub fn check_objects<O: AsRef<[u8]>>(objects: &[O]) -> Result<()> {
    for (index, object) in objects.iter().enumerate() {
        let doc = decode_object(object.as_ref())
            .map_err(|e| Error::invalid_object(index, e.to_string()))?;
        let why = match why_not_an_object(&doc) {
            Some(why) => why,
            None => match crate::secrets::masked_secret(&doc) {
                Some(name) => masked(&name),
                None => continue,
            },
        };
        return Err(Error::invalid_object(index, why));
    }
    Ok(())
}

const NEEDS: &str = "every object needs apiVersion, kind and metadata.name (or \
                     metadata.generateName), and a list's items too, as kubectl requires";

fn text<'d>(doc: &'d Document<'_>, object: u32, key: &str) -> Option<&'d str> {
    doc.member(doc.node(object), key)
        .and_then(|i| doc.node(i).as_str())
        .filter(|s| !s.is_empty())
}

/// Where an item is: "item 3 of it", "item 1 of item 3 of it".
fn place(path: &[usize]) -> String {
    if path.is_empty() {
        return "it".to_string();
    }
    let mut parts: Vec<String> = path.iter().rev().map(|n| format!("item {n}")).collect();
    parts.push("it".to_string());
    parts.join(" of ")
}

/// Why `doc` is not a Kubernetes object, if it is not. Walked with a stack of its own:
/// lists may nest as deep as the decoder allows.
fn why_not_an_object(doc: &Document<'_>) -> Option<String> {
    // An object to check, the `apiVersion` and `kind` it takes from its typed list, and
    // where it is (its item numbers, outermost first).
    type Pending<'d> = (u32, Option<(&'d str, &'d str)>, Vec<usize>);
    let mut stack: Vec<Pending<'_>> = vec![(doc.root_index(), None, Vec::new())];
    while let Some((object, inherited, path)) = stack.pop() {
        let own = (text(doc, object, "apiVersion"), text(doc, object, "kind"));
        let has_type = doc.member(doc.node(object), "apiVersion").is_some()
            || doc.member(doc.node(object), "kind").is_some();
        let (api, kind) = match (own, inherited) {
            (_, Some(inherited)) if !has_type => (Some(inherited.0), Some(inherited.1)),
            (own, _) => own,
        };
        let mut missing = Vec::new();
        if api.is_none() {
            missing.push("apiVersion");
        }
        if kind.is_none() {
            missing.push("kind");
        }
        let items = match doc.member(doc.node(object), "items").map(|i| doc.node(i)) {
            Some(Node::Array(items)) if kind.is_some_and(|k| k.ends_with("List")) => Some(items),
            _ => None,
        };
        if items.is_none() {
            let named = doc.member(doc.node(object), "metadata").is_some_and(|m| {
                text(doc, m, "name").is_some() || text(doc, m, "generateName").is_some()
            });
            if !named {
                missing.push("metadata.name");
            }
        }
        if !missing.is_empty() {
            let subject = if path.is_empty() {
                "it has".to_string()
            } else {
                format!("{} has", place(&path))
            };
            return Some(format!(
                "is not a Kubernetes object: {subject} no {} ({NEEDS})",
                missing.join(", no ")
            ));
        }
        let (Some(items), Some(api), Some(kind)) = (items, api, kind) else {
            continue;
        };
        let item_kind = kind.strip_suffix("List").unwrap_or_default();
        let for_items = (!item_kind.is_empty()).then_some((api, item_kind));
        for (n, &item) in items.iter().enumerate().rev() {
            let mut at = path.clone();
            at.push(n + 1);
            if !matches!(doc.node(item), Node::Object(_)) {
                return Some(format!(
                    "is not a Kubernetes object: {} is not an object ({NEEDS})",
                    place(&at)
                ));
            }
            stack.push((item, for_items, at));
        }
    }
    None
}

fn masked(name: &str) -> String {
    format!(
        "holds the values of Secret {name} masked (`***`): it was copied from a view for \
         people (`get -o yaml`, a diff, a page), which never shows them, and storing it \
         would store the markers as the values. Take the stored render instead: \
         `render-store get NAMESPACE/NAME REF` writes its bytes as they are (or `get -o \
         yaml --show-secrets`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(object: &str) -> Option<String> {
        match check_objects(&[object.as_bytes()]) {
            Ok(()) => None,
            Err(Error::InvalidObject(crate::error::ObjectError { index: 0, message })) => {
                Some(message)
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn object_ends_make_the_stream_its_own_object_list() {
        let stream = b"\n {\"b\":1,\"a\":2}\n\t{\"c\":[1, 2]}  \n\n";
        let ends = json_object_ends(stream).unwrap();
        assert_eq!(ends.len(), 2);
        assert_eq!(*ends.last().unwrap() as usize, stream.len());
        let joined = crate::render::joined_objects(stream, &ends).unwrap();
        let split = json_objects(stream).unwrap();
        assert_eq!(
            crate::canonical(&joined).unwrap(),
            crate::canonical(&split).unwrap()
        );
        check_objects(&joined).unwrap_err();
        assert!(json_object_ends(b" \n").unwrap().is_empty());
        assert!(matches!(
            json_object_ends(b"{}{}"),
            Err(Error::InvalidObject { .. })
        ));
    }

    #[test]
    fn an_object_needs_a_type_and_a_name_or_a_generated_one() {
        assert_eq!(
            why(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#),
            None
        );
        assert_eq!(
            why(r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"migrate-"}}"#),
            None
        );
        let m = why(r#"{"kind":"ConfigMap","metadata":{"name":""}}"#).unwrap();
        assert!(
            m.starts_with("is not a Kubernetes object: it has no apiVersion, no metadata.name"),
            "{m}"
        );
        let m = why(r#"{"apiVersion":"v1","kind":"ConfigMapList"}"#).unwrap();
        assert!(m.contains("it has no metadata.name"), "{m}");
        let m = why(r#"[1]"#).unwrap();
        assert!(m.contains("not an object"), "{m}");
    }

    #[test]
    fn lists_are_taken_and_each_item_is_checked() {
        // kube-prometheus's dashboards: a ConfigMapList of ConfigMaps.
        let list = r#"{"apiVersion":"v1","kind":"ConfigMapList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"metadata":{"name":"b"},"data":{}}]}"#;
        assert_eq!(why(list), None);
        let m = why(
            r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}"#,
        )
        .unwrap();
        assert!(m.contains("item 2 of it has no apiVersion, no kind"), "{m}");
        let m = why(
            r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service","metadata":{}}]}]}"#,
        )
        .unwrap();
        assert!(
            m.contains("item 1 of item 1 of it has no metadata.name"),
            "{m}"
        );
        let m = why(r#"{"apiVersion":"v1","kind":"List","items":[3]}"#).unwrap();
        assert!(m.contains("item 1 of it is not an object"), "{m}");
    }

    #[test]
    fn a_masked_secret_is_refused_wherever_it_is() {
        for object in [
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"data":{"password":"***"}}"#,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"*** (after)"}}"#,
            r#"{"apiVersion":"v1","kind":"SecretList","items":[{"metadata":{"name":"db"},"data":{"k":"*** (before)"}}]}"#,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"data\":{\"k\":\"***\"},\"kind\":\"Secret\"}"}},"data":{"k":"eA=="}}"#,
        ] {
            let m = why(object).unwrap_or_else(|| panic!("taken: {object}"));
            assert!(m.contains("masked") && m.contains("db"), "{m}");
        }
        // A ConfigMap may hold any text; a real Secret value is not a marker.
        assert_eq!(
            why(
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"***"}}"#
            ),
            None
        );
        assert_eq!(
            why(
                r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"data":{"k":"KioqKg=="}}"#
            ),
            None
        );
    }

    #[test]
    fn every_vector_natively() {
        let doc: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/vectors/check-objects.json")).unwrap();
        for c in doc["cases"].as_array().unwrap() {
            let objects: Vec<&[u8]> = c["objects"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_str().unwrap().as_bytes())
                .collect();
            let name = &c["name"];
            match (check_objects(&objects), &c["want"]) {
                (Ok(()), want) => assert_eq!(want, "ok", "{name}"),
                (Err(Error::InvalidObject(crate::error::ObjectError { index, message })), want) => {
                    assert_eq!(Some(index as u64), want["index"].as_u64(), "{name}");
                    let part = want["message"].as_str().unwrap();
                    assert!(message.contains(part), "{name}: {message}");
                }
                (Err(other), _) => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_json_stream_splits_into_its_objects() {
        let stream = b" {\"a\":1}\n{\"b\":[2]}\r\n  {\n\"c\":{}}\n\n";
        let objects = json_objects(stream).unwrap();
        assert_eq!(
            objects,
            [
                b"{\"a\":1}".to_vec(),
                b"{\"b\":[2]}".to_vec(),
                b"{\n\"c\":{}}".to_vec()
            ]
        );
        // Two on one line are one object with trailing data, as Go reads it.
        match json_objects(b"{\"a\":1}\n{\"a\":1}{\"b\":2}") {
            Err(Error::InvalidObject(crate::error::ObjectError { index: 1, message })) => {
                assert!(message.contains("after top-level value"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        assert!(json_objects(b"  \n").unwrap().is_empty());
        match json_objects(b"{}\n[1]") {
            Err(Error::InvalidObject(crate::error::ObjectError { index: 1, message })) => {
                assert!(message.contains("not an object"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        match json_objects(b"{}\n{\"a\":}") {
            Err(Error::InvalidObject(crate::error::ObjectError { index: 1, .. })) => {}
            other => panic!("{other:?}"),
        }
    }
}
