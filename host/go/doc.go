// Package renderstore is the convoy render store for Go: it keeps the content of
// every render a controller applies in an object store (S3, GCS, Azure Blob, a local
// folder, memory, or any Bucket you implement), with an ordered history and garbage
// collection.
//
// The package is a thin binding of the Rust host library through its C ABI
// (host/capi, librender_store_capi): every rule, limit, message and bucket call comes
// from there, and the store's logic runs in the same sandboxed WebAssembly component
// as in every other host, so renderRefs, keys, GC decisions and traces are the same
// byte for byte.
//
// A controller opens its store from --render-store-url and calls the operations of
// CONTRACT.md §5 and §7 in a sync:
//
//	store, err := renderstore.Open(ctx, url) // nil store and nil error for ""
//	ref, err := store.PutRender(ctx, ns, name, objects)
//	// ... apply ...
//	added, err := store.RecordHistory(ctx, ns, name, ref, time.Now(), "v2")
//	keep := renderstore.EffectiveKeepHistory(release.Spec.KeepHistory)
//	protected := renderstore.ProtectedRefs(ref, lastSuccessful, lastAttempted, pin, lastHealthy)
//	plan, err := store.GC(ctx, ns, name, keep, protected)
//
// Errors are *Error values (or *InvalidYAMLError for YAML streams) whose Kind is also
// a sentinel: errors.Is(err, renderstore.ErrNotFound), errors.As(err, &yamlErr).
//
// Every method may be called from many goroutines at once. Calls block their
// goroutine's thread while the library runs them; a Bucket's methods run on that
// same goroutine, with the call's context. A context cancelled during a call stops it
// at its next bucket call (for a URL-opened store, only before the call starts).
package renderstore
