//! The component's main core module, the one holding its code and memory (the others
//! are wit-component's shims for indirect calls, which `abi.mjs` does not need), and
//! what the package checks and keeps of it: the core type of every function it imports
//! and exports, and the value types of its mutable globals.

use std::collections::BTreeMap;
use std::ops::Range;

use anyhow::{Context, Result, bail};
use wasmparser::{CompositeInnerType, ExternalKind, Parser, Payload, TypeRef, ValType};

use crate::json::Json;

/// A core function type: its parameters' and results' value types.
pub type Signature = (Vec<&'static str>, Vec<&'static str>);

/// What the package keeps of the main core module.
pub struct CoreModule<'a> {
    /// The module's bytes, as they sit in the component.
    pub bytes: &'a [u8],
    /// Each imported function by `module#name`, with its core type.
    pub imports: BTreeMap<String, Signature>,
    /// Each exported function by name, with its core type; a memory as `None`.
    pub exports: BTreeMap<String, Option<Signature>>,
    /// The value type of each mutable global the module defines, in order.
    pub mutable_globals: Vec<&'static str>,
    /// What the module imports that is not a function.
    other_imports: Vec<String>,
}

/// The core module at the component's top level that exports a memory: exactly one
/// must, since the canonical ABI lowers every value into that one memory.
pub fn main_module(component: &[u8]) -> Result<CoreModule<'_>> {
    let mut with_memory = Vec::new();
    for range in top_level_modules(component)? {
        let module = read(&component[range])?;
        if module.exports.values().any(Option::is_none) {
            with_memory.push(module);
        }
    }
    match with_memory.len() {
        1 => {
            let module = with_memory.pop().expect("one module");
            if let Some(at) = module.other_imports.first() {
                // abi.mjs instantiates the module with functions alone.
                bail!("the main core module imports {at}, which is not a function");
            }
            Ok(module)
        }
        0 => bail!("no core module of the component exports a memory"),
        n => bail!("{n} core modules of the component export a memory; expected one"),
    }
}

fn top_level_modules(component: &[u8]) -> Result<Vec<Range<usize>>> {
    let mut ranges = Vec::new();
    // Nested modules and components are parsed through in place: each ends with its own
    // `End`, and only the modules seen at depth zero are the component's own.
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(component) {
        match payload.context("the component is not valid WebAssembly")? {
            Payload::ModuleSection {
                unchecked_range, ..
            } => {
                if depth == 0 {
                    let to_usize =
                        |at: u64| usize::try_from(at).context("a module past the address space");
                    ranges.push(to_usize(unchecked_range.start)?..to_usize(unchecked_range.end)?);
                }
                depth += 1;
            }
            Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if ranges.is_empty() {
        bail!("the component holds no core module");
    }
    Ok(ranges)
}

fn value_type(t: &ValType) -> Result<&'static str> {
    Ok(match t {
        ValType::I32 => "i32",
        ValType::I64 => "i64",
        ValType::F32 => "f32",
        ValType::F64 => "f64",
        ValType::V128 => "v128",
        ValType::Ref(r) => {
            bail!("a core value of reference type {r}, which the package does not pass")
        }
    })
}

fn read(bytes: &[u8]) -> Result<CoreModule<'_>> {
    let mut types: Vec<Option<Signature>> = Vec::new();
    let mut functions: Vec<Option<Signature>> = Vec::new();
    let mut module = CoreModule {
        bytes,
        imports: BTreeMap::new(),
        exports: BTreeMap::new(),
        mutable_globals: Vec::new(),
        other_imports: Vec::new(),
    };
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.context("a core module of the component is not valid WebAssembly")? {
            Payload::TypeSection(section) => {
                for group in section {
                    for sub in group?.into_types() {
                        types.push(match &sub.composite_type.inner {
                            CompositeInnerType::Func(f) => Some((
                                f.params().iter().map(value_type).collect::<Result<_>>()?,
                                f.results().iter().map(value_type).collect::<Result<_>>()?,
                            )),
                            _ => None,
                        });
                    }
                }
            }
            Payload::ImportSection(section) => {
                for import in section.into_imports() {
                    let import = import?;
                    let at = format!("{}#{}", import.module, import.name);
                    let TypeRef::Func(index) = import.ty else {
                        // A shim imports its table; the main module must not (see below).
                        module.other_imports.push(at);
                        continue;
                    };
                    let signature = function_type(&types, index)?;
                    functions.push(Some(signature.clone()));
                    module.imports.insert(at, signature);
                }
            }
            Payload::FunctionSection(section) => {
                for index in section {
                    functions.push(Some(function_type(&types, index?)?));
                }
            }
            Payload::GlobalSection(section) => {
                for global in section {
                    let global = global?;
                    if global.ty.mutable {
                        module
                            .mutable_globals
                            .push(value_type(&global.ty.content_type)?);
                    }
                }
            }
            Payload::ExportSection(section) => {
                for export in section {
                    let export = export?;
                    let exported = match export.kind {
                        ExternalKind::Func => Some(
                            functions
                                .get(export.index as usize)
                                .cloned()
                                .flatten()
                                .with_context(|| {
                                    format!("export {} names no function", export.name)
                                })?,
                        ),
                        ExternalKind::Memory => None,
                        // Tables and globals are the module's own business.
                        _ => continue,
                    };
                    module.exports.insert(export.name.to_owned(), exported);
                }
            }
            _ => {}
        }
    }
    Ok(module)
}

fn function_type(types: &[Option<Signature>], index: u32) -> Result<Signature> {
    types
        .get(index as usize)
        .cloned()
        .flatten()
        .with_context(|| format!("type {index} of the core module is not a function type"))
}

impl CoreModule<'_> {
    /// `{imports: {"module#name": [params, results]}, exports: {name: [params, results]
    /// | "memory"}}`, for the build to check against the signatures `abi.mjs` computes.
    pub fn signatures(&self) -> Json {
        let signature = |(params, results): &Signature| {
            let list =
                |types: &[&str]| Json::Array(types.iter().map(|t| Json::string(t)).collect());
            Json::Array(vec![list(params), list(results)])
        };
        Json::object([
            (
                "imports",
                Json::Object(
                    self.imports
                        .iter()
                        .map(|(k, s)| (k.clone(), signature(s)))
                        .collect(),
                ),
            ),
            (
                "exports",
                Json::Object(
                    self.exports
                        .iter()
                        .map(|(k, s)| {
                            (
                                k.clone(),
                                s.as_ref().map_or(Json::string("memory"), signature),
                            )
                        })
                        .collect(),
                ),
            ),
        ])
    }
}
