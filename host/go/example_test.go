package renderstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	renderstore "convoy.dev/renderstore"
)

// configMap is the one object of the examples' renders, at version v.
func configMap(v string) [][]byte {
	return [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"prod"},"data":{"v":"` + v + `"}}`)}
}

// A controller's sync loop: persist the render (if that fails, apply nothing), apply
// it, record it, collect old history with the Release's protected renders; and when
// the Release is deleted, delete its keys.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "render-store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Grace 0: this example's GC may delete blobs written a moment ago.
	store, err := renderstore.Open(ctx, "file://"+dir, renderstore.WithGCGrace(0))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	keepHistory := int64(2) // release.Spec.KeepHistory
	var lastSuccessful string
	for i, v := range []string{"1", "2", "3"} {
		// Each sync bounds its store calls; a cut call leaves nothing half-written.
		sync, cancel := context.WithTimeout(ctx, 30*time.Second)
		ref, err := store.PutRender(sync, "prod", "app", configMap(v))
		if err != nil {
			cancel()
			log.Fatal(err) // a DeployFailed sync: nothing applied, retried later
		}
		// ... apply the objects ...
		syncedAt := time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)
		if _, err := store.RecordHistory(sync, "prod", "app", ref, syncedAt, "v"+v); err != nil {
			log.Print(err) // logged; the sync stays successful
		}
		protected := renderstore.ProtectedRenders{Applied: ref, LastSuccessful: lastSuccessful}
		plan, err := store.GC(sync, "prod", "app", renderstore.EffectiveKeepHistory(&keepHistory), protected.Refs())
		cancel()
		if err != nil {
			log.Print(err) // logged; the reconcile goes on
			continue
		}
		lastSuccessful = ref
		fmt.Printf("sync %s: %d entries kept, %d deleted\n", v, len(plan.KeepHistory), len(plan.DeleteHistory))
	}

	// The Release is deleted: its finalizer deletes every key; a second run is a no-op.
	deleted, err := store.DeleteRelease(ctx, "prod", "app")
	fmt.Println(deleted, "keys deleted", err)
	deleted, err = store.DeleteRelease(ctx, "prod", "app")
	fmt.Println(deleted, "keys deleted", err)
	// Output:
	// sync 1: 1 entries kept, 0 deleted
	// sync 2: 2 entries kept, 0 deleted
	// sync 3: 2 entries kept, 1 deleted
	// 4 keys deleted <nil>
	// 0 keys deleted <nil>
}

// An empty --render-store-url means no render store: a nil *Store. PutRender still
// computes the renderRef, the writes do nothing, the reads say there is no store, and
// resolvedRetentionPolicy.historyCount is 0.
func ExampleOpen_noStore() {
	ctx := context.Background()
	store, err := renderstore.Open(ctx, "")
	fmt.Println(store == nil, err)
	ref, _ := store.PutRender(ctx, "prod", "app", [][]byte{[]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"prod"}}`)})
	fmt.Println(ref[:15])
	added, err := store.RecordHistory(ctx, "prod", "app", ref, time.Now(), "v1")
	fmt.Println(added, err)
	plan, err := store.GC(ctx, "prod", "app", 10, nil)
	fmt.Println(len(plan.DeleteHistory), err)
	deleted, err := store.DeleteRelease(ctx, "prod", "app")
	fmt.Println(deleted, err)
	_, err = store.GetRender(ctx, "prod", "app", ref)
	fmt.Println(errors.Is(err, renderstore.ErrNoStore))
	fmt.Println(store.HistoryCount(nil))
	// Output:
	// true <nil>
	// sha256:2b401327
	// false <nil>
	// 0 <nil>
	// 0 <nil>
	// true
	// 0
}

// The renders GC keeps whatever the history says, read from the Release: distinct and
// sorted, empty fields left out.
func ExampleProtectedRenders() {
	applied, _ := renderstore.RenderRef(configMap("2"))
	lastHealthy, _ := renderstore.RenderRef(configMap("1"))
	refs := renderstore.ProtectedRenders{
		Applied:        applied,
		LastSuccessful: applied,
		LastHealthy:    lastHealthy,
	}.Refs()
	for _, r := range refs {
		fmt.Println(r[:15])
	}
	// Output:
	// sha256:abf6b992
	// sha256:d4518657
}

// A call's context bounds it: one already past its deadline makes no bucket call, and
// one cut while it waits fails with an error that is both the store's and the
// context's.
func ExampleStore_PutRender_deadline() {
	store, err := renderstore.Open(context.Background(), "mem://")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	_, err = store.PutRender(ctx, "prod", "app", configMap("1"))
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output:
	// true
}

// The renderRef of a YAML stream, as a Go controller computes it.
func ExampleYAMLRenderRef() {
	ref, err := renderstore.YAMLRenderRef([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n---\n# empty\n"))
	fmt.Println(ref, err)
	_, err = renderstore.YAMLRenderRef([]byte("a: 1\n---\nb: [\n"))
	var yerr *renderstore.InvalidYAMLError
	if errors.As(err, &yerr) {
		fmt.Println("document", yerr.Document, "line", yerr.Line)
	}
	// Output:
	// sha256:2b401327ce665da89740b3a13422159da9d1a5c42de885e98f6abb5d8ea47d16 <nil>
	// document 1 line 4
}

// A Bucket of your own: here the package's MemoryBucket.
func ExampleNew() {
	store, err := renderstore.New(renderstore.NewMemoryBucket())
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	ref, _ := store.PutRender(ctx, "prod", "app", [][]byte{[]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"prod"}}`)})
	got, _ := store.GetRender(ctx, "prod", "app", ref)
	fmt.Printf("%s", got)
	// Output:
	// {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}
}
