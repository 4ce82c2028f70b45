package renderstore

/*
#include "render_store.h"
*/
import "C"

import (
	"context"
	"sync"
	"unsafe"
)

// Trace receives the trace (TRACES.md) of the traceable Store calls made with a
// context from WithTrace: put-render (also from YAML), get-render, has-history-ref,
// record-history, list-history, gc and delete-release. A failed call is traced too.
type Trace struct {
	mu   sync.Mutex
	text []byte
}

// Text returns the trace of the last traced call made with the context, "" before
// any.
func (t *Trace) Text() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.text...)
}

type traceKey struct{}

// WithTrace returns a context whose traceable Store calls record their trace into t.
// Replay replays one in the component alone, from the recorded bucket answers.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// traceBuf is the buffer a call records its trace into, or nil when ctx wants none.
func traceBuf(ctx context.Context) *C.rs_buf {
	if _, ok := ctx.Value(traceKey{}).(*Trace); !ok {
		return nil
	}
	return new(C.rs_buf)
}

// keepTrace hands a recorded trace to ctx's Trace and frees the buffer.
func keepTrace(ctx context.Context, b *C.rs_buf) {
	if b == nil {
		return
	}
	text := takeBytes(b)
	t := ctx.Value(traceKey{}).(*Trace)
	t.mu.Lock()
	t.text = text
	t.mu.Unlock()
}

// ReplayReport is the outcome of Replay.
type ReplayReport struct {
	// Matches says whether every bucket call and the result matched the trace.
	Matches bool
	// Text is the report for people, what `render-store replay` prints.
	Text string
	// JSON is the report as `render-store replay --json` prints it.
	JSON []byte
}

// Replay replays a trace in the component against its recorded answers alone. A
// trace that does not follow TRACES.md is an *Error of KindTrace whose TraceLine
// says where. A trace of an encrypted store replays only with the keyring it was
// recorded with (WithEncryptionKeys); another is an *Error of KindTrace at line 1.
// Whether encryption is required is the trace's own: WithEncryptionRequired is ignored.
func Replay(trace []byte, opts ...Option) (*ReplayReport, error) {
	c := configOf(opts)
	k, err := c.keyring()
	if err != nil {
		return nil, err
	}
	defer C.rs_keyring_free(k)
	t, n := cbytes(trace)
	var matches C.bool
	var text, js C.rs_buf
	if err := takeError(C.rs_replay(&c.opts, (*C.char)(unsafe.Pointer(t)), n, k, &matches, &text, &js)); err != nil {
		return nil, err
	}
	return &ReplayReport{Matches: bool(matches), Text: takeString(&text), JSON: takeBytes(&js)}, nil
}
