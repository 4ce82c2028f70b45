package renderstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	renderstore "convoy/renderstore"
)

// A controller's sync: store the render, apply it, record it, collect old history.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "render-store-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := renderstore.Open(ctx, "file://"+dir)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	objects := [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"prod"},"data":{"v":"1"}}`)}
	ref, err := store.PutRender(ctx, "prod", "app", objects)
	if err != nil {
		log.Fatal(err)
	}
	// ... apply the objects ...
	syncedAt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := store.RecordHistory(ctx, "prod", "app", ref, syncedAt, "v1"); err != nil {
		log.Fatal(err)
	}
	keep := renderstore.EffectiveKeepHistory(nil)
	plan, err := store.GC(ctx, "prod", "app", keep, renderstore.ProtectedRefs(ref, "", "", "", ""))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ref)
	fmt.Println(len(plan.DeleteHistory), "entries deleted")
	// The renderRef is the SHA-256 of the canonical bytes (`sha256sum` agrees).
	// Output:
	// sha256:d45186575d3648ebfc3c96ddc0add6b3a68a8903b2fb90978c597ee81eb1fcb0
	// 0 entries deleted
}

// An empty --render-store-url means no render store: a nil *Store whose PutRender
// still computes the renderRef.
func ExampleOpen_noStore() {
	store, err := renderstore.Open(context.Background(), "")
	fmt.Println(store == nil, err)
	ref, _ := store.PutRender(context.Background(), "prod", "app", [][]byte{[]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"prod"}}`)})
	fmt.Println(ref[:15])
	_, err = store.GetRender(context.Background(), "prod", "app", ref)
	fmt.Println(errors.Is(err, renderstore.ErrNoStore))
	// Output:
	// true <nil>
	// sha256:2b401327
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
