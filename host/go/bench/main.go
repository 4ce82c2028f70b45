// Command bench is the Go package's side of `cargo bench -p render-store-tests --bench
// packages`: for each case file DIR/N.jsonl (one compact JSON object a line), the
// median time in seconds of RenderRef, PutRender (into a fresh mem:// store) and
// GetRender, printed as JSON {N: {render_ref, put_render, get_render}}. Same timing
// rule as the bench's Rust side. Build it against the release library:
//
//	go build -tags renderstore_release -o bench-go ./bench && ./bench-go DIR N...
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	renderstore "convoy.dev/renderstore"
)

// median is the median time of f over at least 3 runs and minTime (at most 200), after
// a warm-up of at least one run and minTime (at most 10,000 runs).
func median(minTime time.Duration, f func() error) (float64, error) {
	start := time.Now()
	for warm := 0; warm < 1 || (time.Since(start) < minTime && warm < 10_000); warm++ {
		if err := f(); err != nil {
			return 0, err
		}
	}
	start = time.Now()
	var runs []float64
	for len(runs) < 3 || (time.Since(start) < minTime && len(runs) < 200) {
		t := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		runs = append(runs, time.Since(t).Seconds())
	}
	sort.Float64s(runs)
	return runs[len(runs)/2], nil
}

func measure(dir, n string) (map[string]float64, error) {
	text, err := os.ReadFile(filepath.Join(dir, n+".jsonl"))
	if err != nil {
		return nil, err
	}
	// Objects as bytes, as a caller holding files has them.
	objects := bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	ctx := context.Background()
	const minTime = 500 * time.Millisecond
	out := map[string]float64{}
	if out["render_ref"], err = median(minTime, func() error {
		_, err := renderstore.RenderRef(objects)
		return err
	}); err != nil {
		return nil, err
	}
	if out["put_render"], err = median(minTime, func() error {
		s, err := renderstore.Open(ctx, "mem://")
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.PutRender(ctx, "bench", "app", objects)
		return err
	}); err != nil {
		return nil, err
	}
	s, err := renderstore.Open(ctx, "mem://")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ref, err := s.PutRender(ctx, "bench", "app", objects)
	if err != nil {
		return nil, err
	}
	if out["get_render"], err = median(minTime, func() error {
		_, err := s.GetRender(ctx, "bench", "app", ref)
		return err
	}); err != nil {
		return nil, err
	}
	return out, nil
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: bench DIR N...")
		os.Exit(2)
	}
	out := map[string]map[string]float64{}
	for _, n := range os.Args[2:] {
		t, err := measure(os.Args[1], n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: case %s: %v\n", n, err)
			os.Exit(1)
		}
		out[n] = t
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
