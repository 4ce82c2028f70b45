//! go-yaml v2's `decoder` into an `interface{}`: every node resolved, aliases copied,
//! merge keys written in place, duplicate keys replaced, and the alias-ratio limit
//! counted exactly as go-yaml counts it (YAML-RULES.md Y9, Y10, Y13).
//!
//! Go recurses; this walks with an explicit stack (the component's stack is 64 KiB) and
//! keeps values in one arena, so neither building nor dropping a 10,000-deep value
//! recurses.

use super::compose::{Kind, Tree};
use super::error::{Located, Pos};
use super::resolve::{MERGE_TAG, Scalar, decode_scalar};
use std::collections::BTreeMap;

/// A decoded value: a scalar, or a collection of other values of the arena.
#[derive(Debug)]
pub(crate) enum Value {
    Scalar(Scalar),
    Sequence(Vec<u32>),
    Mapping(GoMap),
}

/// A Go `map[interface{}]interface{}`: entries in first-insertion order, each key once
/// by Go's equality of interface values.
#[derive(Debug, Default)]
pub(crate) struct GoMap {
    /// Key value and value, both arena indices.
    pub entries: Vec<(u32, u32)>,
    index: BTreeMap<KeyId, usize>,
}

/// A key by Go's `==` on `interface{}`: the type and the value must match; `0.0` and
/// `-0.0` are one key, and NaN is never equal (it gets no entry here).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(u64),
    Str(String),
    Bytes(Vec<u8>),
}

fn key_id(key: &Scalar) -> Option<KeyId> {
    Some(match key {
        Scalar::Null => KeyId::Null,
        Scalar::Bool(b) => KeyId::Bool(*b),
        Scalar::Int(i) => KeyId::Int(*i),
        Scalar::Uint(u) => KeyId::Uint(*u),
        Scalar::Float(f) if f.is_nan() => return None,
        Scalar::Float(f) => KeyId::Float(if *f == 0.0 { 0 } else { f.to_bits() }),
        Scalar::Str(s) => KeyId::Str(s.clone()),
        Scalar::Binary(b) => KeyId::Bytes(b.clone()),
    })
}

/// The decoded document: values and, for each, the YAML node it came from.
#[derive(Debug, Default)]
pub(crate) struct Values {
    pub values: Vec<Value>,
    pub source: Vec<Pos>,
    pub root: u32,
}

/// go-yaml's `allowedAliasRatio`.
fn allowed_alias_ratio(decodes: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    if decodes <= LOW {
        0.99
    } else if decodes >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decodes - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

/// Refuses a document whose aliases expand it past what the call's memory can hold.
///
/// go-yaml bounds aliases by counting decodes (the ratio below), not bytes, so a small
/// stream that names one large scalar many times passes that rule and is copied out in
/// full: a 534 KB stream can become 460 MB. Before anything is copied, the expanded size
/// is added up (every scalar's bytes, each alias counting what it names) and, when it is
/// large, the allocator is asked for room for it twice over (the decoded copy and its
/// JSON text live at once). The host refuses memory past the
/// call's cap by failing the growth, so the request fails exactly when the document could
/// not fit under the cap: nothing Go accepts within the cap is refused, and what cannot
/// fit is an error that says so instead of a trap after the memory is used up. The room
/// is only reserved, not touched, and goes back to the allocator at once.
///
/// First, though, a budget relative to the document itself: its aliases may make it at
/// most [`ALIAS_GROWTH`] times its own size, plus [`ALIAS_ALLOWANCE`]. A stream that
/// names a large value many times (a "billion laughs") is refused in microseconds as
/// invalid YAML, whatever the memory cap, instead of being copied out up to the cap: a
/// server previewing streams would otherwise hold the cap's worth for each such request.
/// Go (go-yaml v2, whose alias ratio counts nodes, not bytes) takes such a stream after
/// copying it out in full; this is where the two differ on purpose.
fn room_for_aliases(tree: &Tree, root: u32) -> Result<(), Located> {
    let bytes = expanded_bytes(tree, root);
    let own = own_bytes(tree);
    if bytes
        > own
            .saturating_mul(ALIAS_GROWTH)
            .saturating_add(ALIAS_ALLOWANCE)
    {
        return Err(Located::yaml(
            tree.nodes[root as usize].pos,
            format!(
                "the document's aliases expand it to about {bytes} bytes, more than \
                 {ALIAS_GROWTH} times its own {own} bytes plus {} MiB, which the YAML path \
                 allows: a stream that names a large value many times is refused (write the \
                 repeated values out if the stream is legitimate)",
                ALIAS_ALLOWANCE >> 20
            ),
        ));
    }
    if bytes < ROOM_CHECKED_FROM {
        return Ok(());
    }
    // The decoded copy and its JSON text are held at once.
    let needed = bytes.saturating_mul(2);
    let mut room: Vec<u8> = Vec::new();
    let fits = usize::try_from(needed).is_ok_and(|n| room.try_reserve_exact(n).is_ok());
    if fits {
        return Ok(());
    }
    Err(Located::yaml(
        tree.nodes[root as usize].pos,
        format!(
            "the document's aliases expand it to about {bytes} bytes, more than the call's \
             memory cap leaves room for (raise the memory cap if the stream is legitimate)"
        ),
    ))
}

/// How many times its own size a document's aliases may make it.
pub(crate) const ALIAS_GROWTH: u64 = 10;
/// What aliases may add beyond that, whatever the document's size: a small document may
/// repeat a block of configuration freely.
pub(crate) const ALIAS_ALLOWANCE: u64 = 1 << 20;

/// About how many bytes the document takes as written, in the units of
/// [`expanded_bytes`]: every node once, an alias as itself.
fn own_bytes(tree: &Tree) -> u64 {
    const SYNTAX: u64 = 4;
    tree.nodes.iter().fold(0u64, |sum, node| {
        let text = match &node.kind {
            Kind::Scalar { value, .. } => value.len() as u64,
            _ => 0,
        };
        sum.saturating_add(text + SYNTAX)
    })
}

/// About how many bytes the document rooted at `root` takes with every alias copied out:
/// each scalar's text and a few bytes of syntax a node. Each node is sized once (an
/// alias reuses its target's size), without recursion.
fn expanded_bytes(tree: &Tree, root: u32) -> u64 {
    const SYNTAX: u64 = 4;
    let mut size: Vec<Option<u64>> = vec![None; tree.nodes.len()];
    let mut stack = vec![root];
    while let Some(&node) = stack.last() {
        if size[node as usize].is_some() {
            stack.pop();
            continue;
        }
        let children: &[u32] = match &tree.nodes[node as usize].kind {
            Kind::Scalar { value, .. } => {
                size[node as usize] = Some(value.len() as u64 + SYNTAX);
                stack.pop();
                continue;
            }
            Kind::Alias { target } => std::slice::from_ref(target),
            Kind::Sequence(children) | Kind::Mapping(children) => children,
        };
        // An anchor's node never holds an alias to itself (the composer refuses it), so
        // this walk ends; a node comes back here once its children are sized, so each
        // node's children are looked at twice at most.
        let before = stack.len();
        stack.extend(children.iter().filter(|&&c| size[c as usize].is_none()));
        if stack.len() == before {
            let total = children.iter().fold(SYNTAX, |sum, &c| {
                sum.saturating_add(size[c as usize].unwrap_or(0))
            });
            size[node as usize] = Some(total);
            stack.pop();
        }
    }
    size[root as usize].unwrap_or(0)
}

enum Work {
    /// go-yaml's `unmarshal` of a node; `into` when a merge writes a mapping into the
    /// mapping being built rather than into a new one.
    Visit {
        node: u32,
        aliased: bool,
        into: bool,
    },
    /// One key/value pair of a mapping.
    Pair { key: u32, value: u32, aliased: bool },
    /// The collection on top of the builder is complete.
    Close,
}

enum Open {
    Sequence(Vec<u32>),
    Mapping { map: GoMap, key: Option<u32> },
}

/// Past this many bytes of expanded document, a document with aliases first makes sure
/// the call's memory has room for it: below it, the room is never in doubt.
const ROOM_CHECKED_FROM: u64 = 1 << 20;

/// Decodes the tree's document; `None` when it has none.
pub(crate) fn decode(tree: &Tree) -> Result<Option<Values>, Located> {
    let Some(root) = tree.root else {
        return Ok(None);
    };
    if tree
        .nodes
        .iter()
        .any(|n| matches!(n.kind, Kind::Alias { .. }))
    {
        room_for_aliases(tree, root)?;
    }
    let mut out = Values::default();
    let mut open: Vec<(Open, Pos)> = Vec::new();
    let mut root_value = None;
    // The document node counts as one decode, as in go-yaml.
    let (mut decodes, mut aliases) = (1u64, 0u64);
    let mut work = vec![Work::Visit {
        node: root,
        aliased: false,
        into: false,
    }];
    while let Some(item) = work.pop() {
        match item {
            Work::Visit {
                node,
                aliased,
                into,
            } => {
                decodes += 1;
                if aliased {
                    aliases += 1;
                }
                let n = &tree.nodes[node as usize];
                if aliases > 100
                    && decodes > 1000
                    && aliases as f64 / decodes as f64 > allowed_alias_ratio(decodes)
                {
                    return Err(Located::yaml(n.pos, "document contains excessive aliasing"));
                }
                match &n.kind {
                    Kind::Alias { target, .. } => work.push(Work::Visit {
                        node: *target,
                        aliased: true,
                        into,
                    }),
                    Kind::Scalar { value, tag, plain } => {
                        let scalar = decode_scalar(tag.as_deref(), value, *plain)
                            .map_err(|m| Located::yaml(n.pos, m))?;
                        let id = push(&mut out, Value::Scalar(scalar), n.pos);
                        deliver(&mut out, &mut open, &mut root_value, id)?;
                    }
                    Kind::Sequence(children) => {
                        open.push((Open::Sequence(Vec::with_capacity(children.len())), n.pos));
                        work.push(Work::Close);
                        work.extend(children.iter().rev().map(|&c| Work::Visit {
                            node: c,
                            aliased,
                            into: false,
                        }));
                    }
                    Kind::Mapping(children) => {
                        if !into {
                            open.push((
                                Open::Mapping {
                                    map: GoMap::default(),
                                    key: None,
                                },
                                n.pos,
                            ));
                            work.push(Work::Close);
                        }
                        work.extend(children.chunks(2).rev().map(|pair| Work::Pair {
                            key: pair[0],
                            value: pair[1],
                            aliased,
                        }));
                    }
                }
            }
            Work::Pair {
                key,
                value,
                aliased,
            } => {
                if is_merge(tree, key) {
                    merge(tree, value, aliased, &mut work)?;
                } else {
                    work.push(Work::Visit {
                        node: value,
                        aliased,
                        into: false,
                    });
                    work.push(Work::Visit {
                        node: key,
                        aliased,
                        into: false,
                    });
                }
            }
            Work::Close => {
                let (done, pos) = open.pop().expect("a Close follows each open");
                let value = match done {
                    Open::Sequence(items) => Value::Sequence(items),
                    Open::Mapping { map, .. } => Value::Mapping(map),
                };
                let id = push(&mut out, value, pos);
                deliver(&mut out, &mut open, &mut root_value, id)?;
            }
        }
    }
    out.root = root_value.expect("the root was delivered");
    Ok(Some(out))
}

fn push(out: &mut Values, value: Value, pos: Pos) -> u32 {
    let id = u32::try_from(out.values.len()).expect("under 2^32 values");
    out.values.push(value);
    out.source.push(pos);
    id
}

/// Hands a finished value to the collection being built: an item of a sequence, or a
/// mapping's key, then its value (Go's `SetMapIndex`: an equal key is replaced, key and
/// value).
fn deliver(
    out: &mut Values,
    open: &mut [(Open, Pos)],
    root: &mut Option<u32>,
    id: u32,
) -> Result<(), Located> {
    match open.last_mut() {
        None => *root = Some(id),
        Some((Open::Sequence(items), _)) => items.push(id),
        Some((
            Open::Mapping {
                key: slot @ None, ..
            },
            _,
        )) => {
            if !matches!(out.values[id as usize], Value::Scalar(_)) {
                return Err(Located::yaml(
                    out.source[id as usize],
                    "invalid map key: a sequence or mapping",
                ));
            }
            *slot = Some(id);
        }
        Some((Open::Mapping { map, key }, _)) => {
            let key = key.take().expect("matched above");
            let Value::Scalar(scalar) = &out.values[key as usize] else {
                unreachable!("keys are scalars")
            };
            match key_id(scalar) {
                Some(k) => match map.index.get(&k) {
                    Some(&at) => map.entries[at] = (key, id),
                    None => {
                        map.index.insert(k, map.entries.len());
                        map.entries.push((key, id));
                    }
                },
                None => map.entries.push((key, id)),
            }
        }
    }
    Ok(())
}

/// go-yaml's `isMerge`: a `<<` its parser calls implicit (plain and untagged, or tagged
/// with the non-specific `!` whatever its style: `! '<<'`), or tagged `!!merge`.
fn is_merge(tree: &Tree, key: u32) -> bool {
    match &tree.nodes[key as usize].kind {
        Kind::Scalar { value, tag, plain } => {
            value == "<<" && (*plain || matches!(tag.as_deref(), Some("!" | MERGE_TAG)))
        }
        _ => false,
    }
}

/// go-yaml's `merge`: the value's mapping(s) written into the mapping being built, a
/// sequence's from last to first so that earlier maps win.
fn merge(tree: &Tree, value: u32, aliased: bool, work: &mut Vec<Work>) -> Result<(), Located> {
    let node = &tree.nodes[value as usize];
    let is_map = |id: u32| match &tree.nodes[id as usize].kind {
        Kind::Mapping(_) => true,
        Kind::Alias { target, .. } => matches!(tree.nodes[*target as usize].kind, Kind::Mapping(_)),
        _ => false,
    };
    let fail = || {
        Located::yaml(
            node.pos,
            "map merge requires map or sequence of maps as the value",
        )
    };
    match &node.kind {
        Kind::Mapping(_) | Kind::Alias { .. } => {
            if !is_map(value) {
                return Err(fail());
            }
            work.push(Work::Visit {
                node: value,
                aliased,
                into: true,
            });
        }
        Kind::Sequence(children) => {
            if !children.iter().all(|&c| is_map(c)) {
                return Err(fail());
            }
            // Pushed first to last, so visited last to first.
            work.extend(children.iter().map(|&c| Work::Visit {
                node: c,
                aliased,
                into: true,
            }));
        }
        Kind::Scalar { .. } => return Err(fail()),
    }
    Ok(())
}
