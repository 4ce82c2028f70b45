//! The npm package's functions for the world's exports that have no hand-written one:
//! `host/js/api.generated.mjs`, one exported function per such export of `logic`,
//! `store` and `trace`, each a single call of core.mjs's generic helper
//! (`_generatedApi`), and its TypeScript declarations `host/js/api.generated.d.mts`,
//! typed from the WIT (every WIT type they reach, in the namespace `Wit`). core.mjs
//! re-exports both, so every function of those interfaces is reachable from the package.
//!
//! Which exports are hand-written is said once, in [`HAND_WRITTEN`]; the generator reads
//! `core.mjs` and `render-store.mjs` only to check that table: each hand-written name is
//! exported there, and no generated name is (two modules exporting one name through
//! `export *` would hide both).
//!
//! Conventions, as the hand-written functions have them: a `logic` or `trace` function
//! takes the WIT parameters in order, camelCase, a WIT `release` as `{namespace, name}` or
//! `"namespace/name"`; a `store` function takes `(bucket, release, ...the other WIT
//! parameters in order, keyring = [], options = {})`, its `encryption` made from
//! `keyring` and `options.encryptionRequired`. Values are abi.mjs's: records as objects
//! with camelCase fields, variants `{tag, val}`, enums their case names, options the value
//! or undefined, u64 and s64 bigints, `list<u8>` a Uint8Array. An `error` result throws
//! the package's RenderStoreError.

use crate::Generated;
use crate::hand_written::HandWritten;
use crate::names::type_name;
use crate::world::{Interface, World, docs, first_sentence, wrap};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use wit_parser::{Function, Type, TypeDefKind, TypeId};

/// The generated module, from the repository's root.
const MODULE: &str = "host/js/api.generated.mjs";
/// Its declarations.
const DECLARATIONS: &str = "host/js/api.generated.d.mts";
/// The hand-written modules whose exports the table is checked against.
const HAND_MODULES: &[&str] = &["host/js/core.mjs", "host/js/render-store.mjs"];
/// The namespace of the WIT's types in the declarations.
const NAMESPACE: &str = "Wit";
/// The name the generated module imports core.mjs's helper under.
const HELPER: &str = "wit";

/// The exports core.mjs answers with a hand-written function, by interface and WIT
/// name, with that function's name: each converts its arguments and shapes its value
/// for JavaScript (numbers for times, bytes for text, a trace of the call), so it stays.
/// A name other than the camelCase of the WIT's is where the WIT's is taken:
/// `store.diff-renders` would be `diffRenders`, which is `logic.diff-renders`.
const HAND_WRITTEN: HandWritten = HandWritten {
    file: "js.rs",
    table: &[
        ("logic", "canonical", "canonical"),
        ("logic", "render-ref", "renderRef"),
        ("logic", "yaml-objects", "yamlObjects"),
        ("logic", "check-objects", "checkObjects"),
        ("logic", "parse-keyring", "parseKeyring"),
        ("logic", "yaml-canonical", "yamlCanonical"),
        ("logic", "yaml-render-ref", "yamlRenderRef"),
        ("logic", "validate-render-ref", "validateRenderRef"),
        ("logic", "sha256-hex", "sha256Hex"),
        ("logic", "release-prefix", "releasePrefix"),
        ("logic", "render-key", "renderKey"),
        ("logic", "history-key", "historyKey"),
        ("logic", "parse-key", "parseKey"),
        ("logic", "format-key-time", "formatKeyTime"),
        ("logic", "parse-key-time", "parseKeyTime"),
        ("logic", "format-synced-at", "formatSyncedAt"),
        ("logic", "parse-synced-at", "parseSyncedAt"),
        ("logic", "plan-gc", "planGc"),
        ("logic", "diff-renders", "diffRenders"),
        ("logic", "show-objects", "showObjects"),
        ("logic", "summarize-history", "summarizeHistory"),
        ("logic", "effective-keep-history", "effectiveKeepHistory"),
        ("logic", "history-count", "historyCount"),
        ("logic", "protected-refs", "protectedRefs"),
        ("logic", "pin-decision", "pinDecision"),
        ("store", "put-render", "putRender"),
        ("store", "get-render", "getRender"),
        ("store", "rekey-release", "rekeyRelease"),
        ("store", "diff-renders", "diffStored"),
        ("store", "index-release", "indexRelease"),
        ("store", "has-history-ref", "hasHistoryRef"),
        ("store", "record-history", "recordHistory"),
        ("store", "list-history", "listHistory"),
        ("store", "list-history-page", "listHistoryPage"),
        ("store", "gc", "gc"),
        ("store", "delete-release", "deleteRelease"),
        ("trace", "replay", "replay"),
    ],
};

/// Names a JavaScript parameter cannot have (reserved words, and what strict mode and
/// modules forbid); a WIT parameter so named gets a `_` after it.
const JS_RESERVED: &[&str] = &[
    "arguments",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "eval",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// The npm package's generated files.
pub fn files(root: &Path, world: &World) -> Result<Vec<Generated>> {
    let exports = generated_exports(world)?;
    check_hand_written(root, &exports)?;
    Ok(vec![
        Generated {
            path: MODULE,
            contents: module(world, &exports)?,
        },
        Generated {
            path: DECLARATIONS,
            contents: declarations(world, &exports)?,
        },
    ])
}

/// A WIT name as abi.mjs names it in JavaScript: each `-x` becomes `X`.
fn camel_case(wit: &str) -> String {
    let mut out = String::with_capacity(wit.len());
    let mut upper = false;
    for c in wit.chars() {
        if c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A WIT parameter's name in JavaScript.
fn param_name(wit: &str) -> String {
    let name = camel_case(wit);
    if JS_RESERVED.contains(&name.as_str()) {
        format!("{name}_")
    } else {
        name
    }
}

/// One export the generated module answers.
struct Export<'a> {
    interface: &'a Interface,
    function: &'a Function,
    /// Its name in JavaScript (abi.mjs's too).
    js: String,
    /// For a `store` function: whether it takes `encryption` (its last parameter).
    store: Option<bool>,
    /// The parameters the JS function takes in WIT order (a store function's `release`
    /// and `encryption` aside): WIT name, JS name, type.
    params: Vec<(&'a str, String, Type)>,
}

impl Export<'_> {
    fn wit_name(&self) -> String {
        format!("{}.{}", self.interface.name, self.function.name)
    }
}

/// Every export of the interfaces that has no hand-written function, in the WIT's order.
fn generated_exports(world: &World) -> Result<Vec<Export<'_>>> {
    let mut out = Vec::new();
    let mut names = BTreeMap::new();
    for (_, _, js) in HAND_WRITTEN.table {
        names.insert(js.to_string(), "a hand-written function".to_string());
    }
    for e in HAND_WRITTEN.generated(world)? {
        let export = export(world, e.interface, e.function)?;
        if let Some(other) = names.insert(export.js.clone(), export.wit_name()) {
            bail!(
                "{} would be `{}` in JavaScript, as {other} is: name one of them in js.rs's HAND_WRITTEN",
                export.wit_name(),
                export.js
            );
        }
        out.push(export);
    }
    Ok(out)
}

fn export<'a>(
    world: &'a World,
    interface: &'a Interface,
    function: &'a Function,
) -> Result<Export<'a>> {
    let what = format!("{}.{}", interface.name, function.name);
    let mut params: Vec<(&str, String, Type)> = function
        .params
        .iter()
        .map(|p| (p.name.as_str(), param_name(&p.name), p.ty))
        .collect();
    let mut store = None;
    let mut reserved = vec![HELPER];
    if interface.name == "store" {
        if params.first().map(|p| p.0) != Some("release")
            || !is_named(world, &params[0].2, "release")
        {
            bail!("{what}: a store function's first parameter is `release: release`");
        }
        params.remove(0);
        let sealed = params.last().map(|p| p.0) == Some("encryption");
        if sealed {
            if !is_named(world, &params[params.len() - 1].2, "encryption") {
                bail!("{what}: its parameter `encryption` is not the WIT `encryption`");
            }
            params.pop();
        }
        if params.iter().any(|p| p.0 == "encryption") {
            bail!("{what}: `encryption` must be the last parameter");
        }
        store = Some(sealed);
        reserved.extend(["bucket", "release", "keyring", "options"]);
    }
    for (wit, js, _) in &params {
        if reserved.contains(&js.as_str()) {
            bail!(
                "{what}: its parameter `{wit}` would be `{js}` in JavaScript, a name the generated function has already"
            );
        }
    }
    if let Some(result) = &function.result
        && let Some((_, Some(err))) = top_result(world, result)
        && !is_named(world, &err, "error")
    {
        bail!(
            "{what} fails with another type than `error`: give it a hand-written function in core.mjs and name it in js.rs's HAND_WRITTEN"
        );
    }
    Ok(Export {
        interface,
        function,
        js: camel_case(&function.name),
        store,
        params,
    })
}

/// Whether `t` is the WIT type declared as `name` (following `use`s).
fn is_named(world: &World, t: &Type, name: &str) -> bool {
    match t {
        Type::Id(id) => world.resolve.types[world.declared(*id)].name.as_deref() == Some(name),
        _ => false,
    }
}

/// A type's definition through aliases: what abi.mjs lowers it as.
fn resolved(world: &World, mut id: TypeId) -> TypeId {
    loop {
        match &world.resolve.types[id].kind {
            TypeDefKind::Type(Type::Id(next)) => id = *next,
            _ => return id,
        }
    }
}

/// When `t` is a `result`: its ok and err types. An export returning one returns its ok
/// value and throws its err value.
fn top_result(world: &World, t: &Type) -> Option<(Option<Type>, Option<Type>)> {
    let Type::Id(id) = t else {
        return None;
    };
    match &world.resolve.types[resolved(world, *id)].kind {
        TypeDefKind::Result(r) => Some((r.ok, r.err)),
        _ => None,
    }
}

/// The names `module` exports by hand: `export const|let|var|function|class NAME`.
fn exported_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("export ") else {
            continue;
        };
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        for kind in ["const ", "let ", "var ", "function ", "class "] {
            if let Some(declared) = rest.strip_prefix(kind) {
                let name: String = declared
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                    .collect();
                out.insert(name);
            }
        }
    }
    out
}

/// The table against the WIT and the hand-written modules.
fn check_hand_written(root: &Path, exports: &[Export<'_>]) -> Result<()> {
    let mut hand = BTreeSet::new();
    for path in HAND_MODULES {
        let text =
            std::fs::read_to_string(root.join(path)).with_context(|| format!("reading {path}"))?;
        hand.extend(exported_names(&text));
    }
    for (interface, function, js) in HAND_WRITTEN.table {
        if !hand.contains(*js) {
            bail!(
                "js.rs's HAND_WRITTEN answers {interface}.{function} with `{js}`, which {} do not export",
                HAND_MODULES.join(" and ")
            );
        }
    }
    for export in exports {
        if hand.contains(&export.js) {
            bail!(
                "{} exports `{}` by hand, which {} would be generated as: name {} in js.rs's HAND_WRITTEN",
                HAND_MODULES.join(" or "),
                export.js,
                export.wit_name(),
                export.wit_name()
            );
        }
    }
    Ok(())
}

/// A doc comment's first sentence, as a JSDoc line may hold it.
fn summary(world_docs: &wit_parser::Docs) -> String {
    docs(world_docs)
        .map(first_sentence)
        .unwrap_or_default()
        .replace("*/", "*\\/")
}

/// The columns a generated line of comment fits in.
const WIDTH: usize = 100;

/// A JSDoc comment at `indent` of the paragraphs `paragraphs`: one line when it is one
/// paragraph that fits, else a block wrapped to [`WIDTH`].
fn push_jsdoc(out: &mut String, indent: &str, paragraphs: &[String]) {
    if let [one] = paragraphs
        && indent.len() + one.chars().count() + 7 <= WIDTH
    {
        out.push_str(&format!("{indent}/** {one} */\n"));
        return;
    }
    out.push_str(&format!("{indent}/**\n"));
    for (i, paragraph) in paragraphs.iter().enumerate() {
        if i > 0 {
            out.push_str(&format!("{indent} *\n"));
        }
        for line in wrap(paragraph, WIDTH - indent.len() - 3) {
            out.push_str(&format!("{indent} * {line}\n"));
        }
    }
    out.push_str(&format!("{indent} */\n"));
}

/// A doc comment's first sentence as a sentence, or none.
fn sentence(d: &wit_parser::Docs) -> Option<String> {
    let s = summary(d);
    (!s.is_empty()).then(|| format!("{s}."))
}

/// The JSDoc of a generated function: the first sentence of its WIT doc comment, and
/// the export it calls.
fn jsdoc(export: &Export<'_>) -> String {
    let mut paragraphs: Vec<String> = sentence(&export.function.docs).into_iter().collect();
    paragraphs.push(format!("WIT: `{}`.", export.wit_name()));
    let mut out = String::new();
    push_jsdoc(&mut out, "", &paragraphs);
    out
}

const MODULE_INTRO: &str = "\
//
// The functions of the world's `logic`, `store` and `trace` exports that core.mjs has no
// hand-written function for (render-store-bindgen's js.rs names those), each one call of
// core.mjs's `_generatedApi`. core.mjs re-exports them.
//
// logic and trace functions take the WIT parameters in order (a `release` as
// {namespace, name} or \"namespace/name\"); store functions take (bucket, release, the
// other WIT parameters in order, keyring = [], options = {}), the WIT `encryption` made of
// `keyring` and `options.encryptionRequired`, as putRender and getRender do. Values are as
// abi.mjs lowers and lifts them; a WIT `error` throws RenderStoreError, an argument that
// cannot be lowered a TypeError.
";

fn module(world: &World, exports: &[Export<'_>]) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(MODULE_INTRO);
    writeln!(
        out,
        "\nimport {{ _generatedApi as {HELPER} }} from './core.mjs';"
    )?;
    let mut interface = "";
    for export in exports {
        if export.interface.name != interface {
            interface = &export.interface.name;
            writeln!(out, "\n// {interface}")?;
        }
        out.push('\n');
        out.push_str(&jsdoc(export));
        let names: Vec<&str> = export.params.iter().map(|p| p.1.as_str()).collect();
        match export.store {
            Some(sealed) => {
                let args = names.join(", ");
                let mut signature = vec!["bucket", "release"];
                signature.extend(&names);
                let tail = if sealed {
                    signature.extend(["keyring = []", "options = {}"]);
                    ", keyring, options"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "export const {} = ({}) => {HELPER}.store(bucket, '{}', release, [{args}]{tail});",
                    export.js,
                    signature.join(", "),
                    export.js,
                )?;
            }
            None => {
                let args: Vec<String> = export
                    .params
                    .iter()
                    .map(|(_, js, t)| {
                        if is_named(world, t, "release") {
                            format!("{HELPER}.release({js})")
                        } else {
                            js.clone()
                        }
                    })
                    .collect();
                writeln!(
                    out,
                    "export const {} = ({}) => {HELPER}.{}('{}', [{}]);",
                    export.js,
                    names.join(", "),
                    export.interface.name,
                    export.js,
                    args.join(", ")
                )?;
            }
        }
    }
    Ok(out)
}

const DECLARATIONS_INTRO: &str = "\
//
// The types of api.generated.mjs: its functions, and every WIT type they take or give, in
// the namespace `Wit` as abi.mjs shows them (records as interfaces with camelCase fields,
// enums as their case names, variants and nested results as {tag, val}, options as the
// value or undefined, u64 and s64 as bigint, list<u8> as Uint8Array, tuples as arrays).
";

fn declarations(world: &World, exports: &[Export<'_>]) -> Result<String> {
    let types = reachable(world, exports);
    let names = type_names(world, &types)?;
    let mut out = crate::banner("//");
    out.push_str(DECLARATIONS_INTRO);
    out.push_str(
        "\nimport type { Bucket, EncryptionOptions, Keyring, ReleaseLike } from './core.mjs';\n",
    );
    let outside = Ts {
        world,
        names: &names,
        prefix: "Wit.",
    };
    let mut interface = "";
    for export in exports {
        if export.interface.name != interface {
            interface = &export.interface.name;
            writeln!(out, "\n// {interface}")?;
        }
        out.push('\n');
        out.push_str(&jsdoc(export));
        let mut params = Vec::new();
        if export.store.is_some() {
            params.push("bucket: Bucket".to_string());
            params.push("release: ReleaseLike".to_string());
        }
        // An option is left out (undefined: none) when every parameter after it may be.
        let optional_from = export
            .params
            .iter()
            .rposition(|(_, _, t)| !is_option(world, t))
            .map_or(0, |i| i + 1);
        for (i, (_, js, t)) in export.params.iter().enumerate() {
            let ty = if export.store.is_none() && is_named(world, t, "release") {
                "ReleaseLike".to_string()
            } else {
                outside.ty(t)?
            };
            let mark = if i >= optional_from { "?" } else { "" };
            params.push(format!("{js}{mark}: {ty}"));
        }
        if export.store == Some(true) {
            params.push("keyring?: Keyring".to_string());
            params.push("options?: EncryptionOptions".to_string());
        }
        let result = match &export.function.result {
            None => "void".to_string(),
            Some(t) => match top_result(world, t) {
                Some((None, _)) => "void".to_string(),
                Some((Some(ok), _)) => outside.ty(&ok)?,
                None => outside.ty(t)?,
            },
        };
        writeln!(
            out,
            "export function {}({}): {result};",
            export.js,
            params.join(", ")
        )?;
    }
    writeln!(
        out,
        "\n/** The WIT's types (wit/render-store.wit) that the functions above take or give, as abi.mjs shows them. */"
    )?;
    writeln!(out, "export declare namespace {NAMESPACE} {{")?;
    let inside = Ts {
        world,
        names: &names,
        prefix: "",
    };
    let mut first = true;
    for interface in world.interfaces() {
        for (_, id) in world.declared_types(interface) {
            if !types.contains(&id) {
                continue;
            }
            if !first {
                out.push('\n');
            }
            first = false;
            inside.definition(id, &mut out)?;
        }
    }
    out.push_str("}\n");
    Ok(out)
}

fn is_option(world: &World, t: &Type) -> bool {
    match t {
        Type::Id(id) => matches!(
            world.resolve.types[resolved(world, *id)].kind,
            TypeDefKind::Option(_)
        ),
        _ => false,
    }
}

/// Every named type the generated functions reach, by the id it is declared under.
fn reachable(world: &World, exports: &[Export<'_>]) -> BTreeSet<TypeId> {
    let mut seen = BTreeSet::new();
    let mut pending: Vec<Type> = Vec::new();
    for export in exports {
        for (_, _, t) in &export.params {
            // A logic function's release is ReleaseLike, not the WIT's record.
            if export.store.is_some() || !is_named(world, t, "release") {
                pending.push(*t);
            }
        }
        pending.extend(export.function.result);
    }
    while let Some(t) = pending.pop() {
        let Type::Id(id) = t else {
            continue;
        };
        let id = world.declared(id);
        let def = &world.resolve.types[id];
        if def.name.is_some() && !seen.insert(id) {
            continue;
        }
        match &def.kind {
            TypeDefKind::Record(r) => pending.extend(r.fields.iter().map(|f| f.ty)),
            TypeDefKind::Variant(v) => pending.extend(v.cases.iter().filter_map(|c| c.ty)),
            TypeDefKind::Tuple(t) => pending.extend(t.types.iter().copied()),
            TypeDefKind::Option(t) | TypeDefKind::List(t) | TypeDefKind::Type(t) => {
                pending.push(*t)
            }
            TypeDefKind::Result(r) => pending.extend(r.ok.iter().chain(&r.err).copied()),
            _ => {}
        }
    }
    seen
}

/// Each reachable type's name in the namespace; two types of one name are refused.
fn type_names(world: &World, types: &BTreeSet<TypeId>) -> Result<BTreeMap<TypeId, String>> {
    let mut by_name: BTreeMap<String, TypeId> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for id in types {
        let wit = world.resolve.types[*id].name.as_deref().unwrap_or_default();
        let name = type_name(wit);
        if by_name.insert(name.clone(), *id).is_some() {
            bail!("two WIT types the JavaScript functions reach are both `{name}` in TypeScript");
        }
        out.insert(*id, name);
    }
    Ok(out)
}

/// TypeScript of WIT types, named types written `{prefix}Name`.
struct Ts<'a> {
    world: &'a World,
    names: &'a BTreeMap<TypeId, String>,
    prefix: &'a str,
}

impl Ts<'_> {
    fn ty(&self, t: &Type) -> Result<String> {
        Ok(match t {
            Type::Bool => "boolean".into(),
            Type::U8 | Type::U16 | Type::U32 | Type::S8 | Type::S16 | Type::S32 => "number".into(),
            Type::U64 | Type::S64 => "bigint".into(),
            Type::String => "string".into(),
            Type::Id(id) => {
                let id = self.world.declared(*id);
                match self.names.get(&id) {
                    Some(name) => format!("{}{name}", self.prefix),
                    None if self.world.resolve.types[id].name.is_none() => {
                        self.kind(&self.world.resolve.types[id].kind)?
                    }
                    None => bail!("the WIT type {id:?} was not collected"),
                }
            }
            other => bail!("the JavaScript declarations know no {other:?}"),
        })
    }

    /// An anonymous type's TypeScript, or a named one's definition after `type X =`.
    fn kind(&self, kind: &TypeDefKind) -> Result<String> {
        Ok(match kind {
            TypeDefKind::List(Type::U8) => "Uint8Array".into(),
            TypeDefKind::List(t) => {
                let element = self.ty(t)?;
                if element.contains(' ') {
                    format!("Array<{element}>")
                } else {
                    format!("{element}[]")
                }
            }
            TypeDefKind::Option(t) => format!("{} | undefined", self.ty(t)?),
            TypeDefKind::Tuple(t) => {
                let types: Result<Vec<String>> = t.types.iter().map(|t| self.ty(t)).collect();
                format!("[{}]", types?.join(", "))
            }
            TypeDefKind::Result(r) => {
                let case = |tag: &str, t: &Option<Type>| -> Result<String> {
                    Ok(match t {
                        Some(t) => format!("{{ tag: '{tag}'; val: {} }}", self.ty(t)?),
                        None => format!("{{ tag: '{tag}' }}"),
                    })
                };
                format!("{} | {}", case("ok", &r.ok)?, case("err", &r.err)?)
            }
            TypeDefKind::Enum(e) => e
                .cases
                .iter()
                .map(|c| format!("'{}'", c.name))
                .collect::<Vec<_>>()
                .join(" | "),
            TypeDefKind::Variant(v) => {
                let cases: Result<Vec<String>> = v
                    .cases
                    .iter()
                    .map(|c| {
                        Ok(match &c.ty {
                            Some(t) => format!("{{ tag: '{}'; val: {} }}", c.name, self.ty(t)?),
                            None => format!("{{ tag: '{}' }}", c.name),
                        })
                    })
                    .collect();
                cases?.join(" | ")
            }
            TypeDefKind::Type(t) => self.ty(t)?,
            other => bail!("the JavaScript declarations know no {}", other.as_str()),
        })
    }

    /// A named type's declaration in the namespace.
    fn definition(&self, id: TypeId, out: &mut String) -> Result<()> {
        let def = &self.world.resolve.types[id];
        let name = &self.names[&id];
        let wit = def.name.as_deref().unwrap_or_default();
        let doc = sentence(&def.docs).unwrap_or_else(|| format!("WIT `{wit}`."));
        push_jsdoc(out, "  ", &[doc]);
        match &def.kind {
            TypeDefKind::Record(r) => {
                writeln!(out, "  export interface {name} {{")?;
                for field in &r.fields {
                    if let Some(doc) = sentence(&field.docs) {
                        push_jsdoc(out, "    ", &[doc]);
                    }
                    let mark = if is_option(self.world, &field.ty) {
                        "?"
                    } else {
                        ""
                    };
                    let ty = self.ty(&field.ty)?;
                    writeln!(out, "    {}{mark}: {ty};", camel_case(&field.name))?;
                }
                writeln!(out, "  }}")?;
            }
            TypeDefKind::Variant(v) => {
                writeln!(out, "  export type {name} =")?;
                for (i, case) in v.cases.iter().enumerate() {
                    if let Some(doc) = sentence(&case.docs) {
                        for line in wrap(&doc, WIDTH - 7) {
                            writeln!(out, "    // {line}")?;
                        }
                    }
                    let end = if i + 1 == v.cases.len() { ";" } else { "" };
                    let arm = match &case.ty {
                        Some(t) => format!("{{ tag: '{}'; val: {} }}", case.name, self.ty(t)?),
                        None => format!("{{ tag: '{}' }}", case.name),
                    };
                    writeln!(out, "    | {arm}{end}")?;
                }
            }
            kind => writeln!(out, "  export type {name} = {};", self.kind(kind)?)?,
        }
        Ok(())
    }
}

/// The npm package's name for each export of `logic`, `store` and `trace`
/// (`interface.function`, name): the hand-written function's or the generated one's.
pub fn names(world: &World) -> Result<Vec<(String, String)>> {
    HAND_WRITTEN.names(world, |e| Ok(export(world, e.interface, e.function)?.js))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_is_abi_mjs_s() {
        assert_eq!(camel_case("blame-object"), "blameObject");
        assert_eq!(camel_case("sha256-hex"), "sha256Hex");
        assert_eq!(camel_case("format-synced-at-all"), "formatSyncedAtAll");
        assert_eq!(param_name("new"), "new_");
        assert_eq!(param_name("old"), "old");
    }

    #[test]
    fn hand_written_exports_are_read() {
        let names = exported_names(
            "export const a = 1;\nexport function b() {}\nexport class C {}\nexport * from './x.mjs';\n  export const indented = 2;\n",
        );
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["C", "a", "b"].map(String::from)
        );
    }
}
