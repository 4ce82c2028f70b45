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
// # A controller's sync
//
// A controller opens its store from --render-store-url and calls the operations of
// CONTRACT.md §5 and §7 in a sync (the package's Example runs this loop):
//
//	store, err := renderstore.Open(ctx, url) // nil store and nil error for ""
//	ref, err := store.PutRender(ctx, ns, name, objects)
//	// ... apply; if PutRender failed, apply nothing ...
//	added, err := store.RecordHistory(ctx, ns, name, ref, time.Now(), "v2")
//	keep := renderstore.EffectiveKeepHistory(release.Spec.KeepHistory)
//	protected := renderstore.ProtectedRenders{
//		Applied:        ref,
//		LastSuccessful: release.Status.LastSuccessful.RenderRef,
//		LastAttempted:  release.Status.LastAttempted.RenderRef,
//		Pin:            release.Spec.Pin.RenderRef,
//		LastHealthy:    release.Status.LastHealthy.RenderRef,
//	}
//	plan, err := store.GC(ctx, ns, name, keep, protected.Refs())
//
// and, when the Release is deleted, after its objects are gone:
//
//	deleted, err := store.DeleteRelease(ctx, ns, name) // a second run deletes nothing
//
// # Contexts
//
// Every method's context reaches the library: a deadline or cancellation cuts the call
// where it waits, the bucket request in flight too (for a URL-opened store, its HTTP
// request), and the call fails with an *Error of KindDeadlineExceeded or KindCancelled
// that also satisfies errors.Is(err, context.DeadlineExceeded) or
// errors.Is(err, context.Canceled). A cut call leaves the store as a crash at that
// moment would: nothing half-written. Close cuts the calls in flight and returns
// promptly. A cloud store's HTTP requests also end on their own: WithRequestTimeout,
// WithConnectTimeout and WithRetries (or the URL's timeout, connect_timeout, retries
// and retry_timeout) bound each one.
//
// # Errors
//
// Errors are *Error values (or *InvalidYAMLError for YAML streams) whose Kind is also
// a sentinel: errors.Is(err, renderstore.ErrNotFound), errors.As(err, &yamlErr). An
// *Error unwraps to what ended the call from Go's side: the context's error, and the
// errors a Bucket's methods returned (a gocloud error through the gocloudblob adapter,
// whole).
//
// # Building
//
// The package needs cgo and a C compiler. By default it links the static library that
// host/go/build.sh lays out under build/ for the platform, so a module that requires
// it (a local replace, or a vendored copy) builds with plain go build; the build tags
// renderstore_dev and renderstore_release link the repository's target/ folder
// instead (README.md).
//
// Every method may be called from many goroutines at once. Calls block their
// goroutine's thread while the library runs them; a Bucket's methods run on that
// same goroutine, with the call's context.
package renderstore
