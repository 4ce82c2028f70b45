//go:build cgo

package renderstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Bucket is a byte store the render store keeps its keys in: the bucket contract of
// CONTRACT.md §2. New serves the component's bucket calls from it. Every method gets
// the context of the Store call it serves, and may be called from several goroutines
// at once (one per Store call in flight).
//
// A method must not call the Store it serves (such a call fails with
// KindInvalidArgument). A panic in a method is recovered and becomes the failure of
// that bucket call; so does an error. Do not call runtime.Goexit (or t.FailNow) in a
// method: it cannot unwind through the library.
type Bucket interface {
	// Get returns the whole content of key. An absent key is ErrNotFound (or an
	// error wrapping it); content larger than limit (the call's memory cap) should be
	// refused before it is read, with a *TooLargeError.
	Get(ctx context.Context, key string, limit int64) ([]byte, error)
	// Put stores value under key atomically: a reader sees the old content or the
	// new, never a part. value is only valid during the call: copy it to keep it.
	Put(ctx context.Context, key string, value []byte) error
	// Exists returns the size of key by a metadata request, or ErrNotFound.
	Exists(ctx context.Context, key string) (int64, error)
	// List returns every object whose key starts with prefix, in any order. A listing
	// that cannot be complete is an error, never a shorter listing (fail closed: GC
	// decides what to delete from it).
	List(ctx context.Context, prefix string) ([]Object, error)
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, key string) error
}

// ManyDeleter is the sixth bucket call, optional: a Bucket that also implements it
// deletes a batch of keys (at most 1,000) in one request. Without it keys are deleted
// one by one with Delete.
type ManyDeleter interface {
	// DeleteMany deletes keys. It returns either an error for the whole request (any
	// of the keys may or may not be gone then), or one error per key (nil for a key
	// deleted or absent; the slice as long as keys, or nil when every key succeeded).
	DeleteMany(ctx context.Context, keys []string) ([]error, error)
}

// DelimitedLister is an optional bucket call (CONTRACT.md §2): what lies directly under
// a folder prefix, with one request a page where the backend has a delimiter listing.
// The bucket of a URL-opened store implements it (the Rust host finds a store's
// releases with it). The C ABI's bucket callbacks have no such call, so under a store
// made by New a Go Bucket is listed in full with List and the listing folded, which
// answers the same: a Bucket need not implement it.
type DelimitedLister interface {
	// ListDelimited answers the folders directly under prefix (empty, or ending in
	// "/"), each as prefix + name + "/", and the objects directly in it, each sorted
	// by bytes; complete across pages or an error. A prefix that names no folder is
	// an error wrapping ErrDenied.
	ListDelimited(ctx context.Context, prefix string) (Delimited, error)
}

// Delimited is the answer of a delimiter listing.
type Delimited struct {
	// Folders are the folders directly under the prefix, each ending in "/".
	Folders []string
	// Objects are the objects directly in the prefix.
	Objects []Object
}

// Object is one entry of a listing.
type Object struct {
	// Key is the whole key.
	Key string
	// Size is the object's size in bytes.
	Size int64
	// Modified is its last modification time by the bucket's clock (GC's grace
	// period is judged by it).
	Modified time.Time
}

// TooLargeError is what Bucket.Get returns for an object larger than its limit.
type TooLargeError struct {
	// Size is the object's size in bytes.
	Size int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the object is %d bytes, more than the call's limit", e.Size)
}

// callState is what a Bucket store's callbacks need during one Store call, and what
// they report back: the errors the Bucket's methods returned.
type callState struct {
	ctx    context.Context
	bucket Bucket

	mu     sync.Mutex
	failed []error
}

// keep records an error a Bucket method returned (or the context's, when the call was
// answered without asking the Bucket), so the call's *Error unwraps to it. A failure
// while the context is done keeps the context's error too: a Bucket that words its
// own error may not wrap it.
func (st *callState) keep(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	// One call makes few bucket calls that fail: it stops at the first in most cases.
	if len(st.failed) >= 8 {
		return
	}
	st.failed = append(st.failed, err)
	if ctxErr := st.ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		st.failed = append(st.failed, ctxErr)
	}
	// The cause the context was cancelled with (ErrClosed when Close cut the call).
	if cause := context.Cause(st.ctx); cause != nil && cause != st.ctx.Err() && !errors.Is(err, cause) {
		st.failed = append(st.failed, cause)
	}
}

// failures returns what keep recorded.
func (st *callState) failures() []error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]error(nil), st.failed...)
}
