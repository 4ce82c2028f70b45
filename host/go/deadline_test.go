package renderstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// blackHole listens on 127.0.0.1, accepts every connection and never answers: a
// server that hangs. Its URL opens an s3:// store on it.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return fmt.Sprintf("s3://renders?region=us-east-1&endpoint=http://%s&use_path_style=true&anonymous=true", l.Addr())
}

// cut is one store call on a store whose bucket never answers.
type cut struct {
	name string
	call func(ctx context.Context, s *Store) error
}

func storeCalls() []cut {
	ref, _ := RenderRef(render(1))
	return []cut{
		{"PutRender", func(ctx context.Context, s *Store) error {
			_, err := s.PutRender(ctx, "ns", "app", render(1))
			return err
		}},
		{"GetRender", func(ctx context.Context, s *Store) error {
			_, err := s.GetRender(ctx, "ns", "app", ref)
			return err
		}},
		{"HasHistoryRef", func(ctx context.Context, s *Store) error {
			_, err := s.HasHistoryRef(ctx, "ns", "app", ref)
			return err
		}},
		{"RecordHistory", func(ctx context.Context, s *Store) error {
			_, err := s.RecordHistory(ctx, "ns", "app", ref, time.Unix(1767225600, 0), "v1")
			return err
		}},
		{"History", func(ctx context.Context, s *Store) error {
			_, err := s.History(ctx, "ns", "app")
			return err
		}},
		{"HistoryPage", func(ctx context.Context, s *Store) error {
			_, err := s.HistoryPage(ctx, "ns", "app", 10, "")
			return err
		}},
		{"GC", func(ctx context.Context, s *Store) error {
			_, err := s.GC(ctx, "ns", "app", 2, []string{ref})
			return err
		}},
		{"DeleteRelease", func(ctx context.Context, s *Store) error {
			_, err := s.DeleteRelease(ctx, "ns", "app")
			return err
		}},
		{"Bucket().Get", func(ctx context.Context, s *Store) error {
			_, err := s.Bucket().Get(ctx, "ns/app/renders/"+ref, 1<<20)
			return err
		}},
	}
}

// Each store call on a bucket that never answers ends within 100 ms of its context's
// deadline, with an error that is the context's and the store's.
func TestADeadlineEndsEveryCallOnABlackHole(t *testing.T) {
	store, err := Open(context.Background(), blackHole(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const deadline = 300 * time.Millisecond
	for _, c := range storeCalls() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		end, _ := ctx.Deadline()
		err := c.call(ctx, store)
		late := time.Since(end)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v is not context.DeadlineExceeded", c.name, err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindDeadlineExceeded {
			t.Errorf("%s: %#v is not an *Error of KindDeadlineExceeded", c.name, err)
		}
		if late > 100*time.Millisecond || late < -5*time.Millisecond {
			t.Errorf("%s ended %v after its deadline", c.name, late)
		}
		t.Logf("%s: cut %v after the deadline: %v", c.name, late, err)
	}
}

// A cancelled context ends the call in flight the same way.
func TestACancelEndsTheCallInFlight(t *testing.T) {
	store, err := Open(context.Background(), blackHole(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err = store.PutRender(ctx, "ns", "app", render(1))
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCancelled) {
		t.Fatalf("%v is not context.Canceled", err)
	}
	if took > 300*time.Millisecond {
		t.Fatalf("the cancelled call took %v", took)
	}
	// A cause given to the context is in the chain too.
	why := errors.New("the reconcile was superseded")
	ctx, cancelCause := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancelCause(why) })
	_, err = store.DeleteRelease(ctx, "ns", "app")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, why) {
		t.Fatalf("%v lacks the cancel's cause", err)
	}
}

// Close cuts the calls in flight and returns within a second; they fail with ErrClosed.
func TestCloseCutsTheCallsInFlight(t *testing.T) {
	store, err := Open(context.Background(), blackHole(t))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			_, err := store.GC(context.Background(), "ns", "app", 1, nil)
			errs <- err
		}()
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Close took %v with calls in flight", took)
	}
	for i := 0; i < 3; i++ {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("a call cut by Close: %v", err)
		}
	}
	if _, err := store.PutRender(context.Background(), "ns", "app", render(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after Close: %v", err)
	}
}

// WithRequestTimeout and WithRetries bound a cloud request without any context
// deadline: the call fails as a bucket failure, not after object_store's three minutes.
func TestTheCloudClientsTimeoutIsAnOption(t *testing.T) {
	store, err := Open(context.Background(), blackHole(t),
		WithRequestTimeout(200*time.Millisecond), WithRetries(0, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	start := time.Now()
	_, err = store.GetRender(context.Background(), "ns", "app", mustRef(t))
	took := time.Since(start)
	if !errors.Is(err, ErrBucket) || took > 2*time.Second {
		t.Fatalf("after %v: %v", took, err)
	}
	// The URL's own parameter wins over the option.
	_, err = Open(context.Background(), blackHole(t)+"&timeout=soon", WithRequestTimeout(time.Second))
	if !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), "timeout must be a duration") {
		t.Fatalf("a bad timeout parameter: %v", err)
	}
}

func mustRef(t *testing.T) string {
	ref, err := RenderRef(render(1))
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// hangingBucket never answers: each method waits for its context and returns a
// wrapped context error, as a gocloud bucket does.
type hangingBucket struct{ MemoryBucket }

func (b *hangingBucket) Exists(ctx context.Context, key string) (int64, error) {
	<-ctx.Done()
	return 0, fmt.Errorf("head %s: %w", key, ctx.Err())
}

func (b *hangingBucket) List(ctx context.Context, prefix string) ([]Object, error) {
	<-ctx.Done()
	return nil, &wordedError{"the listing was abandoned"}
}

// wordedError does not wrap the context's error: the chain still holds it.
type wordedError struct{ text string }

func (e *wordedError) Error() string { return e.text }

// A Bucket's own errors are kept whole in the chain (wrap, do not flatten), and the
// context's error with them, whether or not the Bucket wrapped it.
func TestABucketsErrorsStayInTheChain(t *testing.T) {
	store, err := New(&hangingBucket{*NewMemoryBucket()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = store.PutRender(ctx, "ns", "app", render(1))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 400*time.Millisecond {
		t.Fatalf("PutRender on a hanging bucket: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = store.History(ctx, "ns", "app")
	var worded *wordedError
	if !errors.As(err, &worded) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("History on a hanging bucket: %v", err)
	}
	// Close cancels the context a Bucket method waits on.
	errs := make(chan error, 1)
	go func() {
		_, err := store.HasHistoryRef(context.Background(), "ns", "app", mustRef(t))
		errs <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start = time.Now()
	store.Close()
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Close took %v with a Bucket method waiting", took)
	}
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Fatalf("the call Close cut: %v", err)
	}
}
