//! The Python package's types and functions for the world's exports, over the C ABI's
//! generated entry points (`rs_call_<interface>_<function>`, which take and give JSON in
//! the encoding of docs/json.md):
//!
//! - `host/python/src/render_store/wit.py`: every type the WIT declares, as Python: a
//!   frozen dataclass per record (snake_case fields), an `enum` per enum (values the WIT
//!   case names), a class per variant with a frozen dataclass per case subclassing it
//!   (`tag`, and `value` for the payload), each with `to_json`/`from_json`. The encoding
//!   itself is `_codec.py`'s (hand-written): these are its tables.
//! - `host/python/src/render_store/_calls.py`: the name of every `rs_call_*` entry point,
//!   which `_lib.py` declares for ctypes where it loads the library.
//! - `host/python/src/render_store/_api.py`: a method per export of `logic`, `store` and
//!   `trace` that has no hand-written one (the [`HAND_WRITTEN`] table): the store's in a
//!   mixin `StoreCalls` that the hand-written `RenderStore` inherits, the others' in a
//!   mixin `LogicCalls` that `Runtime` inherits and as module functions on the default
//!   runtime.
//!
//! Conventions, as the hand-written methods have them: names and parameters in
//! snake_case, in the WIT's order; a `release` taken as `"namespace/name"`, a tuple or a
//! `Release`; a `list<u8>` as bytes (or a str, its UTF-8); an enum as its member or its
//! case name; an `option` parameter that no required one follows defaults to `None`; a
//! `secret-values` or `object-form` parameter is keyword-only with the safe default
//! ([`ENUM_DEFAULTS`]); a store method takes `timeout=` as every store method does and
//! never the WIT's `encryption` (the store's own keyring and rule are used). A function
//! that answers `result<T, error>` returns `T` and raises the package's
//! `RenderStoreError` for the error; any other answer is returned whole.

use crate::Generated;
use crate::hand_written::HandWritten;
use crate::json::key;
use crate::names::{python_constant, python_name, type_name};
use crate::world::{Interface, World, docs, first_sentence, wrap};
use anyhow::{Context, Result, bail};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use wit_parser::{Function, Type, TypeDefKind, TypeId};

/// The generated types, from the repository's root.
const TYPES: &str = "host/python/src/render_store/wit.py";
/// The generated entry-point table.
const CALLS: &str = "host/python/src/render_store/_calls.py";
/// The generated functions.
const API: &str = "host/python/src/render_store/_api.py";
/// The hand-written module the [`HAND_WRITTEN`] table is checked against.
const HAND_MODULE: &str = "host/python/src/render_store/__init__.py";
/// The longest line the generator writes where it can choose.
const WIDTH: usize = 99;

/// The exports the package answers with a hand-written function or method, by interface
/// and WIT name, with its Python name: each takes its arguments and shapes its answer in
/// its own way (a render as a list of objects, times as text, `show_secrets=`, a trace of
/// the call), which the package has promised, so it stays and nothing is generated for
/// it. The generator checks that each is defined in `__init__.py` and that no generated
/// name is.
const HAND_WRITTEN: HandWritten = HandWritten {
    file: "python.rs",
    table: &[
        ("logic", "canonical", "canonical"),
        ("logic", "render-ref", "render_ref"),
        ("logic", "yaml-objects", "yaml_objects"),
        ("logic", "check-objects", "check_objects"),
        ("logic", "yaml-canonical", "yaml_canonical"),
        ("logic", "yaml-render-ref", "yaml_render_ref"),
        ("logic", "validate-render-ref", "validate_render_ref"),
        ("logic", "sha256-hex", "sha256_hex"),
        ("logic", "release-prefix", "release_prefix"),
        ("logic", "render-key", "render_key"),
        ("logic", "history-key", "history_key"),
        ("logic", "parse-key", "parse_key"),
        ("logic", "format-synced-at", "format_synced_at"),
        ("logic", "parse-synced-at", "parse_synced_at"),
        ("logic", "plan-gc", "plan_gc"),
        ("logic", "diff-renders", "diff_renders"),
        ("logic", "show-objects", "show_objects"),
        ("logic", "summarize-history", "summarize_history"),
        ("logic", "effective-keep-history", "effective_keep_history"),
        ("logic", "history-count", "history_count"),
        ("logic", "protected-refs", "protected_refs"),
        ("store", "put-render", "put_render"),
        ("store", "get-render", "get_render"),
        ("store", "rekey-release", "rekey_release"),
        ("store", "diff-renders", "diff_renders"),
        ("store", "index-release", "index_release"),
        ("store", "has-history-ref", "has_history_ref"),
        ("store", "record-history", "record_history"),
        ("store", "list-history", "list_history"),
        ("store", "list-history-page", "list_history_page"),
        ("store", "gc", "gc"),
        ("store", "delete-release", "delete_release"),
        ("trace", "replay", "replay"),
    ],
};

/// Enum parameters taken as keywords with a default, by the enum's WIT name and the
/// default case: what a host shows unless its user asks otherwise.
const ENUM_DEFAULTS: &[(&str, &str)] = &[("secret-values", "masked"), ("object-form", "yaml")];

/// Records a call takes in another form too, by interface and name, with what the
/// parameter's type hint is then and the body that converts it in the record's class.
const RECORD_FORMS: &[(&str, &str, &str, &str)] = &[
    (
        "types",
        "release",
        "ReleaseLike",
        "    @classmethod\n    def _wit_encode(cls, value: Any, at: str) -> Any:\n        \
         # \"namespace/name\" and (namespace, name) too, as the hand-written calls take.\n        \
         return super()._wit_encode(_c.release_parts(value, at), at)\n",
    ),
    ("types", "sync-time", "SyncTimeLike", ""),
];

/// Record fields a value's `repr` leaves out, by interface, record and field: key
/// material, which would otherwise be printed wherever a value is logged.
const HIDDEN_FIELDS: &[(&str, &str, &str)] = &[("types", "encryption-key", "secret")];

/// Names `wit.py` takes from `_codec.py` (and exports) besides the WIT's types.
const FROM_CODEC: &[&str] = &[
    "BytesLike",
    "Err",
    "Ok",
    "ReleaseLike",
    "Result",
    "SyncTimeLike",
];

/// Names `wit.py` imports from `typing`, which no WIT type may be.
const TYPING: &[&str] = &["Any", "ClassVar", "List", "Optional", "Tuple", "Union"];

/// The Python package's generated files.
pub fn files(root: &Path, world: &World) -> Result<Vec<Generated>> {
    let exports = generated_exports(world)?;
    check_hand_written(root, &exports)?;
    Ok(vec![
        Generated {
            path: TYPES,
            contents: types_module(world)?,
        },
        Generated {
            path: CALLS,
            contents: calls_module(world),
        },
        Generated {
            path: API,
            contents: api_module(world, &exports)?,
        },
    ])
}

/// The Python package's name for each export of `logic`, `store` and `trace`
/// (`interface.function`, name): the hand-written function's or method's, or the
/// generated one's. A `store` function's is a method of `RenderStore`; the others' are
/// functions of the package and methods of `Runtime`.
pub fn names(world: &World) -> Result<Vec<(String, String)>> {
    HAND_WRITTEN.names(world, |e| Ok(python_name(&e.function.name)))
}

/// One export the generated module answers.
struct Export<'a> {
    interface: &'a Interface,
    function: &'a Function,
    /// Its Python name.
    python: String,
}

impl Export<'_> {
    fn store(&self) -> bool {
        self.interface.name == "store"
    }

    fn wit_name(&self) -> String {
        format!("{}.{}", self.interface.name, self.function.name)
    }

    /// The module constant of its call.
    fn constant(&self) -> String {
        format!(
            "_{}_{}",
            python_constant(&self.interface.name),
            python_constant(&self.function.name)
        )
    }
}

/// The exports without a hand-written function, in the WIT's order.
fn generated_exports(world: &World) -> Result<Vec<Export<'_>>> {
    let mut out = Vec::new();
    let mut names = BTreeSet::new();
    for e in HAND_WRITTEN.generated(world)? {
        let python = python_name(&e.function.name);
        // The logic and trace functions share a mixin and the module's names.
        let space = if e.interface.name == "store" {
            "store"
        } else {
            "module"
        };
        if !names.insert((space, python.clone())) {
            bail!(
                "{} would be the Python function {python}, which another export already is",
                e.wit_name()
            );
        }
        out.push(Export {
            interface: e.interface,
            function: e.function,
            python,
        });
    }
    Ok(out)
}

/// Each hand-written name is defined in `__init__.py`, and no generated name is (the
/// hand-written one would hide the generated one, or the reverse).
fn check_hand_written(root: &Path, exports: &[Export]) -> Result<()> {
    let text = std::fs::read_to_string(root.join(HAND_MODULE))
        .with_context(|| format!("reading {HAND_MODULE}"))?;
    let defines = |name: &str| text.contains(&format!("def {name}("));
    for (interface, function, python) in HAND_WRITTEN.table {
        if !defines(python) {
            bail!(
                "{HAND_MODULE} defines no {python}, which the hand-written table gives for \
                 {interface}.{function}: write it, or take the entry out of the table"
            );
        }
    }
    for e in exports {
        if defines(&e.python) {
            bail!(
                "{HAND_MODULE} defines {}, the name of the generated function for {}: add it to \
                 the hand-written table, or rename it",
                e.python,
                e.wit_name()
            );
        }
    }
    Ok(())
}

// -------------------------------------------------------------------------------------
// Types

/// A named type's own definition and WIT name, following `use`s; `None` for an
/// anonymous type.
fn named(world: &World, id: TypeId) -> (TypeId, Option<&str>) {
    let id = world.declared(id);
    (id, world.resolve.types[id].name.as_deref())
}

/// The interface a declared type belongs to, by name.
fn owner_name(world: &World, id: TypeId) -> &str {
    world
        .owner(id)
        .map(|o| world.interface_name(o))
        .unwrap_or("")
}

/// Whether `t` is an `option` (through aliases).
fn is_option(world: &World, t: &Type) -> bool {
    match t {
        Type::Id(id) => match &world.resolve.types[world.declared(*id)].kind {
            TypeDefKind::Option(_) => true,
            TypeDefKind::Type(inner) => is_option(world, inner),
            _ => false,
        },
        _ => false,
    }
}

/// The Python type hint of `t`; `input` for what a call takes (sequences, bytes-like,
/// an enum's case name, a record's other forms), else for what a value holds. `prefix`
/// qualifies the WIT's classes (`wit.` outside `wit.py`).
fn hint(world: &World, t: &Type, input: bool, prefix: &str) -> Result<String> {
    Ok(match t {
        Type::Bool => "bool".into(),
        Type::U8
        | Type::U16
        | Type::U32
        | Type::U64
        | Type::S8
        | Type::S16
        | Type::S32
        | Type::S64 => "int".into(),
        Type::String => "str".into(),
        Type::Id(id) => {
            let (id, name) = named(world, *id);
            let def = &world.resolve.types[id];
            match (&def.kind, name) {
                (TypeDefKind::Record(_), Some(name)) => {
                    let owner = owner_name(world, id);
                    match RECORD_FORMS
                        .iter()
                        .find(|(i, n, _, _)| *i == owner && *n == name)
                    {
                        Some((_, _, form, _)) if input => format!("{prefix}{form}"),
                        _ => format!("{prefix}{}", type_name(name)),
                    }
                }
                (TypeDefKind::Variant(_), Some(name)) => format!("{prefix}{}", type_name(name)),
                (TypeDefKind::Enum(_), Some(name)) if input => {
                    format!("Union[{prefix}{}, str]", type_name(name))
                }
                (TypeDefKind::Enum(_), Some(name)) => format!("{prefix}{}", type_name(name)),
                (TypeDefKind::Type(inner), _) => hint(world, inner, input, prefix)?,
                (TypeDefKind::List(Type::U8), _) => {
                    if input {
                        format!("{prefix}BytesLike")
                    } else {
                        "bytes".into()
                    }
                }
                (TypeDefKind::List(inner), _) => format!(
                    "{}[{}]",
                    if input { "Sequence" } else { "List" },
                    hint(world, inner, input, prefix)?
                ),
                (TypeDefKind::Option(inner), _) => {
                    format!("Optional[{}]", hint(world, inner, input, prefix)?)
                }
                (TypeDefKind::Tuple(tuple), _) => format!(
                    "Tuple[{}]",
                    tuple
                        .types
                        .iter()
                        .map(|t| hint(world, t, input, prefix))
                        .collect::<Result<Vec<_>>>()?
                        .join(", ")
                ),
                (TypeDefKind::Result(r), _) => {
                    let side = |t: &Option<Type>| -> Result<String> {
                        match t {
                            Some(t) => hint(world, t, input, prefix),
                            None => Ok("None".into()),
                        }
                    };
                    format!("{prefix}Result[{}, {}]", side(&r.ok)?, side(&r.err)?)
                }
                (other, _) => bail!("a {} has no Python type here", other.as_str()),
            }
        }
        other => bail!("{other:?} has no Python type here"),
    })
}

/// The codec of `t` (`_codec.py`): a WIT class of `prefix`, or one of `_codec`'s.
fn codec(world: &World, t: &Type, prefix: &str) -> Result<String> {
    Ok(match t {
        Type::Bool => "_c.BOOL".into(),
        Type::U8 => "_c.U8".into(),
        Type::U16 => "_c.U16".into(),
        Type::U32 => "_c.U32".into(),
        Type::U64 => "_c.U64".into(),
        Type::S8 => "_c.S8".into(),
        Type::S16 => "_c.S16".into(),
        Type::S32 => "_c.S32".into(),
        Type::S64 => "_c.S64".into(),
        Type::String => "_c.STRING".into(),
        Type::Id(id) => {
            let (id, name) = named(world, *id);
            match (&world.resolve.types[id].kind, name) {
                (
                    TypeDefKind::Record(_) | TypeDefKind::Variant(_) | TypeDefKind::Enum(_),
                    Some(name),
                ) => format!("{prefix}{}", type_name(name)),
                (TypeDefKind::Type(inner), _) => codec(world, inner, prefix)?,
                (TypeDefKind::List(Type::U8), _) => "_c.BYTES".into(),
                (TypeDefKind::List(inner), _) => {
                    format!("_c.ListOf({})", codec(world, inner, prefix)?)
                }
                (TypeDefKind::Option(inner), _) => {
                    format!("_c.OptionOf({})", codec(world, inner, prefix)?)
                }
                (TypeDefKind::Tuple(tuple), _) => format!(
                    "_c.TupleOf({})",
                    tuple
                        .types
                        .iter()
                        .map(|t| codec(world, t, prefix))
                        .collect::<Result<Vec<_>>>()?
                        .join(", ")
                ),
                (TypeDefKind::Result(r), _) => {
                    let side = |t: &Option<Type>| -> Result<String> {
                        match t {
                            Some(t) => codec(world, t, prefix),
                            None => Ok("None".into()),
                        }
                    };
                    format!("_c.ResultOf({}, {})", side(&r.ok)?, side(&r.err)?)
                }
                (other, _) => bail!("a {} has no JSON encoding here", other.as_str()),
            }
        }
        other => bail!("{other:?} has no JSON encoding here"),
    })
}

/// A WIT doc comment's first sentence as docstring text: ends in a full stop, code in
/// double backticks (reStructuredText's), backslashes escaped.
fn sentence(text: Option<&str>) -> Option<String> {
    let first = first_sentence(text?);
    if first.is_empty() {
        return None;
    }
    let code = if first.contains("``") {
        first
    } else {
        first.replace('`', "``")
    };
    let escaped = code.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"");
    Some(if escaped.ends_with(['.', '?', '!']) {
        escaped
    } else {
        format!("{escaped}.")
    })
}

/// A docstring at `indent` of one or more paragraphs, each wrapped.
fn docstring(out: &mut String, indent: &str, paragraphs: &[&str]) {
    let width = WIDTH - indent.len();
    let mut lines: Vec<String> = Vec::new();
    for (i, paragraph) in paragraphs.iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        // Room for the opening quotes on the first line and the closing ones on the last.
        lines.extend(wrap(paragraph, width - 3));
    }
    if let Some(last) = lines.last()
        && last.chars().count() + 3 > width
    {
        lines.push(String::new());
    }
    for (i, line) in lines.iter().enumerate() {
        let open = if i == 0 { "\"\"\"" } else { "" };
        let close = if i + 1 == lines.len() { "\"\"\"" } else { "" };
        if line.is_empty() && close.is_empty() {
            out.push('\n');
        } else if line.is_empty() {
            let _ = writeln!(out, "{indent}{close}");
        } else {
            let _ = writeln!(out, "{indent}{open}{line}{close}");
        }
    }
}

/// `#: ` comment lines at `indent`, wrapped.
fn comment(out: &mut String, indent: &str, text: &str) {
    for line in wrap(text, WIDTH - indent.len() - 3) {
        let _ = writeln!(out, "{indent}#: {line}");
    }
}

/// The typing names a module's text uses, for its import line.
fn typing_import(body: &str, candidates: &[&str]) -> String {
    let used: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|name| {
            body.match_indices(name).any(|(i, _)| {
                let before = body[..i].chars().next_back();
                let after = body[i + name.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .collect();
    if used.is_empty() {
        String::new()
    } else {
        format!("from typing import {}\n", used.join(", "))
    }
}

/// `wit.py`.
fn types_module(world: &World) -> Result<String> {
    let mut body = String::new();
    let mut public: Vec<String> = FROM_CODEC.iter().map(|s| s.to_string()).collect();
    let mut seen: BTreeSet<String> = FROM_CODEC
        .iter()
        .chain(TYPING)
        .map(|s| s.to_string())
        .collect();
    let mut claim = |name: String, what: &str| -> Result<String> {
        if !seen.insert(name.clone()) {
            bail!("{what} would be the Python class {name}, which another name already is");
        }
        public.push(name.clone());
        Ok(name)
    };
    let mut tables = String::new();
    let mut aliases = String::new();
    for interface in world.interfaces() {
        for (name, id) in world.declared_types(interface) {
            let def = &world.resolve.types[id];
            let wit = format!("{}.{name}", interface.name);
            let class = type_name(&name);
            let about = sentence(docs(&def.docs));
            match &def.kind {
                TypeDefKind::Record(r) => {
                    let class = claim(class, &wit)?;
                    writeln!(
                        body,
                        "\n\n@dataclass(frozen=True)\nclass {class}(_c.Record):"
                    )?;
                    docstring(
                        &mut body,
                        "    ",
                        &[
                            &about.unwrap_or_else(|| "A WIT record.".into()),
                            &format!("The WIT's ``{wit}``."),
                        ],
                    );
                    body.push('\n');
                    // A run of option fields at the end may be left out.
                    let optional_from = r
                        .fields
                        .iter()
                        .rposition(|f| !is_option(world, &f.ty))
                        .map_or(0, |i| i + 1);
                    let mut rows = Vec::new();
                    for (i, f) in r.fields.iter().enumerate() {
                        if let Some(d) = sentence(docs(&f.docs)) {
                            comment(&mut body, "    ", &d);
                        }
                        let attribute = python_name(&f.name);
                        let hidden = HIDDEN_FIELDS
                            .iter()
                            .any(|(i, r, n)| *i == interface.name && *r == name && *n == f.name);
                        let default = match (i >= optional_from, hidden) {
                            (true, false) => " = None",
                            (false, false) => "",
                            (true, true) => " = field(default=None, repr=False)",
                            (false, true) => " = field(repr=False)",
                        };
                        writeln!(
                            body,
                            "    {attribute}: {}{default}",
                            hint(world, &f.ty, false, "")?
                        )?;
                        rows.push(format!(
                            "(\"{attribute}\", \"{}\", {})",
                            key(&f.name),
                            codec(world, &f.ty, "")?
                        ));
                    }
                    if let Some((_, _, _, extra)) = RECORD_FORMS
                        .iter()
                        .find(|(i, n, _, _)| *i == interface.name && *n == name)
                        && !extra.is_empty()
                    {
                        write!(body, "\n{extra}")?;
                    }
                    table_call(&mut tables, "fields", &class, &rows);
                }
                TypeDefKind::Variant(v) => {
                    let class = claim(class, &wit)?;
                    let mut rows = Vec::new();
                    let mut case_classes = Vec::new();
                    for c in &v.cases {
                        let case = claim(
                            format!("{class}{}", type_name(&c.name)),
                            &format!("{wit} case {}", c.name),
                        )?;
                        case_classes.push(case.clone());
                        rows.push(format!(
                            "({case}, {})",
                            match &c.ty {
                                Some(t) => codec(world, t, "")?,
                                None => "None".into(),
                            }
                        ));
                    }
                    writeln!(body, "\n\nclass {class}(_c.Variant):")?;
                    docstring(
                        &mut body,
                        "    ",
                        &[
                            &about.unwrap_or_else(|| "A WIT variant.".into()),
                            &format!(
                                "The WIT's ``{wit}``: one of {}.",
                                case_classes
                                    .iter()
                                    .map(|c| format!(":class:`{c}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ],
                    );
                    for (c, case) in v.cases.iter().zip(&case_classes) {
                        writeln!(body, "\n\n@dataclass(frozen=True)\nclass {case}({class}):")?;
                        let text = sentence(docs(&c.docs)).unwrap_or_else(|| "A case.".into());
                        let which = format!("The case ``{}`` of :class:`{class}`.", c.name);
                        docstring(&mut body, "    ", &[&text, &which]);
                        writeln!(body, "\n    tag: ClassVar[str] = \"{}\"", c.name)?;
                        if let Some(t) = &c.ty {
                            writeln!(body, "    value: {}", hint(world, t, false, "")?)?;
                        }
                    }
                    table_call(&mut tables, "cases", &class, &rows);
                }
                TypeDefKind::Enum(e) => {
                    let class = claim(class, &wit)?;
                    writeln!(body, "\n\nclass {class}(_c.WitEnum):")?;
                    docstring(
                        &mut body,
                        "    ",
                        &[
                            &about.unwrap_or_else(|| "A WIT enum.".into()),
                            &format!("The WIT's ``{wit}``: a member, or its value."),
                        ],
                    );
                    body.push('\n');
                    for c in &e.cases {
                        if let Some(d) = sentence(docs(&c.docs)) {
                            comment(&mut body, "    ", &d);
                        }
                        writeln!(body, "    {} = \"{}\"", python_constant(&c.name), c.name)?;
                    }
                }
                TypeDefKind::Type(t) => {
                    let class = claim(class, &wit)?;
                    aliases.push('\n');
                    if let Some(d) = about {
                        comment(&mut aliases, "", &d);
                    }
                    writeln!(aliases, "{class} = {}", hint(world, t, false, "")?)?;
                }
                TypeDefKind::List(_)
                | TypeDefKind::Option(_)
                | TypeDefKind::Tuple(_)
                | TypeDefKind::Result(_) => {
                    let class = claim(class, &wit)?;
                    aliases.push('\n');
                    if let Some(d) = about {
                        comment(&mut aliases, "", &d);
                    }
                    writeln!(
                        aliases,
                        "{class} = {}",
                        hint(world, &Type::Id(id), false, "")?
                    )?;
                }
                other => bail!(
                    "{wit} is a {}, which has no Python type here",
                    other.as_str()
                ),
            }
        }
    }
    let mut rest = String::new();
    rest.push_str(&body);
    rest.push_str(
        "\n\n# The JSON of each record's fields and each variant's cases (docs/json.md).\n",
    );
    rest.push_str(&tables);
    rest.push_str(&aliases);

    let mut out = crate::banner("#");
    out.push_str(
        "\"\"\"The types of wit/render-store.wit, as Python: what the generated calls take and\n\
         return.\n\n\
         A record is a frozen dataclass with the record's fields in snake_case; an enum an\n\
         :class:`enum.Enum` whose values are the WIT case names (a call takes the case name\n\
         too); a variant a class with one frozen dataclass per case subclassing it (``tag``\n\
         the case's WIT name, ``value`` its payload); a ``result`` :class:`Ok` or :class:`Err`;\n\
         ``list<u8>`` bytes; an ``option`` ``None`` or the value. Each has ``to_json()`` and\n\
         ``from_json(value)``, the one JSON encoding of WIT values (docs/json.md), which\n\
         ``from_json`` checks, naming where a value is wrong.\n\"\"\"\n\n\
         from __future__ import annotations\n\n\
         from dataclasses import dataclass",
    );
    out.push_str(if rest.contains("= field(") {
        ", field\n"
    } else {
        "\n"
    });
    out.push_str(&typing_import(&rest, TYPING));
    writeln!(
        out,
        "\nfrom . import _codec as _c\nfrom ._codec import {}\n",
        FROM_CODEC.join(", ")
    )?;
    out.push_str(&list_literal("__all__", &public));
    out.push_str(&rest);
    Ok(out)
}

/// `_c.<function>(Class, row, ...)`, one row a line.
fn table_call(out: &mut String, function: &str, class: &str, rows: &[String]) {
    let _ = writeln!(out, "_c.{function}(\n    {class},");
    for row in rows {
        let _ = writeln!(out, "    {row},");
    }
    out.push_str(")\n");
}

/// `name = [...]` of strings, one a line.
fn list_literal(name: &str, items: &[String]) -> String {
    let mut out = format!("{name} = [\n");
    for item in items {
        let _ = writeln!(out, "    \"{item}\",");
    }
    out.push_str("]\n");
    out
}

// -------------------------------------------------------------------------------------
// Calls

/// `_calls.py`.
fn calls_module(world: &World) -> String {
    let mut runtime = Vec::new();
    let mut store = Vec::new();
    for interface in &world.exports {
        for f in world.functions(interface) {
            let name = crate::capi::c_name(&interface.name, &f.name);
            if interface.name == "store" {
                store.push(name);
            } else {
                runtime.push(name);
            }
        }
    }
    let mut out = crate::banner("#");
    out.push_str(
        "\"\"\"The C ABI's generated entry points, one per export of the component\n\
         (``rs_call_<interface>_<function>``), for ``_lib.py`` to declare where it loads the\n\
         library. Each takes its first argument, the arguments' JSON (a pointer and a\n\
         length) and a buffer for the answer's JSON, and returns an ``rs_error`` or NULL.\n\
         \"\"\"\n\n\
         #: Those whose first argument is ``const struct rs_options *`` (``logic``, ``trace``).\n",
    );
    out.push_str(&tuple_literal("RUNTIME_CALLS", &runtime));
    out.push_str("#: Those whose first argument is ``const struct rs_store *`` (``store``).\n");
    out.push_str(&tuple_literal("STORE_CALLS", &store));
    out
}

/// `name = (...)` of strings, one a line.
fn tuple_literal(name: &str, items: &[String]) -> String {
    let mut out = format!("{name} = (\n");
    for item in items {
        let _ = writeln!(out, "    \"{item}\",");
    }
    out.push_str(")\n");
    out
}

/// A parameter of a generated function.
struct Param {
    /// Its Python name.
    python: String,
    /// Its type hint.
    hint: String,
    /// Its default, if it has one.
    default: Option<String>,
    /// Whether it is keyword-only.
    keyword: bool,
}

/// The parameters of `e` as the Python function takes them, in the WIT's order, and the
/// rows of its call's table: `(python name, JSON key, codec)`.
fn params(world: &World, e: &Export) -> Result<(Vec<Param>, Vec<String>)> {
    let mut params = Vec::new();
    let mut rows = Vec::new();
    for p in &e.function.params {
        if e.store() && p.name == "encryption" {
            continue;
        }
        let python = python_name(&p.name);
        if ["self", "timeout"].contains(&python.as_str()) {
            bail!(
                "{} has a parameter {}, a name the generated method takes for itself",
                e.wit_name(),
                p.name
            );
        }
        let mut default = None;
        let mut keyword = false;
        if let Type::Id(id) = &p.ty {
            let (id, name) = named(world, *id);
            if let (TypeDefKind::Enum(en), Some(name)) = (&world.resolve.types[id].kind, name)
                && let Some((_, case)) = ENUM_DEFAULTS.iter().find(|(n, _)| *n == name)
            {
                if !en.cases.iter().any(|c| c.name == *case) {
                    bail!("the default {case} of {name} is none of its cases");
                }
                default = Some(format!("wit.{}.{}", type_name(name), python_constant(case)));
                keyword = true;
            }
        }
        rows.push(format!(
            "(\"{python}\", \"{}\", {})",
            key(&p.name),
            codec(world, &p.ty, "wit.")?
        ));
        params.push((
            Param {
                python,
                hint: hint(world, &p.ty, true, "wit.")?,
                default,
                keyword,
            },
            is_option(world, &p.ty),
        ));
    }
    // An option defaults to None when no positional parameter without a default follows.
    let mut trailing = true;
    for (param, option) in params.iter_mut().rev() {
        if param.keyword {
            continue;
        }
        if *option && trailing {
            param.default = Some("None".into());
        } else {
            trailing = false;
        }
    }
    Ok((params.into_iter().map(|(p, _)| p).collect(), rows))
}

/// The signature's parameters, `self` and `timeout` aside: the positional ones in order,
/// then `*` and the keyword ones.
fn signature_parts(params: &[Param], extra_keywords: &[&str]) -> Vec<String> {
    let one = |p: &Param| match &p.default {
        Some(d) => format!("{}: {} = {d}", p.python, p.hint),
        None => format!("{}: {}", p.python, p.hint),
    };
    let mut parts: Vec<String> = params.iter().filter(|p| !p.keyword).map(one).collect();
    let keywords: Vec<String> = params
        .iter()
        .filter(|p| p.keyword)
        .map(one)
        .chain(extra_keywords.iter().map(|s| s.to_string()))
        .collect();
    if !keywords.is_empty() {
        parts.push("*".into());
        parts.extend(keywords);
    }
    parts
}

/// `def name(parts) -> result:` at `indent`, on one line when it fits, else one
/// parameter a line.
fn def_line(out: &mut String, indent: &str, name: &str, parts: &[String], result: &str) {
    let line = format!("{indent}def {name}({}) -> {result}:", parts.join(", "));
    if line.chars().count() <= WIDTH {
        let _ = writeln!(out, "{line}");
        return;
    }
    let _ = writeln!(out, "{indent}def {name}(");
    for p in parts {
        let _ = writeln!(out, "{indent}    {p},");
    }
    let _ = writeln!(out, "{indent}) -> {result}:");
}

/// `return function(args)` at `indent`, on one line when it fits, else one argument a
/// line.
fn return_line(out: &mut String, indent: &str, function: &str, args: &[String]) {
    let line = format!("{indent}return {function}({})", args.join(", "));
    if line.chars().count() <= WIDTH {
        let _ = writeln!(out, "{line}");
        return;
    }
    let _ = writeln!(out, "{indent}return {function}(");
    for a in args {
        let _ = writeln!(out, "{indent}    {a},");
    }
    let _ = writeln!(out, "{indent})");
}

/// A call's `(a, b, ...)` tuple of names.
fn tuple_of(names: &[String]) -> String {
    match names {
        [one] => format!("({one},)"),
        _ => format!("({})", names.join(", ")),
    }
}

/// `_api.py`.
fn api_module(world: &World, exports: &[Export]) -> Result<String> {
    let mut constants = String::new();
    let mut logic = String::new();
    let mut store = String::new();
    let mut functions = String::new();
    let mut module_names = Vec::new();
    for e in exports {
        let (params, rows) = params(world, e)?;
        let answer = match world.fallible(e.function) {
            Some(ok) => ok,
            None => e.function.result,
        };
        let (result_hint, result_codec) = match &answer {
            Some(t) => (hint(world, t, false, "wit.")?, codec(world, t, "wit.")?),
            None => ("None".to_string(), "_c.NOTHING".to_string()),
        };
        let about = sentence(docs(&e.function.docs)).unwrap_or_else(|| "A WIT export.".into());
        let raises = if world.fallible(e.function).is_some() {
            " Raises :class:`render_store.RenderStoreError` for its ``error``."
        } else {
            ""
        };
        let wit_name = e.wit_name();
        let c_name = crate::capi::c_name(&e.interface.name, &e.function.name);
        let constant = e.constant();
        write!(
            constants,
            "\n{constant}: _c.Call[{result_hint}] = _c.Call(\n    \"{c_name}\",\n    \"{}\",\n    (",
            e.python
        )?;
        if rows.is_empty() {
            constants.push_str("),\n");
        } else {
            constants.push('\n');
            for row in &rows {
                writeln!(constants, "        {row},")?;
            }
            constants.push_str("    ),\n");
        }
        writeln!(constants, "    {result_codec},\n)")?;
        let values: Vec<String> = e
            .function
            .params
            .iter()
            .filter(|p| !(e.store() && p.name == "encryption"))
            .map(|p| python_name(&p.name))
            .collect();
        if e.store() {
            let mut parts = vec!["self".to_string()];
            parts.extend(signature_parts(
                &params,
                &["timeout: Optional[float] = None"],
            ));
            store.push('\n');
            def_line(&mut store, "    ", &e.python, &parts, &result_hint);
            docstring(
                &mut store,
                "        ",
                &[
                    &about,
                    &format!(
                        "The WIT's ``{wit_name}``, on this store, with its keyring and rule.{raises}"
                    ),
                ],
            );
            return_line(
                &mut store,
                "        ",
                "self._wit_call",
                &[constant, tuple_of(&values), "timeout".into()],
            );
        } else {
            let mut parts = vec!["self".to_string()];
            parts.extend(signature_parts(&params, &[]));
            logic.push('\n');
            def_line(&mut logic, "    ", &e.python, &parts, &result_hint);
            docstring(
                &mut logic,
                "        ",
                &[
                    &about,
                    &format!("The WIT's ``{wit_name}``, with this runtime's limits.{raises}"),
                ],
            );
            return_line(
                &mut logic,
                "        ",
                "self._wit_call",
                &[constant, tuple_of(&values)],
            );
            functions.push_str("\n\n");
            def_line(
                &mut functions,
                "",
                &e.python,
                &signature_parts(&params, &[]),
                &result_hint,
            );
            docstring(
                &mut functions,
                "    ",
                &[
                    &about,
                    &format!("The WIT's ``{wit_name}``, on the default runtime.{raises}"),
                ],
            );
            let args: Vec<String> = params
                .iter()
                .map(|p| {
                    if p.keyword {
                        format!("{0}={0}", p.python)
                    } else {
                        p.python.clone()
                    }
                })
                .collect();
            return_line(
                &mut functions,
                "    ",
                &format!("_runtime().{}", e.python),
                &args,
            );
            module_names.push(e.python.clone());
        }
    }

    let mut rest = String::new();
    rest.push_str("\n_T = TypeVar(\"_T\")\n");
    rest.push_str(&constants);
    rest.push_str(
        "\n\nclass LogicCalls:\n    \"\"\"The exports of ``logic`` and ``trace`` that have no hand-written method, each a\n    \
         sandboxed call with this runtime's limits: mixed into :class:`render_store.Runtime`.\"\"\"\n\n    \
         def _wit_call(self, call: _c.Call[_T], values: Tuple[Any, ...]) -> _T:\n        \
         raise NotImplementedError  # the Runtime's\n",
    );
    rest.push_str(&logic);
    rest.push_str(
        "\n\nclass StoreCalls:\n    \"\"\"The exports of ``store`` that have no hand-written method: mixed into\n    \
         :class:`render_store.RenderStore`. Each runs on the store with its own keyring and\n    \
         rule (the WIT's ``encryption``), within ``timeout`` seconds (default: the store's).\"\"\"\n\n    \
         def _wit_call(\n        self, call: _c.Call[_T], values: Tuple[Any, ...], timeout: Optional[float]\n    ) -> _T:\n        \
         raise NotImplementedError  # the RenderStore's\n",
    );
    rest.push_str(&store);
    rest.push_str(
        "\n\ndef _runtime() -> LogicCalls:\n    \
         \"\"\"The runtime of the module functions: the package's default one.\"\"\"\n    \
         from . import default_runtime\n\n    \
         return default_runtime()\n",
    );
    rest.push_str(&functions);

    let mut out = crate::banner("#");
    out.push_str(
        "\"\"\"The exports of the component's ``logic``, ``store`` and ``trace`` interfaces that\n\
         have no hand-written function, generated from wit/render-store.wit: each a call of the\n\
         C ABI's generated entry point (``rs_call_<interface>_<function>``), its arguments and\n\
         answer in the JSON of docs/json.md, values the classes of :mod:`render_store.wit`.\n\n\
         A ``store`` function is a method of :class:`render_store.RenderStore` (``StoreCalls``);\n\
         a ``logic`` or ``trace`` function a method of :class:`render_store.Runtime`\n\
         (``LogicCalls``) and a function of the package on the default runtime. A function\n\
         that answers ``result<T, error>`` returns ``T`` and raises\n\
         :class:`render_store.RenderStoreError` for the error.\n\"\"\"\n\n\
         from __future__ import annotations\n\n",
    );
    let typing = typing_import(
        &rest,
        &[
            "Any", "List", "Optional", "Sequence", "Tuple", "TypeVar", "Union",
        ],
    );
    out.push_str(&typing);
    out.push_str("\nfrom . import _codec as _c\nfrom . import wit\n\n");
    out.push_str(&list_literal("__all__", &module_names));
    out.push_str(&rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{sentence, wrap};
    use crate::names::{python_constant, python_name};

    #[test]
    fn names_are_pep_8() {
        assert_eq!(python_name("render-ref"), "render_ref");
        assert_eq!(python_name("from"), "from_");
        assert_eq!(python_name("sha256-hex"), "sha256_hex");
        assert_eq!(python_constant("not-folder"), "NOT_FOLDER");
    }

    #[test]
    fn a_docstring_is_the_first_sentence_in_rest_markup() {
        assert_eq!(
            sentence(Some("Checks a `renderRef`: 64 digits. More.")).as_deref(),
            Some("Checks a ``renderRef``: 64 digits.")
        );
        assert_eq!(
            sentence(Some("A path `a\\b` without a stop")).as_deref(),
            Some("A path ``a\\\\b`` without a stop.")
        );
        assert_eq!(sentence(Some("  ")), None);
    }

    #[test]
    fn words_wrap_within_the_width() {
        assert_eq!(wrap("aa bb cc dd", 5), vec!["aa bb", "cc dd"]);
        assert_eq!(wrap("abcdefgh ij", 5), vec!["abcdefgh", "ij"]);
    }
}
