// Command controller is the controller's sync loop over the render store, as a program:
// for each release, syncs that persist a render (nothing is applied if that fails),
// "apply" it, record it and collect old history with the Release's protected renders,
// then the finalizer's delete-release. It is what the container image of Dockerfile
// runs, and what host/go/check-module.sh runs statically linked in an empty chroot
// against the S3 emulator.
//
//	controller -render-store-url s3://renders?region=us-east-1 -releases 3 -syncs 20
//
// Every store call has a deadline (-call-timeout), as a reconcile's context gives it,
// and SIGTERM (a pod's shutdown) closes the store, which cuts the calls in flight.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	renderstore "convoy.dev/renderstore"
)

func main() {
	url := flag.String("render-store-url", os.Getenv("RENDER_STORE_URL"), "the render store (gocloud URL; empty: none)")
	releases := flag.Int("releases", 3, "releases to sync")
	syncs := flag.Int("syncs", 20, "syncs of each release")
	keepHistory := flag.Int64("keep-history", 5, "each Release's spec.keepHistory")
	callTimeout := flag.Duration("call-timeout", 10*time.Second, "the deadline of each store call")
	keep := flag.Bool("keep", false, "leave the releases in the store (no finalizer)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	store, err := renderstore.Open(ctx, *url, renderstore.WithRequestTimeout(*callTimeout))
	if err != nil {
		log.Fatalf("opening the render store: %v", err)
	}
	// A pod's shutdown: Close cuts what is in flight and returns at once.
	go func() {
		<-ctx.Done()
		store.Close()
	}()
	defer store.Close()

	start := time.Now()
	total := 0
	for r := 0; r < *releases; r++ {
		name := fmt.Sprintf("app-%d", r)
		var lastSuccessful string
		for i := 0; i < *syncs; i++ {
			ref, err := sync(ctx, store, name, i, lastSuccessful, *keepHistory, *callTimeout)
			if err != nil {
				log.Fatalf("%s sync %d: %v", name, i, err)
			}
			lastSuccessful = ref
			total++
		}
	}
	kept := 0
	// Without a render store (an empty URL: a nil *Store) there is no history to read.
	for r := 0; r < *releases && store != nil; r++ {
		name := fmt.Sprintf("app-%d", r)
		call, cancel := context.WithTimeout(ctx, *callTimeout)
		entries, err := store.History(call, "prod", name)
		cancel()
		if err != nil {
			log.Fatalf("%s history: %v", name, err)
		}
		kept += len(entries)
		if *keep {
			continue
		}
		// The finalizer: delete every key; a second run deletes nothing.
		call, cancel = context.WithTimeout(ctx, *callTimeout)
		if _, err := store.DeleteRelease(call, "prod", name); err != nil {
			log.Fatalf("%s delete-release: %v", name, err)
		}
		cancel()
	}
	fmt.Printf("%d syncs of %d releases in %v; %d history entries kept\n",
		total, *releases, time.Since(start).Round(time.Millisecond), kept)
}

// sync is one sync of a release: persist, apply, record, GC, index. Its render's one object
// changes with i.
func sync(ctx context.Context, store *renderstore.Store, name string, i int, lastSuccessful string, keepHistory int64, timeout time.Duration) (string, error) {
	objects := [][]byte{[]byte(fmt.Sprintf(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"prod"},"data":{"sync":"%d"}}`, name, i))}
	call, cancel := context.WithTimeout(ctx, timeout)
	ref, err := store.PutRender(call, "prod", name, objects)
	cancel()
	if err != nil {
		return "", fmt.Errorf("persisting the render (nothing applied): %w", err)
	}
	// ... apply the objects ...
	call, cancel = context.WithTimeout(ctx, timeout)
	added, err := store.RecordHistory(call, "prod", name, ref, time.Now(), fmt.Sprintf("sync %d", i))
	cancel()
	if err != nil {
		log.Printf("%s: recording the history: %v", name, err) // the sync stays successful
	}
	protected := renderstore.ProtectedRenders{Applied: ref, LastSuccessful: lastSuccessful}
	call, cancel = context.WithTimeout(ctx, timeout)
	plan, err := store.GC(call, "prod", name, renderstore.EffectiveKeepHistory(&keepHistory), protected.Refs())
	cancel()
	if err != nil {
		log.Printf("%s: GC: %v", name, err) // logged; the reconcile goes on
	}
	// The release index (what each render holds, for fleet queries): the new render
	// indexed, what GC removed dropped, in one call. A cache: a failure is only logged.
	collected := plan != nil && (len(plan.DeleteHistory) > 0 || len(plan.DeleteRenders) > 0)
	if added || collected {
		call, cancel = context.WithTimeout(ctx, timeout)
		_, err = store.IndexRelease(call, "prod", name, added)
		cancel()
		if err != nil {
			log.Printf("%s: the release index: %v", name, err)
		}
	}
	return ref, nil
}
