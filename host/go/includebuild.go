//go:build renderstore_includebuild

package renderstore

// Never built: the build tag is never set. It names the folders of build/ as packages
// so that `go mod vendor` (which honours no build tag here) copies them, with the
// header and static libraries in them, into a consumer's vendor/ folder (the way
// wasmtime-go keeps its prebuilt libraries).
import (
	_ "convoy.dev/renderstore/build/darwin-amd64"
	_ "convoy.dev/renderstore/build/darwin-arm64"
	_ "convoy.dev/renderstore/build/include"
	_ "convoy.dev/renderstore/build/linux-amd64"
	_ "convoy.dev/renderstore/build/linux-amd64-musl"
	_ "convoy.dev/renderstore/build/linux-arm64"
	_ "convoy.dev/renderstore/build/linux-arm64-musl"
)
