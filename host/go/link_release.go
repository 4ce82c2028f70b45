//go:build renderstore_release

package renderstore

// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -Wl,-rpath,${SRCDIR}/../../target/release
import "C"
