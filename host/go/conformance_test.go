package renderstore_test

import (
	"path/filepath"
	"testing"

	renderstore "convoy/renderstore"
	"convoy/renderstore/conformance"
)

// The bucket contract's cases on the Go MemoryBucket. The folder cases need a bucket
// over a local folder: the only one here is the Rust file:// bucket behind Open, whose
// raw calls the C ABI does not expose, so the Rust suite runs them on it
// (tests/e2e/conformance.rs) and TestGCFailsClosedOnALinkedHistory checks what they
// protect through this package.
func TestBucketConformance(t *testing.T) {
	conformance.Run(t, renderstore.NewMemoryBucket(), filepath.Join("..", "..", "tests", "conformance", "bucket.json"))
}
