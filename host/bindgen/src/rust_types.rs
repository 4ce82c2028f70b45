//! `guest/src/wit.rs`: every type the WIT declares, as Rust, one module per interface.
//!
//! The guest's logic uses these types as its own, and with the guest's
//! `component-type` feature they carry wasmtime's `ComponentType`, `Lift` and `Lower`
//! derives, so the host passes them to the component as they are. Names follow Rust's
//! conventions (`gc-plan` → `GcPlan`, `render-ref` → `render_ref`); the derives are told
//! the WIT's own names wherever the spellings differ.

use crate::names::{renamed, type_name, value_name};
use crate::world::{Interface, World, docs};
use anyhow::{Result, bail};
use std::fmt::Write as _;
use wit_parser::{Type, TypeDefKind, TypeId};

/// Derives a type has beyond `Debug, Clone, PartialEq, Eq`, by its WIT name: what the
/// guest's logic asks of it (a key of a sorted map, a value copied freely).
const EXTRA_DERIVES: &[(&str, &str)] = &[
    ("release", "Hash, PartialOrd, Ord"),
    ("sync-time", "Copy, PartialOrd, Ord, Hash"),
    ("instant", "Copy"),
    ("object-id", "Hash, PartialOrd, Ord"),
    ("object-form", "Copy, Hash"),
    ("secret-values", "Copy, Hash"),
    ("yaml-stage", "Copy, Hash"),
    ("unwalkable", "Copy"),
    ("left-out", "Copy"),
];

/// The case an enum's `Default` is, by the enum's WIT name: the WIT's documented
/// default. An enum not named here has no `Default`, nor a record holding one.
const ENUM_DEFAULTS: &[(&str, &str)] = &[("object-form", "yaml"), ("secret-values", "masked")];

/// The attribute that gives a type the component-model derives when the guest is built
/// for the host.
const DERIVES: &str = "#[cfg_attr(\n    feature = \"component-type\",\n    derive(\n        wasmtime::component::ComponentType,\n        wasmtime::component::Lift,\n        wasmtime::component::Lower\n    )\n)]";

/// The whole module.
pub fn module(world: &World) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(
        "\n//! The types of the WIT world `convoy:render-store`, one module per interface,\n\
         //! declared once: the guest's logic uses them as its own types, and the host\n\
         //! passes them to the component as they are (the `component-type` feature gives\n\
         //! them wasmtime's component-model derives).\n",
    );
    for interface in world.interfaces() {
        let types = world.declared_types(interface);
        if types.is_empty() {
            continue;
        }
        let docs_text = docs(&world.resolve.interfaces[interface.id].docs)
            .map(|d| d.to_string())
            .unwrap_or_else(|| format!("The types of the `{}` interface.", interface.name));
        out.push('\n');
        push_docs(&mut out, "", &docs_text);
        writeln!(out, "pub mod {} {{", value_name(&interface.name))?;
        let mut first = true;
        for (name, id) in &types {
            if !first {
                out.push('\n');
            }
            first = false;
            definition(world, interface, name, *id, &mut out)?;
        }
        out.push_str("}\n");
    }
    Ok(out)
}

fn definition(
    world: &World,
    interface: &Interface,
    name: &str,
    id: TypeId,
    out: &mut String,
) -> Result<()> {
    let def = &world.resolve.types[id];
    let rust = type_name(name);
    if let Some(d) = docs(&def.docs) {
        push_docs(out, "    ", d);
    }
    let extra = EXTRA_DERIVES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| format!(", {d}"))
        .unwrap_or_default();
    let default = if has_default(world, id) {
        ", Default"
    } else {
        ""
    };
    let derive = format!("    #[derive(Debug, Clone, PartialEq, Eq{default}{extra})]\n");
    let derives = indent(DERIVES, "    ");
    match &def.kind {
        TypeDefKind::Record(record) => {
            out.push_str(&derive);
            writeln!(out, "{derives}")?;
            writeln!(
                out,
                "    #[cfg_attr(feature = \"component-type\", component(record))]"
            )?;
            writeln!(out, "    pub struct {rust} {{")?;
            for field in &record.fields {
                if let Some(d) = docs(&field.docs) {
                    push_docs(out, "        ", d);
                }
                let field_name = value_name(&field.name);
                rename(out, &field.name, &field_name);
                writeln!(
                    out,
                    "        pub {field_name}: {},",
                    rust_type(world, Some(interface), &field.ty)?
                )?;
            }
            out.push_str("    }\n");
        }
        TypeDefKind::Variant(variant) => {
            out.push_str(&derive);
            writeln!(out, "{derives}")?;
            writeln!(
                out,
                "    #[cfg_attr(feature = \"component-type\", component(variant))]"
            )?;
            writeln!(out, "    pub enum {rust} {{")?;
            for case in &variant.cases {
                if let Some(d) = docs(&case.docs) {
                    push_docs(out, "        ", d);
                }
                let case_name = type_name(&case.name);
                rename(out, &case.name, &case_name);
                match &case.ty {
                    Some(t) => writeln!(
                        out,
                        "        {case_name}({}),",
                        rust_type(world, Some(interface), t)?
                    )?,
                    None => writeln!(out, "        {case_name},")?,
                }
            }
            out.push_str("    }\n");
        }
        TypeDefKind::Enum(e) => {
            let default_case = ENUM_DEFAULTS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| *c);
            out.push_str(&derive);
            writeln!(out, "{derives}")?;
            writeln!(
                out,
                "    #[cfg_attr(feature = \"component-type\", component(enum))]"
            )?;
            if e.cases.len() > 256 {
                bail!("enum {name} has more cases than a u8 numbers");
            }
            writeln!(out, "    #[repr(u8)]")?;
            writeln!(out, "    pub enum {rust} {{")?;
            for case in &e.cases {
                if let Some(d) = docs(&case.docs) {
                    push_docs(out, "        ", d);
                }
                let case_name = type_name(&case.name);
                rename(out, &case.name, &case_name);
                if default_case == Some(case.name.as_str()) {
                    out.push_str("        #[default]\n");
                }
                writeln!(out, "        {case_name},")?;
            }
            out.push_str("    }\n");
            // wit-bindgen's glue lifts an enum by its discriminant with this function,
            // which it would have written on a type of its own.
            writeln!(
                out,
                "\n    #[cfg(target_arch = \"wasm32\")]\n    impl {rust} {{\n        #[doc(hidden)]\n        pub unsafe fn _lift(val: u8) -> {rust} {{\n            match val {{"
            )?;
            for (i, case) in e.cases.iter().enumerate() {
                writeln!(
                    out,
                    "                {i} => {rust}::{},",
                    type_name(&case.name)
                )?;
            }
            writeln!(
                out,
                "                _ => panic!(\"invalid enum discriminant\"),\n            }}\n        }}\n    }}"
            )?;
        }
        TypeDefKind::Type(t) => {
            writeln!(
                out,
                "    pub type {rust} = {};",
                rust_type(world, Some(interface), t)?
            )?;
        }
        TypeDefKind::List(_)
        | TypeDefKind::Option(_)
        | TypeDefKind::Result(_)
        | TypeDefKind::Tuple(_) => {
            writeln!(
                out,
                "    pub type {rust} = {};",
                anonymous(world, Some(interface), id)?
            )?;
        }
        other => bail!(
            "type {name} is a {}, which has no Rust form here",
            other.as_str()
        ),
    }
    Ok(())
}

/// Whether a type can derive `Default`: every field of a record can, an enum names its
/// default case, and lists, options, strings and numbers always can.
fn has_default(world: &World, id: TypeId) -> bool {
    let def = &world.resolve.types[world.declared(id)];
    match &def.kind {
        TypeDefKind::Record(r) => r.fields.iter().all(|f| type_has_default(world, &f.ty)),
        TypeDefKind::Enum(_) => def
            .name
            .as_deref()
            .is_some_and(|n| ENUM_DEFAULTS.iter().any(|(e, _)| *e == n)),
        TypeDefKind::List(_) | TypeDefKind::Option(_) => true,
        TypeDefKind::Type(t) => type_has_default(world, t),
        TypeDefKind::Tuple(t) => t.types.iter().all(|t| type_has_default(world, t)),
        _ => false,
    }
}

fn type_has_default(world: &World, t: &Type) -> bool {
    match t {
        Type::Id(id) => has_default(world, *id),
        _ => true,
    }
}

/// The Rust type of a WIT type inside the module of `from`, or, with no `from`, where
/// each interface's module is in scope by its name (the host's generated module).
pub fn rust_type(world: &World, from: Option<&Interface>, t: &Type) -> Result<String> {
    Ok(match t {
        Type::Bool => "bool".into(),
        Type::U8 => "u8".into(),
        Type::U16 => "u16".into(),
        Type::U32 => "u32".into(),
        Type::U64 => "u64".into(),
        Type::S8 => "i8".into(),
        Type::S16 => "i16".into(),
        Type::S32 => "i32".into(),
        Type::S64 => "i64".into(),
        Type::String => "String".into(),
        Type::Id(id) => {
            let def = &world.resolve.types[*id];
            match &def.name {
                Some(_) => named(world, from, *id),
                None => anonymous(world, from, *id)?,
            }
        }
        other => bail!("type {other:?} has no Rust form here"),
    })
}

/// A named type's path from the module of `from` (or from where every interface's
/// module is in scope).
fn named(world: &World, from: Option<&Interface>, id: TypeId) -> String {
    let declared = world.declared(id);
    let name = type_name(world.resolve.types[declared].name.as_deref().unwrap_or(""));
    match (world.owner(declared), from) {
        (Some(owner), Some(from)) if owner == from.id => name,
        (Some(owner), Some(_)) => {
            format!("super::{}::{name}", value_name(world.interface_name(owner)))
        }
        (Some(owner), None) => format!("{}::{name}", value_name(world.interface_name(owner))),
        (None, _) => name,
    }
}

fn anonymous(world: &World, from: Option<&Interface>, id: TypeId) -> Result<String> {
    let def = &world.resolve.types[id];
    let ty = |t: &Type| rust_type(world, from, t);
    let optional = |t: &Option<Type>| -> Result<String> {
        match t {
            Some(t) => ty(t),
            None => Ok("()".into()),
        }
    };
    Ok(match &def.kind {
        TypeDefKind::List(t) => format!("Vec<{}>", ty(t)?),
        TypeDefKind::Option(t) => format!("Option<{}>", ty(t)?),
        TypeDefKind::Result(r) => format!("Result<{}, {}>", optional(&r.ok)?, optional(&r.err)?),
        TypeDefKind::Tuple(t) => {
            let parts = t.types.iter().map(ty).collect::<Result<Vec<_>>>()?;
            match parts.as_slice() {
                [one] => format!("({one},)"),
                _ => format!("({})", parts.join(", ")),
            }
        }
        TypeDefKind::Type(t) => ty(t)?,
        other => bail!("an anonymous {} has no Rust form here", other.as_str()),
    })
}

fn rename(out: &mut String, wit: &str, rust: &str) {
    if let Some(name) = renamed(wit, rust) {
        let _ = writeln!(
            out,
            "        #[cfg_attr(feature = \"component-type\", component(name = \"{name}\"))]"
        );
    }
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A doc comment, line by line, as `///` lines.
pub fn push_docs(out: &mut String, prefix: &str, text: &str) {
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            let _ = writeln!(out, "{prefix}///");
        } else {
            let _ = writeln!(out, "{prefix}/// {line}");
        }
    }
}
