//go:build cgo && renderstore_release

package renderstore

// The checkout's target/release library, linked dynamically with an rpath to it (the
// packages bench: `cargo build --release -p render-store-capi`).

// #cgo CFLAGS: -I${SRCDIR}/../capi/include
// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -Wl,-rpath,${SRCDIR}/../../target/release -lrender_store_capi
import "C"
