// Command go-peer computes a render's renderRef the way the Go controller does, so the
// render store's bench can put Go's figure beside the component's, and its tests can
// check that both agree on real renders.
//
// Each object goes through encoding/json decoded with UseNumber into a
// map[string]interface{} (numbers keep their text, keys come out sorted), then
// json.Marshal, then "\n"; the renderRef is "sha256:" and the hex SHA-256 of all of
// that. A YAML stream is first split into documents the way k8s.io/apimachinery's
// YAMLReader does and each document turned into JSON by sigs.k8s.io/yaml.YAMLToJSON.
//
// Usage:
//
//	go-peer json FILE...             each file one JSON object, in render order
//	go-peer yaml FILE                a YAML stream of objects
//	go-peer bench MIN_MS json FILE...
//	go-peer bench MIN_MS yaml FILE
//	go-peer batch                    YAML streams on standard input (batch.go)
//
// The first two print the renderRef. bench reads the files once, then repeats the work
// in this process on the bytes in memory (one warm-up, then at least 3 runs and MIN_MS
// milliseconds), so neither process start nor the disk is measured, and prints
// "<renderRef> <canonical bytes> <ns per run> <runs> <MiB/s of canonical bytes>".
//
// It uses the standard library and sigs.k8s.io/yaml only, so that it builds offline in
// GOPATH mode from Debian's golang-k8s-sigs-yaml-dev and golang-gopkg-yaml.v2-dev.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode"

	"sigs.k8s.io/yaml"
)

// canonicalObject is the controller's per-object step: decode (UseNumber, so 1.0 and
// 10000000000000000001 keep their text instead of passing through float64), then
// Marshal, which sorts map keys.
func canonicalObject(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var obj map[string]interface{}
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("an object is null, not a JSON object")
	}
	// One value per object: anything after it is an error, as with json.Unmarshal.
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return json.Marshal(obj)
}

// renderRef hashes the canonical form of each object followed by "\n"; it also returns
// how many canonical bytes were hashed (the bench's throughput base).
func renderRef(objects [][]byte) (string, int, error) {
	h := sha256.New()
	n := 0
	newline := []byte{'\n'}
	for i, o := range objects {
		c, err := canonicalObject(o)
		if err != nil {
			return "", 0, fmt.Errorf("object %d: %w", i, err)
		}
		h.Write(c)
		h.Write(newline)
		n += len(c) + 1
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// isSeparator: a line that is exactly "---", apart from trailing whitespace (which
// covers a "\r" before the "\n"), ends a document, as in apimachinery's YAMLReader.
func isSeparator(line []byte) bool {
	return bytes.HasPrefix(line, []byte("---")) &&
		len(bytes.TrimRightFunc(line[3:], unicode.IsSpace)) == 0
}

// splitYAML splits a stream into documents like apimachinery's YAMLReader: separator
// lines are dropped, an empty document between two separators is not returned, and
// the last document needs no separator after it. The documents are sub-slices of
// stream (the reader copies lines into a buffer; the parser sees the same text).
func splitYAML(stream []byte) [][]byte {
	var docs [][]byte
	start, pos := 0, 0
	for pos < len(stream) {
		next := len(stream)
		if i := bytes.IndexByte(stream[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		if isSeparator(stream[pos:next]) {
			if pos > start {
				docs = append(docs, stream[start:pos])
			}
			start = next
		}
		pos = next
	}
	if start < len(stream) {
		docs = append(docs, stream[start:])
	}
	return docs
}

// yamlObjects turns each document into JSON with sigs.k8s.io/yaml and drops the ones
// that are empty or only comments (YAMLToJSON gives "null" for those), as kubectl and
// the controller skip them.
func yamlObjects(stream []byte) ([][]byte, error) {
	var objects [][]byte
	for i, doc := range splitYAML(stream) {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		t := bytes.TrimSpace(j)
		if len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		objects = append(objects, j)
	}
	return objects, nil
}

// work is one whole run of a mode on inputs already in memory.
type work func() (string, int, error)

func jsonWork(files [][]byte) work {
	return func() (string, int, error) { return renderRef(files) }
}

func yamlWork(stream []byte) work {
	return func() (string, int, error) {
		objects, err := yamlObjects(stream)
		if err != nil {
			return "", 0, err
		}
		return renderRef(objects)
	}
}

func readAll(paths []string) [][]byte {
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			fail(err)
		}
		out = append(out, b)
	}
	return out
}

// modeWork builds the work of "json FILE..." or "yaml FILE".
func modeWork(args []string) work {
	if len(args) < 2 {
		usage()
	}
	files := readAll(args[1:])
	switch args[0] {
	case "json":
		return jsonWork(files)
	case "yaml":
		if len(files) != 1 {
			usage()
		}
		return yamlWork(files[0])
	}
	usage()
	return nil
}

// sink keeps the compiler from treating a run's result as unused.
var sink string

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		usage()
	}
	if args[0] == "batch" && len(args) == 1 {
		batch()
		return
	}
	if args[0] != "bench" {
		ref, _, err := modeWork(args)()
		if err != nil {
			fail(err)
		}
		fmt.Println(ref)
		return
	}
	if len(args) < 2 {
		usage()
	}
	ms, err := strconv.Atoi(args[1])
	if err != nil || ms < 0 {
		usage()
	}
	run := modeWork(args[2:])
	// Same method as the Rust bench: one warm-up, then at least 3 runs and MIN_MS.
	ref, n, err := run()
	if err != nil {
		fail(err)
	}
	min := time.Duration(ms) * time.Millisecond
	start := time.Now()
	runs := 0
	for runs < 3 || time.Since(start) < min {
		r, _, err := run()
		if err != nil {
			fail(err)
		}
		sink = r
		runs++
	}
	per := time.Since(start) / time.Duration(runs)
	mibs := float64(n) / float64(1<<20) / per.Seconds()
	fmt.Printf("%s %d %d %d %.1f\n", ref, n, per.Nanoseconds(), runs, mibs)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go-peer [bench MIN_MS] json FILE... | [bench MIN_MS] yaml FILE | batch")
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "go-peer:", err)
	os.Exit(1)
}
