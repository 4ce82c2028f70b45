// Package conformance runs the bucket contract's cases (tests/conformance/bucket.json,
// CONTRACT.md §2) on a renderstore.Bucket, so every Go bucket, the package's own and
// adapters over other stores, is checked against the same data as the Rust, JS and
// Python buckets.
package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	renderstore "convoy.dev/renderstore"
)

type confValue struct {
	Text   *string `json:"text"`
	Base64 *string `json:"base64"`
	Length *int    `json:"length"`
}

func (v confValue) bytes(t *testing.T) []byte {
	var b []byte
	switch {
	case v.Text != nil:
		b = []byte(*v.Text)
	case v.Base64 != nil:
		var err error
		if b, err = base64.StdEncoding.DecodeString(*v.Base64); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("a value with neither text nor base64")
	}
	if v.Length != nil {
		if len(b) == 0 {
			t.Fatal("a length for an empty value")
		}
		out := make([]byte, 0, *v.Length)
		for len(out) < *v.Length {
			out = append(out, b...)
		}
		b = out[:*v.Length]
	}
	return b
}

type confKeys struct {
	Prefix string `json:"prefix"`
	Count  int    `json:"count"`
	Digits int    `json:"digits"`
	Suffix string `json:"suffix"`
}

func (k confKeys) list(prefix string) []string {
	out := make([]string, k.Count)
	for i := range out {
		out[i] = fmt.Sprintf("%s%s%0*d%s", prefix, k.Prefix, k.Digits, i, k.Suffix)
	}
	return out
}

type confKey struct {
	Key    *string `json:"key"`
	RawKey *string `json:"raw_key"`
}

func (k confKey) resolve(t *testing.T, prefix string) string {
	switch {
	case k.Key != nil:
		return prefix + *k.Key
	case k.RawKey != nil:
		return strings.ReplaceAll(*k.RawKey, "{prefix}", prefix)
	}
	t.Fatal("a step with no key")
	return ""
}

type confListed struct {
	Key      string    `json:"key"`
	Size     int64     `json:"size"`
	Modified string    `json:"modified"`
	Keys     *confKeys `json:"keys"`
}

type confStep struct {
	confKey
	Op       string          `json:"op"`
	Keys     *confKeys       `json:"keys"`
	Many     []confKey       `json:"many"`
	Value    *confValue      `json:"value"`
	Prefix   string          `json:"prefix"`
	Expect   json.RawMessage `json:"expect"`
	Mentions string          `json:"mentions"`
	Path     string          `json:"path"`
	What     string          `json:"what"`
	Target   string          `json:"target"`
}

type confCase struct {
	Name  string     `json:"name"`
	Needs string     `json:"needs"`
	Steps []confStep `json:"steps"`
}

// errorName is the bucket error an error stands for, as the callbacks answer it.
func errorName(err error) string {
	var tooLarge *renderstore.TooLargeError
	switch {
	case errors.Is(err, renderstore.ErrNotFound):
		return "not-found"
	case errors.Is(err, renderstore.ErrDenied):
		return "denied"
	case errors.As(err, &tooLarge):
		return "too-large"
	}
	return "failed"
}

// Run runs every case of the cases file (the path of tests/conformance/bucket.json)
// on b, each under a prefix of its own, as a subtest. Folder cases ("needs": "folder")
// are skipped with a log line: they plant links and FIFOs beside a folder bucket's
// files, which only RunFolder can do. It fails t when fewer than ten cases ran or when
// the cases left keys behind.
func Run(t *testing.T, b renderstore.Bucket, casesFile string) {
	t.Helper()
	run(t, b, casesFile, "")
}

// RunFolder is Run for a bucket over the local folder root (the object of key K is
// the file root/K, as in a file:// store): every case runs, the folder cases too,
// whose plant steps make links, FIFOs and odd files in root directly. What a case
// planted is removed when it ends.
func RunFolder(t *testing.T, b renderstore.Bucket, casesFile, root string) {
	t.Helper()
	if root == "" {
		t.Fatal("RunFolder needs the bucket's folder")
	}
	run(t, b, casesFile, root)
}

func run(t *testing.T, b renderstore.Bucket, casesFile, root string) {
	t.Helper()
	raw, err := os.ReadFile(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		RecentSeconds int64      `json:"recent_seconds"`
		Cases         []confCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &suite); err != nil {
		t.Fatalf("%s: %v", casesFile, err)
	}
	ran, folder := 0, 0
	base := fmt.Sprintf("conformance/run-%d/", time.Now().UnixNano())
	for i, c := range suite.Cases {
		if c.Needs == "folder" {
			if root == "" {
				t.Logf("%s: skipped, it needs a bucket over a local folder", c.Name)
				continue
			}
			folder++
		}
		prefix := fmt.Sprintf("%s%s-%d/", base, c.Name, i)
		t.Run(c.Name, func(t *testing.T) { runCase(t, b, c, prefix, root, suite.RecentSeconds) })
		ran++
	}
	if ran < 10 {
		t.Fatalf("only %d cases ran", ran)
	}
	if root != "" && folder == 0 {
		t.Fatal("no folder case ran")
	}
	if left, err := b.List(context.Background(), base); err != nil || len(left) != 0 {
		t.Fatalf("the cases left %d keys (%v)", len(left), err)
	}
}

// pathIn is the path in the folder root of rel, a "/"-separated path under prefix.
func pathIn(root, prefix, rel string) string {
	return filepath.Join(root, filepath.FromSlash(prefix+rel))
}

// plant makes what a plant step names, with the folders above it (0700, as a put
// makes them), and returns the path made.
func plant(root, prefix string, s confStep) (string, error) {
	path := pathIn(root, prefix, s.Path)
	parts := strings.Split(prefix+s.Path, "/")
	for depth := 1; depth < len(parts); depth++ {
		dir := filepath.Join(root, filepath.Join(parts[:depth]...))
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	switch s.What {
	case "link":
		return path, os.Symlink(pathIn(root, prefix, s.Target), path)
	case "fifo":
		return path, syscall.Mkfifo(path, 0o600)
	case "file":
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", err
		}
		_, err = f.WriteString("x")
		return path, errors.Join(err, f.Close())
	}
	return "", fmt.Errorf("a plant of %q, which this runner does not know", s.What)
}

func runCase(t *testing.T, b renderstore.Bucket, c confCase, prefix, root string, recent int64) {
	ctx := context.Background()
	start := time.Now()
	var planted []string
	defer func() {
		for i := len(planted) - 1; i >= 0; i-- {
			if err := os.Remove(planted[i]); err != nil {
				t.Errorf("removing what the case planted: %v", err)
			}
		}
		objs, _ := b.List(ctx, prefix)
		for _, o := range objs {
			b.Delete(ctx, o.Key)
		}
	}()
	for n, s := range c.Steps {
		where := fmt.Sprintf("%s step %d (%s)", c.Name, n, s.Op)
		if s.Op == "plant" {
			if root == "" || c.Needs != "folder" {
				t.Fatalf("%s: a plant step outside a folder case on a folder bucket", where)
			}
			path, err := plant(root, prefix, s)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			planted = append(planted, path)
			continue
		}
		var expect any
		if err := json.Unmarshal(s.Expect, &expect); err != nil {
			t.Fatalf("%s: expect: %v", where, err)
		}
		var err error
		var got any
		switch s.Op {
		case "put":
			value := s.Value.bytes(t)
			if s.Keys != nil {
				keys := s.Keys.list(prefix)
				for i := len(keys) - 1; i >= 0 && err == nil; i-- {
					err = b.Put(ctx, keys[i], value)
				}
			} else {
				err = b.Put(ctx, s.resolve(t, prefix), value)
			}
		case "get":
			var v []byte
			v, err = b.Get(ctx, s.resolve(t, prefix), 1<<40)
			got = v
		case "exists":
			var size int64
			size, err = b.Exists(ctx, s.resolve(t, prefix))
			if errors.Is(err, renderstore.ErrNotFound) {
				got, err = nil, nil
			} else {
				got = size
			}
		case "list":
			var objs []renderstore.Object
			objs, err = b.List(ctx, prefix+s.Prefix)
			got = objs
		case "list-delimited":
			lister, ok := b.(renderstore.DelimitedLister)
			if !ok {
				// Optional in a bucket: the Rust host folds the plain listing of one
				// without it (the bucket of a store made by New runs that fallback).
				continue
			}
			var d renderstore.Delimited
			d, err = lister.ListDelimited(ctx, prefix+s.Prefix)
			got = d
		case "delete":
			err = b.Delete(ctx, s.resolve(t, prefix))
		case "delete-many":
			var keys []string
			if s.Keys != nil {
				keys = s.Keys.list(prefix)
			}
			for _, k := range s.Many {
				keys = append(keys, k.resolve(t, prefix))
			}
			var each []error
			if many, ok := b.(renderstore.ManyDeleter); ok {
				each, err = many.DeleteMany(ctx, keys)
			} else {
				// A bucket without DeleteMany: the store deletes key by key.
				each = make([]error, len(keys))
				for i, k := range keys {
					each[i] = b.Delete(ctx, k)
				}
			}
			if each == nil {
				each = make([]error, len(keys))
			}
			got = each
		default:
			t.Fatalf("%s: an op this runner does not know", where)
		}
		if e, ok := expect.(map[string]any); ok {
			if want, ok := e["error"]; ok {
				if err == nil || errorName(err) != want {
					t.Errorf("%s: want the error %v, got %v", where, want, err)
					return
				}
				if s.Mentions != "" && !strings.Contains(err.Error(), prefix+s.Mentions) {
					t.Errorf("%s: %q does not name %s", where, err, s.Mentions)
				}
				continue
			}
		}
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return
		}
		if msg := compare(t, expect, got, prefix, start, recent, s.Op); msg != "" {
			t.Errorf("%s: %s", where, msg)
			return
		}
	}
}

func compare(t *testing.T, expect, got any, prefix string, start time.Time, recent int64, op string) string {
	if expect == "ok" {
		if each, ok := got.([]error); ok {
			for i, e := range each {
				if e != nil {
					return fmt.Sprintf("key %d: %v", i, e)
				}
			}
		}
		return ""
	}
	e := expect.(map[string]any)
	switch {
	case e["value"] != nil:
		raw, _ := json.Marshal(e["value"])
		var v confValue
		json.Unmarshal(raw, &v)
		if !bytes.Equal(got.([]byte), v.bytes(t)) {
			return fmt.Sprintf("get answered %d other bytes", len(got.([]byte)))
		}
	case op == "exists":
		if e["size"] == nil {
			if got != nil {
				return fmt.Sprintf("size %v, want absent", got)
			}
		} else if got == nil || float64(got.(int64)) != e["size"].(float64) {
			return fmt.Sprintf("size %v, want %v", got, e["size"])
		}
	case e["each"] != nil:
		each := got.([]error)
		want := e["each"].([]any)
		if len(each) != len(want) {
			return fmt.Sprintf("%d results for %d keys", len(each), len(want))
		}
		for i, w := range want {
			if w == "ok" {
				if each[i] != nil {
					return fmt.Sprintf("key %d: %v", i, each[i])
				}
			} else if each[i] == nil || errorName(each[i]) != w.(map[string]any)["error"] {
				return fmt.Sprintf("key %d: %v, want %v", i, each[i], w)
			}
		}
	case e["delimited"] != nil:
		raw, _ := json.Marshal(e["delimited"])
		var want struct {
			Folders []json.RawMessage `json:"folders"`
			Objects []any             `json:"objects"`
		}
		json.Unmarshal(raw, &want)
		var folders []string
		for _, f := range want.Folders {
			var name string
			if json.Unmarshal(f, &name) == nil {
				folders = append(folders, name)
				continue
			}
			var gen struct {
				Keys confKeys `json:"keys"`
			}
			json.Unmarshal(f, &gen)
			folders = append(folders, gen.Keys.list("")...)
		}
		d := got.(renderstore.Delimited)
		if len(d.Folders) != len(folders) {
			return fmt.Sprintf("listed %d folders, want %d", len(d.Folders), len(folders))
		}
		for i, f := range d.Folders {
			if name, ok := strings.CutPrefix(f, prefix); !ok || name != folders[i] {
				return fmt.Sprintf("folder %d is %s, want %s", i, f, folders[i])
			}
		}
		objects := map[string]any{"listed": want.Objects}
		if want.Objects == nil {
			objects["listed"] = []any{}
		}
		if msg := compare(t, objects, d.Objects, prefix, start, recent, "list"); msg != "" {
			return "objects: " + msg
		}
	case e["listed"] != nil:
		raw, _ := json.Marshal(e["listed"])
		var listed []confListed
		json.Unmarshal(raw, &listed)
		var want []confListed
		for _, l := range listed {
			if l.Keys != nil {
				for _, k := range l.Keys.list("") {
					want = append(want, confListed{Key: k, Size: l.Size})
				}
			} else {
				want = append(want, l)
			}
		}
		objs := got.([]renderstore.Object)
		if len(objs) != len(want) {
			return fmt.Sprintf("listed %d objects, want %d", len(objs), len(want))
		}
		for i, o := range objs {
			key, ok := strings.CutPrefix(o.Key, prefix)
			if !ok || key != want[i].Key || o.Size != want[i].Size {
				return fmt.Sprintf("object %d is %s (%d bytes), want %s (%d)", i, o.Key, o.Size, want[i].Key, want[i].Size)
			}
			if want[i].Modified == "recent" {
				low := start.Unix() - recent
				high := time.Now().Unix() + recent
				if m := o.Modified.Unix(); m < low || m > high {
					return fmt.Sprintf("object %d was modified at %v, not recently", i, o.Modified)
				}
			}
		}
	default:
		return fmt.Sprintf("an expectation this runner does not know: %v", e)
	}
	return ""
}
