package renderstore

/*
#include "render_store.h"
*/
import "C"

import "context"

// IndexReport is what Store.IndexRelease did to a release's index.
type IndexReport struct {
	// Namespace and Name are the release's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Renders is how many distinct renders the history names.
	Renders int `json:"renders"`
	// Indexed is how many the index names afterwards.
	Indexed int `json:"indexed"`
	// Read is how many renders were read to index them.
	Read int `json:"read"`
	// Pruned is how many renders the index named that the history no longer does.
	Pruned int `json:"pruned"`
	// Unreadable names each render that could not be read ("REF: WHY"): left out of
	// the index, read (and failing) by a query.
	Unreadable []string `json:"unreadable"`
	// Replaced says what was wrong with a stored index that could not be used; nil when
	// there was none.
	Replaced *string `json:"replaced"`
	// Written is whether the index was written, or deleted for an empty history.
	Written bool `json:"written"`
}

// Reindexed is what Store.Reindex did across the store.
type Reindexed struct {
	// Releases are the releases indexed, by namespace then name.
	Releases []IndexReport `json:"releases"`
	// Complete is false when a folder, a release or a render could not be read.
	Complete bool `json:"complete"`
	// Unlisted are the namespace folders that could not be listed.
	Unlisted []struct {
		Folder string `json:"folder"`
		Error  string `json:"error"`
	} `json:"unlisted"`
	// Failed are the releases whose index could not be brought up to date.
	Failed []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Error     string `json:"error"`
	} `json:"failed"`
}

// IndexRelease brings the release index (what each render of the history holds, one
// blob a release, which Store.Images reads in place of every render) up to date with
// the history. A controller calls it with readMissing after RecordHistory added an
// entry, and without after a GC that deleted something (it then only drops what the
// history no longer names), as the Rust library's controller rules do. The index is a
// cache: an error here loses nothing, so log it and go on.
func (s *Store) IndexRelease(ctx context.Context, namespace, name string, readMissing bool) (*IndexReport, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	var report IndexReport
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		var out C.rs_buf
		if err := takeError(C.rs_store_index_release(h, ns, nsLen, n, nLen, C.bool(readMissing), &out)); err != nil {
			return err
		}
		return decode(&out, &report)
	})
	if err != nil {
		return nil, err
	}
	return &report, nil
}

// Reindex brings the index of every release of the store (or of namespace; "" is every
// namespace) up to date, reading the renders each lacks, 16 releases at once: for
// renders stored before the index existed, or by a controller that does not keep it.
func (s *Store) Reindex(ctx context.Context, namespace string) (*Reindexed, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	var answer Reindexed
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := optstr(namespace)
		var out C.rs_buf
		if err := takeError(C.rs_store_reindex(h, ns, nsLen, &out)); err != nil {
			return err
		}
		return decode(&out, &answer)
	})
	if err != nil {
		return nil, err
	}
	return &answer, nil
}
