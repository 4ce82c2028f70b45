//! `host/render-store/src/runtime/world.rs`: the component's world as the host calls
//! it. Each export is an async method taking and giving the guest's WIT types (with
//! the `component-type` derives), looked up and type-checked once when the component
//! loads, so a component built from another WIT is refused then, naming what differs.
//! The bucket import is a trait the host implements and a function that puts it in a
//! linker.

use crate::names::value_name;
use crate::rust_types::{push_docs, rust_type};
use crate::world::{Interface, World, docs, first_sentence};
use anyhow::Result;
use heck::ToUpperCamelCase;
use std::fmt::Write as _;
use wit_parser::{Function, Type, TypeDefKind};

/// Where the guest's generated types are, from the host.
const TYPES: &str = "render_store_guest::wit";

/// The `use` lines that bring each interface's module of the guest's WIT types into
/// scope by its name (`types::GcPlan`), as every generated host module names them.
pub fn type_imports(world: &World) -> String {
    world
        .interfaces()
        .filter(|i| !world.declared_types(i).is_empty())
        .map(|i| format!("use {TYPES}::{};\n", value_name(&i.name)))
        .collect()
}

/// The whole module.
pub fn module(world: &World) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(
        "\n//! The component's world as the host calls it: each export an async method over\n\
         //! the guest's WIT types, looked up and type-checked when the component loads (a\n\
         //! component built from another WIT is refused then, naming what differs), and the\n\
         //! bucket import as a trait the host implements.\n\n\
         #![allow(dead_code, clippy::too_many_arguments)]\n\n\
         use wasmtime::component::types::{ComponentFunc, ComponentItem};\n\
         use wasmtime::component::{Component, ComponentExportIndex, Instance, InstancePre, Linker};\n\
         use wasmtime::StoreContextMut;\n\n",
    );
    out.push_str(&crate::host_calls::type_imports(world));
    for interface in world.exports.iter().filter(|i| has_functions(world, i)) {
        writeln!(
            out,
            "\n/// The name the component exports `{0}` under.\npub(crate) const {1}: &str = \"{2}\";",
            interface.name,
            constant(&interface.name),
            interface.qualified
        )?;
    }
    for interface in &world.imports {
        writeln!(
            out,
            "\n/// The name the component imports `{0}` under.\npub(crate) const {1}: &str = \"{2}\";",
            interface.name,
            constant(&interface.name),
            interface.qualified
        )?;
    }
    exports(world, &mut out)?;
    for interface in &world.imports {
        import(world, interface, &mut out)?;
    }
    out.push_str(HELPERS);
    Ok(out)
}

fn has_functions(world: &World, interface: &Interface) -> bool {
    world.functions(interface).next().is_some()
}

fn constant(name: &str) -> String {
    name.to_uppercase().replace('-', "_")
}

fn camel(name: &str) -> String {
    name.to_upper_camel_case()
}

/// The type a parameter is passed as: borrowed where the value is large.
pub fn param_type(world: &World, t: &Type) -> Result<String> {
    Ok(match t {
        Type::String => "&str".into(),
        Type::Id(id) => {
            let def = &world.resolve.types[world.declared(*id)];
            match &def.kind {
                TypeDefKind::Enum(_) => rust_type(world, None, t)?,
                TypeDefKind::List(Type::U8) => "&[u8]".into(),
                TypeDefKind::List(inner) => format!("&[{}]", rust_type(world, None, inner)?),
                TypeDefKind::Option(inner) => {
                    let inner = param_type(world, inner)?;
                    format!("Option<{inner}>")
                }
                TypeDefKind::Type(inner) => param_type(world, inner)?,
                _ => format!("&{}", rust_type(world, None, t)?),
            }
        }
        _ => rust_type(world, None, t)?,
    })
}

/// A function's parameter list as a tuple type, borrowed.
fn params_tuple(world: &World, f: &Function) -> Result<String> {
    let types = f
        .params
        .iter()
        .map(|p| param_type(world, &p.ty))
        .collect::<Result<Vec<_>>>()?;
    Ok(tuple(&types))
}

fn result_type(world: &World, f: &Function) -> Result<String> {
    Ok(match &f.result {
        Some(t) => rust_type(world, None, t)?,
        None => "()".into(),
    })
}

fn tuple(types: &[String]) -> String {
    match types {
        [] => "()".into(),
        [one] => format!("({one},)"),
        _ => format!("({})", types.join(", ")),
    }
}

fn results_tuple(world: &World, f: &Function) -> Result<String> {
    Ok(match &f.result {
        Some(_) => tuple(&[result_type(world, f)?]),
        None => "()".into(),
    })
}

fn exports(world: &World, out: &mut String) -> Result<()> {
    let called: Vec<&Interface> = world
        .exports
        .iter()
        .filter(|i| has_functions(world, i))
        .collect();
    out.push_str(
        "\n/// Where every export the host calls is in the component, found and type-checked\n\
         /// once, when the component loads.\n#[derive(Clone)]\npub(crate) struct Exports {\n",
    );
    for i in &called {
        writeln!(
            out,
            "    {}: {}Indices,",
            value_name(&i.name),
            camel(&i.name)
        )?;
    }
    out.push_str("}\n");
    for i in &called {
        writeln!(
            out,
            "\n/// Where each function of `{}` is in the component.\n#[derive(Clone)]\nstruct {}Indices {{",
            i.name,
            camel(&i.name)
        )?;
        for f in world.functions(i) {
            writeln!(out, "    {}: ComponentExportIndex,", value_name(&f.name))?;
        }
        out.push_str("}\n");
    }
    out.push_str(
        "\nimpl Exports {\n\
         \x20   /// Finds every export in the component `pre` instantiates and checks its type\n\
         \x20   /// against the one the host calls it with. A component built from another WIT\n\
         \x20   /// is refused here, with the export and the difference named.\n\
         \x20   pub(crate) fn new<T>(pre: &InstancePre<T>) -> wasmtime::Result<Exports> {\n\
         \x20       let component = pre.component();\n\
         \x20       let types = pre.instance_type();\n",
    );
    for i in &called {
        writeln!(
            out,
            "        let {0} = interface(component, {1})?;",
            value_name(&i.name),
            constant(&i.name)
        )?;
    }
    out.push_str("        Ok(Exports {\n");
    for i in &called {
        writeln!(
            out,
            "            {}: {}Indices {{",
            value_name(&i.name),
            camel(&i.name)
        )?;
        for f in world.functions(i) {
            writeln!(
                out,
                "                {field}: {{\n\
                 \x20                   let (func, index) = function(component, &{iface}, \"{iname}\", \"{fname}\")?;\n\
                 \x20                   check(func.typecheck::<{params}, {results}>(&types), \"{iname}.{fname}\")?;\n\
                 \x20                   index\n\
                 \x20               }},",
                field = value_name(&f.name),
                iface = value_name(&i.name),
                iname = i.name,
                fname = f.name,
                params = params_tuple(world, f)?,
                results = results_tuple(world, f)?,
            )?;
        }
        out.push_str("            },\n");
    }
    out.push_str("        })\n    }\n\n");
    out.push_str(
        "    /// The exports of `instance`, an instance of the component these were found in.\n\
         \x20   pub(crate) fn bind(&self, instance: Instance) -> Bound<'_> {\n\
         \x20       Bound { exports: self, instance }\n\
         \x20   }\n}\n\n\
         /// The exports of one instance, by interface.\n\
         pub(crate) struct Bound<'a> {\n\
         \x20   exports: &'a Exports,\n\
         \x20   instance: Instance,\n}\n\nimpl<'a> Bound<'a> {\n",
    );
    for i in &called {
        writeln!(
            out,
            "    /// The functions of `{0}`.\n    pub(crate) fn {1}(&self) -> {2}Exports<'a> {{\n        {2}Exports {{ indices: &self.exports.{1}, instance: self.instance }}\n    }}",
            i.name,
            value_name(&i.name),
            camel(&i.name)
        )?;
    }
    out.push_str("}\n");
    for i in &called {
        writeln!(
            out,
            "\n/// The functions of `{0}` of one instance.\npub(crate) struct {1}Exports<'a> {{\n    indices: &'a {1}Indices,\n    instance: Instance,\n}}\n\nimpl {1}Exports<'_> {{",
            i.name,
            camel(&i.name)
        )?;
        let mut first = true;
        for f in world.functions(i) {
            if !first {
                out.push('\n');
            }
            first = false;
            let doc = docs(&f.docs)
                .map(first_sentence)
                .unwrap_or_else(|| format!("`{}.{}`", i.name, f.name));
            push_docs(out, "    ", &format!("{doc}. (`{}.{}`)", i.name, f.name));
            let mut args = String::new();
            let mut names = Vec::new();
            for p in &f.params {
                let name = value_name(&p.name);
                write!(args, ", {name}: {}", param_type(world, &p.ty)?)?;
                names.push(name);
            }
            let call_args = tuple(&names);
            let answer = result_type(world, f)?;
            let (bind, value) = match &f.result {
                Some(_) => ("(answer,)", "answer"),
                None => ("()", "()"),
            };
            writeln!(
                out,
                "    pub(crate) async fn {fname}<T: Send + 'static>(&self, store: &mut wasmtime::Store<T>{args}) -> wasmtime::Result<{answer}> {{\n\
                 \x20       let func = self.instance.get_func(&mut *store, self.indices.{fname}).ok_or_else(|| gone(\"{iname}.{wname}\"))?;\n\
                 \x20       let {bind} = func.typed::<{params}, {results}>(&*store)?.call_async(&mut *store, {call_args}).await?;\n\
                 \x20       Ok({value})\n\
                 \x20   }}",
                fname = value_name(&f.name),
                iname = i.name,
                wname = f.name,
                params = params_tuple(world, f)?,
                results = results_tuple(world, f)?,
            )?;
        }
        out.push_str("}\n");
    }
    Ok(())
}

fn import(world: &World, interface: &Interface, out: &mut String) -> Result<()> {
    let trait_name = format!("{}Import", camel(&interface.name));
    let iface_docs = docs(&world.resolve.interfaces[interface.id].docs)
        .map(first_sentence)
        .unwrap_or_default();
    writeln!(
        out,
        "\n/// What the host answers the component's `{0}` calls with: {1}.\npub(crate) trait {trait_name}: Send {{",
        interface.name,
        iface_docs.trim_end_matches('.')
    )?;
    let mut first = true;
    for f in world.functions(interface) {
        if !first {
            out.push('\n');
        }
        first = false;
        if let Some(d) = docs(&f.docs) {
            push_docs(out, "    ", d);
        }
        let mut args = String::new();
        for p in &f.params {
            write!(
                args,
                ", {}: {}",
                value_name(&p.name),
                rust_type(world, None, &p.ty)?
            )?;
        }
        writeln!(
            out,
            "    fn {}(&mut self{args}) -> impl Future<Output = {}> + Send;",
            value_name(&f.name),
            result_type(world, f)?
        )?;
    }
    out.push_str("}\n");
    writeln!(
        out,
        "\n/// Puts the `{0}` import in `linker`, each call answered by the store's data.\npub(crate) fn add_{1}_to_linker<T: {trait_name} + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {{\n    let mut instance = linker.instance({2})?;",
        interface.name,
        value_name(&interface.name),
        constant(&interface.name)
    )?;
    for f in world.functions(interface) {
        let names: Vec<String> = f.params.iter().map(|p| value_name(&p.name)).collect();
        let types = f
            .params
            .iter()
            .map(|p| rust_type(world, None, &p.ty))
            .collect::<Result<Vec<_>>>()?;
        writeln!(
            out,
            "    instance.func_wrap_async(\"{wname}\", |mut store: StoreContextMut<'_, T>, {pat}: {ty}| {{\n\
             \x20       Box::new(async move {{ Ok((store.data_mut().{fname}({args}).await,)) }})\n\
             \x20   }})?;",
            wname = f.name,
            fname = value_name(&f.name),
            pat = tuple(&names),
            ty = tuple(&types),
            args = names.join(", "),
        )?;
    }
    out.push_str("    Ok(())\n}\n");
    Ok(())
}

const HELPERS: &str = r#"
/// The export `name` of the component, which must be an interface.
fn interface(component: &Component, name: &str) -> wasmtime::Result<ComponentExportIndex> {
    match component.get_export(None, name) {
        Some((ComponentItem::ComponentInstance(_), index)) => Ok(index),
        Some(_) => Err(wasmtime::format_err!(
            "the component's export `{name}` is not an interface: it was built from another WIT"
        )),
        None => Err(wasmtime::format_err!(
            "the component exports no `{name}`: it was built from another WIT"
        )),
    }
}

/// The function `name` of the exported interface `interface` (named `iname`).
fn function(
    component: &Component,
    interface: &ComponentExportIndex,
    iname: &str,
    name: &str,
) -> wasmtime::Result<(ComponentFunc, ComponentExportIndex)> {
    match component.get_export(Some(interface), name) {
        Some((ComponentItem::ComponentFunc(func), index)) => Ok((func, index)),
        Some(_) => Err(wasmtime::format_err!(
            "the component's `{iname}.{name}` is not a function: it was built from another WIT"
        )),
        None => Err(wasmtime::format_err!(
            "the component's `{iname}` has no function `{name}`: it was built from another WIT"
        )),
    }
}

/// A type check's failure, said as the difference between the component and the host.
fn check(checked: wasmtime::Result<()>, name: &str) -> wasmtime::Result<()> {
    checked.map_err(|e| {
        wasmtime::format_err!(
            "the component's `{name}` differs from the WIT this host was built with: {e:#}"
        )
    })
}

/// An export found when the component loaded but missing from its instance: the
/// instance is not of that component.
fn gone(name: &str) -> wasmtime::Error {
    wasmtime::format_err!("the instance has no `{name}`: it is not of the component the host loaded")
}
"#;
