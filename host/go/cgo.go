package renderstore

// The library is the C ABI of the Rust host (host/capi). By default the static library
// and header host/go/build.sh lays out under build/ are linked (link_<os>_<arch>.go), so
// the module folder alone builds; the build tags renderstore_dev and renderstore_release
// link the checkout's target/debug or target/release instead (link_dev.go,
// link_release.go). Without cgo, nocgo.go stops the build with what is missing.

/*
#include <stdlib.h>
#include "render_store.h"
*/
import "C"

import (
	"unsafe"
)

// ABIVersion is the C ABI version this package was written against; Open and New
// refuse a loaded library that reports another.
const ABIVersion = C.RS_ABI_VERSION

// cstr lends the bytes of s to C for the duration of a call. cgo allows passing Go
// memory that holds no Go pointers, and the library reads it only during the call.
func cstr(s string) (*C.char, C.size_t) {
	if len(s) == 0 {
		return nil, 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

// optstr is cstr for an optional argument: "" is absent (NULL).
func optstr(s string) (*C.char, C.size_t) { return cstr(s) }

// cbytes lends b to C for the duration of a call.
func cbytes(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b))), C.size_t(len(b))
}

// joined is a list in the ABI's form: one buffer and the offset where each item ends.
type joined struct {
	buf  []byte
	ends []C.size_t
}

// join puts items in the ABI's list form (byte strings or text alike).
func join[T ~string | ~[]byte](items []T) joined {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	j := joined{buf: make([]byte, 0, n), ends: make([]C.size_t, len(items))}
	for i, it := range items {
		j.buf = append(j.buf, it...)
		j.ends[i] = C.size_t(len(j.buf))
	}
	return j
}

func joinBytes(items [][]byte) joined { return join(items) }

func joinStrings(items []string) joined { return join(items) }

// args returns the pointers of j for a call.
func (j joined) args() (*C.uint8_t, C.size_t, *C.size_t, C.size_t) {
	data, n := cbytes(j.buf)
	var ends *C.size_t
	if len(j.ends) > 0 {
		ends = &j.ends[0]
	}
	return data, n, ends, C.size_t(len(j.ends))
}

// takeBytes copies a buffer the library handed out into Go memory and frees it.
func takeBytes(b *C.rs_buf) []byte {
	defer C.rs_buf_free(b)
	out := make([]byte, int(b.len))
	if b.len > 0 {
		copy(out, unsafe.Slice((*byte)(unsafe.Pointer(b.data)), int(b.len)))
	}
	return out
}

// takeString is takeBytes for text.
func takeString(b *C.rs_buf) string {
	defer C.rs_buf_free(b)
	if b.len == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(b.data)), int(b.len)))
}
