package renderstore

/*
#include <stdlib.h>
#include "render_store.h"

extern void goBucketGet(void *, char *, size_t, uint64_t, rs_answer *);
extern void goBucketPut(void *, char *, size_t, uint8_t *, size_t, rs_answer *);
extern void goBucketExists(void *, char *, size_t, rs_answer *);
extern void goBucketList(void *, char *, size_t, rs_answer *);
extern void goBucketDelete(void *, char *, size_t, rs_answer *);
extern void goBucketDeleteMany(void *, rs_str *, size_t, rs_answer *);
extern void goBucketDrop(void *);

// The callback table of a Bucket store: the exported Go functions, whose parameters
// cgo declares without const.
static void rs_go_bucket(rs_bucket *b, void *user_data, int many) {
	b->size = sizeof *b;
	b->user_data = user_data;
	b->get = (rs_get_fn)goBucketGet;
	b->put = (rs_put_fn)goBucketPut;
	b->exists = (rs_key_fn)goBucketExists;
	b->list = (rs_key_fn)goBucketList;
	b->delete_key = (rs_key_fn)goBucketDelete;
	b->delete_many = many ? (rs_delete_many_fn)goBucketDeleteMany : NULL;
	b->drop = goBucketDrop;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// Option sets a limit of the sandbox, GC's grace period or the keyring, for Open,
// New, Replay and the logic functions.
type Option func(*config)

// config is what the options set: the C ABI's options, a keyring file and whether
// encryption is required.
type config struct {
	opts               C.rs_options
	keyringPath        *string
	encryptionRequired bool
}

// WithMemoryLimit caps the linear memory one sandboxed call may use, in bytes
// (default 1 GiB). A bucket object larger than this is refused before it is read.
func WithMemoryLimit(bytes uint64) Option {
	return func(c *config) { c.opts.memory_bytes = C.uint64_t(bytes) }
}

// WithFuel sets the fuel (about one unit per WebAssembly instruction) one call may
// burn (default 10^11).
func WithFuel(fuel uint64) Option {
	return func(c *config) { c.opts.fuel = C.uint64_t(fuel) }
}

// WithGCGrace sets GC's grace period (default 10 minutes): GC without an explicit
// grace never deletes a render blob modified more recently than this. Rounded down to
// whole seconds; 0 disables it.
func WithGCGrace(d time.Duration) Option {
	return func(c *config) { c.opts.gc_grace_seconds = C.uint64_t(d / time.Second) }
}

// WithConcurrentCalls sets how many sandboxed calls may run at once over every store
// with the same limits (default 64); more wait for a free slot.
func WithConcurrentCalls(n uint32) Option {
	return func(c *config) { c.opts.concurrent_calls = C.uint32_t(n) }
}

// WithRequestTimeout bounds each HTTP request of a cloud store (s3://, gs://,
// azblob://), from connecting to the last byte of its answer (default 30 s); a URL's
// own timeout parameter wins. A call's context bounds the whole call besides.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *config) { c.opts.request_timeout_ms = C.uint64_t(d / time.Millisecond) }
}

// WithConnectTimeout bounds connecting to a cloud store (default 5 s); a URL's own
// connect_timeout parameter wins.
func WithConnectTimeout(d time.Duration) Option {
	return func(c *config) { c.opts.connect_timeout_ms = C.uint64_t(d / time.Millisecond) }
}

// WithRetries sets how many times a cloud request that failed in a way worth retrying
// (a timeout or broken connection of an idempotent request, a 5xx, throttling) is made
// again, and how long after its first attempt a retry may still start (defaults: 3
// within 15 s; retries 0: never). A URL's own retries and retry_timeout parameters win.
func WithRetries(retries uint32, within time.Duration) Option {
	return func(c *config) {
		c.opts.max_retries = C.uint32_t(retries)
		c.opts.retry_timeout_ms = C.uint64_t(within / time.Millisecond)
	}
}

// WithEncryptionKeys encrypts the store's render blobs with the keyring file at path
// (CONTRACT.md, Encryption at rest): lines "ID KEY", KEY the base64 of 32 random
// bytes, the first key sealing new blobs and any key reading. The file must be a
// regular file of this user or root, readable by its owner alone; Open, New and Replay
// fail with an *Error of KindInvalidInput naming the file and line otherwise. Without
// it a store is plaintext. The logic functions ignore it.
func WithEncryptionKeys(path string) Option {
	return func(c *config) { c.keyringPath = &path }
}

// WithEncryptionRequired requires every render blob to be sealed under a key of the
// keyring (WithEncryptionKeys; CONTRACT.md, Encryption at rest): a plaintext blob is
// an *Error of KindCorrupt where it is read and is rewritten sealed by PutRender, so a
// writer of the bucket without the key cannot plant a render a rollback would apply.
// Without WithEncryptionKeys, Open and New fail with an *Error of KindInvalidInput.
// Replay ignores it: a trace replays under the rule it was recorded with.
func WithEncryptionRequired() Option {
	return func(c *config) { c.encryptionRequired = true }
}

func configOf(opts []Option) *config {
	c := new(config)
	C.rs_options_init(&c.opts, C.size_t(unsafe.Sizeof(c.opts)))
	for _, opt := range opts {
		opt(c)
	}
	return c
}

func options(opts []Option) *C.rs_options {
	return &configOf(opts).opts
}

// keyring reads the configured keyring file; nil when none is configured.
func (c *config) keyring() (*C.rs_keyring, error) {
	if c.keyringPath == nil {
		return nil, nil
	}
	p, n := cstr(*c.keyringPath)
	var k *C.rs_keyring
	if err := takeError(C.rs_keyring_open(p, n, &c.opts, &k)); err != nil {
		return nil, err
	}
	return k, nil
}

// withKeyring replaces h by a handle over the same store with the keyring k and the
// rule required; h itself when there is neither. On error h is freed.
func withKeyring(h *C.rs_store, k *C.rs_keyring, required bool) (*C.rs_store, error) {
	if k == nil && !required {
		return h, nil
	}
	var out *C.rs_store
	err := takeError(C.rs_store_with_keyring(h, k, C.bool(required), &out))
	C.rs_store_free(h)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Store is a render store: a bucket, the sandbox that runs the store's logic over it,
// and GC's grace period. Its methods may be called from many goroutines at once.
//
// A nil *Store is the store of an empty URL (CONTRACT.md §8): PutRender computes the
// renderRef and stores nothing, RecordHistory, GC and DeleteRelease do nothing, and
// the reads return ErrNoStore.
type Store struct {
	opts C.rs_options
	// keyring seals and opens render blobs; nil for a plaintext store. Freed by Close.
	keyring *C.rs_keyring
	// encryptionRequired: every render blob must be sealed under a key of keyring.
	encryptionRequired bool

	// mu guards handle: calls hold it shared, Close exclusively, so a handle is never
	// freed while a call uses it.
	mu     sync.RWMutex
	closed bool
	// closing is cancelled by Close, which cuts every call in flight (each call's
	// cancel handle listens to it) before Close waits for them.
	closing context.Context
	close   context.CancelFunc
	// handle is the URL-opened store; nil for a Bucket store.
	handle *C.rs_store
	// bucket serves a Bucket store's calls: each call gets a handle of its own whose
	// callbacks see that call's context.
	bucket Bucket
}

func checkABI() error {
	if v := C.rs_abi_version(); v != C.RS_ABI_VERSION {
		return fmt.Errorf("render store: the loaded C library has ABI version %d, this package needs %d: rebuild it (cargo build -p render-store-capi)", uint32(v), uint32(C.RS_ABI_VERSION))
	}
	return nil
}

// Open opens the store a render-store URL names: s3://, gs://, azblob://, file://,
// mem://, with every parameter of the Rust library (credentials from each cloud's
// usual environment variables). An empty URL (or blanks only) means "no render
// store": Open returns a nil *Store and no error. An unknown scheme or parameter is an
// *Error of KindURL. ctx bounds nothing beyond Open itself: a call's context is given
// to each method.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkABI(); err != nil {
		return nil, err
	}
	c := configOf(opts)
	s := &Store{opts: c.opts}
	s.closing, s.close = context.WithCancel(context.Background())
	u, n := cstr(url)
	var h *C.rs_store
	if err := takeError(C.rs_store_open(u, n, &s.opts, &h)); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, nil
	}
	k, err := c.keyring()
	if err != nil {
		C.rs_store_free(h)
		return nil, err
	}
	if h, err = withKeyring(h, k, c.encryptionRequired); err != nil {
		C.rs_keyring_free(k)
		return nil, err
	}
	s.handle, s.keyring, s.encryptionRequired = h, k, c.encryptionRequired
	return s, nil
}

// New makes a store over a Bucket the caller implements. Each Store call serves its
// bucket calls on the calling goroutine, with that call's context.
func New(bucket Bucket, opts ...Option) (*Store, error) {
	if bucket == nil {
		return nil, fmt.Errorf("render store: New needs a Bucket, got nil")
	}
	if err := checkABI(); err != nil {
		return nil, err
	}
	c := configOf(opts)
	k, err := c.keyring()
	if err != nil {
		return nil, err
	}
	s := &Store{opts: c.opts, bucket: bucket, keyring: k, encryptionRequired: c.encryptionRequired}
	s.closing, s.close = context.WithCancel(context.Background())
	// Open one handle now, so a bad option fails here rather than at the first call.
	h, _, err := s.bucketHandle(context.Background())
	if err != nil {
		C.rs_keyring_free(k)
		return nil, err
	}
	C.rs_store_free(h)
	return s, nil
}

// Close frees the store. Calls in flight are cut where they wait (a bucket request
// abandoned, as at a deadline; their errors satisfy errors.Is(err, ErrClosed)), so Close
// returns promptly; a Bucket method running then gets its context cancelled and is
// waited for. Later calls return ErrClosed. Closing a nil or closed store does nothing.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		C.rs_store_free(s.handle)
		C.rs_keyring_free(s.keyring)
		s.handle, s.keyring = nil, nil
	}
	return nil
}

// bucketHandle opens a store handle whose callbacks serve one call with ctx, and the
// call's state, where the callbacks keep the errors the Bucket returned.
func (s *Store) bucketHandle(ctx context.Context) (*C.rs_store, *callState, error) {
	st := &callState{ctx: ctx, bucket: s.bucket}
	h := cgo.NewHandle(st)
	ud := C.malloc(C.size_t(unsafe.Sizeof(C.uintptr_t(0))))
	*(*C.uintptr_t)(ud) = C.uintptr_t(h)
	var table C.rs_bucket
	_, many := s.bucket.(ManyDeleter)
	C.rs_go_bucket(&table, ud, boolInt(many))
	var out *C.rs_store
	if err := takeError(C.rs_store_new(&table, &s.opts, &out)); err != nil {
		// On error the library keeps nothing and does not call drop.
		h.Delete()
		C.free(ud)
		return nil, nil, err
	}
	// On error withKeyring has freed the handle, which frees the callback state.
	out, err := withKeyring(out, s.keyring, s.encryptionRequired)
	return out, st, err
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// call runs f with a store handle for one call, bounded by ctx: the URL store's, or a
// Bucket store's own for this call's context, behind a handle whose calls end at ctx's
// deadline or when ctx is cancelled or the store closed (rs_store_with_deadline), so
// the library cuts the call where it waits, the bucket request in flight too.
func (s *Store) call(ctx context.Context, f func(*C.rs_store) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	base := s.handle
	var st *callState
	if s.bucket != nil {
		// A Bucket method sees a context that Close cancels too.
		callCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := context.AfterFunc(s.closing, func() { cancel(ErrClosed) })
		defer stop()
		h, state, err := s.bucketHandle(callCtx)
		if err != nil {
			return err
		}
		defer C.rs_store_free(h)
		base, st = h, state
	}
	h, release, err := s.bounded(ctx, base)
	if err != nil {
		return err
	}
	err = f(h)
	release()
	return s.explain(ctx, err, st)
}

// bounded makes a handle over base whose calls end at ctx's deadline, or when ctx is
// done or the store closing (a cancel handle the library checks while the call
// waits). release frees both once the call returned.
func (s *Store) bounded(ctx context.Context, base *C.rs_store) (*C.rs_store, func(), error) {
	var timeout C.uint64_t
	if deadline, ok := ctx.Deadline(); ok {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil, context.DeadlineExceeded
		}
		timeout = C.uint64_t(left)
	}
	var cancel *C.rs_cancel
	if err := takeError(C.rs_cancel_new(&cancel)); err != nil {
		return nil, nil, err
	}
	var h *C.rs_store
	if err := takeError(C.rs_store_with_deadline(base, timeout, cancel, &h)); err != nil {
		C.rs_cancel_free(cancel)
		return nil, nil, err
	}
	// The cancel handle is freed only once no AfterFunc can still be using it: stop
	// does not wait for a callback already running, the mutex does.
	var mu sync.Mutex
	freed := false
	fire := func() {
		mu.Lock()
		defer mu.Unlock()
		if !freed {
			C.rs_cancel_cancel(cancel)
		}
	}
	// A context done at its deadline is left to the library's own deadline (a few
	// microseconds later, as it was computed after Go's), so the call fails as
	// KindDeadlineExceeded rather than as cancelled.
	stopCtx := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fire()
		}
	})
	stopClose := context.AfterFunc(s.closing, fire)
	release := func() {
		stopCtx()
		stopClose()
		mu.Lock()
		freed = true
		mu.Unlock()
		C.rs_store_free(h)
		C.rs_cancel_free(cancel)
	}
	return h, release, nil
}

// explain adds to a failed call's *Error what ended it from Go's side (Error.Unwrap):
// the context's error when the call was cut (ErrClosed when Close cut it), and the
// errors a Bucket's methods returned. Without it the error would say only what the
// library saw.
func (s *Store) explain(ctx context.Context, err error, st *callState) error {
	var e *Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	switch e.Kind {
	case KindDeadlineExceeded, KindCancelled:
		switch {
		case ctx.Err() != nil:
			e.causes = append(e.causes, ctx.Err())
			if cause := context.Cause(ctx); cause != ctx.Err() {
				e.causes = append(e.causes, cause)
			}
		case s.closing.Err() != nil:
			e.causes = append(e.causes, ErrClosed)
		case e.Kind == KindDeadlineExceeded:
			// The library's clock reached ctx's deadline a moment before Go's did.
			e.causes = append(e.causes, context.DeadlineExceeded)
		}
	}
	if st != nil {
		e.causes = append(e.causes, st.failures()...)
	}
	return err
}
