package gocloudblob_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	renderstore "convoy.dev/renderstore"
	"convoy.dev/renderstore/conformance"
	"convoy.dev/renderstore/gocloudblob"
	"github.com/aws/aws-sdk-go/aws/awserr"
	"github.com/aws/aws-sdk-go/aws/request"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
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

// A store gocloud's fileblob wrote (a <key>.attrs metadata file beside each key): the
// Rust file:// store over the same folder collects it, each key's metadata with it, and
// both open the folder with gocloud's metadata=skip.
func TestGCOfAFileblobStoreTakesTheMetadataWithItsKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := blob.OpenBucket(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	store, err := renderstore.New(gocloudblob.New(b))
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
	sidecars := func() []string {
		found, _ := filepath.Glob(filepath.Join(dir, "ns", "app", "*", "*.attrs"))
		for i, f := range found {
			found[i], _ = filepath.Rel(dir, f)
		}
		return found
	}
	if n := len(sidecars()); n != 6 {
		t.Fatalf("fileblob wrote %d metadata files: %v", n, sidecars())
	}
	byURL, err := renderstore.Open(ctx, "file://"+dir+"?metadata=skip", renderstore.WithGCGrace(0))
	if err != nil {
		t.Fatal(err)
	}
	defer byURL.Close()
	plan, err := byURL.GC(ctx, "ns", "app", 1, renderstore.ProtectedRenders{Applied: refs[2]}.Refs())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.DeleteHistory) != 4 || len(plan.DeleteRenders) != 4 || len(plan.Ignored) != 2 {
		t.Fatalf("the plan: %+v", plan)
	}
	left := sidecars()
	if len(left) != 2 {
		t.Fatalf("metadata files left: %v", left)
	}
	// What fileblob itself reads is whole: the kept render through gocloud again.
	if _, err := store.GetRender(ctx, "ns", "app", refs[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := blob.OpenBucket(ctx, "file://"+dir+"?metadata=skip"); err != nil {
		t.Fatalf("gocloud refuses the URL: %v", err)
	}
}

// A deadline through the adapter, on an S3 endpoint that never answers: the call ends
// at the deadline and its error is the context's and gocloud's, kept whole (not text).
func TestADeadlineThroughTheAdapterKeepsGocloudsError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, "s3://renders?region=us-east-1&s3ForcePathStyle=true&disableSSL=true&endpoint="+l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	store, err := renderstore.New(gocloudblob.New(b))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	call, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = store.PutRender(call, "ns", "app", [][]byte{[]byte(`{"kind":"ConfigMap"}`)})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v is not context.DeadlineExceeded", err)
	}
	// gocloud's error, and the SDK's under it, are in the chain, whole.
	var aerr awserr.Error
	if !errors.As(err, &aerr) || aerr.Code() != request.CanceledErrorCode {
		t.Fatalf("the S3 SDK's error is not in the chain of %v", err)
	}
	if took > 600*time.Millisecond {
		t.Fatalf("the call took %v with a 500 ms deadline", took)
	}
}
