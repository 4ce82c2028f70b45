package renderstore

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func deployment(image string) [][]byte {
	return [][]byte{[]byte(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":%q}]}}}}`, image))}
}

// syncImages puts and records a render of prod/web running each image in turn, each
// synced step after the one before from t0, its summary the image.
func syncImages(t *testing.T, s *Store, t0 time.Time, step time.Duration, images ...string) {
	t.Helper()
	c := ctx(t)
	for i, image := range images {
		ref, err := s.PutRender(c, "prod", "web", deployment(image))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordHistory(c, "prod", "web", ref, t0.Add(time.Duration(i)*step), image); err != nil {
			t.Fatal(err)
		}
	}
}

func TestImages(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := ctx(t)
			syncImages(t, s, t0, 24*time.Hour, "nginx:1.25", "nginx:1.26")
			found, err := s.Images(c, ImageQuery{Pattern: "nginx"})
			if err != nil || !found.Complete || len(found.Intervals) != 2 {
				t.Fatalf("Images: %+v %v", found, err)
			}
			first, second := found.Intervals[0], found.Intervals[1]
			if first.Image != "docker.io/library/nginx:1.25" || first.Namespace != "prod" || first.Name != "web" ||
				!first.From.Equal(t0) || first.Until == nil || !first.Until.Equal(t0.Add(24*time.Hour)) {
				t.Fatalf("the first interval: %+v", first)
			}
			if second.Until != nil || len(second.RenderRefs) != 1 {
				t.Fatalf("the open interval: %+v", second)
			}
			// A window after the bump keeps the open interval alone.
			later, err := s.Images(c, ImageQuery{Pattern: "nginx", Since: t0.Add(48 * time.Hour)})
			if err != nil || len(later.Intervals) != 1 || later.Intervals[0].Image != "docker.io/library/nginx:1.26" {
				t.Fatalf("Images since: %+v %v", later, err)
			}
			none, err := s.Images(c, ImageQuery{Pattern: "redis", Namespace: "prod"})
			if err != nil || len(none.Intervals) != 0 || !none.Complete {
				t.Fatalf("Images of another image: %+v %v", none, err)
			}
			if _, err := s.Images(c, ImageQuery{Pattern: "nginx:"}); !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("a bad pattern: %v", err)
			}
		})
	}
}

func TestBlame(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := ctx(t)
			for i, image := range []string{"nginx:1.25", "nginx:1.26", "nginx:1.26"} {
				objects := append(deployment(image), []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"n":"%d"}}`, i)))
				ref, err := s.PutRender(c, "prod", "web", objects)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.RecordHistory(c, "prod", "web", ref, t0.Add(time.Duration(i)*time.Hour), fmt.Sprintf("sync %d", i)); err != nil {
					t.Fatal(err)
				}
			}
			b, err := s.Blame(c, "prod", "web", "deployment/web", "spec.template.spec.containers[name=web].image")
			if err != nil || len(b.Fields) != 1 {
				t.Fatalf("Blame: %+v %v", b, err)
			}
			f := b.Fields[0]
			if f.Entry != 1 || f.Summary != "sync 1" || f.Value != `"nginx:1.26"` || !f.SyncedAt.Equal(t0.Add(time.Hour)) {
				t.Fatalf("the image's blame: %+v", f)
			}
			if b.Object.Kind != "Deployment" || b.Newest != 0 {
				t.Fatalf("the object: %+v", b)
			}
			if _, err := s.Blame(c, "prod", "web", "deployment/gone", ""); !errors.Is(err, ErrNotFound) {
				t.Fatalf("a missing object: %v", err)
			}
		})
	}
}

func TestChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := ctx(t)
			syncImages(t, s, t0, time.Hour, "nginx:1.25", "nginx:1.26")
			all, err := s.Changes(c, ChangeQuery{Since: t0})
			if err != nil || !all.Complete || len(all.Entries) != 2 {
				t.Fatalf("Changes: %+v %v", all, err)
			}
			bump := all.Entries[0]
			if bump.Entry != 0 || bump.PreviousRenderRef == nil || len(bump.Images) != 1 ||
				*bump.Images[0].Old != "nginx:1.25" || *bump.Images[0].New != "nginx:1.26" {
				t.Fatalf("the bump: %+v", bump)
			}
			if first := all.Entries[1]; first.PreviousRenderRef != nil || len(first.Added) != 1 {
				t.Fatalf("the first entry: %+v", first)
			}
			later, err := s.Changes(c, ChangeQuery{Since: t0.Add(30 * time.Minute)})
			if err != nil || len(later.Entries) != 1 {
				t.Fatalf("Changes since: %+v %v", later, err)
			}
		})
	}
}

func TestIndexRelease(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := ctx(t)
			syncImages(t, s, t0, time.Hour, "nginx:1.25", "nginx:1.26")
			before, err := s.Images(c, ImageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			report, err := s.IndexRelease(c, "prod", "web", true)
			if err != nil || report.Renders != 2 || report.Read != 2 || report.Indexed != 2 || !report.Written {
				t.Fatalf("IndexRelease: %+v %v", report, err)
			}
			again, err := s.Reindex(c, "")
			if err != nil || !again.Complete || len(again.Releases) != 1 ||
				again.Releases[0].Read != 0 || again.Releases[0].Written || again.Releases[0].Name != "web" {
				t.Fatalf("Reindex of an indexed store: %+v %v", again, err)
			}
			after, err := s.Images(c, ImageQuery{})
			if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("Images from the index: %+v, from the renders: %+v (%v)", after, before, err)
			}
			if _, err := s.IndexRelease(c, "prod", "Web", true); !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("a bad name: %v", err)
			}
		})
	}
}
