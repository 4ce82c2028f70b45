package renderstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The CLI of the same workspace: RENDER_STORE_BIN, or the debug build beside the
// library this package links.
func cli(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("RENDER_STORE_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "target", "debug", "render-store")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("RENDER_STORE_REQUIRE_CLI") == "1" {
			t.Fatalf("the CLI is not built (%v): cargo build -p render-store-cli", err)
		}
		t.Skipf("the CLI is not built (%v): cargo build -p render-store-cli", err)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func runCLI(t *testing.T, url string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(cli(t), append([]string{"--render-store-url", url, "--json"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render-store %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func TestCLIReadsWhatGoWrote(t *testing.T) {
	url := "file://" + t.TempDir()
	s, err := Open(ctx(t), url, WithGCGrace(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var refs []string
	for i := 0; i < 3; i++ {
		ref, err := s.PutRender(ctx(t), "ns", "app", render(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordHistory(ctx(t), "ns", "app", ref, t0.Add(time.Duration(i)*time.Minute), "from go"); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	got := runCLI(t, url, nil, "get", "ns/app", refs[1])
	if want := mustCanonical(t, render(1)); !bytes.Equal(got, want) {
		t.Fatalf("the CLI read %q, want %q", got, want)
	}
	var history []struct {
		RenderRef string `json:"renderRef"`
		Summary   string `json:"summary"`
	}
	if err := json.Unmarshal(runCLI(t, url, nil, "history", "ns/app"), &history); err != nil {
		t.Fatal(err)
	}
	if len(history) != 3 || history[2].RenderRef != refs[2] || history[2].Summary != "from go" {
		t.Fatalf("the CLI's history: %+v", history)
	}
	// The same GC decision both ways, from the same store.
	var cliPlan GCPlan
	out := runCLI(t, url, nil, "gc", "ns/app", "--keep", "1", "--grace", "0", "--dry-run", "--protect", refs[0])
	if err := json.Unmarshal(out, &cliPlan); err != nil {
		t.Fatal(err)
	}
	goPlan, err := s.GC(ctx(t), "ns", "app", 1, []string{refs[0]}, DryRun())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalPlan(goPlan), normalPlan(&cliPlan)) || len(goPlan.DeleteHistory) != 2 {
		t.Fatalf("GC plans differ:\ngo:  %+v\ncli: %+v", goPlan, cliPlan)
	}
}

// normalPlan makes empty and nil lists compare equal.
func normalPlan(p *GCPlan) [][]string {
	out := [][]string{p.DeleteHistory, p.DeleteRenders, p.Ignored, p.KeepHistory, p.KeepRenders, p.RecentRenders}
	for i := range out {
		if out[i] == nil {
			out[i] = []string{}
		}
	}
	return out
}

func TestGoReadsWhatTheCLIWrote(t *testing.T) {
	url := "file://" + t.TempDir()
	// Two JSON documents as one YAML stream, as `helm template` pipes them.
	objects := bytes.Join(render(7), []byte("\n---\n"))
	var put struct {
		RenderRef string `json:"renderRef"`
	}
	if err := json.Unmarshal(runCLI(t, url, objects, "put", "ns/app", "--format", "yaml", "-"), &put); err != nil {
		t.Fatal(err)
	}
	runCLI(t, url, nil, "record", "ns/app", put.RenderRef, "--synced-at", t0.Format(time.RFC3339), "--summary", "from the cli")
	s, err := Open(ctx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetRender(ctx(t), "ns", "app", put.RenderRef)
	if err != nil || !bytes.Equal(got, mustCanonical(t, render(7))) {
		t.Fatalf("Go read %q (%v)", got, err)
	}
	h, err := s.History(ctx(t), "ns", "app")
	if err != nil || len(h) != 1 || h[0].Summary != "from the cli" || !h[0].SyncedAt.Equal(t0) {
		t.Fatalf("Go's history: %+v %v", h, err)
	}
	if has, err := s.HasHistoryRef(ctx(t), "ns", "app", put.RenderRef); err != nil || !has {
		t.Fatalf("HasHistoryRef: %v %v", has, err)
	}
}

// A release's history/ folder moved away and replaced by a link: GC must fail with
// the listing's refusal and delete nothing (fail closed), through the Go package too.
func TestGCFailsClosedOnALinkedHistory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(ctx(t), "file://"+dir, WithGCGrace(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 3; i++ {
		ref, err := s.PutRender(ctx(t), "ns", "app", render(i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordHistory(ctx(t), "ns", "app", ref, t0.Add(time.Duration(i)*time.Second), ""); err != nil {
			t.Fatal(err)
		}
	}
	history := filepath.Join(dir, "ns", "app", "history")
	moved := filepath.Join(t.TempDir(), "history")
	if err := os.Rename(history, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, history); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(filepath.Join(dir, "ns", "app", "renders"))
	_, err = s.GC(context.Background(), "ns", "app", 1, nil)
	if !errors.Is(err, ErrBucket) || !strings.Contains(err.Error(), "ns/app/history") {
		t.Fatalf("GC over a linked history/: %v", err)
	}
	if _, err := s.DeleteRelease(context.Background(), "ns", "app"); !errors.Is(err, ErrBucket) {
		t.Fatalf("DeleteRelease over a linked history/: %v", err)
	}
	after, _ := os.ReadDir(filepath.Join(dir, "ns", "app", "renders"))
	if len(before) != 3 || len(after) != len(before) {
		t.Fatalf("renders before %d, after %d", len(before), len(after))
	}
}
