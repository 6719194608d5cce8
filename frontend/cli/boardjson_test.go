package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestBoardOnceJSON: --json is a global flag, so it is read wherever it
// stands; board --once with it prints one document, the web board's
// snapshot, with the live lock in it.
func TestBoardOnceJSON(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("README.md", "x\n")
	r.Commit("init")
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append([]string{"--color", "never", "-C", r.Dir, "--as", "bob@test"}, args...)
		if code := Main(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut}); code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
		return out.String()
	}
	run("lock", "acquire", "src/a.go", "--reason", "the parser")
	for _, order := range [][]string{
		{"board", "--json", "--once"},
		{"board", "--once", "--json"},
		{"--json", "board", "--once"},
	} {
		out := run(order...)
		dec := json.NewDecoder(strings.NewReader(out))
		var doc struct {
			Store string `json:"store"`
			Locks []struct {
				Key    string `json:"key"`
				Holder string `json:"holder"`
			} `json:"locks"`
		}
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("%v: not JSON: %v\n%s", order, err, out)
		}
		if dec.More() {
			t.Fatalf("%v: more than one document:\n%s", order, out)
		}
		if doc.Store != "the file store" || len(doc.Locks) != 1 || doc.Locks[0].Key != "src/a.go" || doc.Locks[0].Holder != "bob@test" {
			t.Fatalf("%v: %+v\n%s", order, doc, out)
		}
	}
}

// framesWriter cancels the board once it has printed the lines it waits
// for: the board without --once runs until it is stopped.
type framesWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   int
	cancel context.CancelFunc
}

func (w *framesWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Count(w.buf.Bytes(), []byte("\n")) >= w.want {
		w.cancel()
	}
	return len(p), nil
}

// TestBoardStreamJSON: without --once, --json prints one snapshot a frame,
// each a whole document on its own line.
func TestBoardStreamJSON(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("README.md", "x\n")
	r.Commit("init")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &framesWriter{want: 2, cancel: cancel}
	var errOut bytes.Buffer
	if code := Main(ctx, []string{"--color", "never", "-C", r.Dir, "--as", "bob@test", "board", "--json"}, Stdio{In: strings.NewReader(""), Out: out, Err: &errOut}); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 frames:\n%s", len(lines), out.buf.String())
	}
	for _, line := range lines {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("a frame is not one JSON document: %v\n%q", err, line)
		}
		if doc["store"] != "the file store" {
			t.Fatalf("frame %q: store %v", line, doc["store"])
		}
	}
}
