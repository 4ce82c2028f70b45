//! A cache of the compiled component, so a process starts in about a millisecond
//! instead of spending ~100 ms (release) to ~500 ms (debug) in cranelift.
//!
//! Loading compiled code runs it, so the cache is only trusted when it cannot have been
//! written by anyone else: the folder and the file must belong to this user and be
//! writable by nobody else. Files are written to a temporary name and renamed, so a
//! reader never sees half a file; a file wasmtime refuses (another version or
//! configuration) is compiled again and replaced.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The variable naming the cache folder; set and empty, it turns the cache off.
pub const CACHE_DIR_VAR: &str = "RENDER_STORE_CACHE_DIR";

/// Where compiled components are kept: `$RENDER_STORE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/render-store`, else `$HOME/.cache/render-store`.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR_VAR) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("render-store")),
    }
}

/// The component compiled for `engine`, from the cache when a trusted entry exists.
pub fn load_or_compile(engine: &Engine, wasm: &[u8]) -> wasmtime::Result<Component> {
    let Some(dir) = cache_dir() else {
        return Component::new(engine, wasm);
    };
    let path = dir.join(entry_name(engine, wasm));
    if trusted(&dir, &path) {
        // SAFETY: the file was written by this user (checked by `trusted`) from
        // `Engine::precompile_component` of the same component and engine
        // configuration (both are in its name); wasmtime itself refuses a file made by
        // another version or configuration, and then it is compiled again.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok(component);
        }
    }
    let compiled = engine.precompile_component(wasm)?;
    // The cache is an optimisation: failing to write it changes nothing else.
    if let Err(e) = store(&dir, &path, &compiled) {
        tracing::debug!(error = %e, path = %path.display(), "not caching the compiled component");
    }
    // SAFETY: these bytes were produced by `precompile_component` just above.
    unsafe { Component::deserialize(engine, &compiled) }
}

fn entry_name(engine: &Engine, wasm: &[u8]) -> String {
    let component = Sha256::digest(wasm);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let mut name = String::from("component-");
    for b in &component[..16] {
        name.push_str(&format!("{b:02x}"));
    }
    format!("{name}-{:016x}.cwasm", hasher.finish())
}

#[cfg(target_os = "linux")]
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

#[cfg(not(target_os = "linux"))]
fn own_uid() -> Option<u32> {
    None
}

/// Owned by this user and writable by nobody else.
#[cfg(unix)]
fn private(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::symlink_metadata(path), own_uid()) {
        (Ok(meta), Some(uid)) => meta.uid() == uid && meta.mode() & 0o022 == 0,
        _ => false,
    }
}

#[cfg(not(unix))]
fn private(_path: &Path) -> bool {
    false
}

fn trusted(dir: &Path, path: &Path) -> bool {
    private(dir) && private(path) && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

fn store(dir: &Path, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    if !private(dir) {
        return Err(std::io::Error::other(format!(
            "{} is not private to this user",
            dir.display()
        )));
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(compiled)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_writable_by_others_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let file = dir.path().join("c.cwasm");
        std::fs::write(&file, b"x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(trusted(dir.path(), &file));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(!trusted(dir.path(), &file));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!trusted(dir.path(), &file));
    }

    #[test]
    fn a_damaged_entry_is_compiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let engine = Engine::default();
        let wasm = crate::COMPONENT;
        let path = cache.join(entry_name(&engine, wasm));
        // SAFETY-relevant path under test: a garbage file in a private folder must be
        // refused by wasmtime and replaced, not executed.
        store(&cache, &path, b"not a compiled component").unwrap();
        let component = {
            // `load_or_compile` reads the folder from the environment; call the parts.
            assert!(trusted(&cache, &path));
            assert!(unsafe { Component::deserialize_file(&engine, &path) }.is_err());
            let compiled = engine.precompile_component(wasm).unwrap();
            store(&cache, &path, &compiled).unwrap();
            unsafe { Component::deserialize_file(&engine, &path) }
        };
        assert!(component.is_ok());
    }
}
