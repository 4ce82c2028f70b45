//! The difference between two renders: objects matched by apiVersion, kind, namespace
//! and name; added, removed and changed; for a changed object, a unified line diff of
//! its YAML form (as `kubectl get -o yaml` shows objects) or its pretty-printed JSON.

use crate::error::{Result, invalid};
use crate::json::{
    Document, Node, decode_object, encode_document, encode_document_pretty, encode_document_yaml,
    encode_document_yaml_with_paths, pretty_line_paths,
};
use crate::secrets::{SecretValues, mask_one, mask_pair, may_hold_secrets};
use std::collections::{HashMap, VecDeque};

pub use crate::wit::types::ChangedObject;
pub use crate::wit::types::ObjectId;

pub use crate::wit::types::ObjectForm;
pub use crate::wit::types::RenderDiff;
/// Lines of context around each change, as diff(1) and git show by default.
pub const DEFAULT_CONTEXT: u32 = 3;

/// How a diff shows what changed: the form of each changed object, Secret values masked
/// or not, and the lines of context around each change (as [`diff_canonical`] takes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffView {
    /// The form changed objects are shown in.
    pub form: ObjectForm,
    /// Whether Secret values are shown or masked.
    pub secrets: SecretValues,
    /// Lines of context around each change; `u32::MAX` shows each changed object whole.
    pub context: u32,
}
/// Largest line-pair table the exact diff builds; past it a change is shown as the
/// whole old text removed and the whole new text added.
const MAX_TABLE: usize = 4_000_000;

/// An object of a canonical render: its id and its line. The line's parse tree is
/// made when the object is needed and dropped after, so a render's objects are never
/// all parsed at once: a diff holds its two renders and one object's tree at a time.
pub(crate) struct Object<'a> {
    pub(crate) id: ObjectId,
    pub(crate) line: &'a [u8],
}

impl<'a> Object<'a> {
    /// The object's parse tree (its line parsed again: `objects` checked it parses).
    pub(crate) fn doc(&self) -> Document<'a> {
        decode_object(self.line).expect("the line parsed when the render was read")
    }
}

/// `o` whole in `form`, Secret values as `secrets` says: an object as people see it in
/// a render or as it comes or goes in a diff.
fn shown(o: &Object<'_>, form: ObjectForm, secrets: SecretValues) -> ShownObject {
    let mut doc = o.doc();
    if secrets == SecretValues::Masked {
        mask_one(&mut doc);
    }
    ShownObject {
        text: pretty(&doc, form),
        id: o.id.clone(),
    }
}

fn string_member(doc: &Document<'_>, node: Option<&Node<'_>>, key: &str) -> String {
    match node {
        Some(Node::Object(members)) => match members.iter().rev().find(|(k, _)| k == key) {
            Some((_, v)) => doc.node(*v).as_str().unwrap_or_default().to_string(),
            None => String::new(),
        },
        _ => String::new(),
    }
}

/// The identity of the object at `node`: its apiVersion, kind, and metadata's namespace
/// and name (empty when absent).
pub(crate) fn id_of(doc: &Document<'_>, node: &Node<'_>) -> ObjectId {
    let metadata = doc.member(node, "metadata").map(|m| doc.node(m));
    ObjectId {
        api_version: string_member(doc, Some(node), "apiVersion"),
        kind: string_member(doc, Some(node), "kind"),
        namespace: string_member(doc, metadata, "namespace"),
        name: string_member(doc, metadata, "name"),
    }
}

/// The objects of a canonical render: one JSON object a line.
pub(crate) fn objects<'a>(canonical: &'a [u8], which: &str) -> Result<Vec<Object<'a>>> {
    let mut out = Vec::new();
    for (index, line) in canonical
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let doc = decode_object(line).map_err(|e| {
            invalid(format!(
                "the {which} render's object {index} is invalid: {e}"
            ))
        })?;
        let id = id_of(&doc, doc.root());
        out.push(Object { id, line });
    }
    Ok(out)
}

pub(crate) fn compact(doc: &Document<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_document(doc, &mut out);
    out
}

fn pretty(doc: &Document<'_>, form: ObjectForm) -> String {
    let mut out = Vec::new();
    match form {
        ObjectForm::Yaml => encode_document_yaml(doc, &mut out),
        ObjectForm::Json => encode_document_pretty(doc, &mut out),
    }
    String::from_utf8(out).expect("the encoders write UTF-8")
}

/// [`pretty`] with the path of the node each line belongs to.
fn pretty_with_paths(doc: &Document<'_>, form: ObjectForm) -> (String, Vec<String>) {
    let mut out = Vec::new();
    let paths = match form {
        ObjectForm::Yaml => encode_document_yaml_with_paths(doc, &mut out),
        ObjectForm::Json => {
            encode_document_pretty(doc, &mut out);
            pretty_line_paths(doc)
        }
    };
    (
        String::from_utf8(out).expect("the encoders write UTF-8"),
        paths,
    )
}

/// The difference from `old` to `new`, both canonical renders (one object a line, as
/// stored by put-render), changed objects shown in `form` with `context` lines around
/// each change ([`DEFAULT_CONTEXT`]; `u32::MAX` shows each changed object whole), Secret
/// values as `secrets` says. Whether an object changed is decided on the objects as
/// they are.
pub fn diff_canonical(
    old: &[u8],
    new: &[u8],
    form: ObjectForm,
    secrets: SecretValues,
    context: u32,
) -> Result<RenderDiff> {
    let old = objects(old, "old")?;
    let new = objects(new, "new")?;
    let mut unmatched: HashMap<&ObjectId, VecDeque<usize>> = HashMap::new();
    for (i, o) in old.iter().enumerate() {
        unmatched.entry(&o.id).or_default().push_back(i);
    }
    let mut matched_old = vec![false; old.len()];
    let mut diff = RenderDiff::default();
    for n in &new {
        // Duplicated ids pair up in order: the first with the first.
        let Some(i) = unmatched.get_mut(&n.id).and_then(VecDeque::pop_front) else {
            diff.added.push(shown(n, form, secrets));
            continue;
        };
        matched_old[i] = true;
        // Equal lines are equal objects; lines that differ may still be (the input of
        // `logic.diff-renders` need not be canonical), so they are compared parsed.
        if old[i].line == n.line {
            diff.unchanged += 1;
            continue;
        }
        let (old_doc, new_doc) = (old[i].doc(), n.doc());
        if compact(&old_doc) == compact(&new_doc) {
            diff.unchanged += 1;
        } else {
            let masked = secrets == SecretValues::Masked
                && (may_hold_secrets(&old_doc) || may_hold_secrets(&new_doc));
            let (before, after) = if masked {
                let (mut before, mut after) = (old_doc, new_doc);
                mask_pair(&mut before, &mut after);
                (
                    pretty_with_paths(&before, form),
                    pretty_with_paths(&after, form),
                )
            } else {
                (
                    pretty_with_paths(&old_doc, form),
                    pretty_with_paths(&new_doc, form),
                )
            };
            diff.changed.push(ChangedObject {
                id: n.id.clone(),
                lines: hunks(&before, &after, context as usize),
            });
        }
    }
    diff.removed = old
        .iter()
        .zip(matched_old)
        .filter(|(_, matched)| !matched)
        .map(|(o, _)| shown(o, form, secrets))
        .collect();
    Ok(diff)
}

pub use crate::wit::types::ShownObject;
/// Every object of a canonical render (one object a line), in render order, written
/// in `form`, Secret values as `secrets` says: what a render looks like to the people
/// reading its diffs.
pub fn show_objects(
    canonical: &[u8],
    form: ObjectForm,
    secrets: SecretValues,
) -> Result<Vec<ShownObject>> {
    Ok(objects(canonical, "shown")?
        .iter()
        .map(|o| shown(o, form, secrets))
        .collect())
}

pub use crate::wit::types::PageObject;
pub use crate::wit::types::RenderPage;
/// The pages of objects whose texts have the lengths given, in display order: each
/// page's range, its texts within `budget` bytes (an object longer than that has a
/// page of its own). At least one page, empty for no object.
pub fn pages_of(lengths: &[u64], budget: u64) -> Vec<core::ops::Range<usize>> {
    let mut pages = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, &len) in lengths.iter().enumerate() {
        if i > start && bytes + len > budget {
            pages.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += len;
    }
    if start < lengths.len() || pages.is_empty() {
        pages.push(start..lengths.len());
    }
    pages
}

/// `text` as a page shows it: whole, or its first lines within `budget` bytes.
fn cut_text(mut text: String, budget: u64) -> String {
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    if text.len() > budget {
        let mut end = budget;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = text[..end].rfind('\n').map_or(end, |n| n + 1);
        text.truncate(cut);
    }
    text
}

/// Page `page` (from 1) of a canonical render's objects for people: listed by kind,
/// namespace, name and apiVersion (as people look for an object), each written as
/// [`show_objects`] writes it, and cut into pages whose texts are at most `page_bytes`
/// long. Only the page's texts are kept: a render of any size is shown holding it once
/// and a page of text. A page past the last has no object (and says how many there
/// are).
pub fn render_page(
    canonical: &[u8],
    form: ObjectForm,
    secrets: SecretValues,
    page_bytes: u64,
    page: u32,
) -> Result<RenderPage> {
    let objects = objects(canonical, "shown")?;
    let text = |o: &Object<'_>| {
        let mut doc = o.doc();
        if secrets == SecretValues::Masked {
            mask_one(&mut doc);
        }
        pretty(&doc, form)
    };
    let lengths: Vec<u64> = objects.iter().map(|o| text(o).len() as u64).collect();
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&objects[a].id, &objects[b].id);
        (&a.kind, &a.namespace, &a.name, &a.api_version).cmp(&(
            &b.kind,
            &b.namespace,
            &b.name,
            &b.api_version,
        ))
    });
    let listed: Vec<u64> = order.iter().map(|&i| lengths[i]).collect();
    let pages = pages_of(&listed, page_bytes);
    let range = (page as usize)
        .checked_sub(1)
        .and_then(|p| pages.get(p))
        .cloned()
        .unwrap_or(0..0);
    let start = u32::try_from(range.start).unwrap_or(u32::MAX);
    let start = if range.is_empty() {
        u32::try_from(objects.len()).unwrap_or(u32::MAX)
    } else {
        start
    };
    let shown = order[range]
        .iter()
        .map(|&i| PageObject {
            index: i as u32,
            id: objects[i].id.clone(),
            text: cut_text(text(&objects[i]), page_bytes),
            full_len: lengths[i],
        })
        .collect();
    Ok(RenderPage {
        objects: u32::try_from(objects.len()).unwrap_or(u32::MAX),
        size: canonical.len() as u64,
        pages: u32::try_from(pages.len()).unwrap_or(u32::MAX),
        start,
        shown,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Removed,
    Added,
}

/// The edit script from `a` to `b`: longest common subsequence on what lies between
/// the common prefix and suffix.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops = vec![Op::Same; prefix];
    if ma.len().saturating_mul(mb.len()) > MAX_TABLE {
        ops.extend(std::iter::repeat_n(Op::Removed, ma.len()));
        ops.extend(std::iter::repeat_n(Op::Added, mb.len()));
    } else {
        // lcs[i][j]: length of the LCS of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * w + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                ops.push(Op::Same);
                i += 1;
                j += 1;
            } else if j < mb.len() && (i == ma.len() || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])
            {
                ops.push(Op::Added);
                j += 1;
            } else {
                ops.push(Op::Removed);
                i += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Same, suffix));
    removed_before_added(&mut ops);
    ops
}

/// Within each run of changes, puts the removed lines before the added ones, as people
/// read a change (old, then new). The run covers the same lines of `a` and of `b`
/// either way, so positions stay right.
fn removed_before_added(ops: &mut [Op]) {
    for run in ops.split_mut(|op| *op == Op::Same) {
        let removed = run.iter().filter(|op| **op == Op::Removed).count();
        let (old, new) = run.split_at_mut(removed);
        old.fill(Op::Removed);
        new.fill(Op::Added);
    }
}

/// A unified diff with [`DEFAULT_CONTEXT`] lines of context, hunks headed
/// `@@ -a,b +c,d @@`.
pub fn unified(old: &str, new: &str) -> Vec<String> {
    let no_paths = |text: &str| (text.to_string(), vec![String::new(); text.lines().count()]);
    hunks(&no_paths(old), &no_paths(new), DEFAULT_CONTEXT as usize)
}

/// The unified diff of two texts, each with the path of every line: `context` lines
/// around each change, each hunk headed by its ranges and the path of its first change.
fn hunks(old: &(String, Vec<String>), new: &(String, Vec<String>), context: usize) -> Vec<String> {
    let a: Vec<&str> = old.0.lines().collect();
    let b: Vec<&str> = new.0.lines().collect();
    let path = |paths: &[String], i: usize| paths.get(i).cloned().unwrap_or_default();
    let ops = edit_script(&a, &b);
    // Positions in a and b before each op.
    let mut pos = Vec::with_capacity(ops.len() + 1);
    let (mut i, mut j) = (0, 0);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Removed => i += 1,
            Op::Added => j += 1,
        }
    }
    pos.push((i, j));

    let changes: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Same).collect();
    // A context that reaches past both ends shows the object whole; its changes are
    // still grouped as with the default context, each group a hunk of its own (the
    // hunks abut), so each says where its change is.
    let whole = context >= ops.len();
    let grouping = if whole {
        DEFAULT_CONTEXT as usize
    } else {
        context
    };
    // Each group: the index of its first and its last change.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for &change in &changes {
        match groups.last_mut() {
            // The next change is within two contexts of the group's last one.
            Some((_, last)) if change <= (*last + 1).saturating_add(grouping.saturating_mul(2)) => {
                *last = change
            }
            _ => groups.push((change, change)),
        }
    }
    let mut out = Vec::new();
    for (g, &(first, last)) in groups.iter().enumerate() {
        let (start, end) = if whole {
            // Split the unchanged lines between two groups in the middle.
            let start = match g {
                0 => 0,
                _ => (groups[g - 1].1 + 1 + first) / 2,
            };
            let end = match groups.get(g + 1) {
                Some(&(next, _)) => (last + 1 + next) / 2,
                None => ops.len(),
            };
            (start, end)
        } else {
            (
                first.saturating_sub(context),
                (last + 1).saturating_add(context).min(ops.len()),
            )
        };
        let (a0, b0) = pos[start];
        let (a1, b1) = pos[end];
        let (x, y) = pos[first];
        let where_ = match ops[first] {
            Op::Removed => path(&old.1, x),
            _ => path(&new.1, y),
        };
        let header = format!("@@ -{},{} +{},{} @@", a0 + 1, a1 - a0, b0 + 1, b1 - b0);
        out.push(if where_.is_empty() {
            header
        } else {
            format!("{header} {where_}")
        });
        for (op, &(x, y)) in ops[start..end].iter().zip(&pos[start..end]) {
            out.push(match op {
                Op::Same => format!(" {}", a[x]),
                Op::Removed => format!("-{}", a[x]),
                Op::Added => format!("+{}", b[y]),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(objects: &[&str]) -> Vec<u8> {
        crate::canonical(objects).unwrap()
    }

    #[test]
    fn a_render_page_holds_only_its_objects_texts_in_listed_order() {
        let r = b"{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"b\"}}\n\
{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"z\"},\"data\":{\"k\":\"v\"}}\n\
{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n";
        let all = show_objects(r, ObjectForm::Yaml, SecretValues::Masked).unwrap();
        let whole = render_page(r, ObjectForm::Yaml, SecretValues::Masked, 1 << 20, 1).unwrap();
        assert_eq!(
            (whole.objects, whole.pages, whole.size),
            (3, 1, r.len() as u64)
        );
        let order: Vec<u32> = whole.shown.iter().map(|o| o.index).collect();
        assert_eq!(order, [2, 1, 0], "by kind, then name");
        for o in &whole.shown {
            assert_eq!(o.text, all[o.index as usize].text);
            assert_eq!(o.full_len, o.text.len() as u64);
        }
        // A budget smaller than any text: a page an object, each cut to its first lines.
        let small = render_page(r, ObjectForm::Yaml, SecretValues::Masked, 20, 2).unwrap();
        assert_eq!((small.pages, small.start), (3, 1));
        assert_eq!(small.shown.len(), 1);
        let o = &small.shown[0];
        assert_eq!(o.index, 1);
        assert!(
            o.text.len() <= 20 && o.text.ends_with('\n') && o.full_len > 20,
            "{o:?}"
        );
        // Past the last page: nothing shown, the count of pages still said.
        let past = render_page(r, ObjectForm::Yaml, SecretValues::Masked, 20, 4).unwrap();
        assert_eq!((past.pages, past.shown.len()), (3, 0));
        assert_eq!(pages_of(&[], 10), vec![0..0]);
        assert_eq!(pages_of(&[3, 2, 5, 1, 1], 4), [0..1, 1..2, 2..3, 3..5]);
    }

    #[test]
    fn matches_by_identity_and_reports_each_kind() {
        let old = canonical(&[
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"},"data":{"k":"1","x":"same"}}"#,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"gone"}}"#,
            r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}"#,
        ]);
        let new = canonical(&[
            r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}"#,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"a"},"data":{"x":"same","k":"2"}}"#,
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}"#,
        ]);
        let d = diff_canonical(
            &old,
            &new,
            ObjectForm::Json,
            SecretValues::Shown,
            DEFAULT_CONTEXT,
        )
        .unwrap();
        assert_eq!(d.unchanged, 1);
        assert_eq!(d.added.len(), 1);
        assert_eq!(d.added[0].id.kind, "Deployment");
        // Whole, in the diff's form.
        assert!(
            d.added[0]
                .text
                .starts_with("{\n  \"apiVersion\": \"apps/v1\""),
            "{}",
            d.added[0].text
        );
        assert_eq!(d.removed.len(), 1);
        assert_eq!(d.removed[0].id.name, "gone");
        assert!(d.removed[0].text.contains("\"kind\": \"Secret\""));
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].id.namespace, "ns");
        assert!(
            d.changed[0]
                .lines
                .contains(&"-    \"k\": \"1\",".to_string()),
            "{:?}",
            d.changed[0].lines
        );
        assert!(
            d.changed[0]
                .lines
                .contains(&"+    \"k\": \"2\",".to_string())
        );
        assert!(d.changed[0].lines[0].starts_with("@@ -"));
        // The hunk says where its change is.
        assert!(
            d.changed[0].lines[0].ends_with("@@ data.k"),
            "{:?}",
            d.changed[0].lines
        );
    }

    #[test]
    fn an_added_or_removed_secret_is_shown_whole_with_its_values_masked() {
        let old = canonical(&[
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"old"},"data":{"k":"b2xkLXZhbHVl"}}"#,
        ]);
        let new = canonical(&[
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"new"},"stringData":{"password":"hunter2"}}"#,
        ]);
        let masked = diff_canonical(
            &old,
            &new,
            ObjectForm::Yaml,
            SecretValues::Masked,
            DEFAULT_CONTEXT,
        )
        .unwrap();
        let (added, removed) = (&masked.added[0].text, &masked.removed[0].text);
        assert!(
            added.contains("password: '***'") && !added.contains("hunter2"),
            "{added}"
        );
        assert!(
            removed.contains("k: '***'") && !removed.contains("b2xk"),
            "{removed}"
        );
        let shown = diff_canonical(
            &old,
            &new,
            ObjectForm::Yaml,
            SecretValues::Shown,
            DEFAULT_CONTEXT,
        )
        .unwrap();
        assert!(shown.added[0].text.contains("password: hunter2"));
        assert!(shown.removed[0].text.contains("k: b2xkLXZhbHVl"));
    }

    #[test]
    fn shown_objects_are_the_diff_form_of_each_object_in_order() {
        let r = canonical(&[
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"},"data":{"k":"1"}}"#,
            r#"{"kind":"Secret","metadata":{"name":"s"}}"#,
        ]);
        let shown = show_objects(&r, ObjectForm::Yaml, SecretValues::Masked).unwrap();
        assert_eq!(shown.len(), 2);
        assert_eq!(shown[0].id.kind, "ConfigMap");
        assert_eq!(shown[0].id.namespace, "ns");
        assert_eq!(shown[1].id.name, "s");
        assert!(
            shown[0].text.contains("data:\n  k: '1'\n"),
            "{}",
            shown[0].text
        );
        // The same text a diff shows: every line of a changed object comes from it.
        let json = show_objects(&r, ObjectForm::Json, SecretValues::Masked).unwrap();
        assert!(
            json[1].text.starts_with("{\n  \"kind\": \"Secret\""),
            "{}",
            json[1].text
        );
        assert!(show_objects(b"[1]\n", ObjectForm::Yaml, SecretValues::Masked).is_err());
        assert_eq!(
            show_objects(b"", ObjectForm::Yaml, SecretValues::Masked).unwrap(),
            vec![]
        );
    }

    #[test]
    fn identical_renders_have_no_difference() {
        let r = canonical(&[r#"{"kind":"A"}"#, r#"{"kind":"B"}"#]);
        let d = diff_canonical(
            &r,
            &r,
            ObjectForm::Yaml,
            SecretValues::Masked,
            DEFAULT_CONTEXT,
        )
        .unwrap();
        assert_eq!(
            d,
            RenderDiff {
                unchanged: 2,
                ..Default::default()
            }
        );
    }

    #[test]
    fn unified_hunks() {
        let old: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 17\n", "");
        let lines = unified(&old, &new);
        assert_eq!(lines[0], "@@ -1,6 +1,6 @@");
        assert!(lines.contains(&"-line 2".to_string()) && lines.contains(&"+line two".to_string()));
        assert!(
            lines.contains(&"@@ -15,6 +15,5 @@".to_string()),
            "{lines:?}"
        );
        assert!(lines.contains(&"-line 17".to_string()));
        assert!(unified(&old, &old).is_empty());
    }

    #[test]
    fn yaml_form_shows_changed_lines_removed_first() {
        let old = canonical(&[
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"app:v1","name":"app"}]}}}}"#,
        ]);
        let new = canonical(&[
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"app:v9","name":"app"}]}}}}"#,
        ]);
        let d = diff_canonical(
            &old,
            &new,
            ObjectForm::default(),
            SecretValues::Masked,
            DEFAULT_CONTEXT,
        )
        .unwrap();
        let lines = &d.changed[0].lines;
        let removed = lines.iter().position(|l| l == "-      - image: app:v1");
        let added = lines.iter().position(|l| l == "+      - image: app:v9");
        assert!(
            matches!((removed, added), (Some(r), Some(a)) if r < a),
            "{lines:?}"
        );
    }

    #[test]
    fn a_whole_context_shows_each_changed_object_in_one_hunk() {
        let old = canonical(&[
            r#"{"kind":"A","metadata":{"name":"a"},"spec":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}}"#,
        ]);
        let new = canonical(&[
            r#"{"kind":"A","metadata":{"name":"a"},"spec":{"a":0,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":0}}"#,
        ]);
        let three = diff_canonical(
            &old,
            &new,
            ObjectForm::Yaml,
            SecretValues::Masked,
            DEFAULT_CONTEXT,
        )
        .unwrap();
        let hunk_count = |d: &RenderDiff| {
            d.changed[0]
                .lines
                .iter()
                .filter(|l| l.starts_with("@@"))
                .count()
        };
        assert_eq!(hunk_count(&three), 2, "{:?}", three.changed[0].lines);
        assert!(
            three.changed[0].lines[0].ends_with("@@ spec.a"),
            "{:?}",
            three.changed[0].lines
        );
        let whole =
            diff_canonical(&old, &new, ObjectForm::Yaml, SecretValues::Masked, u32::MAX).unwrap();
        let lines = &whole.changed[0].lines;
        // The same two groups, as two hunks that abut and hold every line of the
        // object: 11 unchanged, 2 removed and 2 added.
        assert_eq!(hunk_count(&whole), 2, "{lines:?}");
        assert_eq!(lines.len(), 2 + 15, "{lines:?}");
        let headers: Vec<&String> = lines.iter().filter(|l| l.starts_with("@@")).collect();
        assert!(
            headers[0].starts_with("@@ -1,") && headers[0].ends_with(" spec.a"),
            "{headers:?}"
        );
        assert!(headers[1].ends_with(" spec.i"), "{headers:?}");
        let first_len: usize = headers[0][4..]
            .split(&[',', ' '])
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let second_start: usize = headers[1][4..].split(',').next().unwrap().parse().unwrap();
        assert_eq!(second_start, 1 + first_len, "the hunks abut: {headers:?}");
    }

    #[test]
    fn every_run_of_changes_lists_removed_lines_first() {
        let old = "a\nb\nc\nd\ne\n";
        let new = "x\nb\ny\nz\ne\nw\n";
        let lines = unified(old, new);
        let body: Vec<&str> = lines.iter().skip(1).map(String::as_str).collect();
        assert_eq!(body, ["-a", "+x", " b", "-c", "-d", "+y", "+z", " e", "+w"]);
    }
}
