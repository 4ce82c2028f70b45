package renderstore

/*
#include "render_store.h"
*/
import "C"

import (
	"bytes"
	"fmt"
	"time"
)

// The logic functions run in the same sandbox as the store's calls, with the default
// limits unless options say otherwise; none touches a bucket.

// Canonical returns the canonical bytes of a render (CONTRACT.md §4): each object's
// Go encoding/json re-encoding followed by a newline.
func Canonical(objects [][]byte, opts ...Option) ([]byte, error) {
	j := joinBytes(objects)
	data, n, ends, count := j.args()
	var out C.rs_buf
	if err := takeError(C.rs_canonical(options(opts), data, n, ends, count, &out)); err != nil {
		return nil, err
	}
	return takeBytes(&out), nil
}

// RenderRef returns the renderRef of a render ("sha256:" and 64 lowercase hex
// digits), the one a Go controller computes.
func RenderRef(objects [][]byte, opts ...Option) (string, error) {
	j := joinBytes(objects)
	data, n, ends, count := j.args()
	var out C.rs_buf
	if err := takeError(C.rs_render_ref(options(opts), data, n, ends, count, &out)); err != nil {
		return "", err
	}
	return takeString(&out), nil
}

// CheckObjects reports the first object that is not a Kubernetes object as a
// person's or a tool's render must be (CONTRACT.md §4): apiVersion, kind, and
// metadata.name or metadata.generateName; a List or *List item by item; no Secret
// holding the "***" of a masked view. The error is an *Error of KindInvalidObject
// whose ObjectIndex says which. Storing does not check this: a controller stores
// what it applied.
func CheckObjects(objects [][]byte, opts ...Option) error {
	j := joinBytes(objects)
	data, n, ends, count := j.args()
	return takeError(C.rs_check_objects(options(opts), data, n, ends, count))
}

// YAMLObjects returns the objects of a multi-document Kubernetes YAML stream, each
// the compact JSON sigs.k8s.io/yaml writes, read as a Go controller reads the stream
// (CONTRACT.md §11). A stream that is not a render is an *InvalidYAMLError.
func YAMLObjects(yaml []byte, opts ...Option) ([][]byte, error) {
	y, n := cbytes(yaml)
	var out C.rs_buf
	if err := takeError(C.rs_yaml_objects(options(opts), y, n, &out)); err != nil {
		return nil, err
	}
	text := takeBytes(&out)
	objects := [][]byte{}
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		objects = append(objects, text[:i:i])
		text = text[i+1:]
	}
	return objects, nil
}

// YAMLCanonical returns the canonical bytes of a YAML stream's render.
func YAMLCanonical(yaml []byte, opts ...Option) ([]byte, error) {
	y, n := cbytes(yaml)
	var out C.rs_buf
	if err := takeError(C.rs_yaml_canonical(options(opts), y, n, &out)); err != nil {
		return nil, err
	}
	return takeBytes(&out), nil
}

// YAMLRenderRef returns the renderRef of a YAML stream's render, as a Go controller
// computes it.
func YAMLRenderRef(yaml []byte, opts ...Option) (string, error) {
	y, n := cbytes(yaml)
	var out C.rs_buf
	if err := takeError(C.rs_yaml_render_ref(options(opts), y, n, &out)); err != nil {
		return "", err
	}
	return takeString(&out), nil
}

// CheckKey applies the rule every bucket applies before a call touches anything
// (CONTRACT.md §2): key must be a clean /-separated path (not empty, no leading or
// trailing /, no empty, . or .. component, no control character). It returns nil, or
// an error wrapping ErrDenied that a Bucket method can return as it is.
func CheckKey(key string) error {
	k, kLen := cstr(key)
	if err := takeError(C.rs_check_key(k, kLen)); err != nil {
		return fmt.Errorf("%w: %s", ErrDenied, err.(*Error).Message)
	}
	return nil
}

// ValidateRenderRef returns nil for a well-formed renderRef and an *Error of
// KindInvalidInput saying what is wrong otherwise.
func ValidateRenderRef(renderRef string) error {
	r, n := cstr(renderRef)
	return takeError(C.rs_validate_render_ref(nil, r, n))
}

// ReleasePrefix returns "<namespace>/<name>/", the prefix of every key of the
// release, once both names are checked.
func ReleasePrefix(namespace, name string) (string, error) {
	ns, nsLen := cstr(namespace)
	n, nLen := cstr(name)
	var out C.rs_buf
	if err := takeError(C.rs_release_prefix(nil, ns, nsLen, n, nLen, &out)); err != nil {
		return "", err
	}
	return takeString(&out), nil
}

// RenderKey returns "<namespace>/<name>/renders/<renderRef>".
func RenderKey(namespace, name, renderRef string) (string, error) {
	ns, nsLen := cstr(namespace)
	n, nLen := cstr(name)
	r, rLen := cstr(renderRef)
	var out C.rs_buf
	if err := takeError(C.rs_render_key(nil, ns, nsLen, n, nLen, r, rLen, &out)); err != nil {
		return "", err
	}
	return takeString(&out), nil
}

// HistoryKey returns "<namespace>/<name>/history/<time>-<renderRef>", the time in the
// 26-character layout YYYYMMDDTHHMMSS.nnnnnnnnnZ.
func HistoryKey(namespace, name string, syncedAt time.Time, renderRef string) (string, error) {
	ns, nsLen := cstr(namespace)
	n, nLen := cstr(name)
	r, rLen := cstr(renderRef)
	var out C.rs_buf
	if err := takeError(C.rs_history_key(nil, ns, nsLen, n, nLen, cTime(syncedAt), r, rLen, &out)); err != nil {
		return "", err
	}
	return takeString(&out), nil
}

// KeyKind says what a key of a release is.
type KeyKind int

const (
	// KeyOther: neither a render nor a history entry of the release (a foreign or
	// staging file, another release's key).
	KeyOther KeyKind = C.RS_KEY_OTHER
	// KeyRender: a render blob's key.
	KeyRender KeyKind = C.RS_KEY_RENDER
	// KeyHistory: a history entry's key.
	KeyHistory KeyKind = C.RS_KEY_HISTORY
)

// ParsedKey is what ParseKey found in a key.
type ParsedKey struct {
	// Kind says what the key is.
	Kind KeyKind
	// RenderRef is set for KeyRender and KeyHistory.
	RenderRef string
	// SyncedAt is set for KeyHistory.
	SyncedAt time.Time
}

// ParseKey says what a key of the release is, from the key alone.
func ParseKey(namespace, name, key string) (ParsedKey, error) {
	ns, nsLen := cstr(namespace)
	n, nLen := cstr(name)
	k, kLen := cstr(key)
	var kind C.uint32_t
	var ref C.rs_buf
	var t C.rs_time
	if err := takeError(C.rs_parse_key(nil, ns, nsLen, n, nLen, k, kLen, &kind, &ref, &t)); err != nil {
		return ParsedKey{}, err
	}
	p := ParsedKey{Kind: KeyKind(kind), RenderRef: takeString(&ref)}
	if p.Kind == KeyHistory {
		p.SyncedAt = time.Unix(int64(t.seconds), int64(t.nanoseconds)).UTC()
	}
	return p, nil
}

// PlanGC is GC's decision from listings alone, with no bucket: the release's history
// keys and render keys, the protected renderRefs and the time GC runs at in, the plan
// out. Entries dated more than five minutes after now, and entries whose render
// renderKeys lacks, do not count toward keep (GCPlan.FutureHistory,
// GCPlan.DanglingHistory). No grace period applies (RecentRenders is empty).
func PlanGC(namespace, name string, keep int64, historyKeys, renderKeys, protected []string, now time.Time) (*GCPlan, error) {
	ns, nsLen := cstr(namespace)
	n, nLen := cstr(name)
	h, r, p := joinStrings(historyKeys), joinStrings(renderKeys), joinStrings(protected)
	hd, hn, he, hc := h.args()
	rd, rn, re, rc := r.args()
	pd, pn, pe, pc := p.args()
	var out C.rs_buf
	if err := takeError(C.rs_plan_gc(nil, ns, nsLen, n, nLen, C.int64_t(keep), hd, hn, he, hc, rd, rn, re, rc, pd, pn, pe, pc, cTime(now), &out)); err != nil {
		return nil, err
	}
	var plan GCPlan
	if err := decode(&out, &plan); err != nil {
		return nil, err
	}
	return &plan, nil
}

// HistorySummary is a release's history as one listing of its history keys shows it.
type HistorySummary struct {
	// Entries is how many history entries the keys hold.
	Entries int
	// Newest is the newest entry's render and time; nil for an empty history.
	Newest *HistorySummaryNewest
}

// HistorySummaryNewest is the newest entry of a HistorySummary.
type HistorySummaryNewest struct {
	// RenderRef is the render the entry records.
	RenderRef string
	// SyncedAt is when the sync applied it, in UTC.
	SyncedAt time.Time
}

// SummarizeHistory counts a release's history entries and finds the newest from the
// keys listed under its history folder alone, no entry read; keys that are not the
// release's entries are not counted.
func SummarizeHistory(namespace, name string, historyKeys []string) (*HistorySummary, error) {
	ns, nsLen := cstr(namespace)
	n, nLen := cstr(name)
	h := joinStrings(historyKeys)
	hd, hn, he, hc := h.args()
	var out C.rs_buf
	if err := takeError(C.rs_summarize_history(nil, ns, nsLen, n, nLen, hd, hn, he, hc, &out)); err != nil {
		return nil, err
	}
	var wire struct {
		Entries int `json:"entries"`
		Newest  *struct {
			RenderRef string   `json:"renderRef"`
			SyncedAt  wireTime `json:"syncedAt"`
		} `json:"newest"`
	}
	if err := decode(&out, &wire); err != nil {
		return nil, err
	}
	s := &HistorySummary{Entries: wire.Entries}
	if wire.Newest != nil {
		t := time.Unix(wire.Newest.SyncedAt.Seconds, int64(wire.Newest.SyncedAt.Nanoseconds)).UTC()
		s.Newest = &HistorySummaryNewest{RenderRef: wire.Newest.RenderRef, SyncedAt: t}
	}
	return s, nil
}
