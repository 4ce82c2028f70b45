//! What changed from one render of a release to the next, as a fleet overview tells it:
//! the objects added, removed and changed, the container images that moved, and the
//! Secret keys whose values changed (their names only: a value never leaves here).
//!
//! Objects are matched as [`crate::diff`] matches them (apiVersion, kind, namespace and
//! name; duplicates pair up in order). Images and Secrets are looked for wherever
//! kubectl would see the object holding them: the object itself or an item of a list
//! (`List`, or a typed `*List` whose items may leave their kind out), lists in lists
//! included, as [`crate::secrets`] finds Secrets.

use crate::diff::{Object, ObjectId, compact, objects};
use crate::error::Result;
use crate::json::{Document, Escape, Node, encode_node};
use std::collections::{BTreeMap, HashMap, VecDeque};

pub use crate::wit::types::ImageChange;
pub use crate::wit::types::SecretKeyChange;

pub use crate::wit::types::RenderChanges;
/// The changes from `old` to `new`, both canonical renders (one JSON object a line, as
/// stored); `old` empty for a release's first render, whose objects are then all added.
/// Only the objects that differ are parsed: an identical object changes no image and no
/// Secret key. A line that is not a JSON object is invalid input.
pub fn render_changes(old: &[u8], new: &[u8]) -> Result<RenderChanges> {
    let old = objects(old, "old")?;
    let new = objects(new, "new")?;
    let mut unmatched: HashMap<&ObjectId, VecDeque<usize>> = HashMap::new();
    for (i, o) in old.iter().enumerate() {
        unmatched.entry(&o.id).or_default().push_back(i);
    }
    let mut matched_old = vec![false; old.len()];
    let mut changes = RenderChanges::default();
    // The objects that differ, each side in its render's order: where images and
    // Secret keys are looked for.
    let mut old_side: Vec<&Object<'_>> = Vec::new();
    let mut new_side: Vec<&Object<'_>> = Vec::new();
    for n in &new {
        // Duplicated ids pair up in order, as in a diff.
        let Some(i) = unmatched.get_mut(&n.id).and_then(VecDeque::pop_front) else {
            changes.added.push(n.id.clone());
            new_side.push(n);
            continue;
        };
        matched_old[i] = true;
        let o = &old[i];
        // Equal lines are equal objects; lines that differ are compared parsed, as the
        // input need not be canonical.
        if o.line != n.line && compact(&o.doc()) != compact(&n.doc()) {
            changes.changed.push(n.id.clone());
            old_side.push(o);
            new_side.push(n);
        }
    }
    for (o, matched) in old.iter().zip(matched_old) {
        if !matched {
            changes.removed.push(o.id.clone());
            old_side.push(o);
        }
    }
    let (mut old_images, mut new_images) = (Vec::new(), Vec::new());
    let (mut old_secrets, mut new_secrets) = (Vec::new(), Vec::new());
    for (side, images, secrets) in [
        (&old_side, &mut old_images, &mut old_secrets),
        (&new_side, &mut new_images, &mut new_secrets),
    ] {
        for o in side {
            let doc = o.doc();
            images.extend(container_images(&doc));
            secrets.extend(secret_values(&doc));
        }
    }
    changes.images = image_changes(old_images, new_images);
    changes.secret_keys = secret_key_changes(old_secrets, new_secrets);
    Ok(changes)
}

/// A container of a pod template and its image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerImage {
    /// The object whose pod template holds the container.
    pub object: ObjectId,
    /// The container's name (empty when it has none).
    pub container: String,
    /// Its image; `None` when it names none.
    pub image: Option<String>,
}

/// The pod spec fields that hold containers, in the order a pod starts them.
const CONTAINER_FIELDS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// Every container of every pod template in `doc`, with its image: a Pod's `spec`, a
/// PodTemplate's `template.spec`, the
/// `spec.template.spec` of any object that has one (Deployment, StatefulSet, DaemonSet,
/// ReplicaSet, Job, ReplicationController, a custom resource shaped so), a CronJob's
/// `spec.jobTemplate.spec.template.spec`, in the object itself or in the items of its
/// lists. In document order, each pod's containers init first, then regular, then
/// ephemeral.
pub fn container_images(doc: &Document<'_>) -> Vec<ContainerImage> {
    let mut out = Vec::new();
    for (id, object) in objects_in(doc) {
        let Some(spec) = pod_spec(doc, object, &id) else {
            continue;
        };
        for field in CONTAINER_FIELDS {
            let Some(Node::Array(items)) = member(doc, spec, field).map(|i| doc.node(i)) else {
                continue;
            };
            for &item in items {
                if !matches!(doc.node(item), Node::Object(_)) {
                    continue;
                }
                out.push(ContainerImage {
                    object: id.clone(),
                    container: text(doc, item, "name").unwrap_or_default().to_string(),
                    image: text(doc, item, "image").map(str::to_string),
                });
            }
        }
    }
    out
}

/// The pod spec of `object`, if it is or holds a pod template.
fn pod_spec(doc: &Document<'_>, object: u32, id: &ObjectId) -> Option<u32> {
    let path = |steps: &[&str]| {
        steps
            .iter()
            .try_fold(object, |node, step| member(doc, node, step))
    };
    if id.api_version == "v1" {
        match id.kind.as_str() {
            "Pod" => return path(&["spec"]),
            "PodTemplate" => return path(&["template", "spec"]),
            _ => {}
        }
    }
    path(&["spec", "template", "spec"])
        .or_else(|| path(&["spec", "jobTemplate", "spec", "template", "spec"]))
}

/// Every object of `doc` with its id: the document itself, and the items of its lists,
/// however deep, in document order. An item with neither `apiVersion` nor `kind` takes
/// its typed list's (the items of a v1 `SecretList` are v1 Secrets), as kubectl reads
/// one and as [`crate::secrets`] masks one. Walked with a stack of its own: lists may
/// nest deeper than the call stack should go.
fn objects_in(doc: &Document<'_>) -> Vec<(ObjectId, u32)> {
    let mut found = Vec::new();
    let mut stack: Vec<(u32, Option<(String, String)>)> = vec![(doc.root_index(), None)];
    while let Some((object, inherited)) = stack.pop() {
        let typed = match (text(doc, object, "apiVersion"), text(doc, object, "kind")) {
            (None, None) => inherited,
            (api, kind) => Some((
                api.unwrap_or_default().to_string(),
                kind.unwrap_or_default().to_string(),
            )),
        };
        let Some((api, kind)) = typed else {
            continue;
        };
        let metadata = member(doc, object, "metadata");
        let field = |key| {
            metadata
                .and_then(|m| text(doc, m, key))
                .unwrap_or_default()
                .to_string()
        };
        let id = ObjectId {
            api_version: api.clone(),
            kind: kind.clone(),
            namespace: field("namespace"),
            name: field("name"),
        };
        found.push((id, object));
        let Some(item_kind) = kind.strip_suffix("List") else {
            continue;
        };
        let Some(Node::Array(items)) = member(doc, object, "items").map(|i| doc.node(i)) else {
            continue;
        };
        // Items of `List` name their own kind; those of a typed list may leave it out.
        let for_items = (!item_kind.is_empty()).then(|| (api.clone(), item_kind.to_string()));
        for &item in items.iter().rev() {
            if matches!(doc.node(item), Node::Object(_)) {
                stack.push((item, for_items.clone()));
            }
        }
    }
    found
}

/// A v1 Secret's keys, each with its value's compact bytes (compared, never shown).
type SecretKeys = (ObjectId, BTreeMap<String, Vec<u8>>);

/// Every v1 Secret of `doc` (the object or its lists' items) with its `data` and
/// `stringData` keys. A key in both fields is kept once per field, as `data.KEY` and
/// `stringData.KEY` would be, under one name: a change in either is a change of the key.
fn secret_values(doc: &Document<'_>) -> Vec<SecretKeys> {
    let mut out = Vec::new();
    for (id, object) in objects_in(doc) {
        if id.api_version != "v1" || id.kind != "Secret" {
            continue;
        }
        let mut keys: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for field in ["data", "stringData"] {
            let Some(value) = member(doc, object, field) else {
                continue;
            };
            let mut add = |key: &str, node: u32| {
                let bytes = keys.entry(key.to_string()).or_default();
                // The field's name keeps `data.k` and `stringData.k` apart.
                bytes.extend_from_slice(field.as_bytes());
                bytes.push(0);
                encode_node(doc, node, bytes, false, Escape::Go);
                bytes.push(0);
            };
            match doc.node(value) {
                Node::Object(members) => {
                    for (key, node) in members {
                        add(key, *node);
                    }
                }
                // Not a map of values (no Secret the API server takes): the field
                // stands for its one value.
                _ => add(field, value),
            }
        }
        out.push((id, keys));
    }
    out
}

/// The containers whose images differ, each (object, container) of the old side paired
/// with the new side's in order.
fn image_changes(old: Vec<ContainerImage>, new: Vec<ContainerImage>) -> Vec<ImageChange> {
    let mut paired: Paired<(ObjectId, String), Option<String>> = Paired::default();
    for c in new {
        paired.push_new((c.object, c.container), c.image);
    }
    for c in old {
        paired.push_old((c.object, c.container), c.image);
    }
    let mut out = Vec::new();
    for ((object, container), olds, news) in paired.finish() {
        let n = olds.len().max(news.len());
        for i in 0..n {
            let old = olds.get(i).cloned().flatten();
            let new = news.get(i).cloned().flatten();
            if old != new {
                out.push(ImageChange {
                    object: object.clone(),
                    container: container.clone(),
                    old,
                    new,
                });
            }
        }
    }
    out
}

/// The Secret keys whose values changed, each Secret of the old side paired with the
/// new side's of the same id in order.
fn secret_key_changes(old: Vec<SecretKeys>, new: Vec<SecretKeys>) -> Vec<SecretKeyChange> {
    let mut paired: Paired<ObjectId, BTreeMap<String, Vec<u8>>> = Paired::default();
    for (id, keys) in new {
        paired.push_new(id, keys);
    }
    for (id, keys) in old {
        paired.push_old(id, keys);
    }
    let mut out = Vec::new();
    let empty = BTreeMap::new();
    for (secret, olds, news) in paired.finish() {
        for i in 0..olds.len().max(news.len()) {
            let (o, n) = (olds.get(i).unwrap_or(&empty), news.get(i).unwrap_or(&empty));
            let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                if o.get(key) != n.get(key) {
                    out.push(SecretKeyChange {
                        secret: secret.clone(),
                        key: key.clone(),
                    });
                }
            }
        }
    }
    out
}

/// Values of both sides grouped by key, keys in the order first seen (the new side is
/// pushed first, so its order leads).
struct Paired<K, V> {
    order: Vec<K>,
    at: HashMap<K, usize>,
    values: Vec<(Vec<V>, Vec<V>)>,
}

impl<K, V> Default for Paired<K, V> {
    fn default() -> Self {
        Paired {
            order: Vec::new(),
            at: HashMap::new(),
            values: Vec::new(),
        }
    }
}

impl<K: Clone + Eq + std::hash::Hash, V> Paired<K, V> {
    fn slot(&mut self, key: K) -> &mut (Vec<V>, Vec<V>) {
        let i = *self.at.entry(key.clone()).or_insert_with(|| {
            self.order.push(key);
            self.values.push((Vec::new(), Vec::new()));
            self.values.len() - 1
        });
        &mut self.values[i]
    }

    fn push_old(&mut self, key: K, value: V) {
        self.slot(key).0.push(value);
    }

    fn push_new(&mut self, key: K, value: V) {
        self.slot(key).1.push(value);
    }

    /// Each key, in order, with its old and its new values.
    fn finish(self) -> impl Iterator<Item = (K, Vec<V>, Vec<V>)> {
        self.order
            .into_iter()
            .zip(self.values)
            .map(|(k, (o, n))| (k, o, n))
    }
}

fn member(doc: &Document<'_>, object: u32, key: &str) -> Option<u32> {
    doc.member(doc.node(object), key)
}

fn text<'d>(doc: &'d Document<'_>, object: u32, key: &str) -> Option<&'d str> {
    member(doc, object, key).and_then(|i| doc.node(i).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(api: &str, kind: &str, ns: &str, name: &str) -> ObjectId {
        ObjectId {
            api_version: api.into(),
            kind: kind.into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    fn deployment(name: &str, image: &str) -> String {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}","namespace":"prod"}},"spec":{{"template":{{"spec":{{"initContainers":[{{"name":"migrate","image":"migrate:1"}}],"containers":[{{"name":"app","image":"{image}"}},{{"name":"sidecar","image":"envoy:1"}}]}}}}}}}}"#
        )
    }

    fn render(objects: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for o in objects {
            out.extend_from_slice(o.as_bytes());
            out.push(b'\n');
        }
        out
    }

    #[test]
    fn an_image_bump_is_one_changed_object_and_one_image() {
        let cm =
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}"#;
        let old = render(&[cm, &deployment("web", "web:1.0")]);
        let new = render(&[cm, &deployment("web", "web:1.1")]);
        let c = render_changes(&old, &new).unwrap();
        let web = id("apps/v1", "Deployment", "prod", "web");
        assert_eq!(c.changed, vec![web.clone()]);
        assert!(c.added.is_empty() && c.removed.is_empty() && c.secret_keys.is_empty());
        assert_eq!(
            c.images,
            vec![ImageChange {
                object: web,
                container: "app".into(),
                old: Some("web:1.0".into()),
                new: Some("web:1.1".into()),
            }]
        );
        // The same render: nothing.
        assert_eq!(
            render_changes(&new, &new).unwrap(),
            RenderChanges::default()
        );
    }

    #[test]
    fn added_and_removed_workloads_bring_and_take_their_images() {
        let old = render(&[&deployment("old", "a:1")]);
        let new = render(&[&deployment("new", "b:1")]);
        let c = render_changes(&old, &new).unwrap();
        let (o, n) = (
            id("apps/v1", "Deployment", "prod", "old"),
            id("apps/v1", "Deployment", "prod", "new"),
        );
        assert_eq!(
            (c.added.clone(), c.removed.clone()),
            (vec![n.clone()], vec![o.clone()])
        );
        assert!(c.changed.is_empty());
        let images: Vec<(String, &str, Option<&str>, Option<&str>)> = c
            .images
            .iter()
            .map(|i| {
                (
                    i.object.name.clone(),
                    i.container.as_str(),
                    i.old.as_deref(),
                    i.new.as_deref(),
                )
            })
            .collect();
        // The new render's objects first, each pod's init containers first.
        assert_eq!(
            images,
            vec![
                ("new".into(), "migrate", None, Some("migrate:1")),
                ("new".into(), "app", None, Some("b:1")),
                ("new".into(), "sidecar", None, Some("envoy:1")),
                ("old".into(), "migrate", Some("migrate:1"), None),
                ("old".into(), "app", Some("a:1"), None),
                ("old".into(), "sidecar", Some("envoy:1"), None),
            ]
        );
        // A release's first render compares against nothing: everything is added.
        let first = render_changes(b"", &new).unwrap();
        assert_eq!(first.added, vec![n]);
        assert_eq!(first.images.len(), 3);
        assert!(first.images.iter().all(|i| i.old.is_none()));
    }

    #[test]
    fn a_secret_value_change_names_the_key_and_never_the_value() {
        let secret = |password: &str, extra: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","namespace":"prod"}},"data":{{"password":"{password}","user":"YWRtaW4="{extra}}},"stringData":{{"token":"same"}}}}"#
            )
        };
        let old = render(&[&secret("aHVudGVyMg==", r#","gone":"eA==""#)]);
        let new = render(&[&secret("czNjcjN0", r#","added":"eQ==""#)]);
        let c = render_changes(&old, &new).unwrap();
        let db = id("v1", "Secret", "prod", "db");
        let keys: Vec<&str> = c.secret_keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(keys, ["added", "gone", "password"]);
        assert!(c.secret_keys.iter().all(|k| k.secret == db));
        assert_eq!(c.changed, vec![db]);
        let shown = format!("{c:?}");
        for value in [
            "aHVudGVyMg==",
            "czNjcjN0",
            "eA==",
            "eQ==",
            "YWRtaW4=",
            "same",
        ] {
            assert!(!shown.contains(value), "{value} in {shown}");
        }
        // A Secret of another API group holds no Secret keys.
        let other = |v: &str| {
            format!(
                r#"{{"apiVersion":"example.com/v1","kind":"Secret","metadata":{{"name":"x"}},"data":{{"k":"{v}"}}}}"#
            )
        };
        let c = render_changes(&render(&[&other("a")]), &render(&[&other("b")])).unwrap();
        assert!(c.secret_keys.is_empty() && c.changed.len() == 1);
    }

    #[test]
    fn a_cronjob_and_a_pod_hold_images_where_their_kinds_keep_them() {
        let cron = |image: &str| {
            format!(
                r#"{{"apiVersion":"batch/v1","kind":"CronJob","metadata":{{"name":"nightly"}},"spec":{{"schedule":"@daily","jobTemplate":{{"spec":{{"template":{{"spec":{{"containers":[{{"name":"job","image":"{image}"}}]}}}}}}}}}}}}"#
            )
        };
        let pod = |image: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"debug"}},"spec":{{"ephemeralContainers":[{{"name":"dbg","image":"{image}"}}]}}}}"#
            )
        };
        let c = render_changes(
            &render(&[&cron("batch:1"), &pod("busybox:1")]),
            &render(&[&cron("batch:2"), &pod("busybox:2")]),
        )
        .unwrap();
        let summary: Vec<(&str, &str, Option<&str>, Option<&str>)> = c
            .images
            .iter()
            .map(|i| {
                (
                    i.object.kind.as_str(),
                    i.container.as_str(),
                    i.old.as_deref(),
                    i.new.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("CronJob", "job", Some("batch:1"), Some("batch:2")),
                ("Pod", "dbg", Some("busybox:1"), Some("busybox:2")),
            ]
        );
    }

    #[test]
    fn items_of_lists_are_the_objects_named() {
        let list = |image: &str, value: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{{"name":"db"}},"spec":{{"template":{{"spec":{{"containers":[{{"name":"pg","image":"{image}"}}]}}}}}}}},{{"apiVersion":"v1","kind":"SecretList","items":[{{"metadata":{{"name":"creds"}},"data":{{"k":"{value}"}}}}]}}]}}"#
            )
        };
        let c = render_changes(
            &render(&[&list("pg:15", "b2xk")]),
            &render(&[&list("pg:16", "bmV3")]),
        )
        .unwrap();
        assert_eq!(c.changed, vec![id("v1", "List", "", "")]);
        assert_eq!(c.images.len(), 1);
        assert_eq!(c.images[0].object, id("apps/v1", "StatefulSet", "", "db"));
        // The typed list's item with no kind of its own is a v1 Secret.
        assert_eq!(
            c.secret_keys,
            vec![SecretKeyChange {
                secret: id("v1", "Secret", "", "creds"),
                key: "k".into()
            }]
        );
    }

    #[test]
    fn init_containers_change_on_their_own() {
        let job = |init: &str| {
            format!(
                r#"{{"apiVersion":"batch/v1","kind":"Job","metadata":{{"name":"j"}},"spec":{{"template":{{"spec":{{"initContainers":[{{"name":"fetch","image":"{init}"}}],"containers":[{{"name":"run","image":"run:1"}}]}}}}}}}}"#
            )
        };
        let c = render_changes(&render(&[&job("fetch:1")]), &render(&[&job("fetch:2")])).unwrap();
        assert_eq!(c.images.len(), 1, "{:?}", c.images);
        assert_eq!(c.images[0].container, "fetch");
        assert_eq!(
            (c.images[0].old.as_deref(), c.images[0].new.as_deref()),
            (Some("fetch:1"), Some("fetch:2"))
        );
    }

    #[test]
    fn a_line_that_is_not_an_object_is_refused() {
        let err = render_changes(b"[1]\n", b"").unwrap_err();
        assert!(format!("{err}").contains("old render's object 0"), "{err}");
    }
}
