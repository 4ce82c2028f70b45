//go:build cgo && linux && arm64 && muslc && !renderstore_dev && !renderstore_release

package renderstore

// The static library host/go/build.sh lays out for linux/arm64 with musl (laid out by build.sh on such a machine; not built in this repository's CI).
// A fully static binary for Alpine or an empty image (build.sh --musl; go build
// -tags muslc with CC=musl-gcc and -ldflags '-linkmode external -extldflags -static').

// #cgo CFLAGS: -I${SRCDIR}/build/include
// #cgo LDFLAGS: ${SRCDIR}/build/linux-arm64-musl/librender_store_capi.a -lm -ldl -lpthread
import "C"
