package renderstore

// The callbacks of a Bucket store, exported to C. A file with //export may only
// declare in its preamble, so the table that points at them is filled in store.go.

/*
#include <stdlib.h>
#include "render_store.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// stateOf finds the call's state from the user_data the library passes back: a C
// allocation holding a cgo.Handle (a Go pointer may not be kept in C memory).
func stateOf(userData unsafe.Pointer) *callState {
	return cgo.Handle(*(*C.uintptr_t)(userData)).Value().(*callState)
}

func goKey(key *C.char, n C.size_t) string {
	return string(unsafe.Slice((*byte)(unsafe.Pointer(key)), int(n)))
}

// answerError answers a call with err: denied when it wraps ErrDenied, failed
// otherwise, with the error's text naming the call and the key. The error itself is
// kept in the call's state (st), so the Store call's *Error unwraps to it.
func answerError(st *callState, answer *C.rs_answer, call, key string, err error) {
	if st != nil {
		st.keep(err)
	}
	msg := fmt.Sprintf("%s %q: %v", call, key, err)
	m, n := cstr(msg)
	if errors.Is(err, ErrDenied) {
		C.rs_answer_denied(answer, m, n)
	} else {
		C.rs_answer_failed(answer, m, n)
	}
}

// recoverInto turns a panic of a Bucket method into the failure of its call: a Go
// panic must not unwind through the library's frames.
func recoverInto(answer *C.rs_answer, call, key string) {
	if r := recover(); r != nil {
		answerError(nil, answer, call, key, fmt.Errorf("the Bucket's %s panicked: %v", call, r))
	}
}

// cancelled answers the call as failed when the Store call's context is done, so a
// cancelled call stops at its next bucket call.
func cancelled(st *callState, answer *C.rs_answer, call, key string) bool {
	if err := st.ctx.Err(); err != nil {
		answerError(st, answer, call, key, err)
		return true
	}
	return false
}

//export goBucketGet
func goBucketGet(userData unsafe.Pointer, key *C.char, keyLen C.size_t, limit C.uint64_t, answer *C.rs_answer) {
	k := goKey(key, keyLen)
	defer recoverInto(answer, "get", k)
	st := stateOf(userData)
	if cancelled(st, answer, "get", k) {
		return
	}
	lim := int64(limit)
	if uint64(limit) > 1<<62 {
		lim = 1 << 62
	}
	data, err := st.bucket.Get(st.ctx, k, lim)
	var tooLarge *TooLargeError
	switch {
	case err == nil:
		p, n := cbytes(data)
		C.rs_answer_bytes(answer, p, n)
	case errors.Is(err, ErrNotFound):
		C.rs_answer_not_found(answer)
	case errors.As(err, &tooLarge):
		C.rs_answer_too_large(answer, C.uint64_t(tooLarge.Size))
	default:
		answerError(st, answer, "get", k, err)
	}
}

//export goBucketPut
func goBucketPut(userData unsafe.Pointer, key *C.char, keyLen C.size_t, value *C.uint8_t, valueLen C.size_t, answer *C.rs_answer) {
	k := goKey(key, keyLen)
	defer recoverInto(answer, "put", k)
	st := stateOf(userData)
	if cancelled(st, answer, "put", k) {
		return
	}
	var v []byte
	if valueLen > 0 {
		v = unsafe.Slice((*byte)(unsafe.Pointer(value)), int(valueLen))
	} else {
		v = []byte{}
	}
	if err := st.bucket.Put(st.ctx, k, v); err != nil {
		answerError(st, answer, "put", k, err)
		return
	}
	C.rs_answer_ok(answer)
}

//export goBucketExists
func goBucketExists(userData unsafe.Pointer, key *C.char, keyLen C.size_t, answer *C.rs_answer) {
	k := goKey(key, keyLen)
	defer recoverInto(answer, "exists", k)
	st := stateOf(userData)
	if cancelled(st, answer, "exists", k) {
		return
	}
	size, err := st.bucket.Exists(st.ctx, k)
	switch {
	case err == nil:
		C.rs_answer_size(answer, C.uint64_t(size))
	case errors.Is(err, ErrNotFound):
		C.rs_answer_not_found(answer)
	default:
		answerError(st, answer, "exists", k, err)
	}
}

//export goBucketList
func goBucketList(userData unsafe.Pointer, prefix *C.char, prefixLen C.size_t, answer *C.rs_answer) {
	p := goKey(prefix, prefixLen)
	defer recoverInto(answer, "list", p)
	st := stateOf(userData)
	if cancelled(st, answer, "list", p) {
		return
	}
	objects, err := st.bucket.List(st.ctx, p)
	if err != nil {
		answerError(st, answer, "list", p, err)
		return
	}
	for _, o := range objects {
		k, n := cstr(o.Key)
		var secs C.int64_t
		var nanos C.uint32_t
		if !o.Modified.IsZero() {
			secs, nanos = C.int64_t(o.Modified.Unix()), C.uint32_t(o.Modified.Nanosecond())
		}
		C.rs_answer_listed(answer, k, n, C.uint64_t(o.Size), secs, nanos)
	}
	C.rs_answer_ok(answer)
}

//export goBucketDelete
func goBucketDelete(userData unsafe.Pointer, key *C.char, keyLen C.size_t, answer *C.rs_answer) {
	k := goKey(key, keyLen)
	defer recoverInto(answer, "delete", k)
	st := stateOf(userData)
	if cancelled(st, answer, "delete", k) {
		return
	}
	if err := st.bucket.Delete(st.ctx, k); err != nil && !errors.Is(err, ErrNotFound) {
		answerError(st, answer, "delete", k, err)
		return
	}
	C.rs_answer_ok(answer)
}

//export goBucketDeleteMany
func goBucketDeleteMany(userData unsafe.Pointer, keys *C.rs_str, count C.size_t, answer *C.rs_answer) {
	defer recoverInto(answer, "delete-many", "")
	st := stateOf(userData)
	if cancelled(st, answer, "delete-many", "") {
		return
	}
	strs := unsafe.Slice(keys, int(count))
	names := make([]string, len(strs))
	for i, s := range strs {
		names[i] = goKey(s.data, s.len)
	}
	errs, err := st.bucket.(ManyDeleter).DeleteMany(st.ctx, names)
	if err != nil {
		answerError(st, answer, "delete-many", fmt.Sprintf("%d keys", len(names)), err)
		return
	}
	if errs != nil && len(errs) != len(names) {
		answerError(st, answer, "delete-many", fmt.Sprintf("%d keys", len(names)),
			fmt.Errorf("DeleteMany returned %d errors for %d keys", len(errs), len(names)))
		return
	}
	for i := range names {
		var e error
		if errs != nil {
			e = errs[i]
		}
		switch {
		case e == nil || errors.Is(e, ErrNotFound):
			C.rs_answer_key_ok(answer, C.size_t(i))
		default:
			st.keep(e)
			m, n := cstr(fmt.Sprintf("delete %q: %v", names[i], e))
			if errors.Is(e, ErrDenied) {
				C.rs_answer_key_denied(answer, C.size_t(i), m, n)
			} else {
				C.rs_answer_key_failed(answer, C.size_t(i), m, n)
			}
		}
	}
}

//export goBucketDrop
func goBucketDrop(userData unsafe.Pointer) {
	cgo.Handle(*(*C.uintptr_t)(userData)).Delete()
	C.free(userData)
}
