package gocloudblob_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	renderstore "convoy/renderstore"
	"convoy/renderstore/conformance"
	"convoy/renderstore/gocloudblob"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

var casesFile = filepath.Join("..", "..", "..", "tests", "conformance", "bucket.json")

func TestConformanceMemblob(t *testing.T) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	conformance.Run(t, gocloudblob.New(b), casesFile)
}

func TestConformanceFileblob(t *testing.T) {
	b, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	conformance.Run(t, gocloudblob.New(b), casesFile)
}

// A sync, read back and GC through a *blob.Bucket, and the same store opened by URL
// in the Rust library reads what the adapter wrote.
func TestStoreOverFileblob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := blob.OpenBucket(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	store, err := renderstore.New(gocloudblob.New(b), renderstore.WithGCGrace(0))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var refs []string
	for i, v := range []string{"1", "2", "3"} {
		objects := [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"v":"` + v + `"}}`)}
		ref, err := store.PutRender(ctx, "ns", "app", objects)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.RecordHistory(ctx, "ns", "app", ref, t0(i), "v"+v); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	plan, err := store.GC(ctx, "ns", "app", 2, []string{refs[2]})
	if err != nil || len(plan.DeleteHistory) != 1 || len(plan.DeleteRenders) != 1 {
		t.Fatalf("GC: %+v %v", plan, err)
	}
	byURL, err := renderstore.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer byURL.Close()
	got, err := byURL.GetRender(ctx, "ns", "app", refs[1])
	want, _ := store.GetRender(ctx, "ns", "app", refs[1])
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the Rust file:// store read %q (%v)", got, err)
	}
	if _, err := byURL.GetRender(ctx, "ns", "app", refs[0]); !errors.Is(err, renderstore.ErrNotFound) {
		t.Fatalf("a collected render: %v", err)
	}
}

func t0(i int) time.Time { return time.Unix(1767225600+int64(i), 0).UTC() }
