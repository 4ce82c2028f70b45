//go:build !renderstore_release

package renderstore

// #cgo LDFLAGS: -L${SRCDIR}/../../target/debug -Wl,-rpath,${SRCDIR}/../../target/debug
import "C"
