package renderstore_test

import (
	"context"
	"path/filepath"
	"testing"

	renderstore "convoy.dev/renderstore"
	"convoy.dev/renderstore/conformance"
)

var casesFile = filepath.Join("..", "..", "tests", "conformance", "bucket.json")

// The bucket contract's cases on the Go MemoryBucket (the folder cases need a folder).
func TestBucketConformance(t *testing.T) {
	conformance.Run(t, renderstore.NewMemoryBucket(), casesFile)
}

// The cases on the Go MemoryBucket under a store made by New, called through the
// library's direct bucket calls: every answer crosses the C ABI twice, and the
// delimiter listing, which MemoryBucket lacks, is the library's fold of its plain
// listing (the fallback every bucket without one gets), where the run above leaves
// those steps out.
func TestBucketConformanceThroughTheLibrary(t *testing.T) {
	s, err := renderstore.New(renderstore.NewMemoryBucket())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := renderstore.LibraryBucketOf(s)
	if _, ok := b.(renderstore.DelimitedLister); !ok {
		t.Fatal("the library's bucket has no ListDelimited")
	}
	conformance.Run(t, b, casesFile)
}

// Every case, the folder ones too, on the Rust file:// bucket of a URL-opened store,
// through the C ABI's direct bucket calls: links, FIFOs and odd files planted in the
// store's folder give what the contract says, seen from Go.
func TestBucketConformanceOnAFileStore(t *testing.T) {
	dir := t.TempDir()
	s, err := renderstore.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.Bucket().(renderstore.ManyDeleter); !ok {
		t.Fatal("the bucket of a URL store has no DeleteMany")
	}
	if _, ok := s.Bucket().(renderstore.DelimitedLister); !ok {
		t.Fatal("the bucket of a URL store has no ListDelimited")
	}
	conformance.RunFolder(t, s.Bucket(), casesFile, dir)
}

// The bucket of a store made by New is the Bucket it was given; a nil store has none.
func TestBucketOfAStore(t *testing.T) {
	b := renderstore.NewMemoryBucket()
	s, err := renderstore.New(b)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Bucket() != renderstore.Bucket(b) {
		t.Fatal("New's store does not give back its bucket")
	}
	var none *renderstore.Store
	if none.Bucket() != nil {
		t.Fatal("a nil store has a bucket")
	}
}
