package renderstore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secretValue is long and random-looking, so finding it in a stored file means it was
// stored in clear.
const secretValue = "q7Vx2LmN9rTb4WcZ8kYp3HfJ6dGs1AeR"

func secretRender() [][]byte {
	return [][]byte{[]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"ns"},"stringData":{"password":"` + secretValue + `"}}`)}
}

// keyringFile writes a keyring file of the given ids (each key 32 copies of its id's
// last byte, so an id names the same key in every file) with mode 0600 and returns its
// path.
func keyringFile(t *testing.T, ids ...string) string {
	t.Helper()
	var text strings.Builder
	for _, id := range ids {
		key := bytes.Repeat([]byte{id[len(id)-1]}, 32)
		text.WriteString(id + " " + base64.StdEncoding.EncodeToString(key) + "\n")
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(text.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// storedFiles is every file under dir, read.
func storedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestEncryptedStore(t *testing.T) {
	dir := t.TempDir()
	url := "file://" + dir
	keys := keyringFile(t, "k1")
	s, err := Open(ctx(t), url, WithEncryptionKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref, err := s.PutRender(ctx(t), "ns", "app", secretRender())
	if err != nil {
		t.Fatal(err)
	}
	want, err := RenderRef(secretRender())
	if err != nil || ref != want {
		t.Fatalf("renderRef %s, want the plaintext one %s (%v)", ref, want, err)
	}
	for path, b := range storedFiles(t, dir) {
		if bytes.Contains(b, []byte(secretValue)) {
			t.Fatalf("%s holds the Secret's value in clear", path)
		}
	}
	got, err := s.GetRender(ctx(t), "ns", "app", ref)
	if err != nil || !bytes.Contains(got, []byte(secretValue)) {
		t.Fatalf("get: %q %v", got, err)
	}

	// Without the keyring: an error naming the key, never "corrupt".
	plain, err := Open(ctx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	_, err = plain.GetRender(ctx(t), "ns", "app", ref)
	var e *Error
	if !errors.Is(err, ErrEncryptionKey) || !errors.As(err, &e) || !strings.Contains(e.Error(), `"k1"`) {
		t.Fatalf("get without the keyring: %v", err)
	}

	// The CLI reads what Go sealed, with the same keyring file.
	out := runCLI(t, url, nil, "--encryption-keys", keys, "get", "ns/app", ref)
	if !bytes.Contains(out, []byte(secretValue)) {
		t.Fatalf("the CLI read %q", out)
	}

	// Rekey under a new first key, then the old key can go.
	rotated := keyringFile(t, "k2", "k1")
	s2, err := Open(ctx(t), url, WithEncryptionKeys(rotated))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if n, kept, err := s2.RekeyRelease(ctx(t), "ns", "app"); err != nil || n != 1 || kept != 0 {
		t.Fatalf("rekey: %d %d %v", n, kept, err)
	}
	if _, _, err := plain.RekeyRelease(ctx(t), "ns", "app"); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("rekey without a keyring: %v", err)
	}
}

func TestEncryptedBucketStoreAndReplay(t *testing.T) {
	keys := keyringFile(t, "k1")
	bucket := NewMemoryBucket()
	s, err := New(bucket, WithEncryptionKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tr Trace
	ref, err := s.PutRender(WithTrace(ctx(t), &tr), "ns", "app", secretRender())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range bucket.Keys() {
		b, _ := bucket.Get(ctx(t), key, 1<<20)
		if bytes.Contains(b, []byte(secretValue)) {
			t.Fatalf("%s holds the Secret's value in clear", key)
		}
	}
	if bytes.Contains(tr.Text(), []byte(secretValue)) || !bytes.Contains(tr.Text(), []byte(`"keyIds":["k1"]`)) {
		t.Fatalf("trace: %s", tr.Text())
	}
	if report, err := Replay(tr.Text(), WithEncryptionKeys(keys)); err != nil || !report.Matches {
		t.Fatalf("replay with the keyring: %+v %v", report, err)
	}
	var e *Error
	if _, err := Replay(tr.Text()); !errors.As(err, &e) || e.Kind != KindTrace || !strings.Contains(e.Error(), `"k1"`) {
		t.Fatalf("replay without the keyring: %v", err)
	}
	if _, err := s.GetRender(ctx(t), "ns", "app", ref); err != nil {
		t.Fatal(err)
	}
	// A keyring file others can read is refused.
	if err := os.Chmod(keys, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(bucket, WithEncryptionKeys(keys)); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "0644") {
		t.Fatalf("an open keyring file: %v", err)
	}
}

func TestGoReadsWhatTheCLISealed(t *testing.T) {
	dir := t.TempDir()
	url := "file://" + dir
	keys := keyringFile(t, "k1")
	file := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(file, secretRender()[0], 0o600); err != nil {
		t.Fatal(err)
	}
	var put struct {
		RenderRef string `json:"renderRef"`
	}
	if err := json.Unmarshal(runCLI(t, url, nil, "--encryption-keys", keys, "put", "ns/app", file), &put); err != nil {
		t.Fatal(err)
	}
	ref := put.RenderRef
	if want, err := RenderRef(secretRender()); err != nil || ref != want {
		t.Fatalf("the CLI stored %s, want the plaintext renderRef %s (%v)", ref, want, err)
	}
	for path, b := range storedFiles(t, dir) {
		if bytes.Contains(b, []byte(secretValue)) {
			t.Fatalf("%s holds the Secret's value in clear", path)
		}
	}
	s, err := Open(ctx(t), url, WithEncryptionKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetRender(ctx(t), "ns", "app", ref)
	if err != nil || !bytes.Contains(got, []byte(secretValue)) {
		t.Fatalf("Go read %q, %v", got, err)
	}
}

func TestEncryptionRequiredRefusesPlantedPlaintext(t *testing.T) {
	dir := t.TempDir()
	url := "file://" + dir
	keys := keyringFile(t, "k1")
	// The rule needs a keyring: refused before the store is used.
	if _, err := Open(ctx(t), url, WithEncryptionRequired()); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "the keyring is empty") {
		t.Fatalf("required without a keyring: %v", err)
	}
	if _, err := New(NewMemoryBucket(), WithEncryptionRequired()); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("required without a keyring: %v", err)
	}
	lenient, err := Open(ctx(t), url, WithEncryptionKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	defer lenient.Close()
	strict, err := Open(ctx(t), url, WithEncryptionKeys(keys), WithEncryptionRequired())
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	ref, err := strict.PutRender(ctx(t), "ns", "app", secretRender())
	if err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, "ns", "app", "renders", ref)
	sealed, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	// A writer without the key plants the plaintext: read without the rule, refused with it.
	plain, err := Canonical(secretRender())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, plain, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := lenient.GetRender(ctx(t), "ns", "app", ref); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("without the rule: %q %v", got, err)
	}
	_, err = strict.GetRender(ctx(t), "ns", "app", ref)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "encryption is required") || !strings.Contains(err.Error(), "is plaintext") {
		t.Fatalf("with the rule: %v", err)
	}
	// A put under the rule seals it again.
	if _, err := strict.PutRender(ctx(t), "ns", "app", secretRender()); err != nil {
		t.Fatal(err)
	}
	if again, err := os.ReadFile(blob); err != nil || !bytes.Equal(again, sealed) {
		t.Fatalf("after put: %v", err)
	}
	if got, err := strict.GetRender(ctx(t), "ns", "app", ref); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("after put: %q %v", got, err)
	}
}

// With a keyring every entry carries a MAC: History says which authenticate, an entry a
// writer of the bucket plants does not, and under the rule it does not keep the real
// sync out of the history, nor count toward GC's keep.
func TestAuthenticatedHistory(t *testing.T) {
	dir := t.TempDir()
	url := "file://" + dir
	keys := keyringFile(t, "k1")
	strict, err := Open(ctx(t), url, WithEncryptionKeys(keys), WithEncryptionRequired())
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	ref, err := strict.PutRender(ctx(t), "ns", "app", secretRender())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// The writer records it first, with no MAC.
	key := "20250101T000000.000000000Z-" + ref
	body := `{"renderRef":"` + ref + `","syncedAt":"2025-01-01T00:00:00Z","summary":"planted"}`
	if err := os.MkdirAll(filepath.Join(dir, "ns", "app", "history"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ns", "app", "history", key), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	added, err := strict.RecordHistory(ctx(t), "ns", "app", ref, at.Add(time.Hour), "real")
	if err != nil || !added {
		t.Fatalf("a planted entry kept the real one out: %v %v", added, err)
	}
	entries, err := strict.History(ctx(t), "ns", "app")
	if err != nil || len(entries) != 2 {
		t.Fatalf("history: %+v %v", entries, err)
	}
	if entries[0].Trust == nil || !strings.Contains(entries[0].Trust.Unauthenticated, "no MAC") {
		t.Fatalf("planted entry: %+v", entries[0].Trust)
	}
	if entries[1].Trust == nil || entries[1].Trust.Authenticated != "k1" {
		t.Fatalf("recorded entry: %+v", entries[1].Trust)
	}
	// keep 1 counts the authenticated entry; the planted one, older, is past retention.
	plan, err := strict.GC(ctx(t), "ns", "app", 1, nil, Grace(time.Now(), 0), DryRun())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.DeleteHistory) != 1 || !strings.HasSuffix(plan.DeleteHistory[0], key) || len(plan.UnauthenticatedHistory) != 0 {
		t.Fatalf("plan: %+v", plan)
	}
	// Without a keyring nothing is judged.
	plainStore, err := Open(ctx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	defer plainStore.Close()
	entries, err = plainStore.History(ctx(t), "ns", "app")
	if err != nil || len(entries) == 0 || entries[0].Trust != nil {
		t.Fatalf("without a keyring: %+v %v", entries, err)
	}
}
