//go:build cgo && renderstore_dev && !renderstore_release

package renderstore

// Development in this repository: the library of the checkout's target/debug folder,
// linked dynamically with an rpath to it, and the header where cargo's test checks it
// (host/capi/include). `cargo build -p render-store-capi && go test -tags
// renderstore_dev ./...`; run.sh does this.

// #cgo CFLAGS: -I${SRCDIR}/../capi/include
// #cgo LDFLAGS: -L${SRCDIR}/../../target/debug -Wl,-rpath,${SRCDIR}/../../target/debug -lrender_store_capi
import "C"
