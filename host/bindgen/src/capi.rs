//! `host/capi/src/calls.rs`: one C entry point per function the world exports, each
//! taking its arguments and giving its answer as JSON in the one encoding of WIT values
//! (docs/json.md). cbindgen writes them into the header from there.

use crate::json::key;
use crate::names::value_name;
use crate::world::{World, docs, first_sentence};
use anyhow::Result;
use std::fmt::Write as _;

/// The C name of the entry point of `interface.function`.
pub fn c_name(interface: &str, function: &str) -> String {
    format!("rs_call_{}_{}", value_name(interface), value_name(function))
}

/// The whole module.
pub fn module(world: &World) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(
        "\n//! One entry point per function the component exports, generated from the WIT: the\n\
         //! arguments a JSON object of the WIT parameters by their camelCase names, the answer\n\
         //! JSON, both in the one encoding of WIT values (docs/json.md). A store function\n\
         //! takes the store's own keyring and rule for its `encryption` parameter.\n\n\
         use crate::error::rs_error;\n\
         use crate::options::rs_options;\n\
         use crate::store::rs_store;\n\
         use crate::value::rs_buf;\n",
    );
    for interface in &world.exports {
        for f in world.functions(interface) {
            let what = docs(&f.docs).map(first_sentence).unwrap_or_default();
            let params: Vec<String> = f
                .params
                .iter()
                .filter(|p| !(interface.name == "store" && p.name == "encryption"))
                .map(|p| format!("`{}`", key(&p.name)))
                .collect();
            let store = interface.name == "store";
            writeln!(
                out,
                "\n/// `{}.{}`: {what}. `args` (`args_len` bytes) is a JSON object of {}; `*result` receives the answer's JSON. {}\n///\n/// # Safety\n///\n/// {} `args` NULL with length 0 or `args_len` readable bytes; `result` a buffer to fill.\n#[unsafe(no_mangle)]\npub unsafe extern \"C\" fn {}({}, args: *const u8, args_len: usize, result: *mut rs_buf) -> *mut rs_error {{\n    // SAFETY: the caller keeps the header's rules, which these are.\n    unsafe {{ crate::json_call::{}({}, \"{}.{}\", args, args_len, result) }}\n}}",
                interface.name,
                f.name,
                if params.is_empty() {
                    "no parameter ({} or empty)".to_string()
                } else {
                    params.join(", ")
                },
                if store {
                    "Any thread."
                } else {
                    "Runs with the limits of `options` (NULL: the defaults). Any thread."
                },
                if store {
                    "`store` a store this library made, not freed;"
                } else {
                    "`options` NULL or readable;"
                },
                crate::capi::c_name(&interface.name, &f.name),
                if store {
                    "store: *const rs_store"
                } else {
                    "options: *const rs_options"
                },
                if store { "store" } else { "runtime" },
                if store { "store" } else { "options" },
                interface.name,
                f.name,
            )?;
        }
    }
    Ok(out)
}
