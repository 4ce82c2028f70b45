package renderstore

/*
#include "render_store.h"
*/
import "C"

import "context"

// The controller-side rules of CONTRACT.md §7 and §8, decided by the Rust host so every
// language applies the same ones.

// EffectiveKeepHistory is the number of history entries GC keeps for a Release
// whose spec.keepHistory is keepHistory (nil when unset, which gives the default):
// 0 means GC is off (a keepHistory of 0 or less).
func EffectiveKeepHistory(keepHistory *int64) int64 {
	var keep C.int64_t
	has, v := keepArg(keepHistory)
	// The call fails only on a broken argument, which cannot be built from Go.
	if err := takeError(C.rs_effective_keep_history(has, v, &keep)); err != nil {
		panic(err)
	}
	return int64(keep)
}

// HistoryCount is resolvedRetentionPolicy.historyCount for a Release whose
// spec.keepHistory is keepHistory (nil when unset) on s; 0 on a nil *Store (no render
// store).
func (s *Store) HistoryCount(keepHistory *int64) int64 {
	var h *C.rs_store
	if s != nil {
		s.mu.RLock()
		defer s.mu.RUnlock()
		h = s.handle
		if h == nil && !s.closed {
			// A Bucket store has no lasting handle; any non-NULL store counts the same.
			var err error
			if h, _, err = s.bucketHandle(context.Background()); err != nil {
				panic(err)
			}
			defer C.rs_store_free(h)
		}
	}
	has, v := keepArg(keepHistory)
	var count C.int64_t
	if err := takeError(C.rs_history_count(h, has, v, &count)); err != nil {
		panic(err)
	}
	return int64(count)
}

func keepArg(keepHistory *int64) (C.bool, C.int64_t) {
	if keepHistory == nil {
		return false, 0
	}
	return true, C.int64_t(*keepHistory)
}

// ProtectedRenders names the renders GC must keep whatever the history says
// (CONTRACT.md §7), read from the Release at the start of the reconcile. An empty field
// is absent.
type ProtectedRenders struct {
	// Applied is the render this sync applied.
	Applied string
	// LastSuccessful is status.lastSuccessful.renderRef.
	LastSuccessful string
	// LastAttempted is status.lastAttempted.renderRef: a sync that stored its render
	// but stopped at a gate, hook or error recorded no history entry for it.
	LastAttempted string
	// Pin is pin.renderRef.
	Pin string
	// LastHealthy is status.lastHealthy.renderRef, the rollback target.
	LastHealthy string
}

// Refs returns the distinct, sorted renderRefs of p, GC's protected argument.
func (p ProtectedRenders) Refs() []string {
	a, an := optstr(p.Applied)
	ls, lsn := optstr(p.LastSuccessful)
	la, lan := optstr(p.LastAttempted)
	pin, pn := optstr(p.Pin)
	lh, lhn := optstr(p.LastHealthy)
	var out C.rs_buf
	if err := takeError(C.rs_protected_refs(a, an, ls, lsn, la, lan, pin, pn, lh, lhn, &out)); err != nil {
		panic(err)
	}
	var refs []string
	if err := decode(&out, &refs); err != nil {
		panic(err)
	}
	return refs
}
