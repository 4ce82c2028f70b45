package main

// The batch mode: many YAML streams through one process, each turned into a render
// exactly as a Go controller does it (tests/vectors/YAML-RULES.md), and the outcome
// written as one JSON line in the fields of tests/vectors/yaml-render-ref.json. The
// differential tests and the real-world corpus compare the component with these lines,
// and a divergence they find becomes a vector made of one.
//
// Unlike the bench's "yaml" mode (which splits on "---" lines only, enough for the real
// renders it times), this mode follows apimachinery's YAMLReader line by line and gives
// each object the canonical decoding of CONTRACT.md §4, so its answers are the vectors'
// on every stream.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	goyaml "gopkg.in/yaml.v2"
	"sigs.k8s.io/yaml"
)

// outcome is one stream's result, in the vector file's fields.
type outcome struct {
	Documents          int      `json:"documents"`
	SkippedDocuments   []int    `json:"skipped_documents,omitempty"`
	Objects            []string `json:"objects,omitempty"`
	Canonical          *string  `json:"canonical,omitempty"`
	RenderRef          string   `json:"renderRef,omitempty"`
	Error              string   `json:"error,omitempty"`
	ErrorDocumentIndex *int     `json:"error_document_index,omitempty"`
	ErrorStage         string   `json:"error_stage,omitempty"`
	// Nondeterministic: two different YAML keys of one mapping become one JSON key, so
	// Go's result depends on its map order (YAML-RULES.md, Y9); only whether the stream
	// fails, and where, is then compared.
	Nondeterministic bool `json:"nondeterministic,omitempty"`
	// Panic: go-yaml or sigs.k8s.io/yaml panicked (a Go bug; never seen so far).
	Panic string `json:"panic,omitempty"`
}

// splitError is the YAMLReader's refusal of a separator line.
type splitError struct{ rest string }

func (e splitError) Error() string { return "invalid Yaml document separator: " + e.rest }

// readLine is a line as apimachinery's LineReader gives it: the bytes up to the next
// LF, without a CR right before that LF, with one LF appended; at the end of the
// stream it gives "\n" and eof. bufio.Reader.ReadLine's pieces of a long line are
// joined, so no line length matters.
func readLine(r *bufio.Reader) (line []byte, eof bool) {
	var buf bytes.Buffer
	for {
		piece, more, err := r.ReadLine()
		buf.Write(piece)
		if err != nil {
			eof = true
			break
		}
		if !more {
			break
		}
	}
	buf.WriteByte('\n')
	return buf.Bytes(), eof
}

// nextDocument is YAMLReader.Read: the next document (nil at the end), or a separator
// error. A separator line ends a document that has bytes and is dropped; one that
// opens a still-empty document stays in it.
func nextDocument(r *bufio.Reader) ([]byte, error) {
	var buffer bytes.Buffer
	for {
		line, eof := readLine(r)
		if bytes.HasPrefix(line, []byte("---")) {
			rest := strings.TrimSpace(string(line[3:]))
			if rest != "" && rest[0] != '#' {
				return nil, splitError{rest}
			}
			if buffer.Len() != 0 {
				return buffer.Bytes(), nil
			}
			if eof {
				return nil, nil
			}
		}
		if eof {
			if buffer.Len() != 0 {
				return buffer.Bytes(), nil
			}
			return nil, nil
		}
		buffer.Write(line)
	}
}

// numbers turns the json.Numbers of a decoded object into what Kubernetes' unstructured
// decoding keeps: int64 where the literal fits one, float64 otherwise.
func numbers(v interface{}) (interface{}, error) {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, e := range t {
			n, err := numbers(e)
			if err != nil {
				return nil, err
			}
			t[k] = n
		}
	case []interface{}:
		for i, e := range t {
			n, err := numbers(e)
			if err != nil {
				return nil, err
			}
			t[i] = n
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return v, nil
}

// canonical is CONTRACT.md §4 for one object: the first JSON value decoded into a map
// (numbers as numbers() keeps them), then json.Marshal.
func canonical(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var obj map[string]interface{}
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("the document is null, not a JSON object")
	}
	v, err := numbers(obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// keyString is sigs.k8s.io/yaml's conversion of a go-yaml map key to a JSON key, and
// whether it has one.
func keyString(k interface{}) (string, bool) {
	switch t := k.(type) {
	case string:
		return t, true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case float64:
		switch {
		case math.IsInf(t, 1):
			return ".inf", true
		case math.IsInf(t, -1):
			return "-.inf", true
		case math.IsNaN(t):
			return ".nan", true
		}
		return strconv.FormatFloat(t, 'g', -1, 32), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

// collides says whether some mapping of v has two keys that become one JSON key, the
// case where YAMLToJSON's result follows Go's random map order.
func collides(v interface{}) bool {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		seen := make(map[string]bool, len(t))
		for k, e := range t {
			if s, ok := keyString(k); ok {
				if seen[s] {
					return true
				}
				seen[s] = true
			}
			if collides(e) {
				return true
			}
		}
	case []interface{}:
		for _, e := range t {
			if collides(e) {
				return true
			}
		}
	}
	return false
}

// nondeterministic says whether the document's result may follow Go's map order.
func nondeterministic(doc []byte) bool {
	var v interface{}
	if goyaml.Unmarshal(doc, &v) != nil {
		return false
	}
	return collides(v)
}

// render is one stream's outcome: the documents split, each converted by YAMLToJSON,
// empty and null ones skipped, the others checked as objects and made canonical.
func render(stream []byte) (out outcome) {
	defer func() {
		if p := recover(); p != nil {
			out = outcome{Panic: fmt.Sprint(p)}
		}
	}()
	fail := func(index int, stage string, err error) outcome {
		out.Objects, out.SkippedDocuments = nil, nil
		out.Documents = index + 1
		out.Error, out.ErrorDocumentIndex, out.ErrorStage = err.Error(), &index, stage
		return out
	}
	reader := bufio.NewReader(bytes.NewReader(stream))
	var all bytes.Buffer
	h := sha256.New()
	for index := 0; ; index++ {
		doc, err := nextDocument(reader)
		if err != nil {
			return fail(index, "split", err)
		}
		if doc == nil {
			out.Documents = index
			break
		}
		if nondeterministic(doc) {
			out.Nondeterministic = true
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return fail(index, "yaml", err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			out.SkippedDocuments = append(out.SkippedDocuments, index)
			continue
		}
		c, err := canonical(j)
		if err != nil {
			return fail(index, "object", err)
		}
		out.Objects = append(out.Objects, string(j))
		all.Write(c)
		all.WriteByte('\n')
	}
	text := all.String()
	h.Write(all.Bytes())
	out.Canonical = &text
	out.RenderRef = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return out
}

// batch reads streams from standard input, each as its length in decimal, a LF, then
// its bytes, and writes each one's outcome as a JSON line, in order, until the input
// ends.
func batch() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		header, err := in.ReadString('\n')
		if err == io.EOF && header == "" {
			break
		}
		if err != nil {
			fail(fmt.Errorf("batch: reading a length: %w", err))
		}
		n, err := strconv.Atoi(strings.TrimSuffix(header, "\n"))
		if err != nil || n < 0 {
			fail(fmt.Errorf("batch: bad length %q", header))
		}
		stream := make([]byte, n)
		if _, err := io.ReadFull(in, stream); err != nil {
			fail(fmt.Errorf("batch: reading a stream: %w", err))
		}
		if err := enc.Encode(render(stream)); err != nil {
			fail(err)
		}
		// One answer per stream as soon as it is known: a caller may feed the next
		// stream only after reading this one.
		if err := out.Flush(); err != nil {
			fail(err)
		}
	}
	if err := out.Flush(); err != nil {
		fail(err)
	}
}
