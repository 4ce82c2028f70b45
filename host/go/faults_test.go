package renderstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type fault int

const (
	// faultBefore: the call fails and does nothing.
	faultBefore fault = iota
	// faultAfter: the write or delete happens, then the call reports a failure.
	faultAfter
)

var errInjected = errors.New("injected fault")

// kthCallFails fails its k-th bucket call (from 1) and passes every other one on.
type kthCallFails struct {
	inner *MemoryBucket
	k     int64
	fault fault
	calls atomic.Int64
}

func (b *kthCallFails) hit() bool { return b.calls.Add(1) == b.k }

func (b *kthCallFails) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	if b.hit() {
		return nil, errInjected
	}
	return b.inner.Get(ctx, key, limit)
}

func (b *kthCallFails) Put(ctx context.Context, key string, value []byte) error {
	if b.hit() {
		if b.fault == faultAfter {
			if err := b.inner.Put(ctx, key, value); err != nil {
				return err
			}
		}
		return errInjected
	}
	return b.inner.Put(ctx, key, value)
}

func (b *kthCallFails) Exists(ctx context.Context, key string) (int64, error) {
	if b.hit() {
		return 0, errInjected
	}
	return b.inner.Exists(ctx, key)
}

func (b *kthCallFails) List(ctx context.Context, prefix string) ([]Object, error) {
	if b.hit() {
		return nil, errInjected
	}
	return b.inner.List(ctx, prefix)
}

func (b *kthCallFails) Delete(ctx context.Context, key string) error {
	if b.hit() {
		if b.fault == faultAfter {
			if err := b.inner.Delete(ctx, key); err != nil {
				return err
			}
		}
		return errInjected
	}
	return b.inner.Delete(ctx, key)
}

func (b *kthCallFails) DeleteMany(ctx context.Context, keys []string) ([]error, error) {
	if b.hit() {
		if b.fault == faultAfter {
			if _, err := b.inner.DeleteMany(ctx, keys); err != nil {
				return nil, err
			}
		}
		return nil, errInjected
	}
	return b.inner.DeleteMany(ctx, keys)
}

// singleDeletes hides a bucket's DeleteMany, so the store deletes key by key.
type singleDeletes struct{ b Bucket }

func (s singleDeletes) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	return s.b.Get(ctx, key, limit)
}
func (s singleDeletes) Put(ctx context.Context, key string, value []byte) error {
	return s.b.Put(ctx, key, value)
}
func (s singleDeletes) Exists(ctx context.Context, key string) (int64, error) {
	return s.b.Exists(ctx, key)
}
func (s singleDeletes) List(ctx context.Context, prefix string) ([]Object, error) {
	return s.b.List(ctx, prefix)
}
func (s singleDeletes) Delete(ctx context.Context, key string) error { return s.b.Delete(ctx, key) }

// populated is two releases with six and two syncs, an unrecorded blob (the
// lastAttempted render) and a foreign file; it returns the protected refs.
func populated(t *testing.T) (*MemoryBucket, []string) {
	t.Helper()
	bucket := NewMemoryBucket()
	s, err := New(bucket, WithGCGrace(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := context.Background()
	var refs []string
	for _, rel := range []struct {
		name string
		n    int
	}{{"app", 6}, {"other", 2}} {
		for i := 0; i < rel.n; i++ {
			r, err := s.PutRender(c, "ns", rel.name, render(i))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.RecordHistory(c, "ns", rel.name, r, t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("v%d", i)); err != nil {
				t.Fatal(err)
			}
			if rel.name == "app" {
				refs = append(refs, r)
			}
		}
	}
	attempted, err := s.PutRender(c, "ns", "app", render(50))
	if err != nil {
		t.Fatal(err)
	}
	if err := bucket.Put(c, "ns/app/renders/upload.tmp", []byte("partial")); err != nil {
		t.Fatal(err)
	}
	return bucket, []string{attempted, refs[0]}
}

type operation string

const (
	opPutRender     operation = "PutRender"
	opRecordHistory operation = "RecordHistory"
	opGC            operation = "GC"
	opDeleteRelease operation = "DeleteRelease"
)

func (op operation) run(s *Store, protected []string) error {
	c := context.Background()
	switch op {
	case opPutRender:
		_, err := s.PutRender(c, "ns", "app", render(99))
		return err
	case opRecordHistory:
		r, err := RenderRef(render(99))
		if err != nil {
			return err
		}
		_, err = s.RecordHistory(c, "ns", "app", r, t0.Add(99*time.Second), "v99")
		return err
	case opGC:
		_, err := s.GC(c, "ns", "app", 2, protected)
		return err
	default:
		_, err := s.DeleteRelease(c, "ns", "app")
		return err
	}
}

// startingState is the populated store op starts from: record-history records a
// render whose blob is already stored, as a sync does.
func startingState(t *testing.T, op operation) (*MemoryBucket, []string) {
	bucket, protected := populated(t)
	if op == opRecordHistory {
		s, _ := New(bucket)
		defer s.Close()
		if _, err := s.PutRender(context.Background(), "ns", "app", render(99)); err != nil {
			t.Fatal(err)
		}
	}
	return bucket, protected
}

func snapshot(b *MemoryBucket) map[string][]byte {
	all := map[string][]byte{}
	for _, k := range b.Keys() {
		v, err := b.Get(context.Background(), k, 1<<40)
		if err != nil {
			panic(err)
		}
		all[k] = v
	}
	return all
}

func equalSnapshots(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// checkInvariants: every blob hashes to its key, every entry has its blob, every
// protected blob is there, and nothing outside the release changed.
func checkInvariants(t *testing.T, state, before map[string][]byte, protected []string, name string) {
	t.Helper()
	for k, v := range before {
		if !strings.HasPrefix(k, "ns/app/") && !bytes.Equal(state[k], v) {
			t.Errorf("%s: %s outside the release changed", name, k)
		}
	}
	for k, v := range state {
		if !strings.HasPrefix(k, "ns/app/") {
			if _, ok := before[k]; !ok {
				t.Errorf("%s: %s appeared outside the release", name, k)
			}
		}
		if r, ok := strings.CutPrefix(k, "ns/app/renders/sha256:"); ok {
			sum := sha256.Sum256(v)
			if hex.EncodeToString(sum[:]) != r {
				t.Errorf("%s: %s does not hash to its key", name, k)
			}
		}
		if e, ok := strings.CutPrefix(k, "ns/app/history/"); ok {
			_, r, _ := strings.Cut(e, "-")
			if _, ok := state["ns/app/renders/"+r]; !ok {
				t.Errorf("%s: %s lost its blob", name, k)
			}
		}
	}
	for _, r := range protected {
		if _, ok := state["ns/app/renders/"+r]; !ok {
			t.Errorf("%s: protected %s lost", name, r)
		}
	}
}

func TestFaultAtEveryCall(t *testing.T) {
	if testing.Short() {
		t.Skip("many stores; not in -short")
	}
	cases := 0
	// With DeleteMany (one call per batch) and without (the store deletes key by key).
	for _, many := range []bool{true, false} {
		cases += faultCases(t, many)
	}
	t.Logf("fault injection: %d (operation, call, fault) cases", cases)
	if cases < 40 {
		t.Fatalf("only %d cases ran", cases)
	}
}

func faultCases(t *testing.T, many bool) int {
	wrap := func(b *kthCallFails) Bucket {
		if many {
			return b
		}
		return singleDeletes{b}
	}
	cases := 0
	for _, op := range []operation{opPutRender, opRecordHistory, opGC, opDeleteRelease} {
		bucket, protected := startingState(t, op)
		counter := &kthCallFails{inner: bucket}
		s, _ := New(wrap(counter), WithGCGrace(0))
		if err := op.run(s, protected); err != nil {
			t.Fatalf("%s without a fault: %v", op, err)
		}
		s.Close()
		calls := counter.calls.Load()
		want := snapshot(bucket)
		if calls < 1 {
			t.Fatalf("%s made no bucket call", op)
		}
		for k := int64(1); k <= calls; k++ {
			for _, f := range []fault{faultBefore, faultAfter} {
				name := fmt.Sprintf("%s failing call %d of %d (fault %d, DeleteMany %v)", op, k, calls, f, many)
				bucket, protected := startingState(t, op)
				before := snapshot(bucket)
				s, _ := New(wrap(&kthCallFails{inner: bucket, k: k, fault: f}), WithGCGrace(0))
				err := op.run(s, protected)
				s.Close()
				if !errors.Is(err, ErrBucket) || !strings.Contains(err.Error(), "injected fault") {
					t.Errorf("%s: the fault was not reported as a bucket error: %v", name, err)
				}
				keep := protected
				if op == opDeleteRelease {
					keep = nil
				}
				checkInvariants(t, snapshot(bucket), before, keep, name)
				s, _ = New(bucket, WithGCGrace(0))
				if err := op.run(s, protected); err != nil {
					t.Errorf("%s: the retry failed: %v", name, err)
				}
				s.Close()
				after := snapshot(bucket)
				checkInvariants(t, after, before, keep, name)
				if !equalSnapshots(after, want) {
					t.Errorf("%s: the retry left another state", name)
				}
				cases++
			}
		}
	}
	return cases
}

// panicky panics in the one method named.
type panicky struct {
	*MemoryBucket
	in string
}

func (p panicky) Exists(ctx context.Context, key string) (int64, error) {
	if p.in == "exists" {
		panic("exists blew up")
	}
	return p.MemoryBucket.Exists(ctx, key)
}

func (p panicky) List(ctx context.Context, prefix string) ([]Object, error) {
	if p.in == "list" {
		panic(fmt.Errorf("list blew up"))
	}
	return p.MemoryBucket.List(ctx, prefix)
}

func TestBucketPanicIsAnErrorOfThatCall(t *testing.T) {
	for _, in := range []string{"exists", "list"} {
		mem := NewMemoryBucket()
		s, err := New(panicky{mem, in})
		if err != nil {
			t.Fatal(err)
		}
		var opErr error
		if in == "exists" {
			_, opErr = s.PutRender(ctx(t), "ns", "app", render(1))
		} else {
			_, opErr = s.History(ctx(t), "ns", "app")
		}
		if !errors.Is(opErr, ErrBucket) || !strings.Contains(opErr.Error(), in+" blew up") {
			t.Errorf("a panic in %s: %v", in, opErr)
		}
		// The store goes on: the next call that avoids the method works.
		if in == "list" {
			if _, err := s.PutRender(ctx(t), "ns", "app", render(1)); err != nil {
				t.Errorf("after a panic in list: %v", err)
			}
		} else if _, err := s.History(ctx(t), "ns", "app"); err != nil {
			t.Errorf("after a panic in exists: %v", err)
		}
		s.Close()
	}
}

func TestContextCancelledInsideACall(t *testing.T) {
	c, cancel := context.WithCancel(context.Background())
	b := &cancelling{MemoryBucket: NewMemoryBucket(), cancel: cancel}
	s, _ := New(b)
	defer s.Close()
	_, err := s.PutRender(c, "ns", "app", render(1))
	if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrBucket) {
		t.Fatalf("cancelled mid-call: %v", err)
	}
	if len(b.Keys()) != 0 {
		t.Fatalf("a cancelled put wrote %v", b.Keys())
	}
}

// cancelling cancels the call's context in its first Exists.
type cancelling struct {
	*MemoryBucket
	cancel context.CancelFunc
}

func (b *cancelling) Exists(ctx context.Context, key string) (int64, error) {
	b.cancel()
	return 0, ErrNotFound
}
