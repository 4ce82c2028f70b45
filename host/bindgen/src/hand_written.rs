//! The exports every package offers, and a package's table of the ones it answers by
//! hand: each language's generator walks the exports through its table here, so which
//! exports are generated, and that the table names only real exports, is decided once.

use crate::world::{Interface, World};
use anyhow::{Result, bail};
use wit_parser::Function;

/// The exported interfaces whose functions every package offers.
pub const INTERFACES: &[&str] = &["logic", "store", "trace"];

/// A package's hand-written functions: by interface and WIT name, the package's own
/// name for the export, for which nothing is generated.
pub struct HandWritten {
    /// `(interface, function, name)`.
    pub table: &'static [(&'static str, &'static str, &'static str)],
    /// The generator file the table is in, for messages (`js.rs`).
    pub file: &'static str,
}

/// One function of [`INTERFACES`], with its hand-written name if the table has one.
pub struct Export<'w> {
    /// Its interface.
    pub interface: &'w Interface,
    /// The function.
    pub function: &'w Function,
    /// The package's hand-written function for it, if any.
    pub hand: Option<&'static str>,
}

impl Export<'_> {
    /// `interface.function`.
    pub fn wit_name(&self) -> String {
        format!("{}.{}", self.interface.name, self.function.name)
    }
}

impl HandWritten {
    /// Every function of [`INTERFACES`], in the WIT's order, each with its hand-written
    /// name. Fails when one of the interfaces is not exported, or the table names a
    /// function the WIT does not export.
    pub fn exports<'w>(&self, world: &'w World) -> Result<Vec<Export<'w>>> {
        let mut out = Vec::new();
        for name in INTERFACES {
            let Some(interface) = world.exports.iter().find(|i| i.name == *name) else {
                bail!("the world exports no interface `{name}`");
            };
            for function in world.functions(interface) {
                let hand = self
                    .table
                    .iter()
                    .find(|(i, f, _)| *i == interface.name && *f == function.name)
                    .map(|(_, _, n)| *n);
                out.push(Export {
                    interface,
                    function,
                    hand,
                });
            }
        }
        for (interface, function, _) in self.table {
            if !out
                .iter()
                .any(|e| e.interface.name == *interface && e.function.name == *function)
            {
                bail!(
                    "{}'s HAND_WRITTEN names {interface}.{function}, which the WIT does not export",
                    self.file
                );
            }
        }
        Ok(out)
    }

    /// The exports nothing hand-written answers, in the WIT's order.
    pub fn generated<'w>(&self, world: &'w World) -> Result<Vec<Export<'w>>> {
        Ok(self
            .exports(world)?
            .into_iter()
            .filter(|e| e.hand.is_none())
            .collect())
    }

    /// The package's name for each export (`interface.function`, name): the
    /// hand-written one's, else what `generated` names it.
    pub fn names(
        &self,
        world: &World,
        generated: impl Fn(&Export<'_>) -> Result<String>,
    ) -> Result<Vec<(String, String)>> {
        self.exports(world)?
            .iter()
            .map(|e| {
                let name = match e.hand {
                    Some(n) => n.to_string(),
                    None => generated(e)?,
                };
                Ok((e.wit_name(), name))
            })
            .collect()
    }
}
