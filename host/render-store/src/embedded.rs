//! The component this library embeds, and its digest: one module that both the runtime
//! and the compiled-component cache read, so neither has to import the other.

/// The component, as built from `guest/` by `build.rs`: a WebAssembly component that
/// imports only the `bucket` interface of `wit/`.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/render_store.wasm"));

/// The hex SHA-256 of [`COMPONENT`], computed by `build.rs`: it names the component's
/// compiled-cache entry without hashing the component at every process start.
pub(crate) const COMPONENT_SHA256: &str =
    include_str!(concat!(env!("OUT_DIR"), "/render_store.wasm.sha256"));
