package renderstore

/*
#include "render_store.h"
*/
import "C"

import (
	"context"
	"time"
)

// ImageQuery says which images Store.Images looks for, and where and when.
type ImageQuery struct {
	// Pattern is a repository ("nginx": every tag and digest of it), a reference
	// ("nginx:1.25", "app@sha256:HEX"), a digest ("@sha256:HEX", any repository) or a
	// glob ("ghcr.io/org/*") over the normalised reference; "" is every image.
	Pattern string
	// Namespace limits the query to the releases of one namespace; "" is every one.
	Namespace string
	// Since and Until keep the intervals that meet the window from Since until Until;
	// a zero time leaves that side open.
	Since, Until time.Time
}

// ImageInterval is an interval of a release's history during which an image was in
// the recorded render: from an entry's sync until the next entry's.
type ImageInterval struct {
	// Image is the image as container runtimes read it ("nginx" is
	// "docker.io/library/nginx:latest").
	Image string `json:"image"`
	// Namespace and Name are the release's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// From is the sync of the interval's first entry.
	From time.Time `json:"from"`
	// Until is the sync of the first later entry without the image; nil while the
	// newest entry's render holds it.
	Until *time.Time `json:"until"`
	// RenderRefs are the renders of the interval's entries, in history order.
	RenderRefs []string `json:"renderRefs"`
}

// Images is what Store.Images found, and what it could not see.
type Images struct {
	// Intervals are sorted by image, then release, then start.
	Intervals []ImageInterval `json:"images"`
	// Complete is false when a folder or a release could not be read: the answer
	// then says nothing of them, and must not be read as "not there".
	Complete bool `json:"complete"`
	// Unlisted are the namespace folders that could not be listed.
	Unlisted []struct {
		Folder string `json:"folder"`
		Error  string `json:"error"`
	} `json:"unlisted"`
	// Unread are the releases whose history or renders could not be read.
	Unread []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Error     string `json:"error"`
	} `json:"unread"`
}

// Images answers where each container image matching q.Pattern ran across the
// releases of the store, and when, as the histories record it: a rollback adds no
// entry, so a render rolled back to keeps its recorded interval. Each release costs one
// listing of its history and one read of its index (Store.IndexRelease), plus one read
// of each render the index does not name, read in the sandbox.
// A bad pattern is ErrInvalidInput before anything is read.
func (s *Store) Images(ctx context.Context, q ImageQuery) (*Images, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	var answer Images
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := optstr(q.Namespace)
		p, pLen := optstr(q.Pattern)
		since, until := optTime(q.Since), optTime(q.Until)
		var out C.rs_buf
		if err := takeError(C.rs_store_images(h, ns, nsLen, p, pLen, since, until, &out)); err != nil {
			return err
		}
		return decode(&out, &answer)
	})
	if err != nil {
		return nil, err
	}
	return &answer, nil
}

// FieldBlame is one field of a blamed object and the entry since which it has its
// value.
type FieldBlame struct {
	// Path is the field's path, as the diff's hunk headers write places.
	Path string `json:"path"`
	// Value is its value as compact JSON (cut when long), masked if a Secret's unless
	// ShowSecrets.
	Value string `json:"value"`
	// Entry is the place of the entry (0 the newest) since which it has this value.
	Entry int `json:"entry"`
	// SyncedAt, RenderRef and Summary are that entry's.
	SyncedAt  time.Time `json:"syncedAt"`
	RenderRef string    `json:"renderRef"`
	Summary   string    `json:"summary"`
}

// Blame is which history entry last changed each field of an object.
type Blame struct {
	// Object is the object, as the newest render that holds it names it.
	Object ObjectID `json:"object"`
	// Fields are its fields, in the order of its text.
	Fields []FieldBlame `json:"fields"`
	// Newest is the place of the newest entry whose render holds the object.
	Newest int `json:"newest"`
}

// Blame says which entry of the release's history last changed each field of object
// ("KIND/NAME", or "NAMESPACE/KIND/NAME"), or each field under field ("" for every
// field; a path as the diff's hunk headers write them), in the newest render that
// holds it. Values are masked where they are a Secret's unless ShowSecrets is given.
// ErrNotFound when no render holds the object.
func (s *Store) Blame(ctx context.Context, namespace, name, object, field string, opts ...DiffOption) (*Blame, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	c := diffOptions(opts)
	var b Blame
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := cstr(namespace)
		n, nLen := cstr(name)
		o, oLen := cstr(object)
		f, fLen := optstr(field)
		var out C.rs_buf
		if err := takeError(C.rs_store_blame(h, ns, nsLen, n, nLen, o, oLen, f, fLen, c.secrets, &out)); err != nil {
			return err
		}
		return decode(&out, &b)
	})
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// ChangeQuery says which entries Store.Changes lists.
type ChangeQuery struct {
	// Namespace limits the list to one namespace's releases; "" is every one.
	Namespace string
	// Since and Until bound the entries' sync times (Until excluded); a zero time
	// leaves that side open.
	Since, Until time.Time
}

// ImageChange is a container whose image differs between an entry and the one before.
type ImageChange struct {
	Object    ObjectID `json:"object"`
	Container string   `json:"container"`
	// Old and New are nil when the container is new or gone.
	Old *string `json:"old"`
	New *string `json:"new"`
}

// SecretKeyChange names a Secret key whose value changed; never the value.
type SecretKeyChange struct {
	Secret ObjectID `json:"secret"`
	Key    string   `json:"key"`
}

// EntryChanges is one history entry and what it changed against the entry before it.
type EntryChanges struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Entry is the entry's place, 0 the newest.
	Entry     int       `json:"entry"`
	SyncedAt  time.Time `json:"syncedAt"`
	Summary   string    `json:"summary"`
	RenderRef string    `json:"renderRef"`
	// PreviousRenderRef is nil for a release's first entry.
	PreviousRenderRef *string           `json:"previousRenderRef"`
	Added             []ObjectID        `json:"added"`
	Removed           []ObjectID        `json:"removed"`
	Changed           []ObjectID        `json:"changed"`
	Images            []ImageChange     `json:"images"`
	SecretKeys        []SecretKeyChange `json:"secretKeys"`
}

// Changes is what Store.Changes found.
type Changes struct {
	// Entries are newest first.
	Entries []EntryChanges `json:"entries"`
	// Complete is false when a folder could not be listed or a release could not be
	// read: their entries are missing (Unlisted and Unread name them).
	Complete bool `json:"complete"`
	Unlisted []struct {
		Folder string `json:"folder"`
		Error  string `json:"error"`
	} `json:"unlisted"`
	// Unread are the releases whose entries or renders could not be read, and why.
	Unread []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Error     string `json:"error"`
	} `json:"unread"`
}

// Changes lists every history entry of the fleet synced in q's window, newest first,
// each with what changed against the entry before it in its release: objects, images
// and the keys (never the values) of Secrets whose values changed.
func (s *Store) Changes(ctx context.Context, q ChangeQuery) (*Changes, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	var answer Changes
	err := s.call(ctx, func(h *C.rs_store) error {
		ns, nsLen := optstr(q.Namespace)
		since, until := optTime(q.Since), optTime(q.Until)
		var out C.rs_buf
		if err := takeError(C.rs_store_changes(h, ns, nsLen, since, until, &out)); err != nil {
			return err
		}
		return decode(&out, &answer)
	})
	if err != nil {
		return nil, err
	}
	return &answer, nil
}

// optTime is an optional time argument: NULL for the zero time.
func optTime(t time.Time) *C.rs_time {
	if t.IsZero() {
		return nil
	}
	c := cTime(t)
	return &c
}
