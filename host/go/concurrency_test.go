package renderstore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Many goroutines syncing many releases through one Store, as a controller's workers
// do; run under -race too.
func TestConcurrentSyncs(t *testing.T) {
	const workers, releases = 64, 100
	for name, open := range map[string]func() (*Store, error){
		"go-bucket": func() (*Store, error) { return New(NewMemoryBucket(), WithGCGrace(0)) },
		"file": func() (*Store, error) {
			return Open(context.Background(), "file://"+filepath.Join(t.TempDir()), WithGCGrace(0))
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			jobs := make(chan int)
			errs := make(chan error, releases)
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range jobs {
						errs <- syncTwice(s, fmt.Sprintf("r%03d", r), r)
					}
				}()
			}
			for r := 0; r < releases; r++ {
				jobs <- r
			}
			close(jobs)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			for r := 0; r < releases; r += 17 {
				h, err := s.History(context.Background(), "ns", fmt.Sprintf("r%03d", r))
				if err != nil || len(h) != 1 {
					t.Fatalf("release %d: %d entries, %v", r, len(h), err)
				}
			}
		})
	}
}

// syncTwice is two syncs of a release with keepHistory 1, as the controller runs them.
func syncTwice(s *Store, name string, n int) error {
	c := context.Background()
	for i := 0; i < 2; i++ {
		ref, err := s.PutRender(c, "ns", name, render(n*10+i))
		if err != nil {
			return err
		}
		if has, err := s.HasHistoryRef(c, "ns", name, ref); err != nil || has {
			return fmt.Errorf("%s: HasHistoryRef %v %v", name, has, err)
		}
		if _, err := s.RecordHistory(c, "ns", name, ref, t0.Add(timeStep(i)), "sync"); err != nil {
			return err
		}
		if _, err := s.GC(c, "ns", name, 1, ProtectedRenders{Applied: ref}.Refs()); err != nil {
			return err
		}
	}
	return nil
}
func timeStep(i int) time.Duration { return time.Duration(i) * time.Second }
