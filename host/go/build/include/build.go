// Package include holds the C header that host/go/build.sh lays out here; it has no
// Go code. It exists so that vendoring copies the folder (includebuild.go).
package include
