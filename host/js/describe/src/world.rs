//! The world a component was built for, read from the component's own type
//! information by wit-parser, as the plain type descriptions `abi.mjs` lowers and lifts
//! values by. Every named type is resolved in place, so a description is self-contained:
//!
//! ```text
//! 'bool' | 'u8' | 'u16' | 'u32' | 'u64' | 's8' | 's16' | 's32' | 's64' | 'string'
//! {list: T}  {option: T}  {result: [T | null, T | null]}  {tuple: [T, …]}
//! {record: [[name, T], …]}  {variant: [[name, T | null], …]}  {enum: [name, …]}
//! ```
//!
//! Anything else the component model has (floats, char, flags, resources, maps,
//! futures, streams) is refused by name: `abi.mjs` does not lower it, and a guess would
//! corrupt values silently.

use anyhow::{Context, Result, bail};
use wit_parser::decoding::{DecodedWasm, decode};
use wit_parser::{FunctionKind, InterfaceId, Resolve, Type, TypeDefKind, WorldItem, WorldKey};

use crate::json::Json;

/// The interface the component may import, and nothing else, by its name in the
/// package the component exports from.
pub const BUCKET: &str = "bucket";

/// The world of `component`: `{package, imports: {name: {functions}}, exports: …}`,
/// in the world's own order. Fails unless the component imports exactly the bucket
/// interface of its own package.
pub fn describe(component: &[u8]) -> Result<Json> {
    let (resolve, world) = match decode(component).context("the component's type information")? {
        DecodedWasm::Component(resolve, world) => (resolve, world),
        DecodedWasm::WitPackage(..) => bail!("the file is a WIT package, not a component"),
    };
    let world = &resolve.worlds[world];
    let imports = interfaces(&resolve, world.imports.iter(), "imports")?;
    let exports = interfaces(&resolve, world.exports.iter(), "exports")?;
    let Some(&(_, first)) = exports.first() else {
        bail!("the component exports no interface");
    };
    let package = resolve.interfaces[first]
        .package
        .context("the component's first export belongs to no package")?;
    let package_name = resolve.packages[package].name.to_string();
    for &(_, id) in imports.iter().chain(&exports) {
        if resolve.interfaces[id].package != Some(package) {
            bail!(
                "the component's world names {}, which is not of package {package_name}",
                qualified(&resolve, id)
            );
        }
    }
    let imported: Vec<String> = imports
        .iter()
        .map(|&(_, id)| qualified(&resolve, id))
        .collect();
    if imports.len() != 1 || imports[0].0 != BUCKET {
        bail!(
            "the component imports {imported:?}; it may import only {package_name}'s `{BUCKET}` interface"
        );
    }
    Ok(Json::object([
        ("package", Json::string(&package_name)),
        ("imports", functions_of(&resolve, &imports)?),
        ("exports", functions_of(&resolve, &exports)?),
    ]))
}

fn qualified(resolve: &Resolve, id: InterfaceId) -> String {
    resolve
        .id_of(id)
        .unwrap_or_else(|| resolve.interfaces[id].name.clone().unwrap_or_default())
}

/// The named interfaces of a world's imports or exports. A function or type imported
/// or exported on its own, outside an interface, is refused: the package's calling
/// convention is by interface.
fn interfaces<'a>(
    resolve: &Resolve,
    items: impl Iterator<Item = (&'a WorldKey, &'a WorldItem)>,
    side: &str,
) -> Result<Vec<(String, InterfaceId)>> {
    let mut named = Vec::new();
    for (key, item) in items {
        let WorldItem::Interface { id, .. } = item else {
            bail!(
                "the component {side} {}, which is not an interface",
                resolve.name_world_key(key)
            );
        };
        let name = resolve.interfaces[*id]
            .name
            .clone()
            .with_context(|| format!("the component {side} an unnamed interface"))?;
        named.push((name, *id));
    }
    Ok(named)
}

fn functions_of(resolve: &Resolve, interfaces: &[(String, InterfaceId)]) -> Result<Json> {
    let mut described = Vec::new();
    for (name, id) in interfaces {
        let mut functions = Vec::new();
        for (fname, function) in &resolve.interfaces[*id].functions {
            let at = || format!("{name}.{fname}");
            if !matches!(function.kind, FunctionKind::Freestanding) {
                bail!(
                    "{} is a method or a constructor: the package has no resources",
                    at()
                );
            }
            let params = function
                .params
                .iter()
                .map(|p| {
                    Ok(Json::Array(vec![
                        Json::string(&p.name),
                        ty(resolve, &p.ty).with_context(at)?,
                    ]))
                })
                .collect::<Result<Vec<_>>>()?;
            let result = match &function.result {
                Some(t) => ty(resolve, t).with_context(at)?,
                None => Json::Null,
            };
            functions.push((
                fname.clone(),
                Json::object([("params", Json::Array(params)), ("result", result)]),
            ));
        }
        described.push((
            name.clone(),
            Json::object([("functions", Json::Object(functions))]),
        ));
    }
    Ok(Json::Object(described))
}

/// The description of one type, with named types resolved.
fn ty(resolve: &Resolve, t: &Type) -> Result<Json> {
    let primitive = match t {
        Type::Bool => "bool",
        Type::U8 => "u8",
        Type::U16 => "u16",
        Type::U32 => "u32",
        Type::U64 => "u64",
        Type::S8 => "s8",
        Type::S16 => "s16",
        Type::S32 => "s32",
        Type::S64 => "s64",
        Type::String => "string",
        Type::F32 | Type::F64 | Type::Char | Type::ErrorContext => {
            bail!("type {t:?} is not one the package lowers")
        }
        Type::Id(id) => return typedef(resolve, *id),
    };
    Ok(Json::string(primitive))
}

fn typedef(resolve: &Resolve, id: wit_parser::TypeId) -> Result<Json> {
    let def = &resolve.types[id];
    let optional = |t: &Option<Type>| match t {
        Some(t) => ty(resolve, t),
        None => Ok(Json::Null),
    };
    let one = |key: &str, value: Json| Json::object([(key, value)]);
    Ok(match &def.kind {
        TypeDefKind::Type(t) => ty(resolve, t)?,
        TypeDefKind::List(t) => one("list", ty(resolve, t)?),
        TypeDefKind::Option(t) => one("option", ty(resolve, t)?),
        TypeDefKind::Result(r) => one(
            "result",
            Json::Array(vec![optional(&r.ok)?, optional(&r.err)?]),
        ),
        TypeDefKind::Tuple(t) => one(
            "tuple",
            Json::Array(
                t.types
                    .iter()
                    .map(|t| ty(resolve, t))
                    .collect::<Result<_>>()?,
            ),
        ),
        TypeDefKind::Record(r) => one(
            "record",
            Json::Array(
                r.fields
                    .iter()
                    .map(|f| {
                        Ok(Json::Array(vec![
                            Json::string(&f.name),
                            ty(resolve, &f.ty)?,
                        ]))
                    })
                    .collect::<Result<_>>()?,
            ),
        ),
        TypeDefKind::Variant(v) => one(
            "variant",
            Json::Array(
                v.cases
                    .iter()
                    .map(|c| Ok(Json::Array(vec![Json::string(&c.name), optional(&c.ty)?])))
                    .collect::<Result<_>>()?,
            ),
        ),
        TypeDefKind::Enum(e) => one(
            "enum",
            Json::Array(e.cases.iter().map(|c| Json::string(&c.name)).collect()),
        ),
        other => bail!(
            "type {} is a {}, which the package does not lower",
            def.name.as_deref().unwrap_or("(anonymous)"),
            other.as_str()
        ),
    })
}
