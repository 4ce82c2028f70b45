// Package linuxamd64 holds the static library for linux-amd64 that host/go/build.sh lays out here; it has no
// Go code. It exists so that vendoring copies the folder (includebuild.go).
package linuxamd64
