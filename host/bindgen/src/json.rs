//! `host/render-store/src/wit_json.rs`: the one JSON encoding of WIT values
//! (docs/json.md), written out for every type the WIT declares, and
//! `host/render-store/src/json_calls.rs`: every export of the world called with its
//! arguments and answering in that encoding, for the C ABI and the languages on it.
//!
//! The encoding, mechanically from the WIT type: a record is an object with the fields'
//! camelCase names; a variant is `{"tag": case, "val": payload}` (`{"tag": case}`
//! without one); an enum is its case name; an option is its value or `null`; a result
//! is `{"tag": "ok" | "err", "val": …}`; a tuple is an array; `list<u8>` is a standard
//! base64 string; other lists arrays; numbers numbers; strings strings.

use crate::names::{type_name, value_name};
use crate::rust_types::{push_docs, rust_type};
use crate::world::{Interface, World, docs, first_sentence};
use anyhow::{Result, bail};
use heck::ToLowerCamelCase;
use std::fmt::Write as _;
use wit_parser::{Function, Type, TypeDefKind};

/// A field's or parameter's key in the JSON encoding.
pub fn key(wit: &str) -> String {
    wit.to_lower_camel_case()
}

/// `wit_json.rs`.
pub fn types_module(world: &World) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(
        "\n//! The one JSON encoding of WIT values (docs/json.md), for every type the WIT\n\
         //! declares: what the C ABI, and the Go and Python packages on it, take and give.\n\n\
         #![allow(clippy::all)]\n\n\
         use crate::json_encoding::{JsonError, NULL, WitJson, array, bytes_from_json, bytes_json, field, integer, object, string, tag_of, tagged};\n\
         use serde_json::{Map, Value};\n",
    );
    out.push_str(&crate::host_calls::type_imports(world));
    for interface in world.interfaces() {
        for (name, id) in world.declared_types(interface) {
            let def = &world.resolve.types[id];
            let path = format!("{}::{}", value_name(&interface.name), type_name(&name));
            let (encode, decode) = match &def.kind {
                TypeDefKind::Record(r) => {
                    let mut enc = String::from("let mut m = Map::new();\n");
                    let mut dec = format!(
                        "let o = object(value, at, &[{}])?;\nOk({path} {{\n",
                        r.fields
                            .iter()
                            .map(|f| format!("\"{}\"", key(&f.name)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    for f in &r.fields {
                        let k = key(&f.name);
                        let field_name = value_name(&f.name);
                        writeln!(
                            enc,
                            "m.insert(\"{k}\".into(), {});",
                            encode_expr(world, &f.ty, &format!("&self.{field_name}"), 0)?
                        )?;
                        writeln!(
                            dec,
                            "{field_name}: {{ let at = &format!(\"{{at}}.{k}\"); let value = field(o, \"{k}\"); {}? }},",
                            decode_expr(world, &f.ty, 0)?
                        )?;
                    }
                    enc.push_str("Value::Object(m)");
                    dec.push_str("})");
                    (enc, dec)
                }
                TypeDefKind::Variant(v) => {
                    let mut enc = String::from("match self {\n");
                    let mut dec =
                        String::from("let (tag, val) = tag_of(value, at)?;\nmatch tag {\n");
                    for c in &v.cases {
                        let case = type_name(&c.name);
                        match &c.ty {
                            Some(t) => {
                                writeln!(
                                    enc,
                                    "{path}::{case}(x) => tagged(\"{}\", Some({})),",
                                    c.name,
                                    encode_expr(world, t, "x", 0)?
                                )?;
                                writeln!(
                                    dec,
                                    "\"{}\" => {{ let at = &format!(\"{{at}}.val\"); let value = val.unwrap_or(&NULL); Ok({path}::{case}({}?)) }},",
                                    c.name,
                                    decode_expr(world, t, 0)?
                                )?;
                            }
                            None => {
                                writeln!(enc, "{path}::{case} => tagged(\"{}\", None),", c.name)?;
                                writeln!(dec, "\"{}\" => Ok({path}::{case}),", c.name)?;
                            }
                        }
                    }
                    enc.push('}');
                    let cases: Vec<&str> = v.cases.iter().map(|c| c.name.as_str()).collect();
                    writeln!(
                        dec,
                        "_ => Err(JsonError::new(at, \"a tag of {}\")),\n}}",
                        cases.join(", ")
                    )?;
                    (enc, dec)
                }
                TypeDefKind::Enum(e) => {
                    let mut enc = String::from("Value::String(match self {\n");
                    let mut dec = String::from("match string(value, at)?.as_str() {\n");
                    for c in &e.cases {
                        let case = type_name(&c.name);
                        writeln!(enc, "{path}::{case} => \"{}\",", c.name)?;
                        writeln!(dec, "\"{}\" => Ok({path}::{case}),", c.name)?;
                    }
                    enc.push_str("}.into())");
                    let cases: Vec<&str> = e.cases.iter().map(|c| c.name.as_str()).collect();
                    writeln!(
                        dec,
                        "_ => Err(JsonError::new(at, \"one of {}\")),\n}}",
                        cases.join(", ")
                    )?;
                    (enc, dec)
                }
                _ => continue,
            };
            if let Some(d) = docs(&def.docs) {
                push_docs(
                    &mut out,
                    "",
                    &format!("`{}.{name}`: {}.", interface.name, first_sentence(d)),
                );
            }
            writeln!(
                out,
                "\nimpl WitJson for {path} {{\n\
                 fn to_json(&self) -> Value {{\n{encode}\n}}\n\
                 fn from_json(value: &Value, at: &str) -> Result<Self, JsonError> {{\n{decode}\n}}\n}}"
            )?;
        }
    }
    Ok(out)
}

/// Code making the JSON `Value` of `expr`, a reference to a value of type `t`.
pub fn encode_expr(world: &World, t: &Type, expr: &str, depth: usize) -> Result<String> {
    let x = format!("x{depth}");
    Ok(match t {
        Type::Bool => format!("Value::Bool(*{expr})"),
        Type::U8
        | Type::U16
        | Type::U32
        | Type::U64
        | Type::S8
        | Type::S16
        | Type::S32
        | Type::S64 => format!("Value::from(*{expr})"),
        Type::String => format!("Value::String(({expr}).clone())"),
        Type::Id(id) => {
            let def = &world.resolve.types[*id];
            if def.name.is_some() && !is_alias(world, *id) {
                return Ok(format!("({expr}).to_json()"));
            }
            match &def.kind {
                TypeDefKind::Type(inner) => encode_expr(world, inner, expr, depth)?,
                TypeDefKind::List(Type::U8) => format!("bytes_json({expr})"),
                TypeDefKind::List(inner) => format!(
                    "Value::Array(({expr}).iter().map(|{x}| {}).collect())",
                    encode_expr(world, inner, &x, depth + 1)?
                ),
                TypeDefKind::Option(inner) => format!(
                    "match {expr} {{ Some({x}) => {}, None => Value::Null }}",
                    encode_expr(world, inner, &x, depth + 1)?
                ),
                TypeDefKind::Result(r) => {
                    let side = |t: &Option<Type>| -> Result<String> {
                        Ok(match t {
                            Some(t) => format!("Some({})", encode_expr(world, t, &x, depth + 1)?),
                            None => "None".into(),
                        })
                    };
                    let ok_pat = if r.ok.is_some() {
                        x.clone()
                    } else {
                        "_".into()
                    };
                    let err_pat = if r.err.is_some() {
                        x.clone()
                    } else {
                        "_".into()
                    };
                    format!(
                        "match {expr} {{ Ok({ok_pat}) => tagged(\"ok\", {}), Err({err_pat}) => tagged(\"err\", {}) }}",
                        side(&r.ok)?,
                        side(&r.err)?
                    )
                }
                TypeDefKind::Tuple(tuple) => {
                    let parts = tuple
                        .types
                        .iter()
                        .enumerate()
                        .map(|(i, t)| encode_expr(world, t, &format!("&({expr}).{i}"), depth + 1))
                        .collect::<Result<Vec<_>>>()?;
                    format!("Value::Array(vec![{}])", parts.join(", "))
                }
                other => bail!("a {} has no JSON encoding here", other.as_str()),
            }
        }
        other => bail!("{other:?} has no JSON encoding here"),
    })
}

/// Code making a `Result<T, JsonError>` from `value: &Value` at the path `at: &str`.
pub fn decode_expr(world: &World, t: &Type, depth: usize) -> Result<String> {
    let x = format!("x{depth}");
    let i = format!("i{depth}");
    Ok(match t {
        Type::Bool => "value.as_bool().ok_or_else(|| JsonError::new(at, \"true or false\"))".into(),
        Type::U8
        | Type::U16
        | Type::U32
        | Type::U64
        | Type::S8
        | Type::S16
        | Type::S32
        | Type::S64 => "integer(value, at)".into(),
        Type::String => "string(value, at)".into(),
        Type::Id(id) => {
            let def = &world.resolve.types[*id];
            if def.name.is_some() && !is_alias(world, *id) {
                return Ok(format!(
                    "<{} as WitJson>::from_json(value, at)",
                    rust_type(world, None, t)?
                ));
            }
            match &def.kind {
                TypeDefKind::Type(inner) => decode_expr(world, inner, depth)?,
                TypeDefKind::List(Type::U8) => "bytes_from_json(value, at)".into(),
                TypeDefKind::List(inner) => format!(
                    "array(value, at)?.iter().enumerate().map(|({i}, {x})| {{ let at = &format!(\"{{at}}[{{{i}}}]\"); let value = {x}; {} }}).collect::<Result<Vec<_>, JsonError>>()",
                    decode_expr(world, inner, depth + 1)?
                ),
                TypeDefKind::Option(inner) => format!(
                    "match value {{ Value::Null => Ok(None), _ => ({}).map(Some) }}",
                    decode_expr(world, inner, depth + 1)?
                ),
                TypeDefKind::Result(r) => {
                    let side = |t: &Option<Type>, tag: &str| -> Result<String> {
                        Ok(match t {
                            Some(t) => format!(
                                "{{ let at = &format!(\"{{at}}.val\"); let value = val.unwrap_or(&NULL); ({}).map({tag}) }}",
                                decode_expr(world, t, depth + 1)?
                            ),
                            None => format!("Ok({tag}(()))"),
                        })
                    };
                    format!(
                        "(|| {{ let (tag, val) = tag_of(value, at)?; match tag {{ \"ok\" => Ok({}?), \"err\" => Ok({}?), _ => Err(JsonError::new(at, \"a tag of ok, err\")) }} }})()",
                        side(&r.ok, "Ok")?,
                        side(&r.err, "Err")?
                    )
                }
                TypeDefKind::Tuple(tuple) => {
                    let n = tuple.types.len();
                    let parts = tuple
                        .types
                        .iter()
                        .enumerate()
                        .map(|(k, t)| {
                            Ok(format!(
                                "{{ let at = &format!(\"{{at}}[{k}]\"); let value = &{x}[{k}]; {}? }}",
                                decode_expr(world, t, depth + 1)?
                            ))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    format!(
                        "(|| {{ let {x} = array(value, at)?; if {x}.len() != {n} {{ return Err(JsonError::new(at, \"an array of {n}\")); }} Ok(({},)) }})()",
                        parts.join(", ")
                    )
                }
                other => bail!("a {} has no JSON encoding here", other.as_str()),
            }
        }
        other => bail!("{other:?} has no JSON encoding here"),
    })
}

/// Whether a named type is only another name for an anonymous one (`type data =
/// list<u8>`): it has no `WitJson` of its own.
fn is_alias(world: &World, id: wit_parser::TypeId) -> bool {
    let def = &world.resolve.types[world.declared(id)];
    !matches!(
        def.kind,
        TypeDefKind::Record(_) | TypeDefKind::Variant(_) | TypeDefKind::Enum(_)
    )
}

/// The expression that passes the decoded variable `var` of type `t` to the typed call.
fn argument(world: &World, t: &Type, var: &str) -> String {
    match t {
        Type::String => format!("&{var}"),
        Type::Id(id) => {
            let def = &world.resolve.types[world.declared(*id)];
            match &def.kind {
                TypeDefKind::Enum(_) => var.into(),
                TypeDefKind::Type(inner) => argument(world, inner, var),
                TypeDefKind::Option(inner) => match inner {
                    Type::String => format!("{var}.as_deref()"),
                    Type::Id(_) => {
                        let inner_def = &world.resolve.types[world.declared(match inner {
                            Type::Id(i) => *i,
                            _ => unreachable!(),
                        })];
                        if matches!(inner_def.kind, TypeDefKind::Enum(_)) {
                            var.into()
                        } else {
                            format!("{var}.as_ref()")
                        }
                    }
                    _ => var.into(),
                },
                _ => format!("&{var}"),
            }
        }
        _ => var.into(),
    }
}

/// `json_calls.rs`.
pub fn calls_module(world: &World) -> Result<String> {
    let mut out = crate::banner("//");
    out.push_str(
        "\n//! Every export of the world called with its arguments as a JSON object and\n\
         //! answering in JSON, in the one encoding of WIT values (docs/json.md): the C ABI's\n\
         //! `rs_call_*` functions, and the Go and Python packages on them. A store function\n\
         //! is given the store's own encryption and runs within the store's bounds.\n\n\
         #![allow(clippy::all, unused_variables, unused_imports)]\n\n\
         use super::RenderStore;\n\
         use crate::json_encoding::{JsonArgs, JsonError, NULL, WitJson, array, bytes_from_json, bytes_json, integer, string, tag_of, tagged};\n\
         use crate::{Result, Runtime};\n\
         use serde_json::Value;\n",
    );
    out.push_str(&crate::host_calls::type_imports(world));
    let mut pure = Vec::new();
    let mut stored = Vec::new();
    for interface in &world.exports {
        for f in world.functions(interface) {
            let is_store = f.params.iter().any(|p| p.name == "release")
                && f.params.iter().any(|p| p.name == "encryption")
                || interface.name == "store";
            if is_store {
                stored.push((interface, f));
            } else {
                pure.push((interface, f));
            }
        }
    }
    let names = |list: &[(&Interface, &Function)]| {
        list.iter()
            .map(|(i, f)| format!("\"{}.{}\"", i.name, f.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(
        out,
        "\n/// The functions [`Runtime::call_json`] takes, as `interface.function`.\npub const RUNTIME_FUNCTIONS: &[&str] = &[{}];\n\n/// The functions [`RenderStore::call_json`] takes, as `interface.function`.\npub const STORE_FUNCTIONS: &[&str] = &[{}];",
        names(&pure),
        names(&stored)
    )?;
    out.push_str(
        "\nimpl Runtime {\n\
         \x20   /// Calls the export `function` (`logic.canonical`, one of [`RUNTIME_FUNCTIONS`])\n\
         \x20   /// with `args`, an object of its parameters by their camelCase names, and gives\n\
         \x20   /// its answer, both in the JSON encoding of WIT values (docs/json.md). An\n\
         \x20   /// `error` the function returns is the call's error.\n\
         \x20   pub async fn call_json(&self, function: &str, args: &Value) -> Result<Value> {\n\
         \x20       let mut args = JsonArgs::new(function, args)?;\n\
         \x20       match function {\n",
    );
    for (i, f) in &pure {
        arm(world, i, f, false, &mut out)?;
    }
    out.push_str(
        "            _ => Err(crate::Error::InvalidInput(format!(\n\
         \x20               \"{function:?} is not a function of the component's logic or trace interfaces; they are: {}\",\n\
         \x20               RUNTIME_FUNCTIONS.join(\", \")\n\
         \x20           ))),\n        }\n    }\n}\n",
    );
    out.push_str(
        "\nimpl RenderStore {\n\
         \x20   /// Calls the store export `function` (`store.blame-object`, one of\n\
         \x20   /// [`STORE_FUNCTIONS`]) on this store with `args`, an object of its parameters by\n\
         \x20   /// their camelCase names but `encryption` (the store's own keyring and rule), and\n\
         \x20   /// gives its answer, both in the JSON encoding of WIT values (docs/json.md). The\n\
         \x20   /// call runs within the store's bounds, scoped to the release it names.\n\
         \x20   pub async fn call_json(&self, function: &str, args: &Value) -> Result<Value> {\n\
         \x20       let mut args = JsonArgs::new(function, args)?;\n\
         \x20       match function {\n",
    );
    for (i, f) in &stored {
        arm(world, i, f, true, &mut out)?;
    }
    out.push_str(
        "            _ => Err(crate::Error::InvalidInput(format!(\n\
         \x20               \"{function:?} is not a function of the component's store interface; it has: {}\",\n\
         \x20               STORE_FUNCTIONS.join(\", \")\n\
         \x20           ))),\n        }\n    }\n}\n",
    );
    Ok(out)
}

fn arm(world: &World, i: &Interface, f: &Function, store: bool, out: &mut String) -> Result<()> {
    writeln!(out, "            \"{}.{}\" => {{", i.name, f.name)?;
    let mut call_args = Vec::new();
    for p in &f.params {
        let var = value_name(&p.name);
        if store && p.name == "encryption" {
            call_args.push("&self.encryption()".to_string());
            continue;
        }
        writeln!(
            out,
            "                let {var}: {} = {{ let (value, at) = args.take(\"{}\"); let at = &at; {}? }};",
            rust_type(world, None, &p.ty)?,
            key(&p.name),
            decode_expr(world, &p.ty, 0)?
        )?;
        call_args.push(argument(world, &p.ty, &var));
    }
    out.push_str("                args.finish()?;\n");
    let call_args: Vec<String> = call_args
        .into_iter()
        .filter(|a| a != "&self.encryption()")
        .collect();
    let invoke = if store {
        format!(
            "self.calls().{}({}).await?",
            value_name(&f.name),
            call_args.join(", ")
        )
    } else {
        format!(
            "self.{}().{}({}).await?",
            value_name(&i.name),
            value_name(&f.name),
            call_args.join(", ")
        )
    };
    let answer_type = match world.fallible(f) {
        Some(ok) => ok,
        None => f.result,
    };
    writeln!(out, "                let answer = {invoke};")?;
    match answer_type {
        Some(t) => writeln!(
            out,
            "                Ok({})",
            encode_expr(world, &t, "&answer", 0)?
        )?,
        None => writeln!(
            out,
            "                let () = answer;\n                Ok(Value::Null)"
        )?,
    }
    out.push_str("            }\n");
    Ok(())
}
