//! `host/render-store/src/store/calls.rs`: every export of the world as a public, typed
//! async method of the Rust library, taking and giving the WIT's types
//! (`render_store::wit`): `Runtime::logic()` and `Runtime::trace()` for the pure
//! interfaces, `RenderStore::calls()` for `store` (scoped to the release named, within
//! the store's bounds, the store's own keyring given as `encryption`). A function that
//! answers `result<T, error>` answers `Result<T>`, its error the library's.

use crate::names::value_name;
use crate::rust_types::{push_docs, rust_type};
use crate::world::{Interface, World, docs};
use anyhow::Result;
use heck::ToUpperCamelCase;
use std::fmt::Write as _;
use wit_parser::Function;

/// Whether `f` of `interface` runs on a store (the `store` interface).
pub fn on_store(interface: &Interface) -> bool {
    interface.name == "store"
}

/// The whole module.
pub fn module(world: &World) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(
        "\n//! Every export of the component as a typed async method, taking and giving the\n\
         //! WIT's types (`render_store::wit`): [`Runtime::logic`] and [`Runtime::trace`]\n\
         //! for the pure interfaces, [`RenderStore::calls`] for `store`, each call scoped to\n\
         //! the release it names and given the store's own keyring as `encryption`.\n\n\
         #![allow(clippy::too_many_arguments, unused_imports)]\n\n\
         use super::RenderStore;\n\
         use crate::runtime::call_export;\n\
         use crate::{Result, Runtime};\n",
    );
    out.push_str(&crate::host_calls::type_imports(world));
    for interface in &world.exports {
        if world.functions(interface).next().is_none() {
            continue;
        }
        let camel = interface.name.to_upper_camel_case();
        let (owner, field) = if on_store(interface) {
            ("RenderStore", "store")
        } else {
            ("Runtime", "runtime")
        };
        let accessor = if on_store(interface) {
            "calls".to_string()
        } else {
            value_name(&interface.name)
        };
        writeln!(
            out,
            "\n/// The component's `{0}` functions, each typed as the WIT declares it ([`{owner}::{accessor}`]).\npub struct {camel}Calls<'a> {{\n    {field}: &'a {owner},\n}}\n\nimpl {owner} {{\n    /// The component's `{0}` functions, typed as the WIT declares them.\n    pub fn {accessor}(&self) -> {camel}Calls<'_> {{\n        {camel}Calls {{ {field}: self }}\n    }}\n}}\n\nimpl {camel}Calls<'_> {{",
            interface.name
        )?;
        let mut first = true;
        for f in world.functions(interface) {
            if !first {
                out.push('\n');
            }
            first = false;
            method(world, interface, f, &mut out)?;
        }
        out.push_str("}\n");
    }
    Ok(out)
}

fn method(world: &World, interface: &Interface, f: &Function, out: &mut String) -> Result<()> {
    let store = on_store(interface);
    let doc = docs(&f.docs).unwrap_or("");
    push_docs(
        out,
        "    ",
        &format!("{doc}\n\n(`{}.{}`)", interface.name, f.name),
    );
    let mut params = String::new();
    let mut args = Vec::new();
    for p in &f.params {
        if store && p.name == "encryption" {
            args.push("&self.store.encryption()".to_string());
            continue;
        }
        let name = value_name(&p.name);
        write!(
            params,
            ", {name}: {}",
            crate::host_calls::param_type(world, &p.ty)?
        )?;
        args.push(name);
    }
    let call = format!(
        "{}.{}({})",
        value_name(&interface.name),
        value_name(&f.name),
        args.join(", ")
    );
    let (answer, body) = match world.fallible(f) {
        Some(ok) => (
            match ok {
                Some(t) => rust_type(world, None, &t)?,
                None => "()".into(),
            },
            if store {
                format!("store_call!(self.store, release, {call}).await")
            } else {
                format!("call_export!(self.runtime, None, {call})")
            },
        ),
        None => (
            match &f.result {
                Some(t) => rust_type(world, None, t)?,
                None => "()".into(),
            },
            if store {
                format!(
                    "self.store.bounded(async {{ call_export!(infallible &self.store.runtime, Some(self.store.scope(release)), {call}) }}).await"
                )
            } else {
                format!("call_export!(infallible self.runtime, None, {call})")
            },
        ),
    };
    writeln!(
        out,
        "    pub async fn {}(&self{params}) -> Result<{answer}> {{\n        {body}\n    }}",
        value_name(&f.name)
    )?;
    Ok(())
}
