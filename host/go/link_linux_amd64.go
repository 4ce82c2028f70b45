//go:build cgo && linux && amd64 && !muslc && !renderstore_dev && !renderstore_release

package renderstore

// The static library host/go/build.sh lays out for linux/amd64 (built and tested here).

// #cgo CFLAGS: -I${SRCDIR}/build/include
// #cgo LDFLAGS: ${SRCDIR}/build/linux-amd64/librender_store_capi.a -lm -ldl -lpthread
import "C"
