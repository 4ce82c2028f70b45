package renderstore

/*
#include "render_store.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// PutRender stores a render unless its blob is already stored intact (bucket calls:
// exists, then put) and returns its renderRef, the one a Go controller computes.
// Each object is the bytes of one JSON object; the library copies them once, into
// the sandbox, and keeps nothing. A bad object is an *Error of KindInvalidObject
// whose ObjectIndex says which.
//
// On a nil *Store it computes the renderRef and stores nothing (CONTRACT.md §8).
func (s *Store) PutRender(ctx context.Context, namespace, name string, objects [][]byte) (string, error) {
	if s == nil {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return RenderRef(objects)
	}
	j := joinBytes(objects)
	var ref string
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		data, dataLen, ends, count := j.args()
		var out C.rs_buf
		err := takeError(C.rs_store_put_render(h, ns, nsLen, n, nLen, data, dataLen, ends, count, &out, tb))
		keepTrace(ctx, tb)
		if err != nil {
			return err
		}
		ref = takeString(&out)
		return nil
	})
	return ref, err
}

// PutRenderYAML stores the render a multi-document Kubernetes YAML stream stands for,
// read exactly as a Go controller reads it (CONTRACT.md §11), and returns its
// renderRef. A stream that is not a render is an *InvalidYAMLError.
//
// On a nil *Store it computes the renderRef and stores nothing.
func (s *Store) PutRenderYAML(ctx context.Context, namespace, name string, yaml []byte) (string, error) {
	if s == nil {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return YAMLRenderRef(yaml)
	}
	var ref string
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		y, yLen := cbytes(yaml)
		var out C.rs_buf
		err := takeError(C.rs_store_put_render_yaml(h, ns, nsLen, n, nLen, y, yLen, &out, tb))
		keepTrace(ctx, tb)
		if err != nil {
			return err
		}
		ref = takeString(&out)
		return nil
	})
	return ref, err
}

// GetRender returns the canonical bytes of a stored render (bucket call: get),
// verified against renderRef: ErrNotFound when it is absent, ErrCorrupt when the
// stored bytes do not hash to it.
func (s *Store) GetRender(ctx context.Context, namespace, name, renderRef string) ([]byte, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	var render []byte
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		r, rLen := cstr(renderRef)
		var out C.rs_buf
		err := takeError(C.rs_store_get_render(h, ns, nsLen, n, nLen, r, rLen, &out, tb))
		keepTrace(ctx, tb)
		if err != nil {
			return err
		}
		render = takeBytes(&out)
		return nil
	})
	return render, err
}

// HasHistoryRef reports whether a history entry records renderRef (bucket call: list
// of the history; no entry is read). On a nil *Store it is false.
func (s *Store) HasHistoryRef(ctx context.Context, namespace, name, renderRef string) (bool, error) {
	if s == nil {
		return false, ctx.Err()
	}
	var recorded C.bool
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		r, rLen := cstr(renderRef)
		err := takeError(C.rs_store_has_history_ref(h, ns, nsLen, n, nLen, r, rLen, &recorded, tb))
		keepTrace(ctx, tb)
		return err
	})
	return bool(recorded), err
}

// RecordHistory appends a history entry (renderRef, syncedAt, a summary of at most
// 65,536 bytes) unless one records the same render, and reports whether it did. It
// does not check that the render is stored: call PutRender first. On a nil *Store it
// does nothing.
func (s *Store) RecordHistory(ctx context.Context, namespace, name, renderRef string, syncedAt time.Time, summary string) (bool, error) {
	if s == nil {
		return false, ctx.Err()
	}
	var added C.bool
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		r, rLen := cstr(renderRef)
		sum, sumLen := cstr(summary)
		err := takeError(C.rs_store_record_history(h, ns, nsLen, n, nLen, r, rLen, cTime(syncedAt), sum, sumLen, &added, tb))
		keepTrace(ctx, tb)
		return err
	})
	return bool(added), err
}

// HistoryEntry is one entry of a release's history.
type HistoryEntry struct {
	// Key is the entry's full key.
	Key string `json:"key"`
	// RenderRef names the render the sync applied.
	RenderRef string `json:"renderRef"`
	// SyncedAt is when the sync applied it, in UTC.
	SyncedAt time.Time `json:"-"`
	// Summary is the entry's summary.
	Summary string `json:"summary"`
	// Trust is what the keyring the entry was read with says of it (CONTRACT.md §14);
	// nil when it was read without a keyring and its body agrees with its key.
	Trust *EntryTrust `json:"trust,omitempty"`
}

// EntryTrust is what a keyring says of a history entry: exactly one field is set.
type EntryTrust struct {
	// Authenticated is the id of the key the entry's MAC verifies under.
	Authenticated string `json:"authenticated,omitempty"`
	// Unauthenticated says why the entry does not authenticate: no MAC, one that does
	// not verify, a key the keyring lacks, or a body that disagrees with its key. Where
	// encryption is required such an entry is not numbered, not applied and not counted.
	Unauthenticated string `json:"unauthenticated,omitempty"`
}

// wireEntry is an entry as the library writes it.
type wireEntry struct {
	HistoryEntry
	SyncedAt wireTime `json:"syncedAt"`
}

type wireTime struct {
	Seconds     int64  `json:"seconds"`
	Nanoseconds uint32 `json:"nanoseconds"`
}

func (w wireEntry) entry() HistoryEntry {
	e := w.HistoryEntry
	e.SyncedAt = time.Unix(w.SyncedAt.Seconds, int64(w.SyncedAt.Nanoseconds)).UTC()
	return e
}

func entries(ws []wireEntry) []HistoryEntry {
	out := make([]HistoryEntry, len(ws))
	for i, w := range ws {
		out[i] = w.entry()
	}
	return out
}

// History returns the release's history, oldest first (bucket calls: list, then get
// of each entry). On a nil *Store it is ErrNoStore.
func (s *Store) History(ctx context.Context, namespace, name string) ([]HistoryEntry, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	var doc struct {
		Entries []wireEntry `json:"entries"`
	}
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		var out C.rs_buf
		err := takeError(C.rs_store_list_history(h, ns, nsLen, n, nLen, &out, tb))
		keepTrace(ctx, tb)
		if err != nil {
			return err
		}
		return decode(&out, &doc)
	})
	if err != nil {
		return nil, err
	}
	return entries(doc.Entries), nil
}

// HistoryPage is one page of a release's history, newest first.
type HistoryPage struct {
	// Entries are the page's entries, newest first.
	Entries []HistoryEntry
	// NextBefore is the key to pass as before for the next (older) page; "" on the
	// last page.
	NextBefore string
}

// HistoryPage returns at most limit history entries, newest first, older than the
// entry key before ("" for the newest page): one listing and one read per entry of
// the page.
func (s *Store) HistoryPage(ctx context.Context, namespace, name string, limit int, before string) (*HistoryPage, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	if limit < 0 || limit > 1<<32-1 {
		return nil, fmt.Errorf("render store: a page limit of %d is out of range", limit)
	}
	var doc struct {
		Entries    []wireEntry `json:"entries"`
		NextBefore *string     `json:"nextBefore"`
	}
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		b, bLen := optstr(before)
		var out C.rs_buf
		if err := takeError(C.rs_store_list_history_page(h, ns, nsLen, n, nLen, C.uint32_t(limit), b, bLen, &out)); err != nil {
			return err
		}
		return decode(&out, &doc)
	})
	if err != nil {
		return nil, err
	}
	page := &HistoryPage{Entries: entries(doc.Entries)}
	if doc.NextBefore != nil {
		page.NextBefore = *doc.NextBefore
	}
	return page, nil
}

// GCPlan is what GC deleted (or, in a dry run, would delete) and kept: full keys, in
// key order. Every history key listed is in exactly one of DeleteHistory,
// KeepHistory and Ignored; FutureHistory and DanglingHistory name the kept entries
// that did not count toward keep.
type GCPlan struct {
	DeleteHistory []string `json:"deleteHistory"`
	DeleteRenders []string `json:"deleteRenders"`
	// Ignored are keys under the release that are neither entries nor renders
	// (foreign or staging files): GC never deletes them.
	Ignored []string `json:"ignored"`
	// KeepHistory are the newest keep entries of those that count, and every
	// entry that does not count.
	KeepHistory []string `json:"keepHistory"`
	KeepRenders []string `json:"keepRenders"`
	// RecentRenders are unreferenced blobs kept because they are younger than the
	// grace period.
	RecentRenders []string `json:"recentRenders"`
	// FutureHistory are kept entries dated more than five minutes after GC's now (a
	// replica whose clock runs ahead, or planted keys): GC neither counts them
	// toward keep nor deletes them, and keeps their renders. Check the clock of the
	// replica that wrote them; remove a planted key by hand.
	FutureHistory []string `json:"futureHistory"`
	// DanglingHistory are kept entries whose render is not stored: GC neither counts
	// them toward keep nor deletes them (render-store verify says what to do).
	DanglingHistory []string `json:"danglingHistory"`
	// UnauthenticatedHistory are kept entries whose body does not authenticate under
	// the keyring, where encryption is required: GC neither counts nor deletes them.
	UnauthenticatedHistory []string `json:"unauthenticatedHistory,omitempty"`
}

type gcConfig struct {
	dryRun bool
	grace  *C.rs_grace
}

// GCOption changes how GC runs.
type GCOption func(*gcConfig)

// DryRun makes GC delete nothing and return the plan a real run would carry out.
func DryRun() GCOption { return func(c *gcConfig) { c.dryRun = true } }

// Grace gives GC's grace period explicitly: no render blob modified less than period
// before now is deleted (without it: the store's period ending at this machine's
// clock's now). A period of 0 deletes every unreferenced blob whatever its age.
func Grace(now time.Time, period time.Duration) GCOption {
	return func(c *gcConfig) {
		c.grace = &C.rs_grace{now: cTime(now), seconds: C.uint64_t(period / time.Second)}
	}
}

// GC keeps the newest keep history entries, the renders they and the protected
// renderRefs name, and every render blob younger than the grace period, and deletes
// the rest of the release's entries and renders (CONTRACT.md §5). Entries dated more
// than five minutes after now, and entries whose render is not stored, do not count
// toward keep and are never deleted (GCPlan.FutureHistory, GCPlan.DanglingHistory). keep is the
// effective keepHistory (EffectiveKeepHistory); keep <= 0 does nothing. protected is
// usually ProtectedRenders.Refs of the Release. A listing that cannot be complete stops GC
// with an error before it deletes anything. On a nil *Store it does nothing.
func (s *Store) GC(ctx context.Context, namespace, name string, keep int64, protected []string, opts ...GCOption) (*GCPlan, error) {
	if s == nil {
		return &GCPlan{}, ctx.Err()
	}
	var cfg gcConfig
	for _, o := range opts {
		o(&cfg)
	}
	j := joinStrings(protected)
	var plan GCPlan
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		data, dataLen, ends, count := j.args()
		var out C.rs_buf
		err := takeError(C.rs_store_gc(h, ns, nsLen, n, nLen, C.int64_t(keep), data, dataLen, ends, count, C.bool(cfg.dryRun), cfg.grace, &out, tb))
		keepTrace(ctx, tb)
		if err != nil {
			return err
		}
		return decode(&out, &plan)
	})
	if err != nil {
		return nil, err
	}
	return &plan, nil
}

// DeleteRelease deletes every key of the release (bucket calls: list, then delete in
// batches) and returns how many. A second run deletes nothing and succeeds. On a nil
// *Store it does nothing.
func (s *Store) DeleteRelease(ctx context.Context, namespace, name string) (int, error) {
	if s == nil {
		return 0, ctx.Err()
	}
	var deleted C.uint32_t
	err := s.call(ctx, func(h *C.rs_store) error {
		tb := traceBuf(ctx)
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		err := takeError(C.rs_store_delete_release(h, ns, nsLen, n, nLen, &deleted, tb))
		keepTrace(ctx, tb)
		return err
	})
	return int(deleted), err
}

// RekeyRelease seals every render blob of the release that is not sealed under the
// first key of the store's keyring (WithEncryptionKeys) under it: plaintext blobs of a
// store where encryption was turned on, and blobs of an older key. Each blob is read,
// verified and replaced atomically, so a crash at any point leaves every blob readable;
// running it again finishes the job. It returns how many blobs were rewritten and how
// many already were sealed under the first key. A store without a keyring is an
// *Error of KindInvalidInput; a blob that cannot be read stops it (KindCorrupt,
// KindEncryptionKey). Not traced.
func (s *Store) RekeyRelease(ctx context.Context, namespace, name string) (rewritten, kept int, err error) {
	if s == nil {
		return 0, 0, ErrNoStore
	}
	var r, k C.uint32_t
	err = s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		return takeError(C.rs_store_rekey_release(h, ns, nsLen, n, nLen, &r, &k))
	})
	return int(r), int(k), err
}

// decode parses a JSON result and frees its buffer.
func decode(b *C.rs_buf, v any) error {
	data := takeBytes(b)
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("render store: the library's JSON result does not parse: %w", err)
	}
	return nil
}

func cTime(t time.Time) C.rs_time {
	return C.rs_time{seconds: C.int64_t(t.Unix()), nanoseconds: C.uint32_t(t.Nanosecond())}
}
