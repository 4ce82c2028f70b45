// Package darwinamd64 holds the static library for darwin-amd64 that host/go/build.sh lays out here; it has no
// Go code. It exists so that vendoring copies the folder (includebuild.go).
package darwinamd64
