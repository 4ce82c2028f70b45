package renderstore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The shared data lives at the repository's tests/ folder.
func testData(t *testing.T, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{"..", "..", "tests"}, parts...)...)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type refVector struct {
	Name             string   `json:"name"`
	Objects          []string `json:"objects"`
	ObjectsB64       []string `json:"objects_b64"`
	Canonical        string   `json:"canonical"`
	RenderRef        string   `json:"renderRef"`
	Error            string   `json:"error"`
	ErrorObjectIndex *int     `json:"error_object_index"`
}

func (v refVector) objects(t *testing.T) [][]byte {
	var out [][]byte
	for _, o := range v.Objects {
		out = append(out, []byte(o))
	}
	for _, o := range v.ObjectsB64 {
		b, err := base64.StdEncoding.DecodeString(o)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		out = append(out, b)
	}
	return out
}

func TestRenderRefVectors(t *testing.T) {
	var vectors []refVector
	readJSON(t, testData(t, "vectors", "render-ref.json"), &vectors)
	if len(vectors) < 100 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		objects := v.objects(t)
		canonical, err := Canonical(objects)
		ref, refErr := RenderRef(objects)
		if v.Error != "" {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindInvalidObject {
				t.Errorf("%s: want an invalid-object error, got %v", v.Name, err)
				continue
			}
			if v.ErrorObjectIndex != nil && e.ObjectIndex != *v.ErrorObjectIndex {
				t.Errorf("%s: object index %d, want %d", v.Name, e.ObjectIndex, *v.ErrorObjectIndex)
			}
			if !errors.Is(refErr, ErrInvalidObject) {
				t.Errorf("%s: RenderRef: %v", v.Name, refErr)
			}
			continue
		}
		if err != nil || refErr != nil {
			t.Errorf("%s: %v / %v", v.Name, err, refErr)
			continue
		}
		if string(canonical) != v.Canonical {
			t.Errorf("%s: canonical %q, want %q", v.Name, canonical, v.Canonical)
		}
		if ref != v.RenderRef {
			t.Errorf("%s: renderRef %s, want %s", v.Name, ref, v.RenderRef)
		}
	}
}

type yamlOutcome struct {
	Objects   []string `json:"objects"`
	Canonical string   `json:"canonical"`
	RenderRef string   `json:"renderRef"`
}

type yamlVector struct {
	Name               string        `json:"name"`
	YAML               *string       `json:"yaml"`
	YAMLB64            string        `json:"yaml_b64"`
	Objects            []string      `json:"objects"`
	Canonical          string        `json:"canonical"`
	RenderRef          string        `json:"renderRef"`
	Error              string        `json:"error"`
	ErrorDocumentIndex int           `json:"error_document_index"`
	ErrorStage         string        `json:"error_stage"`
	Nondeterministic   bool          `json:"nondeterministic"`
	Outcomes           []yamlOutcome `json:"outcomes"`
}

func TestYAMLVectors(t *testing.T) {
	var vectors []yamlVector
	readJSON(t, testData(t, "vectors", "yaml-render-ref.json"), &vectors)
	if len(vectors) < 100 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		var stream []byte
		if v.YAML != nil {
			stream = []byte(*v.YAML)
		} else {
			var err error
			if stream, err = base64.StdEncoding.DecodeString(v.YAMLB64); err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
		}
		objects, err := YAMLObjects(stream)
		ref, refErr := YAMLRenderRef(stream)
		switch {
		case v.Error != "":
			var e *InvalidYAMLError
			if !errors.As(err, &e) {
				t.Errorf("%s: want an invalid-YAML error, got %v", v.Name, err)
				continue
			}
			if e.Document != v.ErrorDocumentIndex || e.Stage.String() != v.ErrorStage {
				t.Errorf("%s: document %d stage %s, want %d %s (%v)", v.Name, e.Document, e.Stage, v.ErrorDocumentIndex, v.ErrorStage, e)
			}
			if !errors.Is(refErr, ErrInvalidYAML) {
				t.Errorf("%s: YAMLRenderRef: %v", v.Name, refErr)
			}
		case v.Nondeterministic:
			if err != nil {
				t.Errorf("%s: %v", v.Name, err)
				continue
			}
			found := false
			for _, o := range v.Outcomes {
				if o.RenderRef == ref && equalObjects(objects, o.Objects) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: %s is none of Go's outcomes", v.Name, ref)
			}
		default:
			if err != nil || refErr != nil {
				t.Errorf("%s: %v / %v", v.Name, err, refErr)
				continue
			}
			if !equalObjects(objects, v.Objects) {
				t.Errorf("%s: objects %q, want %q", v.Name, objects, v.Objects)
			}
			if ref != v.RenderRef {
				t.Errorf("%s: renderRef %s, want %s", v.Name, ref, v.RenderRef)
			}
			canonical, err := YAMLCanonical(stream)
			if err != nil || string(canonical) != v.Canonical {
				t.Errorf("%s: canonical %q (%v), want %q", v.Name, canonical, err, v.Canonical)
			}
		}
	}
}

func equalObjects(got [][]byte, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if string(got[i]) != want[i] {
			return false
		}
	}
	return true
}

type realRender struct {
	Name           string `json:"name"`
	YAML           string `json:"yaml"`
	JSONCompactDir string `json:"json_compact_dir"`
	RenderRef      string `json:"renderRef"`
}

func realRenders(t *testing.T) []realRender {
	var expected struct {
		Renders []realRender `json:"renders"`
	}
	readJSON(t, testData(t, "real-renders", "expected.json"), &expected)
	if len(expected.Renders) == 0 {
		t.Fatal("no real renders")
	}
	return expected.Renders
}

func TestRealRenders(t *testing.T) {
	store, err := New(NewMemoryBucket())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, r := range realRenders(t) {
		stream, err := os.ReadFile(testData(t, "real-renders", r.YAML))
		if err != nil {
			t.Fatal(err)
		}
		ref, err := YAMLRenderRef(stream)
		if err != nil || ref != r.RenderRef {
			t.Errorf("%s: YAML renderRef %s (%v), want %s", r.Name, ref, err, r.RenderRef)
		}
		stored, err := store.PutRenderYAML(ctx(t), "default", "real", stream)
		if err != nil || stored != r.RenderRef {
			t.Errorf("%s: PutRenderYAML %s (%v)", r.Name, stored, err)
		}
		if r.JSONCompactDir == "" {
			continue
		}
		files, err := filepath.Glob(filepath.Join(testData(t, "real-renders", r.JSONCompactDir), "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no JSON objects in %s (%v)", r.Name, r.JSONCompactDir, err)
		}
		var objects [][]byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			objects = append(objects, b)
		}
		if ref, err := RenderRef(objects); err != nil || ref != r.RenderRef {
			t.Errorf("%s: JSON renderRef %s (%v), want %s", r.Name, ref, err, r.RenderRef)
		}
	}
}

type gcPlanCase struct {
	Name    string `json:"name"`
	Release struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"release"`
	Keep int64 `json:"keep"`
	Now  struct {
		Seconds     int64 `json:"seconds"`
		Nanoseconds int64 `json:"nanoseconds"`
	} `json:"now"`
	History   []string        `json:"history"`
	Renders   []string        `json:"renders"`
	Protected []string        `json:"protected"`
	Want      json.RawMessage `json:"want"`
}

// TestGCPlanVectors runs every case of tests/vectors/gc-plan.json through PlanGC (the
// C ABI's rs_plan_gc): the plan, list by list, or the error kind.
func TestGCPlanVectors(t *testing.T) {
	var doc struct {
		Cases []gcPlanCase `json:"cases"`
	}
	readJSON(t, testData(t, "vectors", "gc-plan.json"), &doc)
	if len(doc.Cases) < 10 {
		t.Fatalf("only %d cases", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		now := time.Unix(c.Now.Seconds, c.Now.Nanoseconds)
		plan, err := PlanGC(c.Release.Namespace, c.Release.Name, c.Keep, c.History, c.Renders, c.Protected, now)
		var wantErr struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(c.Want, &wantErr); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if wantErr.Error != "" {
			var e *Error
			if !errors.As(err, &e) || e.Kind.String() != wantErr.Error {
				t.Errorf("%s: want a %s error, got %v", c.Name, wantErr.Error, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		var want GCPlan
		if err := json.Unmarshal(c.Want, &want); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !reflect.DeepEqual(nonNil(*plan), nonNil(want)) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.Name, *plan, want)
		}
	}
}

// TestCheckObjectsVectors runs tests/vectors/check-objects.json: the Kubernetes
// object rule of the component, through the C ABI.
func TestCheckObjectsVectors(t *testing.T) {
	var doc struct {
		Cases []struct {
			Name    string          `json:"name"`
			Objects []string        `json:"objects"`
			Want    json.RawMessage `json:"want"`
		} `json:"cases"`
	}
	readJSON(t, testData(t, "vectors", "check-objects.json"), &doc)
	if len(doc.Cases) < 10 {
		t.Fatalf("only %d cases", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		objects := make([][]byte, len(c.Objects))
		for i, o := range c.Objects {
			objects[i] = []byte(o)
		}
		err := CheckObjects(objects)
		var want struct {
			Index   int    `json:"index"`
			Message string `json:"message"`
		}
		if string(c.Want) == `"ok"` {
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
			}
			continue
		}
		if err := json.Unmarshal(c.Want, &want); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrInvalidObject) || e.ObjectIndex != want.Index ||
			!strings.Contains(e.Message, want.Message) {
			t.Errorf("%s: want object %d refused with %q, got %v", c.Name, want.Index, want.Message, err)
		}
	}
}

// nonNil makes every list of p non-nil, so an empty JSON list equals an absent one.
func nonNil(p GCPlan) GCPlan {
	for _, l := range []*[]string{&p.DeleteHistory, &p.DeleteRenders, &p.Ignored, &p.KeepHistory,
		&p.KeepRenders, &p.RecentRenders, &p.FutureHistory, &p.DanglingHistory} {
		if *l == nil {
			*l = []string{}
		}
	}
	return p
}

// TestGCConformanceTrace replays tests/vectors/traces/gc-skipped-entries.jsonl, a GC over
// planted far-future entries, an entry of a replica whose clock ran ahead and an entry
// whose render is missing: it matches, and no real entry was pushed out.
func TestGCConformanceTrace(t *testing.T) {
	text, err := os.ReadFile(testData(t, "vectors", "traces", "gc-skipped-entries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	report, err := Replay(text)
	if err != nil {
		t.Fatal(err)
	}
	if !report.Matches {
		t.Fatalf("the trace does not replay:\n%s", report.Text)
	}
	var r struct {
		Result struct {
			OK GCPlan `json:"ok"`
		} `json:"result"`
	}
	if err := json.Unmarshal(report.JSON, &r); err != nil {
		t.Fatal(err)
	}
	p := r.Result.OK
	got := []int{len(p.DeleteHistory), len(p.KeepHistory), len(p.FutureHistory), len(p.DanglingHistory)}
	if !reflect.DeepEqual(got, []int{1, 16, 11, 1}) {
		t.Errorf("deleted, kept, future, dangling entries: %v", got)
	}
}

type corpusFile struct {
	File               string `json:"file"`
	RenderRef          string `json:"renderRef"`
	ErrorDocumentIndex *int   `json:"error_document_index"`
	ErrorStage         string `json:"error_stage"`
}

// TestYAMLCorpus: tests/yaml-corpus/ holds streams from public repositories, each with
// what Go made of it; every one gives Go's renderRef, or fails where Go fails.
func TestYAMLCorpus(t *testing.T) {
	var corpus struct {
		Files []corpusFile `json:"files"`
	}
	readJSON(t, testData(t, "yaml-corpus", "corpus.json"), &corpus)
	if len(corpus.Files) < 2000 {
		t.Fatalf("only %d streams", len(corpus.Files))
	}
	for _, f := range corpus.Files {
		stream, err := os.ReadFile(testData(t, "yaml-corpus", filepath.FromSlash(f.File)))
		if err != nil {
			t.Fatal(err)
		}
		ref, err := YAMLRenderRef(stream)
		if f.ErrorDocumentIndex == nil {
			if err != nil || ref != f.RenderRef {
				t.Errorf("%s: %s (%v), want %s", f.File, ref, err, f.RenderRef)
			}
			continue
		}
		var e *InvalidYAMLError
		if !errors.As(err, &e) || e.Document != *f.ErrorDocumentIndex || e.Stage.String() != f.ErrorStage {
			t.Errorf("%s: %v, want a failure at document %d (%s)", f.File, err, *f.ErrorDocumentIndex, f.ErrorStage)
		}
	}
}

// TestAuthenticatedRecordTrace replays tests/vectors/traces/record-authenticated.jsonl, a
// record-history with encryption required over an entry a writer of the bucket planted:
// it matches with the keyring it was recorded with, and not with another key of that id.
func TestAuthenticatedRecordTrace(t *testing.T) {
	text, err := os.ReadFile(testData(t, "vectors", "traces", "record-authenticated.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	report, err := Replay(text, WithEncryptionKeys(keyringFile(t, "k1")))
	if err != nil {
		t.Fatal(err)
	}
	if !report.Matches {
		t.Fatalf("the trace does not replay:\n%s", report.Text)
	}
	other := keyringFile(t, "k2")
	body, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, bytes.Replace(body, []byte("k2"), []byte("k1"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	report, err = Replay(text, WithEncryptionKeys(other))
	if err != nil {
		t.Fatal(err)
	}
	if report.Matches {
		t.Fatal("another key of id k1 replayed the authenticated record to a match")
	}
}
