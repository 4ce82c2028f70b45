//! The component this library embeds, and its digest: one module that both the runtime
//! and the compiled-component cache read, so neither has to import the other.

/// The component, as built from `guest/` by `build.rs`: a WebAssembly component that
/// imports only the `bucket` interface of `wit/`.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/render_store.wasm"));

/// The hex SHA-256 of [`COMPONENT`], computed by `build.rs`: it names the component's
/// compiled-cache entry without hashing the component at every process start.
pub(crate) const COMPONENT_SHA256: &str =
    include_str!(concat!(env!("OUT_DIR"), "/render_store.wasm.sha256"));

/// The component compiled by build.rs for the build's target (the `precompiled`
/// feature): code for [`PRECOMPILED_TARGET`] with the portable CPU features and the
/// default memory cap's settings (`runtime/engine_config.rs`), loaded instead of
/// compiled where the compiled-component cache cannot be used.
#[cfg(feature = "precompiled")]
pub(crate) const PRECOMPILED: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/render_store.cwasm"));

/// The target triple [`PRECOMPILED`] was compiled for: the one this crate was built for.
#[cfg(feature = "precompiled")]
pub(crate) const PRECOMPILED_TARGET: &str = env!("RENDER_STORE_PRECOMPILED_TARGET");
