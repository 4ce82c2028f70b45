package renderstore

/*
#include "render_store.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Bucket returns the bucket under the store, for tools that check or copy a store key
// by key (a conformance run, a migration): for a store made by New, the Bucket it was
// given; for a URL-opened store, the Rust backend itself, called directly (outside any
// store operation and outside the sandbox, so the release scope of the store's calls
// does not apply; the backend's key rule does). It is nil for a nil *Store.
//
// The bucket of a URL-opened store also implements ManyDeleter and DelimitedLister.
// Its errors follow the Bucket contract: ErrNotFound from Get of an absent key, an
// error wrapping ErrDenied for a refusal, a *TooLargeError for an object over Get's
// limit, and an *Error of KindBackend for a failure of the backend.
func (s *Store) Bucket() Bucket {
	if s == nil {
		return nil
	}
	if s.bucket != nil {
		return s.bucket
	}
	return storeBucket{s}
}

// storeBucket is the bucket of a URL-opened store, through the C ABI's direct calls.
type storeBucket struct{ s *Store }

// bucketError is the Bucket contract's form of an error of a direct bucket call.
func bucketError(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Kind == KindTooLarge {
		return &TooLargeError{Size: e.tooLarge}
	}
	return err
}

func (b storeBucket) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	if limit < 0 {
		limit = 0
	}
	var value []byte
	err := b.s.call(ctx, func(h *C.rs_store) error {
		k, n := cstr(key)
		var out C.rs_buf
		if err := takeError(C.rs_store_bucket_get(h, k, n, C.uint64_t(limit), &out)); err != nil {
			return err
		}
		value = takeBytes(&out)
		return nil
	})
	return value, bucketError(err)
}

func (b storeBucket) Put(ctx context.Context, key string, value []byte) error {
	return b.s.call(ctx, func(h *C.rs_store) error {
		k, n := cstr(key)
		v, vLen := cbytes(value)
		return takeError(C.rs_store_bucket_put(h, k, n, v, vLen))
	})
}

func (b storeBucket) Exists(ctx context.Context, key string) (int64, error) {
	var found C.bool
	var size C.uint64_t
	err := b.s.call(ctx, func(h *C.rs_store) error {
		k, n := cstr(key)
		return takeError(C.rs_store_bucket_exists(h, k, n, &found, &size))
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%w: %q does not exist", ErrNotFound, key)
	}
	return int64(size), nil
}

// listedObject is an object of the library's listings, as its JSON says it.
type listedObject struct {
	Key      string `json:"key"`
	Size     int64  `json:"size"`
	Modified struct {
		Seconds     int64 `json:"seconds"`
		Nanoseconds int64 `json:"nanoseconds"`
	} `json:"modified"`
}

func objectsOf(listed []listedObject) []Object {
	objects := make([]Object, len(listed))
	for i, l := range listed {
		objects[i] = Object{Key: l.Key, Size: l.Size, Modified: time.Unix(l.Modified.Seconds, l.Modified.Nanoseconds)}
	}
	return objects
}

func (b storeBucket) List(ctx context.Context, prefix string) ([]Object, error) {
	var text string
	err := b.s.call(ctx, func(h *C.rs_store) error {
		p, n := cstr(prefix)
		var out C.rs_buf
		if err := takeError(C.rs_store_bucket_list(h, p, n, &out)); err != nil {
			return err
		}
		text = takeString(&out)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var listed []listedObject
	if err := json.Unmarshal([]byte(text), &listed); err != nil {
		return nil, fmt.Errorf("render store: the library's listing is not the JSON it documents: %w", err)
	}
	return objectsOf(listed), nil
}

// ListDelimited implements DelimitedLister: the Rust backend's delimiter listing (over
// the callbacks of a Go Bucket, which carry none, the library's fold of its List).
func (b storeBucket) ListDelimited(ctx context.Context, prefix string) (Delimited, error) {
	var text string
	err := b.s.call(ctx, func(h *C.rs_store) error {
		p, n := cstr(prefix)
		var out C.rs_buf
		if err := takeError(C.rs_store_bucket_list_delimited(h, p, n, &out)); err != nil {
			return err
		}
		text = takeString(&out)
		return nil
	})
	if err != nil {
		return Delimited{}, err
	}
	var listed struct {
		Folders []string       `json:"folders"`
		Objects []listedObject `json:"objects"`
	}
	if err := json.Unmarshal([]byte(text), &listed); err != nil {
		return Delimited{}, fmt.Errorf("render store: the library's listing is not the JSON it documents: %w", err)
	}
	return Delimited{Folders: listed.Folders, Objects: objectsOf(listed.Objects)}, nil
}

func (b storeBucket) Delete(ctx context.Context, key string) error {
	return b.s.call(ctx, func(h *C.rs_store) error {
		k, n := cstr(key)
		return takeError(C.rs_store_bucket_delete(h, k, n))
	})
}

func (b storeBucket) DeleteMany(ctx context.Context, keys []string) ([]error, error) {
	j := joinStrings(keys)
	var text string
	err := b.s.call(ctx, func(h *C.rs_store) error {
		data, dataLen, ends, count := j.args()
		var out C.rs_buf
		if err := takeError(C.rs_store_bucket_delete_many(h, data, dataLen, ends, count, &out)); err != nil {
			return err
		}
		text = takeString(&out)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var answers []*struct {
		Kind    Kind   `json:"kind"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(text), &answers); err != nil || len(answers) != len(keys) {
		return nil, fmt.Errorf("render store: the library answered %d results for %d keys (%v)", len(answers), len(keys), err)
	}
	var each []error
	for i, a := range answers {
		if a == nil {
			continue
		}
		if each == nil {
			each = make([]error, len(keys))
		}
		each[i] = &Error{Kind: a.Kind, Message: a.Message, Detail: a.Message, ObjectIndex: -1}
	}
	return each, nil
}
