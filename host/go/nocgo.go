//go:build !cgo

package renderstore

// The package is the Rust host library through its C ABI: it needs cgo, and so a C
// compiler. With CGO_ENABLED=0 (or no C compiler found) this is the one file the
// package keeps, and the build stops on the message below.
const _ uint8 = "render store: package convoy.dev/renderstore calls the Rust host library through cgo: build with CGO_ENABLED=1 and a C compiler (gcc or clang; CC names another), and the static library host/go/build.sh lays out in build/"
