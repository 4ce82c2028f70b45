//! The npm package's functions for the world's exports that have no hand-written one.

use crate::Generated;
use crate::world::World;
use anyhow::Result;
use std::path::Path;

/// The npm package's generated files.
pub fn files(_root: &Path, _world: &World) -> Result<Vec<Generated>> {
    Ok(Vec::new())
}
