//! The Python package's types and functions for the world's exports, over the C ABI's
//! generated entry points.

use crate::Generated;
use crate::world::World;
use anyhow::Result;
use std::path::Path;

/// The Python package's generated files.
pub fn files(_root: &Path, _world: &World) -> Result<Vec<Generated>> {
    Ok(Vec::new())
}
