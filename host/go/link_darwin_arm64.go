//go:build cgo && darwin && arm64 && !muslc && !renderstore_dev && !renderstore_release

package renderstore

// The static library host/go/build.sh lays out for darwin/arm64 (laid out by build.sh on such a machine; not built in this repository's CI).

// #cgo CFLAGS: -I${SRCDIR}/build/include
// #cgo LDFLAGS: ${SRCDIR}/build/darwin-arm64/librender_store_capi.a -lm -framework CoreFoundation -framework Security -framework SystemConfiguration
import "C"
