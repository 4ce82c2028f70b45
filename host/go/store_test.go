package renderstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// t0 is the first sync time of the tests' releases.
var t0 = time.Unix(1767225600, 0).UTC()

// render is the n-th render of the tests' releases: a ConfigMap c{n} holding n and a
// Service s.
func render(n int) [][]byte {
	return [][]byte{
		[]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d","namespace":"ns"},"data":{"n":"%d"}}`, n, n)),
		[]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"ns"},"spec":{"ports":[{"port":80}]}}`),
	}
}

// stores gives each test a Store over a Go MemoryBucket and one opened from a
// file:// URL, so every operation is checked through both ways in.
func stores(t *testing.T) map[string]*Store {
	t.Helper()
	mem, err := New(NewMemoryBucket())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, err := Open(ctx(t), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close(); file.Close() })
	return map[string]*Store{"go-bucket": mem, "file": file}
}

func TestOperations(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := ctx(t)
			var refs []string
			for i := 0; i < 4; i++ {
				ref, err := s.PutRender(c, "ns", "app", render(i))
				if err != nil {
					t.Fatal(err)
				}
				want, _ := RenderRef(render(i))
				if ref != want {
					t.Fatalf("PutRender gave %s, RenderRef %s", ref, want)
				}
				refs = append(refs, ref)
				has, err := s.HasHistoryRef(c, "ns", "app", ref)
				if err != nil || has {
					t.Fatalf("HasHistoryRef before record: %v %v", has, err)
				}
				added, err := s.RecordHistory(c, "ns", "app", ref, t0.Add(time.Duration(i)*time.Minute), fmt.Sprintf("sync %d", i))
				if err != nil || !added {
					t.Fatalf("RecordHistory: %v %v", added, err)
				}
				if has, err := s.HasHistoryRef(c, "ns", "app", ref); err != nil || !has {
					t.Fatalf("HasHistoryRef after record: %v %v", has, err)
				}
			}
			// Recording the same entry again adds nothing.
			if added, err := s.RecordHistory(c, "ns", "app", refs[3], t0.Add(3*time.Minute), "sync 3"); err != nil || added {
				t.Fatalf("second RecordHistory: %v %v", added, err)
			}
			got, err := s.GetRender(c, "ns", "app", refs[2])
			want, _ := Canonical(render(2))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("GetRender: %q %v", got, err)
			}
			history, err := s.History(c, "ns", "app")
			if err != nil || len(history) != 4 {
				t.Fatalf("History: %v %v", history, err)
			}
			if history[3].RenderRef != refs[3] || !history[3].SyncedAt.Equal(t0.Add(3*time.Minute)) || history[3].Summary != "sync 3" {
				t.Fatalf("History is not oldest first: %+v", history)
			}
			page, err := s.HistoryPage(c, "ns", "app", 3, "")
			if err != nil || len(page.Entries) != 3 || page.NextBefore == "" || page.Entries[0].RenderRef != refs[3] {
				t.Fatalf("HistoryPage: %+v %v", page, err)
			}
			rest, err := s.HistoryPage(c, "ns", "app", 3, page.NextBefore)
			if err != nil || len(rest.Entries) != 1 || rest.NextBefore != "" || rest.Entries[0].RenderRef != refs[0] {
				t.Fatalf("second HistoryPage: %+v %v", rest, err)
			}

			diff, err := s.Diff(c, "ns", "app", refs[1], refs[2])
			if err != nil || len(diff.Added) != 1 || len(diff.Removed) != 1 || diff.Unchanged != 1 || diff.Equal() {
				t.Fatalf("Diff: %+v %v", diff, err)
			}
			if a := diff.Added[0]; !strings.Contains(a.Text, "kind: "+a.Kind) || !strings.Contains(a.Text, "name: "+a.Name) {
				t.Fatalf("an added object is not whole: %+v", a)
			}
			same, err := s.DiffLocal(c, "ns", "app", "", mustCanonical(t, render(3)))
			if err != nil || !same.Equal() {
				t.Fatalf("DiffLocal against the newest: %+v %v", same, err)
			}

			plan, err := s.GC(c, "ns", "app", 2, []string{refs[3]}, DryRun(), Grace(t0, 0))
			if err != nil || len(plan.DeleteHistory) != 2 || len(plan.DeleteRenders) != 2 {
				t.Fatalf("GC dry run: %+v %v", plan, err)
			}
			if h, _ := s.History(c, "ns", "app"); len(h) != 4 {
				t.Fatalf("a dry run deleted entries: %d left", len(h))
			}
			plan, err = s.GC(c, "ns", "app", 2, []string{refs[3]}, Grace(time.Now().Add(time.Hour), 0))
			if err != nil || len(plan.DeleteHistory) != 2 || len(plan.DeleteRenders) != 2 {
				t.Fatalf("GC: %+v %v", plan, err)
			}
			if _, err := s.GetRender(c, "ns", "app", refs[0]); !errors.Is(err, ErrNotFound) {
				t.Fatalf("GetRender of a collected render: %v", err)
			}
			if h, _ := s.History(c, "ns", "app"); len(h) != 2 {
				t.Fatalf("GC left %d entries", len(h))
			}
			n, err := s.DeleteRelease(c, "ns", "app")
			if err != nil || n != 4 {
				t.Fatalf("DeleteRelease: %d %v", n, err)
			}
			if n, err := s.DeleteRelease(c, "ns", "app"); err != nil || n != 0 {
				t.Fatalf("second DeleteRelease: %d %v", n, err)
			}
		})
	}
}

func mustCanonical(t *testing.T, objects [][]byte) []byte {
	t.Helper()
	c, err := Canonical(objects)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNilStore(t *testing.T) {
	s, err := Open(context.Background(), "  ")
	if err != nil || s != nil {
		t.Fatalf("Open(blank) = %v, %v; want nil, nil", s, err)
	}
	c := context.Background()
	ref, err := s.PutRender(c, "ns", "app", render(1))
	want, _ := RenderRef(render(1))
	if err != nil || ref != want {
		t.Fatalf("PutRender on nil: %s %v", ref, err)
	}
	if added, err := s.RecordHistory(c, "ns", "app", ref, t0, ""); err != nil || added {
		t.Fatalf("RecordHistory on nil: %v %v", added, err)
	}
	if _, err := s.GC(c, "ns", "app", 1, nil); err != nil {
		t.Fatalf("GC on nil: %v", err)
	}
	if _, err := s.GetRender(c, "ns", "app", ref); !errors.Is(err, ErrNoStore) {
		t.Fatalf("GetRender on nil: %v", err)
	}
	if s.HistoryCount(nil) != 0 {
		t.Fatal("a nil store keeps history")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := New(NewMemoryBucket())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := s.PutRender(context.Background(), "ns", "app", render(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("PutRender on a closed store: %v", err)
	}
}

func TestErrors(t *testing.T) {
	c := ctx(t)
	if _, err := Open(c, "ftp://x"); !errors.Is(err, ErrURL) {
		t.Fatalf("Open(ftp://): %v", err)
	}
	if _, err := Open(c, "file://"+filepath.Join(t.TempDir(), "absent")); !errors.Is(err, ErrURL) {
		t.Fatalf("Open of an absent folder: %v", err)
	}
	bucket := NewMemoryBucket()
	s, err := New(bucket)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref, err := s.PutRender(c, "ns", "app", render(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutRender(c, "NS!", "app", render(1)); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("bad namespace: %v", err)
	}
	if _, err := s.PutRender(c, "ns", "app", [][]byte{[]byte(`{}`), []byte(`[1]`)}); err == nil {
		t.Fatal("a list as an object was taken")
	} else {
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindInvalidObject || e.ObjectIndex != 1 {
			t.Fatalf("invalid object: %#v", err)
		}
	}
	_, err = s.PutRenderYAML(c, "ns", "app", []byte("a: 1\n---\nb: [\n"))
	var ye *InvalidYAMLError
	if !errors.As(err, &ye) || ye.Document != 1 || ye.Line == 0 || !errors.Is(err, ErrInvalidYAML) {
		t.Fatalf("invalid YAML: %#v", err)
	}
	missing, _ := RenderRef(render(2))
	if _, err := s.GetRender(c, "ns", "app", missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("absent render: %v", err)
	}
	// Flip one byte of the stored blob: the read must say corrupt.
	key, _ := RenderKey("ns", "app", ref)
	blob, err := bucket.Get(c, key, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	blob[len(blob)/2] ^= 1
	bucket.Put(c, key, blob)
	if _, err := s.GetRender(c, "ns", "app", ref); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt render: %v", err)
	}
	if err := ValidateRenderRef("sha256:d4b0"); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("short renderRef: %v", err)
	}
	// A context already done makes no call.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.PutRender(done, "ns", "app", render(3)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

func TestLimits(t *testing.T) {
	s, err := New(NewMemoryBucket(), WithFuel(1000))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.PutRender(ctx(t), "ns", "app", render(1)); !errors.Is(err, ErrFuel) {
		t.Fatalf("fuel: %v", err)
	}
	s2, err := New(NewMemoryBucket(), WithMemoryLimit(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	big := []byte(`{"kind":"ConfigMap","data":{"x":"` + strings.Repeat("a", 80<<20) + `"}}`)
	_, err = s2.PutRender(ctx(t), "ns", "app", [][]byte{big})
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindMemoryCap || e.MemoryCap == 0 {
		t.Fatalf("memory cap: %#v", err)
	}
}

// TestLargestRender: one byte over 64 MiB of canonical bytes is refused with the
// component's words, as in every host, and nothing is stored.
func TestLargestRender(t *testing.T) {
	bucket := NewMemoryBucket()
	s, err := New(bucket)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	head, tail := `{"data":"`, `"}`
	over := [][]byte{[]byte(head + strings.Repeat("x", 64<<20-len(head)-len(tail)) + tail)}
	refused := func(what string, err error) {
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "67108864 bytes (64 MiB)") {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err = Canonical(over)
	refused("Canonical", err)
	_, err = s.PutRender(ctx(t), "ns", "app", over)
	refused("PutRender", err)
	if keys, err := bucket.List(ctx(t), "ns/app/"); err != nil || len(keys) != 0 {
		t.Errorf("stored: %v %v", keys, err)
	}
}

func TestTraceReplays(t *testing.T) {
	s, err := New(NewMemoryBucket())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tr Trace
	c := WithTrace(ctx(t), &tr)
	if _, err := s.PutRender(c, "ns", "app", render(1)); err != nil {
		t.Fatal(err)
	}
	text := tr.Text()
	if !bytes.Contains(text, []byte("put-render")) {
		t.Fatalf("trace: %q", text)
	}
	report, err := Replay(text)
	if err != nil || !report.Matches {
		t.Fatalf("replay: %+v %v", report, err)
	}
	// A changed answer no longer matches, or fails to parse: never a match.
	changed := bytes.Replace(text, []byte("put-render"), []byte("get-render"), 1)
	if report, err := Replay(changed); err == nil && report.Matches {
		t.Fatal("an edited trace replays to a match")
	}
	if _, err := Replay([]byte("not a trace\n")); !errors.Is(err, ErrTrace) {
		t.Fatalf("garbage trace: %v", err)
	}
}

func TestControllerRules(t *testing.T) {
	if EffectiveKeepHistory(nil) <= 0 {
		t.Fatal("the default keepHistory is not positive")
	}
	zero := int64(0)
	if EffectiveKeepHistory(&zero) != 0 {
		t.Fatal("keepHistory 0 does not turn GC off")
	}
	five := int64(5)
	s, _ := New(NewMemoryBucket())
	defer s.Close()
	if s.HistoryCount(&five) != 5 {
		t.Fatalf("HistoryCount(5) = %d", s.HistoryCount(&five))
	}
	a, _ := RenderRef(render(1))
	b, _ := RenderRef(render(2))
	refs := ProtectedRenders{Applied: b, LastSuccessful: a, Pin: b}.Refs()
	if len(refs) != 2 || refs[0] > refs[1] {
		t.Fatalf("ProtectedRenders.Refs: %v", refs)
	}
}

func TestKeys(t *testing.T) {
	ref, _ := RenderRef(render(1))
	rk, err := RenderKey("ns", "app", ref)
	if err != nil || !strings.HasPrefix(rk, "ns/app/") {
		t.Fatalf("RenderKey: %s %v", rk, err)
	}
	hk, err := HistoryKey("ns", "app", t0, ref)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseKey("ns", "app", hk)
	if err != nil || p.Kind != KeyHistory || p.RenderRef != ref || !p.SyncedAt.Equal(t0) {
		t.Fatalf("ParseKey(history): %+v %v", p, err)
	}
	if p, _ := ParseKey("ns", "app", rk); p.Kind != KeyRender || p.RenderRef != ref {
		t.Fatalf("ParseKey(render): %+v", p)
	}
	if p, _ := ParseKey("ns", "app", "ns/app/renders/upload.tmp"); p.Kind != KeyOther {
		t.Fatalf("ParseKey(foreign): %+v", p)
	}
	prefix, err := ReleasePrefix("ns", "app")
	if err != nil || !strings.HasPrefix(rk, prefix) || !strings.HasPrefix(hk, prefix) {
		t.Fatalf("ReleasePrefix: %s %v", prefix, err)
	}
	older, _ := HistoryKey("ns", "app", t0.Add(-time.Hour), ref)
	sum, err := SummarizeHistory("ns", "app", []string{older, hk, "ns/app/history/notes.txt"})
	if err != nil || sum.Entries != 2 || sum.Newest == nil || sum.Newest.RenderRef != ref || !sum.Newest.SyncedAt.Equal(t0) {
		t.Fatalf("SummarizeHistory: %+v %v", sum, err)
	}
	if sum, err := SummarizeHistory("ns", "app", nil); err != nil || sum.Entries != 0 || sum.Newest != nil {
		t.Fatalf("SummarizeHistory(empty): %+v %v", sum, err)
	}
}
