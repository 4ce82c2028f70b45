// Package linuxarm64musl holds the static library for linux-arm64-musl that host/go/build.sh lays out here; it has no
// Go code. It exists so that vendoring copies the folder (includebuild.go).
package linuxarm64musl
