//! The world in `wit/`, read by wit-parser, and the questions every generator asks of it.

use anyhow::{Context, Result, bail};
use std::path::Path;
use wit_parser::{
    Docs, Function, FunctionKind, InterfaceId, Resolve, Type, TypeDefKind, TypeId, TypeOwner,
    WorldItem,
};

/// The package's world, resolved.
pub struct World {
    /// Every package and type the WIT names.
    pub resolve: Resolve,
    /// The interfaces the world imports, in its order.
    pub imports: Vec<Interface>,
    /// The interfaces the world exports, in its order.
    pub exports: Vec<Interface>,
}

/// One interface of the world.
#[derive(Clone)]
pub struct Interface {
    /// Its name in the package (`store`).
    pub name: String,
    /// Its full name with the package's version (`convoy:render-store/store@0.9.0`), by
    /// which a component exports it.
    pub qualified: String,
    /// Its id in the resolve.
    pub id: InterfaceId,
}

impl World {
    /// Reads the package in `dir` and selects its one world. The generators know no
    /// method, resource, float, char or flags type: such a WIT is refused here by name.
    pub fn load(dir: &Path) -> Result<World> {
        let mut resolve = Resolve::new();
        let (package, _) = resolve
            .push_dir(dir)
            .with_context(|| format!("reading the WIT in {}", dir.display()))?;
        let world = resolve.select_world(&[package], None)?;
        let side = |items: Vec<&WorldItem>, what: &str| -> Result<Vec<Interface>> {
            items
                .into_iter()
                .map(|item| {
                    let WorldItem::Interface { id, .. } = item else {
                        bail!("the world {what} something that is not an interface");
                    };
                    let name = resolve.interfaces[*id]
                        .name
                        .clone()
                        .with_context(|| format!("the world {what} an unnamed interface"))?;
                    let qualified = resolve.id_of(*id).unwrap_or_else(|| name.clone());
                    Ok(Interface {
                        name,
                        qualified,
                        id: *id,
                    })
                })
                .collect()
        };
        let w = &resolve.worlds[world];
        let imports = side(w.imports.values().collect(), "imports")?;
        let exports = side(w.exports.values().collect(), "exports")?;
        let world = World {
            imports,
            exports,
            resolve,
        };
        world.refuse_unknown()?;
        Ok(world)
    }

    /// Every interface, imports first.
    pub fn interfaces(&self) -> impl Iterator<Item = &Interface> {
        self.imports.iter().chain(&self.exports)
    }

    /// The functions of `interface`, in the WIT's order.
    pub fn functions(&self, interface: &Interface) -> impl Iterator<Item = &Function> {
        self.resolve.interfaces[interface.id].functions.values()
    }

    /// The types `interface` declares itself, in the WIT's order: a type it only
    /// `use`s from another interface is not among them.
    pub fn declared_types(&self, interface: &Interface) -> Vec<(String, TypeId)> {
        self.resolve.interfaces[interface.id]
            .types
            .iter()
            .filter(|(name, id)| !self.is_use(name, **id))
            .map(|(name, id)| (name.clone(), *id))
            .collect()
    }

    /// Whether the type `name` of an interface is another interface's type brought in
    /// by `use` rather than a type of its own.
    fn is_use(&self, name: &str, id: TypeId) -> bool {
        match &self.resolve.types[id].kind {
            TypeDefKind::Type(Type::Id(target)) => {
                let target = &self.resolve.types[*target];
                target.name.as_deref() == Some(name) && target.owner != self.resolve.types[id].owner
            }
            _ => false,
        }
    }

    /// The interface a named type is declared in, following `use`s.
    pub fn owner(&self, id: TypeId) -> Option<InterfaceId> {
        let def = &self.resolve.types[id];
        if let (Some(name), TypeDefKind::Type(Type::Id(target))) = (&def.name, &def.kind)
            && self.is_use(name, id)
        {
            return self.owner(*target);
        }
        match def.owner {
            TypeOwner::Interface(i) => Some(i),
            _ => None,
        }
    }

    /// The name of the interface `id`.
    pub fn interface_name(&self, id: InterfaceId) -> &str {
        self.resolve.interfaces[id].name.as_deref().unwrap_or("")
    }

    /// A named type's own definition, following `use`s to where it is declared.
    pub fn declared(&self, id: TypeId) -> TypeId {
        let def = &self.resolve.types[id];
        if let (Some(name), TypeDefKind::Type(Type::Id(target))) = (&def.name, &def.kind)
            && self.is_use(name, id)
        {
            return self.declared(*target);
        }
        id
    }

    /// When `f` answers `result<T, error>` (`error` being `types.error`): `Some(T)`. Its
    /// error is then the call's error in every host, and `T` alone the answer.
    pub fn fallible(&self, f: &Function) -> Option<Option<Type>> {
        let Some(Type::Id(id)) = &f.result else {
            return None;
        };
        let TypeDefKind::Result(r) = &self.resolve.types[*id].kind else {
            return None;
        };
        let Some(Type::Id(err)) = r.err else {
            return None;
        };
        let err = self.declared(err);
        let owner = self.owner(err).map(|o| self.interface_name(o));
        (owner == Some("types") && self.resolve.types[err].name.as_deref() == Some("error"))
            .then_some(r.ok)
    }

    fn refuse_unknown(&self) -> Result<()> {
        for interface in self.interfaces() {
            for function in self.functions(interface) {
                if !matches!(function.kind, FunctionKind::Freestanding) {
                    bail!(
                        "{}.{} is a method or a constructor: the generators know no resources",
                        interface.name,
                        function.name
                    );
                }
            }
        }
        for (_, def) in self.resolve.types.iter() {
            let bad = match &def.kind {
                TypeDefKind::Resource | TypeDefKind::Handle(_) => Some("a resource"),
                TypeDefKind::Flags(_) => Some("flags"),
                TypeDefKind::Future(_) | TypeDefKind::Stream(_) => Some("async"),
                TypeDefKind::Map(..) | TypeDefKind::FixedLengthList(..) => Some("a map or array"),
                _ => None,
            };
            let primitive_bad = |t: &Type| matches!(t, Type::F32 | Type::F64 | Type::Char);
            let uses_bad = match &def.kind {
                TypeDefKind::Record(r) => r.fields.iter().any(|f| primitive_bad(&f.ty)),
                TypeDefKind::List(t) | TypeDefKind::Option(t) | TypeDefKind::Type(t) => {
                    primitive_bad(t)
                }
                _ => false,
            };
            if let Some(what) = bad.or(uses_bad.then_some("a float or char")) {
                bail!(
                    "type {} is {what}, which the generators do not know",
                    def.name.as_deref().unwrap_or("(anonymous)")
                );
            }
        }
        Ok(())
    }
}

/// The doc comment of an item, or none.
pub fn docs(docs: &Docs) -> Option<&str> {
    docs.contents
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
}

/// `text`'s words as lines of at most `width` characters (a longer word on its own
/// line): the generated doc comments' wrapping.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The first sentence of a doc comment, on one line: what a table says of an item.
pub fn first_sentence(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut end = joined.len();
    let bytes = joined.as_bytes();
    for (i, c) in joined.char_indices() {
        if c == '.' && (i + 1 == bytes.len() || bytes[i + 1] == b' ') {
            end = i;
            break;
        }
    }
    joined[..end].to_string()
}
