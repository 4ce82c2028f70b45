//! `guest/src/component/bindings.rs`: wit-bindgen's bindings of the world, with every
//! record, variant and enum the WIT declares mapped to the guest's own type in
//! `crate::wit`, so the component's exports take and give the types its logic uses and
//! no record is converted on the guest's side either.

use crate::names::{type_name, value_name};
use crate::world::World;
use anyhow::Result;
use std::fmt::Write as _;
use wit_parser::TypeDefKind;

/// The whole module.
pub fn module(world: &World) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(
        "\n//! wit-bindgen's bindings of the world, every record, variant and enum of the WIT\n\
         //! mapped to the guest's own type in `crate::wit`: the exports take and give the\n\
         //! types the logic uses, and nothing is converted.\n\n\
         wit_bindgen::generate!({\n    world: \"render-store\",\n    path: \"../wit\",\n    with: {\n",
    );
    for interface in world.interfaces() {
        for (name, id) in world.declared_types(interface) {
            let kind = &world.resolve.types[id].kind;
            if !matches!(
                kind,
                TypeDefKind::Record(_) | TypeDefKind::Variant(_) | TypeDefKind::Enum(_)
            ) {
                continue;
            }
            writeln!(
                out,
                "        \"{}/{name}\": crate::wit::{}::{},",
                interface.qualified,
                value_name(&interface.name),
                type_name(&name)
            )?;
        }
    }
    out.push_str("    },\n});\n");
    Ok(out)
}
