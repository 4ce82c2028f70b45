package renderstore

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"convoy.dev/renderstore/wit"
)

// syncTime is t as the WIT's sync-time.
func syncTime(t time.Time) wit.SyncTime {
	return wit.SyncTime{Seconds: t.Unix(), Nanoseconds: uint32(t.Nanosecond())}
}

// The generated store methods (wit_calls.go), on a store the hand-written methods
// wrote: each answers in the WIT's types what the store holds.
func TestGeneratedStoreMethods(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := ctx(t)
			rel := wit.Release{Namespace: "prod", Name: "web"}
			var refs []string
			for i, image := range []string{"nginx:1.25", "nginx:1.26"} {
				ref, err := s.PutRender(c, "prod", "web", deployment(image))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.RecordHistory(c, "prod", "web", ref, t0.Add(time.Duration(i)*time.Hour), image); err != nil {
					t.Fatal(err)
				}
				refs = append(refs, ref)
			}

			blame, err := s.BlameObject(c, rel, "deployment/web", nil, wit.SecretValuesMasked)
			if err != nil {
				t.Fatal(err)
			}
			// Entries are the history's, oldest first; Newest and each field's Entry are
			// places in them.
			if blame.Object.Kind != "Deployment" || blame.Object.APIVersion != "apps/v1" || blame.Newest != 1 ||
				len(blame.Entries) != 2 || blame.Entries[1].RenderRef != refs[1] ||
				blame.Entries[1].SyncedAt != syncTime(t0.Add(time.Hour)) || len(blame.Fields) != 6 {
				t.Fatalf("BlameObject: %+v", blame)
			}
			field := "spec.template.spec.containers[name=web].image"
			blame, err = s.BlameObject(c, rel, "deployment/web", &field, wit.SecretValuesMasked)
			if err != nil || len(blame.Fields) != 1 || blame.Fields[0].Value != `"nginx:1.26"` || blame.Fields[0].Entry != 1 {
				t.Fatalf("BlameObject of the image: %+v %v", blame, err)
			}

			images, err := s.ReleaseImages(c, rel, nil, nil, nil)
			if err != nil || len(images) != 2 {
				t.Fatalf("ReleaseImages: %+v %v", images, err)
			}
			first := images[0]
			if first.Image != "docker.io/library/nginx:1.25" || first.From != syncTime(t0) ||
				first.Until == nil || *first.Until != syncTime(t0.Add(time.Hour)) ||
				len(first.RenderRefs) != 1 || first.RenderRefs[0] != refs[0] {
				t.Fatalf("ReleaseImages' first interval: %+v", first)
			}
			if images[1].Until != nil {
				t.Fatalf("the newest image's interval is open: %+v", images[1])
			}
			pattern := "nginx:1.26"
			since := syncTime(t0.Add(time.Hour))
			images, err = s.ReleaseImages(c, rel, &pattern, &since, nil)
			if err != nil || len(images) != 1 || images[0].RenderRefs[0] != refs[1] {
				t.Fatalf("ReleaseImages of nginx:1.26: %+v %v", images, err)
			}

			objects, err := s.RenderObjects(c, rel, []string{refs[1], refs[0]})
			if err != nil || len(objects) != 2 || objects[0].RenderRef != refs[1] || len(objects[0].Objects) != 1 {
				t.Fatalf("RenderObjects: %+v %v", objects, err)
			}
			if o := objects[0].Objects[0]; o.ID.Name != "web" || len(o.Images) != 1 || o.Images[0] != "docker.io/library/nginx:1.26" {
				t.Fatalf("RenderObjects' object: %+v", o)
			}

			page, err := s.ListHistoryPage(c, rel, 1, nil)
			if err != nil || len(page.Entries) != 1 || page.NextBefore == nil {
				t.Fatalf("ListHistoryPage: %+v %v", page, err)
			}
			newest := page.Entries[0]
			if newest.RenderRef != refs[1] || newest.Summary != "nginx:1.26" || newest.SyncedAt != syncTime(t0.Add(time.Hour)) ||
				newest.Trust.Tag != wit.EntryTrustUnchecked || !strings.HasPrefix(newest.Key, "prod/web/history/") {
				t.Fatalf("ListHistoryPage's entry: %+v", newest)
			}
			page, err = s.ListHistoryPage(c, rel, 10, page.NextBefore)
			if err != nil || len(page.Entries) != 1 || page.Entries[0].RenderRef != refs[0] || page.NextBefore != nil {
				t.Fatalf("ListHistoryPage's second page: %+v %v", page, err)
			}
			all, err := s.ListHistory(c, rel)
			if err != nil || len(all) != 2 || all[0].RenderRef != refs[0] {
				t.Fatalf("ListHistory: %+v %v", all, err)
			}
			gone, err := HistoryKey("prod", "web", t0.Add(-time.Hour), refs[0])
			if err != nil {
				t.Fatal(err)
			}
			read, err := s.ReadHistoryEntries(c, rel, []string{all[1].Key, gone})
			if err != nil || len(read) != 2 || read[0].Tag != wit.EntryReadEntry || read[0].Entry.RenderRef != refs[1] ||
				read[1].Tag != wit.EntryReadGone {
				t.Fatalf("ReadHistoryEntries: %+v %v", read, err)
			}

			// No index is written yet: the check says so; a rebuild writes it, and then
			// the check finds it agreeing.
			check, err := s.CheckIndex(c, rel)
			if err != nil || check.Present || len(check.Disagreeing) != 0 {
				t.Fatalf("CheckIndex before an index: %+v %v", check, err)
			}
			report, err := s.RebuildIndex(c, rel)
			if err != nil || report.Renders != 2 || report.Indexed != 2 || !report.Written {
				t.Fatalf("RebuildIndex: %+v %v", report, err)
			}
			check, err = s.CheckIndex(c, rel)
			if err != nil || !check.Present || check.Unusable != nil || len(check.Disagreeing) != 0 || check.Read != 2 {
				t.Fatalf("CheckIndex: %+v %v", check, err)
			}

			changes, err := s.StoredChanges(c, rel, []wit.Tuple2[*string, string]{{V0: nil, V1: refs[0]}, {V0: &refs[0], V1: refs[1]}})
			if err != nil || len(changes) != 2 || len(changes[0].Added) != 1 || len(changes[1].Images) != 1 ||
				changes[1].Images[0].Old == nil || *changes[1].Images[0].Old != "nginx:1.25" ||
				changes[1].Images[0].New == nil || *changes[1].Images[0].New != "nginx:1.26" {
				t.Fatalf("StoredChanges: %+v %v", changes, err)
			}
			diff, err := s.DiffRenders(c, rel, refs[0], refs[1], wit.ObjectFormYAML, wit.SecretValuesMasked, 3)
			if err != nil || len(diff.Changed) != 1 || diff.Changed[0].ID.Kind != "Deployment" {
				t.Fatalf("Store.DiffRenders: %+v %v", diff, err)
			}
			shown, err := s.ShowRenderPage(c, rel, refs[0], wit.ObjectFormJSON, wit.SecretValuesMasked, 1<<20, 1)
			if err != nil || shown.Objects != 1 || shown.Pages != 1 || len(shown.Shown) != 1 || !strings.Contains(shown.Shown[0].Text, "nginx:1.25") {
				t.Fatalf("ShowRenderPage: %+v %v", shown, err)
			}

			// Errors: the component's, with its kind and words, and a missing object.
			if _, err := s.ListHistoryPage(c, rel, 10, &refs[0]); !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("ListHistoryPage before a renderRef: %v", err)
			}
			_, err = s.BlameObject(c, rel, "deployment/gone", nil, wit.SecretValuesMasked)
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindNotFound || !strings.Contains(e.Message, "deployment/gone") {
				t.Fatalf("BlameObject of a missing object: %v", err)
			}
		})
	}
}

// The generated logic functions, and their errors.
func TestGeneratedLogicFunctions(t *testing.T) {
	c := ctx(t)
	rel := wit.Release{Namespace: "prod", Name: "web"}
	canonical, err := Canonical(deployment("nginx:1.25"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := RenderRef(deployment("nginx:1.25"))
	if err != nil {
		t.Fatal(err)
	}

	historyKey, err := HistoryKey("prod", "web", t0, ref)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseKeys(c, rel, []string{"prod/web/renders/" + ref, historyKey, "prod/web/other", "prod/other/renders/" + ref})
	if err != nil || len(parsed) != 4 {
		t.Fatalf("ParseKeys: %+v %v", parsed, err)
	}
	if parsed[0] == nil || parsed[0].Tag != wit.ParsedKeyRender || parsed[0].Render != ref {
		t.Fatalf("ParseKeys of a render key: %+v", parsed[0])
	}
	if parsed[1] == nil || parsed[1].Tag != wit.ParsedKeyHistory || parsed[1].History.RenderRef != ref || parsed[1].History.SyncedAt != syncTime(t0) {
		t.Fatalf("ParseKeys of a history key: %+v", parsed[1])
	}
	if parsed[2] != nil || parsed[3] != nil {
		t.Fatalf("ParseKeys of other keys: %+v %+v", parsed[2], parsed[3])
	}
	// A nil list is the empty one.
	if none, err := ParseKeys(c, rel, nil); err != nil || len(none) != 0 {
		t.Fatalf("ParseKeys of nil: %+v %v", none, err)
	}

	indexed, err := IndexObjects(c, canonical)
	if err != nil || len(indexed) != 1 {
		t.Fatalf("IndexObjects: %+v %v", indexed, err)
	}
	if o := indexed[0]; o.ID != (wit.ObjectID{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod", Name: "web"}) ||
		len(o.Images) != 1 || o.Images[0] != "docker.io/library/nginx:1.25" || len(o.Hash) != 64 {
		t.Fatalf("IndexObjects' object: %+v", o)
	}

	defaults, err := Defaults(c)
	if err != nil || defaults.KeepHistory != 10 || defaults.GCGraceSeconds != 600 {
		t.Fatalf("Defaults: %+v %v", defaults, err)
	}
	// With options, as the hand-written logic functions take them.
	if d, err := Defaults(c, WithFuel(1_000_000_000)); err != nil || *d != *defaults {
		t.Fatalf("Defaults with options: %+v %v", d, err)
	}

	key, err := IndexKey(c, rel)
	if err != nil || key != "prod/web/index/v1" {
		t.Fatalf("IndexKey: %q %v", key, err)
	}
	text, err := FormatKeyTime(c, syncTime(t0))
	if err != nil || text != "20260101T000000.000000000Z" {
		t.Fatalf("FormatKeyTime: %q %v", text, err)
	}
	back, err := ParseKeyTime(c, text)
	if err != nil || *back != syncTime(t0) {
		t.Fatalf("ParseKeyTime: %+v %v", back, err)
	}
	hex, err := SHA256Hex(c, canonical)
	if err != nil || "sha256:"+hex != ref {
		t.Fatalf("SHA256Hex: %q %v (renderRef %s)", hex, err, ref)
	}
	ends, err := JSONObjectEnds(c, []byte("{\"a\":1}\n{\"b\":2}\n"))
	if err != nil || len(ends) != 2 || ends[0] != 8 || ends[1] != 16 {
		t.Fatalf("JSONObjectEnds: %v %v", ends, err)
	}
	protected, err := ProtectedRefs(c, &ref, wit.ReleaseRefs{Pin: &ref})
	if err != nil || len(protected) != 1 || protected[0] != ref {
		t.Fatalf("ProtectedRefs: %v %v", protected, err)
	}
	// A result that is not the error variant is answered whole.
	pin, err := PinDecision(c, nil, ref, true)
	if err != nil || pin.IsErr || pin.Ok != nil {
		t.Fatalf("PinDecision without a pin: %+v %v", pin, err)
	}
	other := "sha256:" + strings.Repeat("1", 64)
	pin, err = PinDecision(c, &other, ref, true)
	if err != nil || pin.IsErr || pin.Ok == nil || *pin.Ok != other {
		t.Fatalf("PinDecision of a pin with a store: %+v %v", pin, err)
	}
	pin, err = PinDecision(c, &other, ref, false)
	if err != nil || !pin.IsErr || pin.Err == "" {
		t.Fatalf("PinDecision of a pin without a store: %+v %v", pin, err)
	}
	words, err := WordBucketMessage(c, wit.BucketMessage{Tag: wit.BucketMessageReadOnly, ReadOnly: wit.CallAndKey{Call: "put", Key: "a/b"}})
	if err != nil || words != `put "a/b": this bucket is read-only` {
		t.Fatalf("WordBucketMessage: %q %v", words, err)
	}

	// A trace function, over variants holding results.
	outcome, err := OutcomeJSON(c, wit.Outcome{Tag: wit.OutcomeHasHistoryRef, HasHistoryRef: wit.Result[bool, wit.Error]{Ok: true}})
	if err != nil || !strings.Contains(outcome, "true") {
		t.Fatalf("OutcomeJSON: %s %v", outcome, err)
	}
	outcome, err = OutcomeJSON(c, wit.Outcome{Tag: wit.OutcomeGetRender, GetRender: wit.Result[[]byte, wit.Error]{IsErr: true, Err: wit.Error{Tag: wit.ErrorNotFound, NotFound: "no such render"}}})
	if err != nil || !strings.Contains(outcome, "no such render") {
		t.Fatalf("OutcomeJSON of an error: %s %v", outcome, err)
	}

	// A bad argument: the component's error, its kind and what it says.
	_, err = ParseKeyTime(c, "yesterday")
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalidInput || !strings.Contains(e.Message, "yesterday") {
		t.Fatalf("ParseKeyTime of a bad time: %v", err)
	}
	_, err = JSONObjectEnds(c, []byte(`{"a":1} {"b":2}`))
	if !errors.As(err, &e) || e.Kind != KindInvalidObject || e.ObjectIndex != 0 {
		t.Fatalf("JSONObjectEnds of two objects on a line: %v", err)
	}
	if err := CheckImagePattern(c, "nginx:1.25"); err != nil {
		t.Fatalf("CheckImagePattern of a good pattern: %v", err)
	}
	if err := CheckImagePattern(c, "Nginx:["); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("CheckImagePattern of a bad pattern: %v", err)
	}
	// A value the encoding refuses is refused before the call, naming where it is.
	_, err = IndexKey(c, wit.Release{Namespace: "Not A Label", Name: "web"})
	if !errors.As(err, &e) || e.Kind != KindInvalidInput {
		t.Fatalf("IndexKey of a bad namespace: %v", err)
	}
	// A done context makes no call.
	done, cancel := context.WithCancel(c)
	cancel()
	if _, err := Defaults(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Defaults with a done context: %v", err)
	}
}

func TestGeneratedMethodsOnANilStore(t *testing.T) {
	var s *Store
	if _, err := s.CheckIndex(ctx(t), wit.Release{Namespace: "prod", Name: "web"}); !errors.Is(err, ErrNoStore) {
		t.Fatalf("CheckIndex on a nil store: %v", err)
	}
}

// The types of package wit encode as docs/json.md says, and decode what they encode.
func TestWITTypesJSON(t *testing.T) {
	ref := "sha256:" + strings.Repeat("0", 64)
	cases := []struct {
		value any
		json  string
	}{
		{wit.ParsedKey{Tag: wit.ParsedKeyRender, Render: ref}, `{"tag":"render","val":"` + ref + `"}`},
		{wit.EntryTrust{Tag: wit.EntryTrustUnchecked}, `{"tag":"unchecked"}`},
		{wit.ObjectFormYAML, `"yaml"`},
		{wit.JoinedObjects{}, `{"bytes":"","ends":[]}`},
		{wit.JoinedObjects{Bytes: []byte("{}"), Ends: []uint32{2}}, `{"bytes":"e30=","ends":[2]}`},
		{wit.HistoryPage{}, `{"entries":[],"nextBefore":null}`},
		{wit.Result[*string, string]{}, `{"tag":"ok","val":null}`},
		{wit.Result[wit.Unit, wit.BucketError]{IsErr: true, Err: wit.BucketError{Tag: wit.BucketErrorDenied, Denied: "no"}}, `{"tag":"err","val":{"tag":"denied","val":"no"}}`},
		{wit.Result[wit.Unit, wit.BucketError]{}, `{"tag":"ok"}`},
		{wit.Tuple2[*string, string]{V1: ref}, `[null,"` + ref + `"]`},
		{wit.DeleteManyCall{}, `{"keys":[],"answer":{"tag":"ok","val":[]}}`},
	}
	for _, tc := range cases {
		got, err := json.Marshal(tc.value)
		if err != nil || string(got) != tc.json {
			t.Errorf("%T: %s %v, want %s", tc.value, got, err, tc.json)
			continue
		}
		back := reflect.New(reflect.TypeOf(tc.value))
		if err := json.Unmarshal(got, back.Interface()); err != nil {
			t.Errorf("%T: decoding %s: %v", tc.value, got, err)
			continue
		}
		again, err := json.Marshal(back.Elem().Interface())
		if err != nil || string(again) != tc.json {
			t.Errorf("%T: %s decoded and encoded again is %s %v", tc.value, got, again, err)
		}
	}
	if _, err := json.Marshal(wit.ParsedKey{}); err == nil {
		t.Errorf("a variant without a tag encoded")
	}
	var k wit.ParsedKey
	if err := json.Unmarshal([]byte(`{"tag":"elsewhere"}`), &k); err == nil || !strings.Contains(err.Error(), "parsed-key") {
		t.Errorf("an unknown case decoded: %+v %v", k, err)
	}
}
