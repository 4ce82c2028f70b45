//! Which history entry last changed each field of an object, as `git blame` says which
//! commit last changed each line: the object's leaves (scalars, and empty objects and
//! arrays) named by the diff's paths (`spec.template.spec.containers[name=app].image`),
//! followed through the renders of a release's history, oldest first.
//!
//! A field's entry is the first entry since which its value has not changed: the entry
//! that added it or last gave it its value. An object missing from an entry's render
//! and back in a later one is new again there. Values are compared as they are stored;
//! the values shown are masked where they are a Secret's (`secret-values`).

use crate::bucket::Bucket;
use crate::diff::ObjectId;
use crate::encryption::Keyring;
use crate::error::{Error, Result};
use crate::json::{Document, Escape, Node, decode_object, encode_node, line_item, line_member};
use crate::keys::{HistoryKey, Release, ReleasePrefix};
use crate::secrets::SecretValues;
use crate::time::SyncTime;
use std::collections::BTreeMap;

/// The longest value a blame line shows; a longer one is cut, with `…`.
const MAX_SHOWN_VALUE: usize = 120;

/// Which object to blame: `KIND/NAME` as kubectl names one (the kind in any case),
/// optionally `NAMESPACE/KIND/NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectName {
    /// The namespace, when given.
    pub namespace: Option<String>,
    /// The kind, lowercase.
    pub kind: String,
    /// The name.
    pub name: String,
}

impl ObjectName {
    /// Reads `KIND/NAME` or `NAMESPACE/KIND/NAME`.
    pub fn parse(text: &str) -> Result<ObjectName> {
        let parts: Vec<&str> = text.split('/').collect();
        let bad = || {
            Error::InvalidInput(format!(
                "{text:?} names no object: give KIND/NAME (deployment/web) or \
                 NAMESPACE/KIND/NAME"
            ))
        };
        let (namespace, kind, name) = match parts[..] {
            [kind, name] => (None, kind, name),
            [ns, kind, name] if !ns.is_empty() => (Some(ns.to_string()), kind, name),
            _ => return Err(bad()),
        };
        if kind.is_empty() || name.is_empty() {
            return Err(bad());
        }
        Ok(ObjectName {
            namespace,
            kind: kind.to_ascii_lowercase(),
            name: name.to_string(),
        })
    }

    fn matches(&self, id: &ObjectId) -> bool {
        id.kind.eq_ignore_ascii_case(&self.kind)
            && id.name == self.name
            && self.namespace.as_ref().is_none_or(|ns| &id.namespace == ns)
    }
}

pub use crate::wit::types::FieldBlame;
pub use crate::wit::types::ObjectBlame;

/// The object's leaves: each path with its value as compact JSON.
fn leaves(doc: &Document<'_>, root: u32) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![(root, String::new())];
    while let Some((node, path)) = stack.pop() {
        let children: Vec<(u32, String)> = match doc.node(node) {
            Node::Object(members) if !members.is_empty() => members
                .iter()
                .map(|(k, v)| (*v, line_member(&path, k)))
                .collect(),
            Node::Array(items) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, &v)| (v, line_item(doc, &path, i, v)))
                .collect(),
            _ => {
                let mut value = Vec::new();
                encode_node(doc, node, &mut value, false, Escape::Minimal);
                out.push((path, value));
                continue;
            }
        };
        // Reversed onto the stack, so the leaves come out in the text's order.
        stack.extend(children.into_iter().rev());
    }
    out
}

/// The object `name` names in a canonical render, as its id and document; `None` when
/// the render does not hold it; an error when it holds more than one.
fn find<'a>(canonical: &'a [u8], name: &ObjectName) -> Result<Option<(ObjectId, Document<'a>)>> {
    let mut found: Option<(ObjectId, Document<'a>)> = None;
    for line in canonical.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let doc = decode_object(line)
            .map_err(|e| Error::Corrupt(format!("a render's object does not parse: {e}")))?;
        let id = crate::diff::id_of(&doc, doc.root());
        if !name.matches(&id) {
            continue;
        }
        if let Some((first, _)) = &found {
            return Err(Error::InvalidInput(format!(
                "{}/{} names more than one object ({} and {}): give NAMESPACE/KIND/NAME",
                name.kind,
                name.name,
                describe(first),
                describe(&id)
            )));
        }
        found = Some((id, doc));
    }
    Ok(found)
}

fn describe(id: &ObjectId) -> String {
    match id.namespace.as_str() {
        "" => format!("{} {}", id.kind, id.name),
        ns => format!("{} {ns}/{}", id.kind, id.name),
    }
}

/// Whether `path` is `field` or lies beneath it.
fn under(path: &str, field: &str) -> bool {
    path.strip_prefix(field)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// An object's blame, made one entry at a time, oldest first: only the previous
/// entry's values are held, never the renders.
struct Blamer<'n> {
    name: &'n ObjectName,
    field: Option<&'n str>,
    secrets: SecretValues,
    /// Each path's value and the entry since which it has held it.
    since: BTreeMap<String, (Vec<u8>, u32)>,
    /// The newest entry that held the object: its place, the object, its fields.
    last: Option<(u32, ObjectId, Vec<FieldBlame>)>,
}

impl<'n> Blamer<'n> {
    fn new(name: &'n ObjectName, field: Option<&'n str>, secrets: SecretValues) -> Self {
        Blamer {
            name,
            field,
            secrets,
            since: BTreeMap::new(),
            last: None,
        }
    }

    /// Entry `entry`'s render.
    fn step(&mut self, entry: u32, canonical: &[u8]) -> Result<()> {
        let Some((id, mut doc)) = find(canonical, self.name)? else {
            // Gone from this entry: back later, it is new again.
            self.since.clear();
            return Ok(());
        };
        let mut next = BTreeMap::new();
        for (path, value) in leaves(&doc, doc.root_index()) {
            let held = match self.since.get(&path) {
                Some((old, at)) if *old == value => *at,
                _ => entry,
            };
            next.insert(path, (value, held));
        }
        self.since = next;
        // What a person sees: the values masked where they are a Secret's.
        if self.secrets == SecretValues::Masked {
            crate::secrets::mask_one(&mut doc);
        }
        let field = self.field;
        let fields = leaves(&doc, doc.root_index())
            .into_iter()
            .filter(|(path, _)| field.is_none_or(|f| under(path, f)))
            .map(|(path, value)| FieldBlame {
                entry: self.since.get(&path).map_or(entry, |(_, at)| *at),
                value: shown_value(value),
                path,
            })
            .collect();
        self.last = Some((entry, id, fields));
        Ok(())
    }

    fn finish(self, entries: Vec<(SyncTime, String)>) -> Result<ObjectBlame> {
        let Some((newest, object, fields)) = self.last else {
            return Err(Error::NotFound(format!(
                "no render of the history holds {}/{}",
                self.name.kind, self.name.name
            )));
        };
        if let Some(field) = self.field
            && fields.is_empty()
        {
            return Err(Error::InvalidInput(format!(
                "{} has no field {field:?}: give a path as the diff's hunk headers write \
                 them (spec.replicas, spec.template.spec.containers[name=app].image)",
                describe(&object)
            )));
        }
        Ok(ObjectBlame {
            object,
            entries: entries
                .into_iter()
                .map(|(synced_at, render_ref)| HistoryKey {
                    synced_at,
                    render_ref,
                })
                .collect(),
            newest,
            fields,
        })
    }
}

/// The blame of the object `name` names through `renders`, the renders of a history's
/// entries, oldest first (`entries`: each entry's sync and render), of the fields under
/// `field` alone when given.
pub fn blame_renders(
    name: &ObjectName,
    field: Option<&str>,
    secrets: SecretValues,
    entries: &[(SyncTime, String)],
    renders: &[&[u8]],
) -> Result<ObjectBlame> {
    let mut blamer = Blamer::new(name, field, secrets);
    for (i, canonical) in renders.iter().enumerate() {
        blamer.step(u32::try_from(i).unwrap_or(u32::MAX), canonical)?;
    }
    blamer.finish(entries.to_vec())
}

fn shown_value(value: Vec<u8>) -> String {
    let text = String::from_utf8(value).unwrap_or_default();
    match text.char_indices().nth(MAX_SHOWN_VALUE) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The blame of an object through a release's stored history: `list(P/history/)` (where
/// encryption is required, then `get` of each entry, the unauthenticated ones left out), then
/// `get` of each render the history names, in history order, verified as `get-render`
/// verifies it (a render named by consecutive entries is read once). One render is held
/// at a time. A render that cannot be read fails the call.
pub fn blame_object<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    name: &ObjectName,
    field: Option<&str>,
    secrets: SecretValues,
    keyring: &Keyring,
) -> Result<ObjectBlame> {
    let prefix = ReleasePrefix::new(release)?;
    let listed = crate::history::trusted_entries(bucket, &prefix, keyring)?;
    let entries: Vec<(SyncTime, String)> = listed
        .iter()
        .map(|e| (e.synced_at, e.render_ref.clone()))
        .collect();
    let mut blamer = Blamer::new(name, field, secrets);
    let mut held: Option<(&str, Vec<u8>)> = None;
    for (i, (_, render_ref)) in entries.iter().enumerate() {
        if held.as_ref().is_none_or(|(r, _)| r != render_ref) {
            // The render before goes before the next is read: one is held at a time.
            drop(held.take());
            let canonical = crate::store::get_render(bucket, release, render_ref, keyring)?;
            held = Some((render_ref, canonical));
        }
        let (_, canonical) = held.as_ref().expect("read above");
        blamer.step(u32::try_from(i).unwrap_or(u32::MAX), canonical)?;
    }
    blamer.finish(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(objects: &[&str]) -> Vec<u8> {
        crate::canonical(objects).unwrap()
    }

    fn deployment(replicas: u32, image: &str) -> Vec<u8> {
        canonical(&[
            &format!(
                r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web"}},"spec":{{"replicas":{replicas},"template":{{"spec":{{"containers":[{{"name":"web","image":"{image}"}}]}}}}}}}}"#
            ),
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"hunter2"}}"#,
        ])
    }

    fn at(i: i64) -> (SyncTime, String) {
        (
            SyncTime {
                seconds: i,
                nanoseconds: 0,
            },
            format!("r{i}"),
        )
    }

    fn blame_of(name: &str, field: Option<&str>, renders: &[Vec<u8>]) -> Result<ObjectBlame> {
        let entries: Vec<_> = (0..renders.len() as i64).map(at).collect();
        let slices: Vec<&[u8]> = renders.iter().map(Vec::as_slice).collect();
        blame_renders(
            &ObjectName::parse(name).unwrap(),
            field,
            SecretValues::Masked,
            &entries,
            &slices,
        )
    }

    #[test]
    fn each_field_is_blamed_on_the_entry_that_last_changed_it() {
        let renders = [
            deployment(1, "nginx:1.25"),
            deployment(3, "nginx:1.25"),
            deployment(3, "nginx:1.26"),
            deployment(3, "nginx:1.26"),
        ];
        let b = blame_of("Deployment/web", None, &renders).unwrap();
        let by_path: BTreeMap<&str, (u32, &str)> = b
            .fields
            .iter()
            .map(|f| (f.path.as_str(), (f.entry, f.value.as_str())))
            .collect();
        assert_eq!(by_path["spec.replicas"], (1, "3"));
        assert_eq!(
            by_path["spec.template.spec.containers[name=web].image"],
            (2, "\"nginx:1.26\"")
        );
        assert_eq!(by_path["metadata.name"], (0, "\"web\""));
        assert_eq!(b.newest, 3);
        // One field, by its path (or a subtree of them).
        let one = blame_of("deployment/web", Some("spec.replicas"), &renders).unwrap();
        assert_eq!(one.fields.len(), 1);
        let containers = blame_of(
            "deployment/web",
            Some("spec.template.spec.containers"),
            &renders,
        )
        .unwrap();
        assert_eq!(containers.fields.len(), 2, "{:?}", containers.fields);
        assert!(matches!(
            blame_of("deployment/web", Some("spec.nope"), &renders),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            blame_of("deployment/gone", None, &renders),
            Err(Error::NotFound(_))
        ));
    }

    #[test]
    fn an_object_back_after_a_gap_is_new_again_and_secret_values_are_masked() {
        let without =
            canonical(&[r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#]);
        let renders = [deployment(1, "a"), without, deployment(1, "a")];
        let b = blame_of("Deployment/web", None, &renders).unwrap();
        assert!(b.fields.iter().all(|f| f.entry == 2), "{:?}", b.fields);
        let secret = blame_of("secret/db", None, &renders[..1]).unwrap();
        let password = secret
            .fields
            .iter()
            .find(|f| f.path == "stringData.password")
            .unwrap();
        assert!(!password.value.contains("hunter2"), "{password:?}");
        for bad in ["web", "a/b/c/d", "/web", "Deployment/"] {
            assert!(ObjectName::parse(bad).is_err(), "{bad}");
        }
    }
}
