// Package gocloudblob serves a render store from a gocloud.dev *blob.Bucket, the
// bucket a convoy controller's blobstore.Open already gives it:
//
//	b, err := blob.OpenBucket(ctx, url)
//	store, err := renderstore.New(gocloudblob.New(b))
//
// It builds in GOPATH mode against Debian's golang-gocloud-dev (the Go module proxy is
// not reachable where this repository is built), which is why it is a module of its
// own: the renderstore module itself depends on nothing. renderstore.Open with the same
// URL needs no adapter and is the better choice where it fits: its backends are the
// Rust library's, which refuse a listing they cannot complete (see Bucket.List below).
//
// Every method returns gocloud's own error, wrapped or as it is: the Store call's error
// unwraps to it (errors.As finds gocloud's and its driver's errors), with the context's
// error when the call's context was done. Over fileblob, gocloud hides each key's
// metadata file (<key>.attrs) from listings and deletes it with its key; the Rust
// file:// store over the same folder sees those files and GC deletes them with their key
// (CONTRACT.md §3), so both serve one folder.
package gocloudblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	renderstore "convoy.dev/renderstore"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Bucket is a renderstore.Bucket over a *blob.Bucket. It does not close the
// *blob.Bucket: its owner does.
type Bucket struct {
	b *blob.Bucket
}

// New wraps b.
func New(b *blob.Bucket) *Bucket { return &Bucket{b: b} }

var _ renderstore.Bucket = (*Bucket)(nil)

// notFound reports whether err is gocloud's "no such key".
func notFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// Get implements renderstore.Bucket: the size is checked before the content is read,
// and the read is bounded even if the object grows meanwhile.
func (g *Bucket) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	if err := renderstore.CheckKey(key); err != nil {
		return nil, err
	}
	r, err := g.b.NewReader(ctx, key, nil)
	if notFound(err) {
		return nil, fmt.Errorf("%s: %w", key, renderstore.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, &renderstore.TooLargeError{Size: r.Size()}
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &renderstore.TooLargeError{Size: int64(len(data))}
	}
	return data, nil
}

// Put implements renderstore.Bucket. gocloud commits a write when its writer closes
// without error, so a reader sees the old content or the new.
func (g *Bucket) Put(ctx context.Context, key string, value []byte) error {
	if err := renderstore.CheckKey(key); err != nil {
		return err
	}
	return g.b.WriteAll(ctx, key, value, nil)
}

// Exists implements renderstore.Bucket with a metadata request.
func (g *Bucket) Exists(ctx context.Context, key string) (int64, error) {
	if err := renderstore.CheckKey(key); err != nil {
		return 0, err
	}
	a, err := g.b.Attributes(ctx, key)
	if notFound(err) {
		return 0, fmt.Errorf("%s: %w", key, renderstore.ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	return a.Size, nil
}

// List implements renderstore.Bucket: every page, with no delimiter, sorted by key;
// an error on any page fails the whole listing. What a driver leaves out without an
// error, this cannot see: gocloud's fileblob lists nothing under a folder that is a
// symbolic link (a release's history/ moved to another disk) and reports the link as
// a key, and GC would read that as "no history". Over a local folder use
// renderstore.Open with a file:// URL, whose listing fails closed there.
func (g *Bucket) List(ctx context.Context, prefix string) ([]renderstore.Object, error) {
	it := g.b.List(&blob.ListOptions{Prefix: prefix})
	var out []renderstore.Object
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			// The contract's order (by the keys' bytes); fileblob walks folder by
			// folder, which puts "ns/app/…" before "ns/app.v2/…".
			sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", prefix, err)
		}
		if o.IsDir {
			continue
		}
		out = append(out, renderstore.Object{Key: o.Key, Size: o.Size, Modified: o.ModTime})
	}
}

// Delete implements renderstore.Bucket; an absent key is not an error.
func (g *Bucket) Delete(ctx context.Context, key string) error {
	if err := renderstore.CheckKey(key); err != nil {
		return err
	}
	if err := g.b.Delete(ctx, key); err != nil && !notFound(err) {
		return err
	}
	return nil
}
