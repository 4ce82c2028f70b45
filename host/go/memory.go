//go:build cgo

package renderstore

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemoryBucket is a Bucket in memory, safe for concurrent use: for tests, and a model
// of the contract for other implementations. Modification times come from Now, which
// defaults to time.Now. It refuses keys CheckKey refuses, as every bucket does.
type MemoryBucket struct {
	// Now gives the modification time of each Put; nil is time.Now.
	Now func() time.Time

	mu      sync.RWMutex
	objects map[string]memoryObject
}

type memoryObject struct {
	data     []byte
	modified time.Time
}

// NewMemoryBucket returns an empty MemoryBucket.
func NewMemoryBucket() *MemoryBucket {
	return &MemoryBucket{objects: map[string]memoryObject{}}
}

// Get implements Bucket.
func (b *MemoryBucket) Get(_ context.Context, key string, limit int64) ([]byte, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	o, ok := b.objects[key]
	if !ok {
		return nil, ErrNotFound
	}
	if int64(len(o.data)) > limit {
		return nil, &TooLargeError{Size: int64(len(o.data))}
	}
	return append([]byte(nil), o.data...), nil
}

// Put implements Bucket.
func (b *MemoryBucket) Put(_ context.Context, key string, value []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	o := memoryObject{data: append([]byte(nil), value...), modified: now()}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objects == nil {
		b.objects = map[string]memoryObject{}
	}
	b.objects[key] = o
	return nil
}

// Exists implements Bucket.
func (b *MemoryBucket) Exists(_ context.Context, key string) (int64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	o, ok := b.objects[key]
	if !ok {
		return 0, ErrNotFound
	}
	return int64(len(o.data)), nil
}

// List implements Bucket; its listing is sorted by key.
func (b *MemoryBucket) List(_ context.Context, prefix string) ([]Object, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var out []Object
	for k, o := range b.objects {
		if strings.HasPrefix(k, prefix) {
			out = append(out, Object{Key: k, Size: int64(len(o.data)), Modified: o.modified})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Delete implements Bucket.
func (b *MemoryBucket) Delete(_ context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objects, key)
	return nil
}

// DeleteMany implements ManyDeleter.
func (b *MemoryBucket) DeleteMany(_ context.Context, keys []string) ([]error, error) {
	var errs []error
	for i, k := range keys {
		if err := CheckKey(k); err != nil {
			if errs == nil {
				errs = make([]error, len(keys))
			}
			errs[i] = err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, k := range keys {
		if errs == nil || errs[i] == nil {
			delete(b.objects, k)
		}
	}
	return errs, nil
}

// Keys returns every key, sorted.
func (b *MemoryBucket) Keys() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	keys := make([]string, 0, len(b.objects))
	for k := range b.objects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
