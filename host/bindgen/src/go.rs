//! The Go package's layer over the C ABI's generated entry points, from the WIT:
//!
//! - `host/go/wit/types.go`, package `wit` (`convoy.dev/renderstore/wit`): a Go type for
//!   every record, variant, enum and named alias the WIT declares, each marshalling to
//!   and from the one JSON encoding of WIT values (docs/json.md). A package of its own, so
//!   the WIT's names (`HistoryEntry`, `GCPlan`, `ParsedKey`, …) never clash with the
//!   hand-written types of the main package that shape the same values for Go.
//! - `host/go/wit_calls.go`, package `renderstore`: one function per export of `logic`,
//!   `store` and `trace` that has no hand-written counterpart ([`HAND_WRITTEN`]), each
//!   one call of the export's `rs_call_<interface>_<function>` entry point. A store
//!   function is a method of `*Store` (through `Store.call`, so the context's deadline
//!   and cancellation cut it); a `logic` or `trace` function is package-level and takes
//!   the package's `Option`s.
//!
//! The Go spelling: types, fields, cases and functions are the WIT names in CamelCase
//! with Go's initialisms (`gc-plan` → `GCPlan`, `api-version` → `APIVersion`,
//! `sha256-hex` → `SHA256Hex`); parameters lowerCamel (`key-ids` → `keyIDs`), `Arg`
//! appended to a Go keyword or a name the generated body uses (`context` →
//! `contextArg`). Types: `bool`, `uint8` … `int64`, `string`; `list<u8>` `[]byte`
//! (encoding/json's base64 is docs/json.md's); `list<T>` `[]T`; `option<T>` `*T`;
//! records structs with `json:"camelCase"` tags; enums named string types with a
//! constant per case; variants a struct of a `Tag` and one field per case holding that
//! case's payload; `result<T, E>` the generic `wit.Result[T, E]` (`wit.Unit` for `_`);
//! tuples `wit.TupleN`. A function answering `result<T, error>` answers `T` and its
//! `error` is the Go error (`*renderstore.Error`); records and variants are answered
//! by pointer.
//!
//! The output is gofmt's own (the generator aligns what gofmt aligns), so `gofmt -l`
//! and `go vet` pass on it as written.

use crate::Generated;
use crate::capi::c_name;
use crate::hand_written::HandWritten;
use crate::json::key;
use crate::world::{Interface, World, docs, first_sentence};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use wit_parser::{Function, Type, TypeDefKind, TypeId};

/// The generated types, from the repository's root.
const TYPES_PATH: &str = "host/go/wit/types.go";
/// The generated functions.
const CALLS_PATH: &str = "host/go/wit_calls.go";
/// The Go package's folder, whose hand-written files the override table is checked
/// against.
const PACKAGE_DIR: &str = "host/go";
/// The folder of the types' package inside the module.
const TYPES_PACKAGE: &str = "wit";
/// The width doc comments are wrapped at, a tab counted as four columns.
const WIDTH: usize = 90;

/// The exports the package answers with a hand-written function under the name the
/// generated one would have (for `logic.history-count`, the `Store` method of that
/// name), by interface and WIT name, with that function (`Name` or `Store.Name`): each
/// shapes its arguments and answer for Go (namespace and name for a release,
/// `time.Time`, `[][]byte` objects, traces, `int` counts), so it stays and nothing is
/// generated for it. The generator checks that each is declared in the package and that
/// no generated name is.
const HAND_WRITTEN: HandWritten = HandWritten {
    file: "go.rs",
    table: &[
        ("logic", "canonical", "Canonical"),
        ("logic", "render-ref", "RenderRef"),
        ("logic", "yaml-objects", "YAMLObjects"),
        ("logic", "check-objects", "CheckObjects"),
        ("logic", "yaml-canonical", "YAMLCanonical"),
        ("logic", "yaml-render-ref", "YAMLRenderRef"),
        ("logic", "validate-render-ref", "ValidateRenderRef"),
        ("logic", "release-prefix", "ReleasePrefix"),
        ("logic", "render-key", "RenderKey"),
        ("logic", "history-key", "HistoryKey"),
        ("logic", "parse-key", "ParseKey"),
        ("logic", "plan-gc", "PlanGC"),
        ("logic", "diff-renders", "DiffRenders"),
        ("logic", "summarize-history", "SummarizeHistory"),
        ("logic", "effective-keep-history", "EffectiveKeepHistory"),
        ("logic", "history-count", "Store.HistoryCount"),
        ("store", "put-render", "Store.PutRender"),
        ("store", "get-render", "Store.GetRender"),
        ("store", "rekey-release", "Store.RekeyRelease"),
        ("store", "index-release", "Store.IndexRelease"),
        ("store", "has-history-ref", "Store.HasHistoryRef"),
        ("store", "record-history", "Store.RecordHistory"),
        ("store", "gc", "Store.GC"),
        ("store", "delete-release", "Store.DeleteRelease"),
        ("trace", "replay", "Replay"),
    ],
};

/// Words Go spells in capitals (its linters' initialisms, and those the package uses).
const INITIALISMS: &[(&str, &str)] = &[
    ("api", "API"),
    ("gc", "GC"),
    ("http", "HTTP"),
    ("id", "ID"),
    ("ids", "IDs"),
    ("json", "JSON"),
    ("mac", "MAC"),
    ("sha256", "SHA256"),
    ("uri", "URI"),
    ("url", "URL"),
    ("utf8", "UTF8"),
    ("yaml", "YAML"),
];

/// Go's keywords, and the names a generated function's body or signature uses, which a
/// parameter must not take.
const RESERVED: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "fallthrough",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "import",
    "interface",
    "map",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "type",
    "var",
    "answer",
    "any",
    "bool",
    "byte",
    "context",
    "ctx",
    "err",
    "error",
    "false",
    "int16",
    "int32",
    "int64",
    "int8",
    "nil",
    "opts",
    "s",
    "string",
    "true",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "wit",
    "C",
];

/// The Go package's generated files.
pub fn files(root: &Path, world: &World) -> Result<Vec<Generated>> {
    let module = module_path(root)?;
    let hand = hand_written(root)?;
    Ok(vec![
        Generated {
            path: TYPES_PATH,
            contents: types_file(world)?,
        },
        Generated {
            path: CALLS_PATH,
            contents: calls_file(world, &module, &hand)?,
        },
    ])
}

/// The module path `host/go/go.mod` declares.
fn module_path(root: &Path) -> Result<String> {
    let path = root.join(PACKAGE_DIR).join("go.mod");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .find_map(|line| line.trim().strip_prefix("module "))
        .map(|m| m.trim().trim_matches('"').to_string())
        .with_context(|| format!("{} has no module line", path.display()))
}

/// The names the package's own files declare at the top level (`Name`) or as methods
/// (`Type.Name`), the generated file left out.
fn hand_written(root: &Path) -> Result<BTreeSet<String>> {
    let dir = root.join(PACKAGE_DIR);
    let generated = Path::new(CALLS_PATH)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let mut names = BTreeSet::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".go") || name == generated {
            continue;
        }
        let text = std::fs::read_to_string(entry.path())
            .with_context(|| format!("reading {}", entry.path().display()))?;
        if !text
            .lines()
            .any(|l| l.trim() == "package renderstore" || l.starts_with("package renderstore "))
        {
            continue;
        }
        let ident = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let mut block = false;
        for line in text.lines() {
            if block {
                if line.starts_with(')') {
                    block = false;
                } else if let Some(rest) = line.strip_prefix('\t')
                    && !rest.starts_with(['\t', ' ', '/'])
                {
                    for part in rest.split(['=', ' ']).next().unwrap_or("").split(',') {
                        let n = ident(part.trim());
                        if !n.is_empty() {
                            names.insert(n);
                        }
                    }
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("func ") {
                match rest.strip_prefix('(') {
                    Some(inner) => {
                        let Some((receiver, rest)) = inner.split_once(')') else {
                            continue;
                        };
                        let ty = receiver.split_whitespace().last().unwrap_or_default();
                        let ty = ident(ty.trim_start_matches('*'));
                        names.insert(format!("{ty}.{}", ident(rest.trim_start())));
                    }
                    None => {
                        names.insert(ident(rest));
                    }
                }
            } else if let Some(rest) = line
                .strip_prefix("type ")
                .or_else(|| line.strip_prefix("var "))
                .or_else(|| line.strip_prefix("const "))
            {
                if rest.starts_with('(') {
                    block = true;
                } else {
                    names.insert(ident(rest));
                }
            }
        }
    }
    Ok(names)
}

// ---------------------------------------------------------------------------------
// Names.

/// A WIT name's words, lowercased.
fn words(wit: &str) -> Vec<String> {
    wit.trim_start_matches('%')
        .split('-')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// A word as it stands inside a CamelCase name.
fn camel_word(word: &str) -> String {
    if let Some((_, go)) = INITIALISMS.iter().find(|(w, _)| *w == word) {
        return go.to_string();
    }
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// An exported Go name: `gc-plan` → `GCPlan`.
fn exported(wit: &str) -> String {
    words(wit).iter().map(|w| camel_word(w)).collect()
}

/// A parameter's Go name: `key-ids` → `keyIDs`, `context` → `contextArg`.
fn local(wit: &str) -> String {
    let ws = words(wit);
    let mut name = String::new();
    for (i, w) in ws.iter().enumerate() {
        if i == 0 {
            name.push_str(w);
        } else {
            name.push_str(&camel_word(w));
        }
    }
    if RESERVED.contains(&name.as_str()) {
        name.push_str("Arg");
    }
    name
}

// ---------------------------------------------------------------------------------
// Types.

/// What a WIT type is once `use`s and aliases are followed.
#[derive(Clone)]
enum Shape {
    /// A primitive.
    Prim(Type),
    /// A record, variant or enum, by its declaration.
    Named(TypeId),
    List(Type),
    Option(Type),
    Result(Option<Type>, Option<Type>),
    Tuple(Vec<Type>),
}

fn shape(world: &World, t: &Type) -> Result<Shape> {
    let Type::Id(id) = t else {
        return Ok(Shape::Prim(*t));
    };
    let id = world.declared(*id);
    let def = &world.resolve.types[id];
    Ok(match &def.kind {
        TypeDefKind::Record(_) | TypeDefKind::Variant(_) | TypeDefKind::Enum(_) => Shape::Named(id),
        TypeDefKind::Type(inner) => return shape(world, inner),
        TypeDefKind::List(inner) => Shape::List(*inner),
        TypeDefKind::Option(inner) => Shape::Option(*inner),
        TypeDefKind::Result(r) => Shape::Result(r.ok, r.err),
        TypeDefKind::Tuple(t) => Shape::Tuple(t.types.clone()),
        other => bail!("a {} has no Go type here", other.as_str()),
    })
}

/// The Go name of a declared record, variant or enum.
fn named(world: &World, id: TypeId) -> Result<String> {
    let def = &world.resolve.types[world.declared(id)];
    let name = def
        .name
        .as_deref()
        .context("an anonymous type has no Go name")?;
    Ok(exported(name))
}

/// The Go type of `t`, its declared types qualified with `q` (`wit.` outside the
/// types' package, empty inside it).
fn go_type(world: &World, t: &Type, q: &str) -> Result<String> {
    Ok(match shape(world, t)? {
        Shape::Prim(p) => match p {
            Type::Bool => "bool".into(),
            Type::U8 => "uint8".into(),
            Type::U16 => "uint16".into(),
            Type::U32 => "uint32".into(),
            Type::U64 => "uint64".into(),
            Type::S8 => "int8".into(),
            Type::S16 => "int16".into(),
            Type::S32 => "int32".into(),
            Type::S64 => "int64".into(),
            Type::String => "string".into(),
            other => bail!("{other:?} has no Go type here"),
        },
        Shape::Named(id) => format!("{q}{}", named(world, id)?),
        Shape::List(Type::U8) => "[]byte".into(),
        Shape::List(inner) => format!("[]{}", go_type(world, &inner, q)?),
        Shape::Option(inner) => {
            if matches!(shape(world, &inner)?, Shape::Option(_)) {
                bail!("an option of an option has no Go type here (both would be nil)");
            }
            format!("*{}", go_type(world, &inner, q)?)
        }
        Shape::Result(ok, err) => {
            let side = |t: &Option<Type>| -> Result<String> {
                match t {
                    Some(t) => go_type(world, t, q),
                    None => Ok(format!("{q}Unit")),
                }
            };
            format!("{q}Result[{}, {}]", side(&ok)?, side(&err)?)
        }
        Shape::Tuple(types) => {
            let members = types
                .iter()
                .map(|t| go_type(world, t, q))
                .collect::<Result<Vec<_>>>()?;
            format!("{q}Tuple{}[{}]", types.len(), members.join(", "))
        }
    })
}

/// The tuple sizes `t` reaches.
fn tuple_sizes(world: &World, t: &Type, sizes: &mut BTreeSet<usize>) -> Result<()> {
    match shape(world, t)? {
        Shape::Prim(_) | Shape::Named(_) => {}
        Shape::List(inner) | Shape::Option(inner) => tuple_sizes(world, &inner, sizes)?,
        Shape::Result(ok, err) => {
            for t in ok.iter().chain(err.iter()) {
                tuple_sizes(world, t, sizes)?;
            }
        }
        Shape::Tuple(types) => {
            sizes.insert(types.len());
            for t in &types {
                tuple_sizes(world, t, sizes)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// Writing Go as gofmt leaves it.

/// Writes `text` as a `//` comment at `indent` (tabs), wrapped at [`WIDTH`];
/// paragraphs are separated by blank lines in `text`. No line starts with what a doc
/// comment would read as a list or a heading.
fn comment(out: &mut String, indent: &str, text: &str) {
    let room = WIDTH.saturating_sub(indent.len() * 4 + 3).max(20);
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str(indent);
            out.push_str("//\n");
        }
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > room && !starts_block(word) {
                out.push_str(&format!("{indent}// {line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            out.push_str(&format!("{indent}// {line}\n"));
        }
    }
}

/// Whether a doc comment's line starting with `word` would be a list item or heading.
fn starts_block(word: &str) -> bool {
    if ["-", "+", "*", "•", "#"].contains(&word) {
        return true;
    }
    let digits = word.trim_end_matches(['.', ')']);
    digits.len() < word.len() && !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// A sentence for a doc comment: the WIT's first sentence, with its full stop.
fn sentence(d: Option<&str>) -> Option<String> {
    d.map(first_sentence)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s.ends_with(['.', '!', '?']) {
                s
            } else {
                format!("{s}.")
            }
        })
}

/// One field of a struct: its doc, name, type and tag.
struct Field {
    doc: Option<String>,
    name: String,
    ty: String,
    tag: Option<String>,
}

/// The fields of a struct, at one tab, aligned as gofmt aligns them: the names, and the
/// types of lines with a tag, in columns over each run of lines no comment separates.
fn fields(out: &mut String, list: &[Field]) {
    let mut run: Vec<&Field> = Vec::new();
    let flush = |out: &mut String, run: &mut Vec<&Field>| {
        let names = run.iter().map(|f| f.name.len()).max().unwrap_or(0);
        let mut i = 0;
        while i < run.len() {
            // A block of consecutive lines that all have, or all lack, a tag.
            let tagged = run[i].tag.is_some();
            let mut j = i;
            while j < run.len() && run[j].tag.is_some() == tagged {
                j += 1;
            }
            let types = run[i..j].iter().map(|f| f.ty.len()).max().unwrap_or(0);
            for f in &run[i..j] {
                match &f.tag {
                    Some(tag) => {
                        out.push_str(&format!("\t{:names$} {:types$} {tag}\n", f.name, f.ty))
                    }
                    None => out.push_str(&format!("\t{:names$} {}\n", f.name, f.ty)),
                }
            }
            i = j;
        }
        run.clear();
    };
    for f in list {
        if let Some(doc) = &f.doc {
            flush(out, &mut run);
            comment(out, "\t", doc);
        }
        run.push(f);
    }
    flush(out, &mut run);
}

// ---------------------------------------------------------------------------------
// host/go/wit/types.go.

/// The Go identifiers of the types' package, each once, with where it comes from.
struct Names(BTreeMap<String, String>);

impl Names {
    fn take(&mut self, name: &str, what: &str) -> Result<()> {
        if let Some(before) = self.0.insert(name.to_string(), what.to_string()) {
            bail!("the Go name {name} would be both {before} and {what}: rename one in the WIT");
        }
        Ok(())
    }
}

/// The helpers every generated type's JSON uses, written out as they are.
const TYPES_HELPERS: &str = r#"// Unit is the WIT's _ in a result<_, E> or result<T, _>: a side with no value, whose
// JSON has no "val".
type Unit struct{}

// Result is a WIT result<T, E>: Ok holds the value when IsErr is false, Err the error
// when it is true. Its JSON is {"tag": "ok", "val": Ok} or {"tag": "err", "val": Err},
// without "val" for a side of type Unit.
type Result[T, E any] struct {
	// IsErr says which side the result is.
	IsErr bool
	// Ok is the value when IsErr is false.
	Ok T
	// Err is the error when IsErr is true.
	Err E
}

// MarshalJSON encodes r as docs/json.md does.
func (r Result[T, E]) MarshalJSON() ([]byte, error) {
	if r.IsErr {
		return tagged("err", r.Err)
	}
	return tagged("ok", r.Ok)
}

// UnmarshalJSON decodes r from docs/json.md's encoding; null leaves it as it is.
func (r *Result[T, E]) UnmarshalJSON(b []byte) error {
	tag, val, err := untagged(b)
	if err != nil || tag == "" {
		return err
	}
	*r = Result[T, E]{}
	switch tag {
	case "ok":
		return payload(val, &r.Ok)
	case "err":
		r.IsErr = true
		return payload(val, &r.Err)
	}
	return fmt.Errorf("wit: a result's tag is ok or err, not %q", tag)
}

// Marshal encodes v in the JSON encoding of WIT values (docs/json.md): encoding/json's,
// every nil slice in v (in maps, slices, pointers and structs too) encoded as an empty
// list, as the encoding has no null list. The generated types' MarshalJSON methods use
// it, so encoding/json gives the same bytes for them.
func Marshal(v any) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return json.Marshal(filled(reflect.ValueOf(v)).Interface())
}

// filled is v with every nil slice in it made empty; v itself when nothing in it is.
func filled(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return reflect.MakeSlice(v.Type(), 0, 0)
		}
		switch v.Type().Elem().Kind() {
		case reflect.Slice, reflect.Pointer, reflect.Interface, reflect.Map, reflect.Struct:
			out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := 0; i < v.Len(); i++ {
				out.Index(i).Set(filled(v.Index(i)))
			}
			return out
		}
	case reflect.Pointer:
		if !v.IsNil() && v.Elem().Kind() != reflect.Struct {
			out := reflect.New(v.Type().Elem())
			out.Elem().Set(filled(v.Elem()))
			return out
		}
	case reflect.Interface:
		if !v.IsNil() {
			out := reflect.New(v.Type()).Elem()
			out.Set(filled(v.Elem()))
			return out
		}
	case reflect.Map:
		if !v.IsNil() {
			out := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				out.SetMapIndex(it.Key(), filled(it.Value()))
			}
			return out
		}
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := 0; i < out.NumField(); i++ {
			if f := out.Field(i); f.CanSet() {
				f.Set(filled(f))
			}
		}
		return out
	}
	return v
}

// wire is the JSON of a variant's case or a result's side.
type wire struct {
	Tag string          `json:"tag"`
	Val json.RawMessage `json:"val,omitempty"`
}

// tagged is {"tag": tag, "val": val}, without "val" for a nil or Unit val.
func tagged(tag string, val any) ([]byte, error) {
	w := wire{Tag: tag}
	if _, unit := val.(Unit); val != nil && !unit {
		v, err := Marshal(val)
		if err != nil {
			return nil, err
		}
		w.Val = v
	}
	return json.Marshal(w)
}

// untagged is the tag and "val" of {"tag", "val"}; no tag for null.
func untagged(b []byte) (string, json.RawMessage, error) {
	if string(bytes.TrimSpace(b)) == "null" {
		return "", nil, nil
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return "", nil, err
	}
	if w.Tag == "" {
		return "", nil, fmt.Errorf("wit: %s has no \"tag\"", b)
	}
	return w.Tag, w.Val, nil
}

// payload decodes a case's or side's "val" into v; a Unit needs none.
func payload(val json.RawMessage, v any) error {
	if _, unit := v.(*Unit); unit {
		return nil
	}
	if len(val) == 0 {
		return fmt.Errorf("wit: a \"val\" is missing")
	}
	return json.Unmarshal(val, v)
}
"#;

/// `host/go/wit/types.go`.
fn types_file(world: &World) -> Result<String> {
    let mut names = Names(BTreeMap::new());
    for helper in [
        "Unit", "Result", "Marshal", "filled", "wire", "tagged", "untagged", "payload",
    ] {
        names.take(helper, "a helper of the package")?;
    }
    let mut sizes = BTreeSet::new();
    let mut body = String::new();
    for interface in world.interfaces() {
        for (name, id) in world.declared_types(interface) {
            let def = &world.resolve.types[id];
            let go = exported(&name);
            let wit_name = format!("{}.{name}", interface.name);
            names.take(&go, &wit_name)?;
            let what = sentence(docs(&def.docs));
            let lead = match &what {
                Some(s) => format!("{go} ({wit_name}): {s}"),
                None => format!("{go} is the WIT's {wit_name}."),
            };
            body.push('\n');
            match &def.kind {
                TypeDefKind::Record(r) => {
                    for f in &r.fields {
                        tuple_sizes(world, &f.ty, &mut sizes)?;
                    }
                    record(world, &mut body, &go, &lead, r)?;
                }
                TypeDefKind::Variant(v) => {
                    for c in &v.cases {
                        if let Some(t) = &c.ty {
                            tuple_sizes(world, t, &mut sizes)?;
                        }
                    }
                    variant(world, &mut body, &mut names, &go, &name, &lead, v)?;
                }
                TypeDefKind::Enum(e) => {
                    enumeration(&mut body, &mut names, &go, &lead, e)?;
                }
                _ => {
                    let t = Type::Id(id);
                    tuple_sizes(world, &t, &mut sizes)?;
                    comment(
                        &mut body,
                        "",
                        &format!("{lead}\n\nAnother name for the Go type of its definition."),
                    );
                    let target = match &def.kind {
                        TypeDefKind::Type(inner) => go_type(world, inner, "")?,
                        _ => anonymous(world, id)?,
                    };
                    writeln!(body, "type {go} = {target}")?;
                }
            }
        }
    }
    for e in HAND_WRITTEN.exports(world)? {
        for p in &e.function.params {
            tuple_sizes(world, &p.ty, &mut sizes)?;
        }
        if let Some(t) = &e.function.result {
            tuple_sizes(world, t, &mut sizes)?;
        }
    }
    let mut tuples = String::new();
    for n in &sizes {
        names.take(&format!("Tuple{n}"), "a helper of the package")?;
        tuple(&mut tuples, *n)?;
    }

    let mut out = String::from(
        "// Code generated by render-store-bindgen from wit/render-store.wit. DO NOT EDIT.\n\
         // Change the WIT, then run `cargo run -p render-store-bindgen`.\n\n",
    );
    comment(
        &mut out,
        "",
        "Package wit has a Go type for every record, variant, enum and alias that \
         wit/render-store.wit declares, as the generated functions of package renderstore \
         (wit_calls.go) take and answer them, each in the one JSON encoding of WIT values \
         (docs/json.md) through encoding/json.\n\n\
         A record is a struct whose fields have the WIT's camelCase names as JSON keys; an \
         option is a pointer (nil for none); list<u8> is []byte (base64, as encoding/json \
         writes it); an enum is a string type with a constant per case; a tuple is a \
         TupleN, an array in JSON; result<T, E> is a Result, with Unit for a side without \
         a value.\n\n\
         A variant is a struct with a Tag, one of the constants of its Tag type, and one \
         field per case with a payload, named as the case: the field of the case Tag names \
         holds the payload, the others are ignored. Its JSON is {\"tag\": case, \"val\": \
         payload}. Make one as a literal: wit.ParsedKey{Tag: wit.ParsedKeyRender, Render: \
         ref}.\n\n\
         A nil slice is encoded as an empty list (Marshal), as the encoding has no null \
         list.",
    );
    out.push_str(
        "package wit\n\nimport (\n\t\"bytes\"\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"reflect\"\n)\n\n",
    );
    out.push_str(TYPES_HELPERS);
    out.push_str(&tuples);
    out.push_str(&body);
    Ok(out)
}

/// The Go type of a named type that is not a record, variant, enum or alias (`type
/// data = list<u8>` is a named list).
fn anonymous(world: &World, id: TypeId) -> Result<String> {
    let def = &world.resolve.types[id];
    let inner = match &def.kind {
        TypeDefKind::List(t) => {
            if matches!(t, Type::U8) {
                return Ok("[]byte".into());
            }
            return Ok(format!("[]{}", go_type(world, t, "")?));
        }
        TypeDefKind::Option(t) => format!("*{}", go_type(world, t, "")?),
        other => bail!("a named {} has no Go type here", other.as_str()),
    };
    Ok(inner)
}

fn record(
    world: &World,
    out: &mut String,
    go: &str,
    lead: &str,
    r: &wit_parser::Record,
) -> Result<()> {
    comment(out, "", lead);
    writeln!(out, "type {go} struct {{")?;
    let mut list = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &r.fields {
        let name = exported(&f.name);
        if !seen.insert(name.clone()) {
            bail!("{go} would have two fields {name}");
        }
        list.push(Field {
            doc: sentence(docs(&f.docs)),
            name,
            ty: go_type(world, &f.ty, "")?,
            tag: Some(format!("`json:\"{}\"`", key(&f.name))),
        });
    }
    fields(out, &list);
    writeln!(
        out,
        "}}\n\n// MarshalJSON encodes r as docs/json.md does: a nil slice as an empty list.\n\
         func (r {go}) MarshalJSON() ([]byte, error) {{\n\
         \ttype plain {go}\n\
         \treturn Marshal(plain(r))\n\
         }}"
    )?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn variant(
    world: &World,
    out: &mut String,
    names: &mut Names,
    go: &str,
    wit_name: &str,
    lead: &str,
    v: &wit_parser::Variant,
) -> Result<()> {
    let tag_type = format!("{go}Tag");
    names.take(&tag_type, &format!("the tag type of {go}"))?;
    comment(
        out,
        "",
        &format!(
            "{lead}\n\nTag says which case it is; the field named as that case holds its \
             payload. Its JSON is {{\"tag\": case, \"val\": payload}}."
        ),
    );
    writeln!(out, "type {go} struct {{")?;
    let mut list = vec![Field {
        doc: Some(format!("Tag is the case, one of the {tag_type} constants.")),
        name: "Tag".into(),
        ty: tag_type.clone(),
        tag: None,
    }];
    let mut cases = Vec::new();
    for c in &v.cases {
        let field = exported(&c.name);
        let constant = format!("{go}{field}");
        names.take(&constant, &format!("the case {} of {go}", c.name))?;
        if let Some(t) = &c.ty {
            if field == "Tag" {
                bail!("{go} has a case named tag, which its Go struct's Tag field takes");
            }
            let case_doc = match sentence(docs(&c.docs)) {
                Some(s) => format!("{field} is the payload of {constant}: {s}"),
                None => format!("{field} is the payload of {constant}."),
            };
            list.push(Field {
                doc: Some(case_doc),
                name: field.clone(),
                ty: go_type(world, t, "")?,
                tag: None,
            });
        }
        cases.push((c, constant, c.ty.is_some().then_some(field)));
    }
    fields(out, &list);
    out.push_str("}\n\n");
    comment(out, "", &format!("{tag_type} names a case of {go}."));
    writeln!(out, "type {tag_type} string\n")?;
    comment(out, "", &format!("The cases of {go}."));
    out.push_str("const (\n");
    for (c, constant, _) in &cases {
        let doc = match sentence(docs(&c.docs)) {
            Some(s) => format!("{constant} is the case {}: {s}", c.name),
            None => format!("{constant} is the case {}.", c.name),
        };
        comment(out, "\t", &doc);
        writeln!(out, "\t{constant} {tag_type} = \"{}\"", c.name)?;
    }
    out.push_str(")\n\n");
    writeln!(
        out,
        "// MarshalJSON encodes v as docs/json.md does.\n\
         func (v {go}) MarshalJSON() ([]byte, error) {{\n\
         \tswitch v.Tag {{"
    )?;
    for (_, constant, field) in &cases {
        writeln!(out, "\tcase {constant}:")?;
        match field {
            Some(f) => writeln!(out, "\t\treturn tagged(string(v.Tag), v.{f})")?,
            None => writeln!(out, "\t\treturn tagged(string(v.Tag), nil)")?,
        }
    }
    writeln!(
        out,
        "\t}}\n\
         \treturn nil, fmt.Errorf(\"wit: %q is not a case of {wit_name}\", v.Tag)\n\
         }}\n\n\
         // UnmarshalJSON decodes v from docs/json.md's encoding; null leaves it as it is.\n\
         func (v *{go}) UnmarshalJSON(b []byte) error {{\n\
         \ttag, val, err := untagged(b)\n\
         \tif err != nil || tag == \"\" {{\n\
         \t\treturn err\n\
         \t}}\n\
         \t*v = {go}{{Tag: {tag_type}(tag)}}\n\
         \tswitch v.Tag {{"
    )?;
    for (_, constant, field) in &cases {
        writeln!(out, "\tcase {constant}:")?;
        match field {
            Some(f) => writeln!(out, "\t\treturn payload(val, &v.{f})")?,
            None => writeln!(out, "\t\treturn nil")?,
        }
    }
    writeln!(
        out,
        "\t}}\n\
         \treturn fmt.Errorf(\"wit: %q is not a case of {wit_name}\", tag)\n\
         }}"
    )?;
    Ok(())
}

fn enumeration(
    out: &mut String,
    names: &mut Names,
    go: &str,
    lead: &str,
    e: &wit_parser::Enum,
) -> Result<()> {
    comment(out, "", &format!("{lead}\n\nIts JSON is the case's name."));
    writeln!(out, "type {go} string\n")?;
    comment(out, "", &format!("The cases of {go}."));
    out.push_str("const (\n");
    for c in &e.cases {
        let constant = format!("{go}{}", exported(&c.name));
        names.take(&constant, &format!("the case {} of {go}", c.name))?;
        let doc = match sentence(docs(&c.docs)) {
            Some(s) => format!("{constant} is {}: {s}", c.name),
            None => format!("{constant} is {}.", c.name),
        };
        comment(out, "\t", &doc);
        writeln!(out, "\t{constant} {go} = \"{}\"", c.name)?;
    }
    out.push_str(")\n");
    Ok(())
}

/// `TupleN`, its JSON an array of N.
fn tuple(out: &mut String, n: usize) -> Result<()> {
    let params: Vec<String> = (0..n).map(|i| format!("T{i}")).collect();
    let members: Vec<String> = (0..n).map(|i| format!("V{i}")).collect();
    writeln!(
        out,
        "\n// Tuple{n} is a WIT tuple of {n}: its JSON is the array [{}].\n\
         type Tuple{n}[{} any] struct {{",
        members.join(", "),
        params.join(", ")
    )?;
    let list: Vec<Field> = (0..n)
        .map(|i| Field {
            doc: None,
            name: members[i].clone(),
            ty: params[i].clone(),
            tag: None,
        })
        .collect();
    fields(out, &list);
    let ps = params.join(", ");
    writeln!(
        out,
        "}}\n\n\
         // MarshalJSON encodes t as docs/json.md does.\n\
         func (t Tuple{n}[{ps}]) MarshalJSON() ([]byte, error) {{\n\
         \treturn Marshal([]any{{{}}})\n\
         }}\n\n\
         // UnmarshalJSON decodes t from docs/json.md's encoding; null leaves it as it is.\n\
         func (t *Tuple{n}[{ps}]) UnmarshalJSON(b []byte) error {{\n\
         \tif string(bytes.TrimSpace(b)) == \"null\" {{\n\
         \t\treturn nil\n\
         \t}}\n\
         \tvar parts []json.RawMessage\n\
         \tif err := json.Unmarshal(b, &parts); err != nil {{\n\
         \t\treturn err\n\
         \t}}\n\
         \tif len(parts) != {n} {{\n\
         \t\treturn fmt.Errorf(\"wit: a tuple of {n} is an array of {n}, not of %d\", len(parts))\n\
         \t}}",
        members
            .iter()
            .map(|m| format!("t.{m}"))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    for (i, m) in members.iter().enumerate() {
        writeln!(
            out,
            "\tif err := json.Unmarshal(parts[{i}], &t.{m}); err != nil {{\n\
             \t\treturn err\n\
             \t}}"
        )?;
    }
    out.push_str("\treturn nil\n}\n");
    Ok(())
}

// ---------------------------------------------------------------------------------
// host/go/wit_calls.go.

/// How a function answers in Go: the declared type of the variable the JSON is decoded
/// into, the function's result type, what it returns and its zero.
struct Answer {
    var: String,
    result: String,
    value: String,
    zero: String,
}

fn answer(world: &World, t: &Type) -> Result<Answer> {
    let ty = go_type(world, t, &format!("{TYPES_PACKAGE}."))?;
    Ok(match shape(world, t)? {
        Shape::Named(id)
            if !matches!(
                world.resolve.types[world.declared(id)].kind,
                TypeDefKind::Enum(_)
            ) =>
        {
            Answer {
                result: format!("*{ty}"),
                var: ty,
                value: "&answer".into(),
                zero: "nil".into(),
            }
        }
        s => {
            let zero = match s {
                Shape::Prim(Type::Bool) => "false".into(),
                Shape::Prim(Type::String) | Shape::Named(_) => "\"\"".into(),
                Shape::Prim(_) => "0".into(),
                Shape::List(_) | Shape::Option(_) => "nil".into(),
                Shape::Result(..) | Shape::Tuple(_) => format!("{ty}{{}}"),
            };
            Answer {
                result: ty.clone(),
                var: ty,
                value: "answer".into(),
                zero,
            }
        }
    })
}

/// The helpers every generated function uses.
const CALLS_HELPERS: &str = r#"// callStore makes one call of a store export: args, the export's parameters by their
// camelCase names but encryption (the store's own keyring and rule), encoded as
// docs/json.md says, given to the export's entry point c on a handle bounded by ctx
// (Store.call), and its JSON answer decoded into answer (nil: none is read). A nil
// store is ErrNoStore.
func (s *Store) callStore(ctx context.Context, args map[string]any, answer any, c func(*C.rs_store, *C.uint8_t, C.size_t, *C.rs_buf) *C.rs_error) error {
	if s == nil {
		return ErrNoStore
	}
	data, err := wit.Marshal(args)
	if err != nil {
		return fmt.Errorf("render store: encoding the arguments: %w", err)
	}
	return s.call(ctx, func(h *C.rs_store) error {
		a, n := cbytes(data)
		var out C.rs_buf
		if err := takeError(c(h, a, n, &out)); err != nil {
			return err
		}
		return decodeAnswer(&out, answer)
	})
}

// callLogic makes one call of a logic or trace export: args encoded as docs/json.md
// says, given to the export's entry point c with the limits of opts (none: the
// defaults), and its JSON answer decoded into answer (nil: none is read). The call
// touches no bucket and runs to its end once started: ctx is checked before it, and
// the call's fuel bounds it.
func callLogic(ctx context.Context, opts []Option, args map[string]any, answer any, c func(*C.rs_options, *C.uint8_t, C.size_t, *C.rs_buf) *C.rs_error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := wit.Marshal(args)
	if err != nil {
		return fmt.Errorf("render store: encoding the arguments: %w", err)
	}
	var o *C.rs_options
	if len(opts) > 0 {
		o = options(opts)
	}
	a, n := cbytes(data)
	var out C.rs_buf
	if err := takeError(c(o, a, n, &out)); err != nil {
		return err
	}
	return decodeAnswer(&out, answer)
}

// decodeAnswer decodes the JSON in out into answer, or with a nil answer only frees it.
func decodeAnswer(out *C.rs_buf, answer any) error {
	if answer == nil {
		C.rs_buf_free(out)
		return nil
	}
	return decode(out, answer)
}
"#;

/// The Go name of an export's generated function: `BlameObject` as a method,
/// `Store.BlameObject`, for a store export.
fn go_name(interface: &Interface, f: &Function) -> String {
    if interface.name == "store" {
        format!("Store.{}", exported(&f.name))
    } else {
        exported(&f.name)
    }
}

/// The Go package's name for each export of `logic`, `store` and `trace`
/// (`interface.function`, name, a method as `Store.Name`): the hand-written function's
/// or the generated one's.
pub fn names(world: &World) -> Result<Vec<(String, String)>> {
    let out = HAND_WRITTEN.names(world, |e| Ok(go_name(e.interface, e.function)))?;
    let mut seen = BTreeMap::new();
    for (export, go) in &out {
        if let Some(other) = seen.insert(go.clone(), export.clone()) {
            bail!("{other} and {export} would both be the Go package's {go}");
        }
    }
    Ok(out)
}

/// `host/go/wit_calls.go`.
fn calls_file(world: &World, module: &str, hand: &BTreeSet<String>) -> Result<String> {
    for (interface, function, go) in HAND_WRITTEN.table {
        if !hand.contains(*go) {
            bail!(
                "go.rs's HAND_WRITTEN answers {interface}.{function} with {go}, which host/go does not declare"
            );
        }
    }
    let mut out = String::from(
        "// Code generated by render-store-bindgen from wit/render-store.wit. DO NOT EDIT.\n\
         // Change the WIT, then run `cargo run -p render-store-bindgen`.\n\n\
         package renderstore\n\n\
         // The functions of the WIT's logic, store and trace exports that have no hand-written\n\
         // counterpart, each one call of the export's generated C entry point\n\
         // (rs_call_<interface>_<function>) with its arguments and answer in the JSON encoding\n\
         // of WIT values (docs/json.md), typed by package wit.\n\n\
         /*\n#include \"render_store.h\"\n*/\nimport \"C\"\n\n\
         import (\n\t\"context\"\n\t\"fmt\"\n\n",
    );
    writeln!(out, "\t\"{module}/{TYPES_PACKAGE}\"\n)\n")?;
    out.push_str(CALLS_HELPERS);
    names(world)?;
    let q = format!("{TYPES_PACKAGE}.");
    for e in HAND_WRITTEN.generated(world)? {
        function(world, e.interface, e.function, &q, hand, &mut out)?;
    }
    Ok(out)
}

fn function(
    world: &World,
    interface: &Interface,
    f: &Function,
    q: &str,
    hand: &BTreeSet<String>,
    out: &mut String,
) -> Result<()> {
    let store = interface.name == "store";
    let go = exported(&f.name);
    let full = go_name(interface, f);
    if hand.contains(&full) {
        bail!(
            "{}.{} would be generated as {full}, which host/go declares by hand: add it to \
             go.rs's HAND_WRITTEN, or rename the hand-written one",
            interface.name,
            f.name
        );
    }
    let mut params: Vec<(Vec<String>, String)> =
        vec![(vec!["ctx".into()], "context.Context".into())];
    let mut args = Vec::new();
    let mut locals = BTreeSet::new();
    for p in &f.params {
        if store && p.name == "encryption" {
            continue;
        }
        let name = local(&p.name);
        if !locals.insert(name.clone()) {
            bail!(
                "{}.{} would have two parameters {name}",
                interface.name,
                f.name
            );
        }
        let ty = go_type(world, &p.ty, q)?;
        // Consecutive parameters of one type share it, as Go writes them.
        match params.last_mut() {
            Some((names, last)) if *last == ty => names.push(name.clone()),
            _ => params.push((vec![name.clone()], ty)),
        }
        args.push(format!("\"{}\": {name}", key(&p.name)));
    }
    let mut params: Vec<String> = params
        .into_iter()
        .map(|(names, ty)| format!("{} {ty}", names.join(", ")))
        .collect();
    if !store {
        params.push("opts ...Option".into());
    }
    let answered = match world.fallible(f) {
        Some(ok) => ok,
        None => f.result,
    };
    let answer = answered.as_ref().map(|t| answer(world, t)).transpose()?;
    let what = sentence(docs(&f.docs));
    let lead = match &what {
        Some(s) => format!("{go} calls {}.{}: {s}", interface.name, f.name),
        None => format!("{go} calls {}.{}.", interface.name, f.name),
    };
    let note = if store {
        "A nil store is ErrNoStore; ctx bounds the call as it does every Store call."
    } else {
        "opts set the sandbox's limits; ctx is checked before the call, which touches no \
         bucket."
    };
    out.push('\n');
    comment(out, "", &format!("{lead}\n\n{note}"));
    let results = match &answer {
        Some(a) => format!("({}, error)", a.result),
        None => "error".into(),
    };
    let receiver = if store { "(s *Store) " } else { "" };
    writeln!(
        out,
        "func {receiver}{go}({}) {results} {{",
        params.join(", ")
    )?;
    let target = if answer.is_some() { "&answer" } else { "nil" };
    let call = if store {
        format!(
            "s.callStore(ctx, map[string]any{{{}}}, {target}, func(h *C.rs_store, a *C.uint8_t, n C.size_t, out *C.rs_buf) *C.rs_error {{\n\
             \t\treturn C.{}(h, a, n, out)\n\
             \t}})",
            args.join(", "),
            c_name(&interface.name, &f.name)
        )
    } else {
        format!(
            "callLogic(ctx, opts, map[string]any{{{}}}, {target}, func(o *C.rs_options, a *C.uint8_t, n C.size_t, out *C.rs_buf) *C.rs_error {{\n\
             \t\treturn C.{}(o, a, n, out)\n\
             \t}})",
            args.join(", "),
            c_name(&interface.name, &f.name)
        )
    };
    match &answer {
        Some(a) => writeln!(
            out,
            "\tvar answer {}\n\
             \terr := {call}\n\
             \tif err != nil {{\n\
             \t\treturn {}, err\n\
             \t}}\n\
             \treturn {}, nil\n\
             }}",
            a.var, a.zero, a.value
        )?,
        None => writeln!(out, "\treturn {call}\n}}")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_names() {
        assert_eq!(exported("gc-plan"), "GCPlan");
        assert_eq!(exported("api-version"), "APIVersion");
        assert_eq!(exported("sha256-hex"), "SHA256Hex");
        assert_eq!(exported("outcome-json"), "OutcomeJSON");
        assert_eq!(local("key-ids"), "keyIDs");
        assert_eq!(local("json"), "json");
        assert_eq!(local("context"), "contextArg");
        assert_eq!(local("render-ref"), "renderRef");
    }

    #[test]
    fn comments_wrap_without_making_lists() {
        let mut out = String::new();
        let text = format!("{} - b", "a ".repeat(43).trim_end());
        comment(&mut out, "", &text);
        assert!(out.lines().all(|l| !l.starts_with("// - ")), "{out}");
    }
}
