package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lockgate/lockgate/internal/redistest"
)

// BenchmarkMCPAcquire: acquire_lock through `lockgate mcp`, from an
// in-process client over a real stdio pipe, against the same client's
// ping round trip (the protocol's floor). The default config: every event
// reaches the journal at once and the workflow branch in the background.
func BenchmarkMCPAcquire(b *testing.B) {
	b.Run("store=file", func(b *testing.B) { benchMCPAcquire(b, "file") })
	b.Run("store=redis", func(b *testing.B) {
		benchMCPAcquire(b, redistest.Start(b, redistest.Options{}).URL())
	})
}

func benchMCPAcquire(b *testing.B, store string) {
	r, env := benchRepo(b)
	r.Git("config", "--local", "lockgate.store", store) // as `lockgate store use` records it
	env = append(env, "LOCK_TTL_MS=600000")
	cmd := exec.Command(lockgateBinary(b), "mcp")
	cmd.Dir, cmd.Env = r.Dir, env
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		el := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
		return el
	}
	ping := func() time.Duration {
		start := time.Now()
		if err := cs.Ping(ctx, nil); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for i := range 50 { // warm-up
		ping()
		call("acquire_lock", map[string]any{"file_path": fmt.Sprintf("warm/%d.go", i)})
	}
	acq := make([]time.Duration, 0, b.N)
	pings := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		pings = append(pings, ping())
		key := filepath.ToSlash(fmt.Sprintf("src/pkg%03d/file%05d.go", i%100, i))
		acq = append(acq, call("acquire_lock", map[string]any{"file_path": key, "reason": "bench"}))
		call("release_lock", map[string]any{"file_path": key})
	}
	b.StopTimer()
	p := func(ds []time.Duration, q float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(acq, 0.50), "acquire-p50-ms")
	b.ReportMetric(p(acq, 0.99), "acquire-p99-ms")
	b.ReportMetric(p(pings, 0.50), "ping-p50-ms")
	b.ReportMetric(p(acq, 0.50)/p(pings, 0.50), "x-ping")
}

// BenchmarkGuardClaudeCode: `lockgate guard claude-code` answering an Edit
// payload, against `git rev-parse --git-common-dir` and against the Go
// floor of a guard (a Go program that reads the payload), with the bench
// policy and 10,000 path and 100 pattern locks of others in the store.
func BenchmarkGuardClaudeCode(b *testing.B) {
	r, env := benchRepo(b)
	r.Write(".lockgate.yaml", benchPolicy())
	seedLocks(b, r, 10000, 100)
	payload := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":%q,"old_string":"a","new_string":"b"}}`,
		r.Dir, filepath.Join(r.Dir, "src/app/free.go"))
	tools := []tool{
		{name: "lockgate", cmd: []string{lockgateBinary(b), "guard", "claude-code"}},
		{name: "go-floor", cmd: []string{readFloorBinary(b)}},
	}
	measure(b, r.Dir, env, payload, gitFloor(b, r.Dir, env, "rev-parse", "--git-common-dir"), tools)
}
