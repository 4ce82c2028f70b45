package renderstore

/*
#include "render_store.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Kind values are the header's, checked when the package compiles: an index out of
// range here means errors.go and host/capi/include/render_store.h disagree.
func _() {
	var same [1]struct{}
	_ = same[int(KindInvalidInput)-int(C.RS_ERROR_INVALID_INPUT)]
	_ = same[int(KindInvalidObject)-int(C.RS_ERROR_INVALID_OBJECT)]
	_ = same[int(KindInvalidYAML)-int(C.RS_ERROR_INVALID_YAML)]
	_ = same[int(KindNotFound)-int(C.RS_ERROR_NOT_FOUND)]
	_ = same[int(KindCorrupt)-int(C.RS_ERROR_CORRUPT)]
	_ = same[int(KindBucket)-int(C.RS_ERROR_BUCKET)]
	_ = same[int(KindBackend)-int(C.RS_ERROR_BACKEND)]
	_ = same[int(KindURL)-int(C.RS_ERROR_URL)]
	_ = same[int(KindMemoryCap)-int(C.RS_ERROR_MEMORY_CAP)]
	_ = same[int(KindFuel)-int(C.RS_ERROR_FUEL)]
	_ = same[int(KindTrap)-int(C.RS_ERROR_TRAP)]
	_ = same[int(KindRuntime)-int(C.RS_ERROR_RUNTIME)]
	_ = same[int(KindNoHistory)-int(C.RS_ERROR_NO_HISTORY)]
	_ = same[int(KindTrace)-int(C.RS_ERROR_TRACE)]
	_ = same[int(KindPanic)-int(C.RS_ERROR_PANIC)]
	_ = same[int(KindInvalidArgument)-int(C.RS_ERROR_INVALID_ARGUMENT)]
	_ = same[int(KindDenied)-int(C.RS_ERROR_DENIED)]
	_ = same[int(KindTooLarge)-int(C.RS_ERROR_TOO_LARGE)]
	_ = same[int(KindEncryptionKey)-int(C.RS_ERROR_ENCRYPTION_KEY)]
	_ = same[int(KindDeadlineExceeded)-int(C.RS_ERROR_DEADLINE_EXCEEDED)]
	_ = same[int(KindCancelled)-int(C.RS_ERROR_CANCELLED)]
	_ = same[int(StageSplit)-int(C.RS_YAML_STAGE_SPLIT)]
	_ = same[int(StageYAML)-int(C.RS_YAML_STAGE_YAML)]
	_ = same[int(StageObject)-int(C.RS_YAML_STAGE_OBJECT)]
}

// Kind says what went wrong, as the Rust library's error variants do. Every Kind is
// also an error, so a kind is its own sentinel: errors.Is(err, renderstore.ErrNotFound)
// holds for any *Error of KindNotFound. The values are the C ABI's RS_ERROR_* codes
// (host/capi/include/render_store.h); cgo.go checks at compile time that they agree.
type Kind int

// The kinds of error.
const (
	// KindInvalidInput: a namespace, name, renderRef, time or summary was rejected
	// before any bucket call, or text was not UTF-8.
	KindInvalidInput Kind = 1
	// KindInvalidObject: an object of a render is not a JSON object (Error.ObjectIndex
	// says which).
	KindInvalidObject Kind = 2
	// KindInvalidYAML: a YAML stream is not a render (an *InvalidYAMLError says where).
	KindInvalidYAML Kind = 3
	// KindNotFound: the render asked for is not in the store.
	KindNotFound Kind = 4
	// KindCorrupt: a stored blob does not hash to its key, or an entry does not parse.
	KindCorrupt Kind = 5
	// KindBucket: a bucket call of the operation failed; the message names the call
	// and the key.
	KindBucket Kind = 6
	// KindBackend: a bucket call the host made itself, outside the component, failed.
	KindBackend Kind = 7
	// KindURL: the render-store URL cannot be opened.
	KindURL Kind = 8
	// KindMemoryCap: the call's memory would have grown past its cap.
	KindMemoryCap Kind = 9
	// KindFuel: the call used up its fuel (CPU budget).
	KindFuel Kind = 10
	// KindTrap: the component trapped; only this call was affected.
	KindTrap Kind = 11
	// KindRuntime: the sandbox or the library's runtime could not be set up or used.
	KindRuntime Kind = 12
	// KindNoHistory: a diff against the newest entry of a release with no history.
	KindNoHistory Kind = 13
	// KindTrace: a trace given to Replay does not follow TRACES.md.
	KindTrace Kind = 14
	// KindPanic: the library panicked; a bug, please report it with the message.
	KindPanic Kind = 15
	// KindInvalidArgument: a rule of the C ABI was broken (for example a store call
	// made from inside a Bucket method on the same goroutine).
	KindInvalidArgument Kind = 16
	// KindDenied: a bucket refused a call (a key it cannot store, a link or FIFO
	// where the key's path goes, a read-only bucket). ErrDenied is its sentinel.
	KindDenied Kind = 17
	// KindTooLarge: a direct Get of Store.Bucket met an object over its limit (the
	// bucket answers it as a *TooLargeError).
	KindTooLarge Kind = 18
	// KindEncryptionKey: a render blob is sealed under a key the store's keyring does
	// not hold, or holds under that id a different key; the message names the key id.
	KindEncryptionKey Kind = 19
	// KindDeadlineExceeded: the call's context reached its deadline while the call ran;
	// the call was cut where it waited (a bucket request in flight abandoned), leaving
	// the store as a crash at that moment would. The error also satisfies
	// errors.Is(err, context.DeadlineExceeded).
	KindDeadlineExceeded Kind = 20
	// KindCancelled: the call's context was cancelled while the call ran, and the call
	// cut as at a deadline. The error also satisfies errors.Is(err, context.Canceled)
	// (or, when Close cut it, errors.Is(err, ErrClosed)).
	KindCancelled Kind = 21
)

// String spells the kind as the WIT and traces do ("not-found", "memory-cap", …).
func (k Kind) String() string { return C.GoString(C.rs_error_kind_name(C.int32_t(k))) }

// Error makes a Kind usable as a sentinel with errors.Is.
func (k Kind) Error() string { return "render store: " + k.String() }

// Sentinels for errors.Is. ErrNotFound is also what a Bucket's Get and Exists return
// for an absent key.
var (
	ErrInvalidInput  error = KindInvalidInput
	ErrInvalidObject error = KindInvalidObject
	ErrInvalidYAML   error = KindInvalidYAML
	ErrNotFound      error = KindNotFound
	ErrCorrupt       error = KindCorrupt
	ErrBucket        error = KindBucket
	ErrBackend       error = KindBackend
	ErrURL           error = KindURL
	ErrMemoryCap     error = KindMemoryCap
	ErrFuel          error = KindFuel
	ErrTrap          error = KindTrap
	ErrRuntime       error = KindRuntime
	ErrNoHistory     error = KindNoHistory
	ErrTrace         error = KindTrace
	ErrPanic         error = KindPanic
	// ErrDenied marks a refusal of a bucket rather than a failure: a Bucket method
	// returns an error wrapping it (fmt.Errorf("%w: …", ErrDenied)), and the bucket
	// call is answered as denied, with the error's text. The bucket of
	// Store.Bucket returns it the same way.
	ErrDenied error = KindDenied
	// ErrEncryptionKey: a render blob is sealed under a key the keyring lacks.
	ErrEncryptionKey error = KindEncryptionKey
	// ErrDeadlineExceeded and ErrCancelled: the call's context ended it. Such an error
	// also satisfies errors.Is with context.DeadlineExceeded or context.Canceled.
	ErrDeadlineExceeded error = KindDeadlineExceeded
	ErrCancelled        error = KindCancelled
)

// ErrClosed is returned by the methods of a Store after Close.
var ErrClosed = errors.New("render store: the store is closed")

// ErrNoStore is returned by the reads of a nil *Store (the store of an empty URL,
// CONTRACT.md §8): there is no render to read. Writes on a nil *Store do nothing.
var ErrNoStore = errors.New("render store: no render store is configured (empty URL)")

// Error is an error of the render store: its kind, the whole message as the Rust
// library words it, and what the kind carries.
type Error struct {
	// Kind says what went wrong.
	Kind Kind
	// Message is the whole sentence, what the CLI prints.
	Message string
	// Detail is the text the kind carries alone (the component's own message for the
	// WIT kinds, as a trace records it).
	Detail string
	// ObjectIndex is the position (from 0) of the first bad object for
	// KindInvalidObject, and -1 otherwise.
	ObjectIndex int
	// TraceLine is the first bad line (from 1) of a trace for KindTrace, 0 otherwise.
	TraceLine int
	// MemoryWanted and MemoryCap are, for KindMemoryCap, the bytes the call's memory
	// would have grown to and the cap.
	MemoryWanted, MemoryCap uint64
	// Fuel is the call's fuel budget for KindFuel.
	Fuel uint64

	// tooLarge is the object's size for KindTooLarge.
	tooLarge int64
	// causes are what ended the call from Go's side: the context's error for
	// KindDeadlineExceeded and KindCancelled (ErrClosed when Close cut the call), and
	// for a Bucket store the errors its methods returned, kept whole.
	causes []error
}

func (e *Error) Error() string { return e.Message }

// Is reports whether target is e's Kind, so errors.Is(err, ErrCorrupt) works.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// Unwrap gives what ended the call from Go's side, so errors.Is and errors.As see it:
// the context's error (context.DeadlineExceeded, context.Canceled, a cause given to
// context.WithCancelCause) for KindDeadlineExceeded and KindCancelled, ErrClosed when
// Close cut the call, and the errors a Bucket's methods returned during the call (a
// gocloud error, a context error), not their text alone.
func (e *Error) Unwrap() []error { return e.causes }

// YAMLStage says which step of reading a YAML stream failed.
type YAMLStage int

// The stages of CONTRACT.md §11.
const (
	// StageSplit: splitting the stream into documents.
	StageSplit YAMLStage = 1
	// StageYAML: YAML to JSON (syntax, tags, keys, aliases).
	StageYAML YAMLStage = 2
	// StageObject: the document is not a JSON object.
	StageObject YAMLStage = 3
)

func (s YAMLStage) String() string {
	switch s {
	case StageSplit:
		return "split"
	case StageYAML:
		return "yaml"
	case StageObject:
		return "object"
	}
	return fmt.Sprintf("YAMLStage(%d)", int(s))
}

// InvalidYAMLError is the error of a YAML stream that is not a render: the first
// failing document and where it failed. It wraps an *Error of KindInvalidYAML.
type InvalidYAMLError struct {
	// Document is the index (from 0) of the failing document, empty and null
	// documents counted.
	Document int
	// Line and Column are the position in the stream, both from 1.
	Line, Column int
	// Stage is the step that failed.
	Stage YAMLStage
	// Err is the underlying error (Kind KindInvalidYAML).
	Err *Error
}

func (e *InvalidYAMLError) Error() string { return e.Err.Message }

// Unwrap gives the *Error, so errors.Is(err, ErrInvalidYAML) holds.
func (e *InvalidYAMLError) Unwrap() error { return e.Err }

// takeError turns an error the library returned into a Go error, and frees it.
func takeError(e *C.rs_error) error {
	if e == nil {
		return nil
	}
	defer C.rs_error_free(e)
	err := &Error{
		Kind:        Kind(C.rs_error_kind(e)),
		Message:     errorText(e, false),
		Detail:      errorText(e, true),
		ObjectIndex: -1,
	}
	var index C.uint32_t
	if C.rs_error_object_index(e, &index) {
		err.ObjectIndex = int(index)
	}
	var line C.uint32_t
	if C.rs_error_trace_line(e, &line) {
		err.TraceLine = int(line)
	}
	var wanted, limit C.uint64_t
	if C.rs_error_memory_cap(e, &wanted, &limit) {
		err.MemoryWanted, err.MemoryCap = uint64(wanted), uint64(limit)
	}
	var fuel C.uint64_t
	if C.rs_error_fuel(e, &fuel) {
		err.Fuel = uint64(fuel)
	}
	var size C.uint64_t
	if C.rs_error_too_large(e, &size, nil) {
		err.tooLarge = int64(size)
	}
	var doc, col, stage C.uint32_t
	if C.rs_error_yaml(e, &doc, &line, &col, &stage) {
		return &InvalidYAMLError{
			Document: int(doc), Line: int(line), Column: int(col),
			Stage: YAMLStage(stage), Err: err,
		}
	}
	return err
}

// errorText copies the error's whole message, or with detail its detail.
func errorText(e *C.rs_error, detail bool) string {
	var data *C.uint8_t
	var n C.size_t
	if detail {
		C.rs_error_detail(e, &data, &n)
	} else {
		C.rs_error_message(e, &data, &n)
	}
	if n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(data)), int(n)))
}
