package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lockgate/lockgate/internal/gittest"
)

// mcpAgent is one coding agent: an MCP client talking to its own
// `lockgate mcp` process over a real stdio pipe.
type mcpAgent struct {
	t       testing.TB
	session *mcp.ClientSession
	cmd     *exec.Cmd

	schemasOnce sync.Once
	outSchemas  map[string]*jsonschema.Resolved // by tool name
}

func startMCP(t testing.TB, r *gittest.Repo, worker string, extraEnv ...string) *mcpAgent {
	t.Helper()
	cmd := mcpCmd(t, r, worker, extraEnv...)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to lockgate mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &mcpAgent{t: t, session: cs, cmd: cmd}
}

// call calls a tool and decodes its structured result into a map.
func (a *mcpAgent) call(name string, args map[string]any) (map[string]any, bool) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: protocol error: %v", name, err)
	}
	out := map[string]any{}
	if res.StructuredContent == nil {
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		out["_text"] = text
		return out, res.IsError
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		a.t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	// Every result matches the tool's output schema, and its text is the
	// same JSON for clients that read only the content.
	if err := a.outputSchema(name).Validate(out); err != nil {
		a.t.Errorf("%s: result %s does not match the output schema: %v", name, b, err)
	}
	var text map[string]any
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || len(res.Content) != 1 || json.Unmarshal([]byte(tc.Text), &text) != nil || !reflect.DeepEqual(text, out) {
		a.t.Errorf("%s: content %v is not the structured result %s", name, res.Content, b)
	}
	return out, res.IsError
}

// outputSchema is the resolved output schema of a tool, as the server
// lists it.
func (a *mcpAgent) outputSchema(name string) *jsonschema.Resolved {
	a.schemasOnce.Do(func() {
		tools, err := a.session.ListTools(context.Background(), nil)
		if err != nil {
			a.t.Fatalf("list tools: %v", err)
		}
		a.outSchemas = map[string]*jsonschema.Resolved{}
		for _, tl := range tools.Tools {
			b, _ := json.Marshal(tl.OutputSchema)
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				a.t.Fatalf("%s: output schema %s: %v", tl.Name, b, err)
			}
			r, err := s.Resolve(nil)
			if err != nil {
				a.t.Fatalf("%s: resolve output schema: %v", tl.Name, err)
			}
			a.outSchemas[tl.Name] = r
		}
	})
	r := a.outSchemas[name]
	if r == nil {
		a.t.Fatalf("no output schema for %s", name)
	}
	return r
}

func errClass(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	s, _ := e["class"].(string)
	return s
}

func TestMCPToolsAndSchemas(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1")
	ctx := context.Background()
	tools, err := a.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		b, _ := json.Marshal(tl.InputSchema)
		var s map[string]any
		_ = json.Unmarshal(b, &s)
		schemas[tl.Name] = s
		if tl.OutputSchema == nil {
			t.Errorf("%s has no output schema", tl.Name)
		}
		if tl.Description == "" {
			t.Errorf("%s has no description", tl.Name)
		}
	}
	slices.Sort(names)
	want := []string{"acquire_lock", "allocate_ports", "check_change", "check_locks", "claim_package",
		"complete_package", "list_locks", "list_packages", "pause_status", "refresh_lock", "release_lock", "release_ports"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	props := func(tool string) map[string]any {
		p, _ := schemas[tool]["properties"].(map[string]any)
		return p
	}
	for _, f := range []string{"file_path", "keys", "reason", "ttl_minutes", "wait_seconds", "task_id"} {
		if _, ok := props("acquire_lock")[f]; !ok {
			t.Errorf("acquire_lock schema lacks %s: %v", f, schemas["acquire_lock"])
		}
	}
	if _, ok := props("allocate_ports")["session_id"]; !ok {
		t.Errorf("allocate_ports schema lacks session_id")
	}
	if req, _ := schemas["check_change"]["required"].([]any); !slices.Contains(req, any("paths")) {
		t.Errorf("check_change must require paths: %v", schemas["check_change"])
	}
}

func TestMCPAcquireReleaseCheck(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1", "LOCKGATE_WORKER_TYPE=agent")
	b := startMCP(t, r, "agent-2", "LOCKGATE_WORKER_TYPE=agent")

	out, isErr := a.call("acquire_lock", map[string]any{"file_path": "src/api/users.py", "reason": "endpoint", "ttl_minutes": 10})
	if isErr || out["acquired"] != true {
		t.Fatalf("acquire: %v", out)
	}
	locks := out["locks"].([]any)
	l := locks[0].(map[string]any)
	if l["key"] != "src/api/users.py" || l["holder"] != "agent-1" || l["holder_type"] != "agent" || l["reason"] != "endpoint" {
		t.Fatalf("lock = %v", l)
	}
	if _, ok := l["token"]; ok {
		t.Errorf("tools must not show owner tokens: %v", l)
	}

	// The same lock as the CLI sees it.
	if code, outp := run(t, r, "agent-2", "lock", "check", "src/api/users.py"); code != 4 || !strings.Contains(outp, "agent-1") {
		t.Fatalf("CLI lock check = %d %s", code, outp)
	}

	out, isErr = b.call("acquire_lock", map[string]any{"file_path": "src/api/users.py"})
	if !isErr || out["acquired"] != false || errClass(out) != "busy" {
		t.Fatalf("second agent acquire = %v (isError %v)", out, isErr)
	}
	e := out["error"].(map[string]any)
	held := e["held_by"].(map[string]any)
	if e["reason"] != "lock_contended" || held["holder"] != "agent-1" || held["reason"] != "endpoint" || held["expires_at"] == "" || e["exit_code"] != float64(4) {
		t.Fatalf("refusal = %v", e)
	}

	out, _ = b.call("check_locks", map[string]any{"keys": []string{"src/api/users.py", "src/api/**", "api:GET /v1/users"}})
	sts := out["statuses"].([]any)
	states := []string{}
	for _, s := range sts {
		states = append(states, s.(map[string]any)["state"].(string))
	}
	if out["free"] != false || !slices.Equal(states, []string{"held", "held", "free"}) {
		t.Fatalf("check_locks = %v", out)
	}
	out, _ = a.call("check_locks", map[string]any{"file_path": "src/api/users.py"})
	if out["free"] != true || out["statuses"].([]any)[0].(map[string]any)["state"] != "mine" {
		t.Fatalf("own check_locks = %v", out)
	}
	out, _ = b.call("check_locks", nil)
	if all := out["locks"].([]any); len(all) != 1 {
		t.Fatalf("check_locks without keys = %v", out)
	}

	// Only the holder releases.
	out, isErr = b.call("release_lock", map[string]any{"file_path": "src/api/users.py"})
	if !isErr || errClass(out) != "not_owner" {
		t.Fatalf("release by another = %v", out)
	}
	out, isErr = a.call("release_lock", map[string]any{"file_path": "src/api/users.py"})
	if isErr || fmt.Sprint(out["released"]) != "[src/api/users.py]" {
		t.Fatalf("release = %v", out)
	}
	out, isErr = b.call("acquire_lock", map[string]any{"keys": []string{"src/api/users.py", "api:GET /v1/users"}})
	if isErr || len(out["locks"].([]any)) != 2 {
		t.Fatalf("acquire after release = %v", out)
	}
	out, isErr = b.call("refresh_lock", map[string]any{"file_path": "api:GET /v1/users", "ttl_minutes": 5})
	if isErr || len(out["locks"].([]any)) != 1 {
		t.Fatalf("refresh = %v", out)
	}
	out, _ = b.call("list_locks", map[string]any{"mine": true})
	if len(out["locks"].([]any)) != 2 {
		t.Fatalf("list_locks mine = %v", out)
	}

	// Every call is an event in the journal, as with the CLI.
	if code, log := run(t, r, "x", "log", "--json"); code != 0 || strings.Count(log, `"action": "lock_acquire"`) < 2 || !strings.Contains(log, `"action": "lock_release"`) {
		t.Fatalf("log = %d %s", code, log)
	}
}

func TestMCPBadArguments(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1")
	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		class string
		text  string
	}{
		{name: "no key", tool: "acquire_lock", args: map[string]any{}, class: "invalid_argument"},
		{name: "lowercase method", tool: "acquire_lock", args: map[string]any{"file_path": "api:get /v1/users"}, class: "invalid_key", text: "api:GET /v1/users"},
		{name: "unknown namespace", tool: "acquire_lock", args: map[string]any{"file_path": "queue:jobs"}, class: "operation_not_permitted"},
		{name: "port as env key", tool: "acquire_lock", args: map[string]any{"file_path": "env:8080"}, class: "invalid_key", text: "allocate_ports"},
		{name: "absolute outside", tool: "acquire_lock", args: map[string]any{"file_path": "/etc/passwd"}, class: "invalid_argument", text: "outside"},
		{name: "escaping path", tool: "acquire_lock", args: map[string]any{"file_path": "../other/x.py"}, class: "invalid_key"},
		{name: "negative ttl", tool: "acquire_lock", args: map[string]any{"file_path": "a.py", "ttl_minutes": -1}, class: "invalid_argument"},
		{name: "ttl beyond a year", tool: "acquire_lock", args: map[string]any{"file_path": "a.py", "ttl_minutes": 1e30}, class: "invalid_argument", text: "ttl_minutes must be from 0"},
		{name: "wait beyond a day", tool: "acquire_lock", args: map[string]any{"file_path": "a.py", "wait_seconds": 1e12}, class: "invalid_argument", text: "wait_seconds"},
		{name: "refresh ttl huge", tool: "refresh_lock", args: map[string]any{"file_path": "a.py", "ttl_minutes": 1e300}, class: "invalid_argument"},
		{name: "other identity", tool: "acquire_lock", args: map[string]any{"file_path": "a.py", "worker": "someone-else"}, class: "operation_not_permitted", text: "identity_from_arguments"},
		{name: "unknown package", tool: "complete_package", args: map[string]any{"package_id": "WP-9"}, class: "invalid_argument"},
		{name: "too many ports", tool: "allocate_ports", args: map[string]any{"count": 5000}, class: "invalid_argument"},
		{name: "pause of a non-feature", tool: "pause_status", args: map[string]any{"feature": "api:GET /x"}, class: "invalid_key"},
	}
	for _, tc := range cases {
		out, isErr := a.call(tc.tool, tc.args)
		if !isErr || errClass(out) != tc.class {
			t.Errorf("%s: isError %v, out %v; want class %s", tc.name, isErr, out, tc.class)
			continue
		}
		if msg := fmt.Sprint(out["error"]); tc.text != "" && !strings.Contains(msg, tc.text) {
			t.Errorf("%s: error %s does not mention %q", tc.name, msg, tc.text)
		}
	}
	// Arguments that do not fit the input schema are a tool error with
	// the field named, not a protocol error, and nothing is locked.
	for _, tc := range []struct {
		tool string
		args map[string]any
		text string
	}{
		{"acquire_lock", map[string]any{"file_path": 42}, "file_path must be a string, got number"},
		{"acquire_lock", map[string]any{"keys": "a.py"}, "keys must be an array, got string"},
		{"acquire_lock", map[string]any{"keys": []any{"a.py", 7}}, "keys must be an array of strings, got number"},
		{"acquire_lock", map[string]any{"file_path": "a.py", "ttl_minutes": "5"}, "ttl_minutes must be a number"},
		{"acquire_lock", map[string]any{"file_path": "a.py", "ttl": 5}, `unknown field "ttl"`},
		{"acquire_lock", map[string]any{"File_Path": "a.py"}, `unknown field "File_Path"`},
		{"allocate_ports", map[string]any{"count": 1.5}, "count must be an integer"},
		{"release_lock", map[string]any{"file_path": "a.py", "force": "yes"}, "force must be a boolean"},
		{"check_change", map[string]any{}, "paths is required"},
		{"complete_package", map[string]any{"package_id": []any{"WP-1"}}, "package_id must be a string"},
	} {
		out, isErr := a.call(tc.tool, tc.args)
		if msg := fmt.Sprint(out["error"]); !isErr || errClass(out) != "invalid_argument" || !strings.Contains(msg, tc.text) {
			t.Errorf("%s %v: isError %v, out %v; want invalid_argument naming %q", tc.tool, tc.args, isErr, out, tc.text)
		}
	}
	if code, list := run(t, r, "x", "lock", "list", "--json"); code != 0 || strings.TrimSpace(list) != "[]" {
		t.Fatalf("bad calls left locks: %s", list)
	}
}

// TestMCPRace: agents on separate servers race for one key; exactly one
// wins each round, and every loser's result names the winner.
func TestMCPRace(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	const n = 6
	agents := make([]*mcpAgent, n)
	for i := range agents {
		agents[i] = startMCP(t, r, fmt.Sprintf("agent-%d", i), "LOCKGATE_WORKER_TYPE=agent")
	}
	for round := range rounds(t, 20) {
		key := fmt.Sprintf("feature:FEAT-%d:merge", round)
		outs := make([]map[string]any, n)
		errs := make([]bool, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, ag := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				outs[i], errs[i] = ag.call("acquire_lock", map[string]any{"file_path": key, "reason": "merge"})
			}()
		}
		close(start)
		wg.Wait()
		winner := ""
		for i := range agents {
			if !errs[i] {
				if winner != "" {
					t.Fatalf("round %d: two winners: %s and agent-%d", round, winner, i)
				}
				winner = fmt.Sprintf("agent-%d", i)
			}
		}
		if winner == "" {
			t.Fatalf("round %d: no winner: %v", round, outs)
		}
		for i := range agents {
			if errs[i] {
				held, _ := outs[i]["error"].(map[string]any)["held_by"].(map[string]any)
				if errClass(outs[i]) != "busy" || held["holder"] != winner {
					t.Fatalf("round %d: loser agent-%d result %v does not name %s", round, i, outs[i], winner)
				}
			}
		}
	}
}

func TestMCPPackagesPausePortsChange(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nscope:\n  user_owned: [DESIGN.md]\n")
	r.Write("work-packages.yaml", `packages:
  - id: WP-1
    title: users endpoint
    locks: {files: [src/api/users.py], keys: ["api:GET /v1/users"], ttl_minutes: 30}
  - id: WP-2
    title: orders endpoint
    locks: {files: [src/api/orders.py]}
`)
	a := startMCP(t, r, "agent-1", "LOCKGATE_WORKER_TYPE=agent")
	b := startMCP(t, r, "agent-2", "LOCKGATE_WORKER_TYPE=agent")

	out, isErr := a.call("claim_package", nil)
	if isErr || out["package"] != "WP-1" || len(out["locks"].([]any)) != 3 {
		t.Fatalf("claim next = %v", out)
	}
	out, isErr = b.call("claim_package", map[string]any{"package_id": "WP-1"})
	if !isErr || errClass(out) != "busy" {
		t.Fatalf("claim of a claimed package = %v", out)
	}
	out, isErr = b.call("claim_package", nil)
	if isErr || out["package"] != "WP-2" {
		t.Fatalf("claim next by b = %v", out)
	}
	out, isErr = b.call("complete_package", map[string]any{"package_id": "WP-1"})
	if !isErr || errClass(out) != "not_owner" {
		t.Fatalf("complete of another's package = %v", out)
	}

	// check_change: the pre-commit hook's verdict.
	out, isErr = b.call("check_change", map[string]any{"paths": []string{"src/api/users.py", "DESIGN.md", "src/api/orders.py"}})
	if isErr || out["ok"] != false {
		t.Fatalf("check_change = %v", out)
	}
	rules := map[string]string{}
	for _, v := range out["violations"].([]any) {
		m := v.(map[string]any)
		rules[m["path"].(string)] = m["rule"].(string)
	}
	if rules["src/api/users.py"] != "locked" || rules["DESIGN.md"] != "user_owned" || rules["src/api/orders.py"] != "" {
		t.Fatalf("violations = %v", out["violations"])
	}
	out, isErr = a.call("check_change", map[string]any{"paths": []string{filepath.Join(r.Dir, "src/api/users.py")}})
	if isErr || out["ok"] != true {
		t.Fatalf("holder's check_change = %v", out)
	}

	// Done: its locks released, its task record kept as the package's state.
	out, isErr = a.call("complete_package", map[string]any{"package_id": "WP-1"})
	if isErr || len(out["released"].([]any)) != 2 {
		t.Fatalf("complete = %v", out)
	}
	out, isErr = a.call("list_packages", map[string]any{})
	if isErr || out["packages"].([]any)[0].(map[string]any)["state"] != "done" || out["counts"].(map[string]any)["done"] != 1.0 {
		t.Fatalf("list_packages = %v", out)
	}
	out, isErr = a.call("claim_package", map[string]any{"package_id": "WP-1"})
	if !isErr || out["error"].(map[string]any)["reason"] != "package_state" {
		t.Fatalf("claim of a done package = %v", out)
	}

	// Pause.
	if code, o := run(t, r, "lead", "pause", "FEAT-1", "--reason", "contract bump"); code != 0 {
		t.Fatalf("pause: %s", o)
	}
	out, _ = a.call("pause_status", map[string]any{"feature": "FEAT-1"})
	if out["paused"] != true || out["mine"] != false || out["lock"].(map[string]any)["holder"] != "lead" {
		t.Fatalf("pause_status = %v", out)
	}
	out, _ = a.call("check_change", map[string]any{"paths": []string{"src/x.py"}})
	if out["ok"] != false || !strings.Contains(fmt.Sprint(out["violations"]), "paused") {
		t.Fatalf("check_change while paused = %v", out)
	}

	// Ports: distinct leases per session, released by the session.
	pa, isErr := a.call("allocate_ports", map[string]any{"count": 3})
	if isErr {
		t.Fatalf("allocate_ports = %v", pa)
	}
	pb, isErr := b.call("allocate_ports", map[string]any{"count": 3, "session_id": "agent-2"})
	if isErr {
		t.Fatalf("allocate_ports b = %v", pb)
	}
	seen := map[float64]bool{}
	for _, p := range append(pa["ports"].([]any), pb["ports"].([]any)...) {
		port := p.(map[string]any)["port"].(float64)
		if seen[port] {
			t.Fatalf("port %v leased twice", port)
		}
		seen[port] = true
	}
	if code, list := run(t, r, "x", "ports", "list", "--json"); code != 0 || strings.Count(list, `"port"`) != 6 {
		t.Fatalf("ports list = %s", list)
	}
	out, isErr = b.call("allocate_ports", map[string]any{"session_id": "agent-1"})
	if !isErr || errClass(out) != "operation_not_permitted" {
		t.Fatalf("ports for another session = %v", out)
	}
	out, isErr = a.call("release_ports", nil)
	if isErr || len(out["released"].([]any)) != 3 {
		t.Fatalf("release_ports = %v", out)
	}
}

// TestMCPWorkflowBranch: the server commits its events to the workflow
// branch in the background, and the last ones when it stops.
func TestMCPWorkflowBranch(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1")
	if out, isErr := a.call("acquire_lock", map[string]any{"file_path": "a.py"}); isErr {
		t.Fatalf("acquire: %v", out)
	}
	if out, isErr := a.call("release_lock", map[string]any{"file_path": "a.py"}); isErr {
		t.Fatalf("release: %v", out)
	}
	if err := a.session.Close(); err != nil {
		t.Fatal(err)
	}
	files := r.Git("ls-tree", "-r", "--name-only", "lockgate/workflow", "events")
	if n := strings.Count(files, ".json"); n != 2 {
		t.Fatalf("workflow branch has %d events, want 2:\n%s", n, files)
	}

	// Stopped by SIGTERM right after a call, as an agent host stops its
	// servers: the last events still reach the branch.
	b := startMCP(t, r, "agent-2")
	if out, isErr := b.call("acquire_lock", map[string]any{"file_path": "b.py"}); isErr {
		t.Fatalf("acquire: %v", out)
	}
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = b.session.Wait() // the session ends when the server exits
	// The transport reaps the process; the signal came well within the
	// server's batching delay, so only its shutdown commit can put the
	// event on the branch.
	deadline := time.Now().Add(time.Minute)
	for {
		files = r.Git("ls-tree", "-r", "--name-only", "lockgate/workflow", "events")
		n := strings.Count(files, ".json")
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow branch has %d events a minute after SIGTERM, want 3:\n%s", n, files)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mcpCmd(t testing.TB, r *gittest.Repo, worker string, extraEnv ...string) *exec.Cmd {
	c := exec.Command(lockgateBinary(t), "mcp")
	c.Dir = r.Dir
	c.Env = append(append(append([]string(nil), r.Env...), "LOCKGATE_WORKER="+worker), extraEnv...)
	// What the server says on stderr (notes, warnings) is kept in the
	// test's directory, out of the test log.
	if f, err := os.Create(filepath.Join(t.TempDir(), "mcp-stderr")); err == nil {
		c.Stderr = f
		t.Cleanup(func() { f.Close() })
	}
	return c
}

func run(t testing.TB, r *gittest.Repo, worker string, args ...string) (int, string) {
	c := &cliRepo{t: t.(*testing.T), repo: r}
	return c.run(worker, args...)
}

// TestMCPIdentityFromArguments: with mcp.identity_from_arguments one server
// acts for several workers, each call naming its own.
func TestMCPIdentityFromArguments(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nmcp: {identity_from_arguments: true}\n")
	a := startMCP(t, r, "orchestrator")
	out, isErr := a.call("acquire_lock", map[string]any{"file_path": "a.py", "worker": "agent-7", "worker_type": "agent", "session": "run 1"})
	if isErr {
		t.Fatalf("acquire as agent-7: %v", out)
	}
	l := out["locks"].([]any)[0].(map[string]any)
	if l["holder"] != "agent-7" || l["holder_type"] != "agent" || l["session"] != "run-1" {
		t.Fatalf("lock = %v", l)
	}
	out, isErr = a.call("acquire_lock", map[string]any{"file_path": "a.py"})
	if !isErr || errClass(out) != "busy" {
		t.Fatalf("the server's own identity took agent-7's lock: %v", out)
	}
	out, isErr = a.call("acquire_lock", map[string]any{"file_path": "b.py", "worker_type": "robot"})
	if !isErr || errClass(out) != "invalid_argument" {
		t.Fatalf("worker_type robot = %v", out)
	}
	out, isErr = a.call("release_lock", map[string]any{"file_path": "a.py", "worker": "agent-7", "session": "run 1"})
	if isErr || len(out["released"].([]any)) != 1 {
		t.Fatalf("release as agent-7 = %v", out)
	}
}

// acquire_lock on a key the caller holds renews it: without ttl_minutes
// never shorter than it was, with ttl_minutes exactly that.
func TestMCPRenewKeepsLongerExpiry(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1", "LOCKGATE_WORKER_TYPE=agent")
	expiry := func(args map[string]any) time.Time {
		t.Helper()
		out, isErr := a.call("acquire_lock", args)
		if isErr || out["acquired"] != true {
			t.Fatalf("acquire %v: %v", args, out)
		}
		exp, err := time.Parse(time.RFC3339Nano, out["locks"].([]any)[0].(map[string]any)["expires_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return exp
	}
	long := expiry(map[string]any{"file_path": "a.py", "ttl_minutes": 600})
	if got := expiry(map[string]any{"file_path": "a.py"}); !got.Equal(long) {
		t.Errorf("renewed with the default TTL (30m): expires %s, want %s as before", got, long)
	}
	if got := expiry(map[string]any{"file_path": "a.py", "ttl_minutes": 5}); !got.Before(long.Add(-9 * time.Hour)) {
		t.Errorf("renewed with ttl_minutes 5: expires %s, want about 5 minutes from now", got)
	}
}

// Under core.ignorecase the MCP tools treat spellings git treats as one
// path as one key, and name the spelling that was locked.
func TestMCPIgnoreCase(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Git("config", "core.ignorecase", "true")
	a := startMCP(t, r, "agent-1", "LOCKGATE_WORKER_TYPE=agent")
	b := startMCP(t, r, "agent-2", "LOCKGATE_WORKER_TYPE=agent")
	if out, isErr := a.call("acquire_lock", map[string]any{"keys": []string{"src/README.md", "LIB/**"}}); isErr || out["acquired"] != true {
		t.Fatalf("acquire: %v", out)
	}
	out, isErr := b.call("acquire_lock", map[string]any{"file_path": "src/Readme.md"})
	if !isErr || errClass(out) != "busy" {
		t.Fatalf("acquire of another spelling = %v (isError %v)", out, isErr)
	}
	if held := out["error"].(map[string]any)["held_by"].(map[string]any); held["key"] != "src/README.md" {
		t.Fatalf("held_by = %v, want the spelling that was locked", held)
	}
	out, _ = b.call("check_locks", map[string]any{"keys": []string{"SRC/readme.md", "lib/x.go", "src/other.md"}})
	var states []string
	for _, s := range out["statuses"].([]any) {
		states = append(states, s.(map[string]any)["state"].(string))
	}
	if !slices.Equal(states, []string{"held", "held", "free"}) {
		t.Fatalf("check_locks = %v", out)
	}
	out, isErr = b.call("check_change", map[string]any{"paths": []string{"src/readme.md", "lib/x.go"}})
	if isErr || out["ok"] != false || len(out["violations"].([]any)) != 2 {
		t.Fatalf("check_change = %v", out)
	}
	out, isErr = a.call("release_lock", map[string]any{"keys": []string{"SRC/README.MD", "lib/**"}})
	if isErr || fmt.Sprint(out["released"]) != "[src/README.md LIB/**]" {
		t.Fatalf("release through other spellings = %v", out)
	}
}

// errField is a field of a refused call's error.
func errField(out map[string]any, name string) any {
	e, _ := out["error"].(map[string]any)
	return e[name]
}

// TestMCPJournalUnwritable: under `lockgate mcp` as on the command line, a
// change whose event cannot be recorded is refused (unavailable, exit code
// 3) and not made.
func TestMCPJournalUnwritable(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1")
	if out, isErr := a.call("acquire_lock", map[string]any{"file_path": "held.py"}); isErr {
		t.Fatalf("acquire: %v", out)
	}
	journal := filepath.Join(r.Dir, ".git", "lockgate", "events.jsonl")
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(journal, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"acquire_lock", map[string]any{"file_path": "new.py"}},
		{"release_lock", map[string]any{"file_path": "held.py"}},
		{"refresh_lock", map[string]any{"file_path": "held.py"}},
		{"allocate_ports", map[string]any{}},
	} {
		out, isErr := a.call(c.tool, c.args)
		if !isErr || errClass(out) != "unavailable" || errField(out, "exit_code") != float64(3) {
			t.Errorf("%s with an unwritable journal = %v, want refused as unavailable, exit code 3", c.tool, out)
		}
		if msg, _ := errField(out, "message").(string); !strings.Contains(msg, "event not recorded") || !strings.Contains(msg, "nothing was changed") {
			t.Errorf("%s: message %q does not say the event was not recorded and nothing changed", c.tool, msg)
		}
	}
	out, _ := a.call("list_locks", map[string]any{})
	var keys []any
	for _, l := range out["locks"].([]any) {
		if k := l.(map[string]any)["key"]; k != "workflow" { // the workflow branch's writer
			keys = append(keys, k)
		}
	}
	if !reflect.DeepEqual(keys, []any{"held.py"}) {
		t.Fatalf("locks after the refusals = %v, want held.py alone", out)
	}
}

// TestMCPIdentityRefusedAsCLI: a call naming another identity is refused
// with the exit code the CLI gives a refusal to act: 6, not permitted.
func TestMCPIdentityRefusedAsCLI(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"acquire_lock", map[string]any{"file_path": "a.py", "worker": "agent-2"}},
		{"release_lock", map[string]any{"file_path": "a.py", "session": "other"}},
		{"allocate_ports", map[string]any{"session_id": "other"}},
		{"release_ports", map[string]any{"session_id": "other"}},
	} {
		out, isErr := a.call(c.tool, c.args)
		if !isErr || errClass(out) != "operation_not_permitted" || errField(out, "exit_code") != float64(6) {
			t.Errorf("%s as another identity = %v, want operation_not_permitted, exit code 6", c.tool, out)
		}
	}
}

// TestMCPForcedReleaseOnce: a forced release names the key once among the
// released, and once among the forced.
func TestMCPForcedReleaseOnce(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	if code, out := run(t, r, "bob", "lock", "acquire", "a.py", "b.py"); code != 0 {
		t.Fatalf("bob: %d %s", code, out)
	}
	a := startMCP(t, r, "agent-1")
	if out, isErr := a.call("acquire_lock", map[string]any{"file_path": "c.py"}); isErr {
		t.Fatalf("acquire: %v", out)
	}
	out, isErr := a.call("release_lock", map[string]any{"keys": []string{"a.py", "c.py"}, "force": true})
	if isErr {
		t.Fatalf("forced release: %v", out)
	}
	released, _ := out["released"].([]any)
	forced, _ := out["forced"].([]any)
	if !reflect.DeepEqual(released, []any{"a.py", "c.py"}) || len(forced) != 1 || forced[0].(map[string]any)["key"] != "a.py" {
		t.Fatalf("forced release = %v, want released [a.py c.py], forced [a.py]", out)
	}
}

// TestMCPWorkerWithoutSession: with mcp.identity_from_arguments, a call
// naming a worker but no session acts in the session named after the
// worker, as a worker without LOCKGATE_SESSION does on the command line.
func TestMCPWorkerWithoutSession(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nmcp: {identity_from_arguments: true}\n")
	a := startMCP(t, r, "orchestrator", "LOCKGATE_SESSION=orchestration")
	out, isErr := a.call("acquire_lock", map[string]any{"file_path": "a.py", "worker": "agent-9"})
	if isErr {
		t.Fatalf("acquire as agent-9: %v", out)
	}
	if l := out["locks"].([]any)[0].(map[string]any); l["holder"] != "agent-9" || l["session"] != "agent-9" {
		t.Fatalf("lock = %v, want holder and session agent-9", l)
	}
	// The command line agrees: agent-9 releases it without naming a session.
	if code, out := run(t, r, "agent-9", "lock", "release", "a.py"); code != 0 || strings.Contains(out, "not locked") {
		t.Fatalf("agent-9 release: %d %s", code, out)
	}
	// The server's own worker keeps the server's session.
	out, _ = a.call("acquire_lock", map[string]any{"file_path": "b.py", "worker": "orchestrator"})
	if l := out["locks"].([]any)[0].(map[string]any); l["session"] != "orchestration" {
		t.Fatalf("lock = %v, want the server's session", l)
	}
}

// Every tool call is a request of its own: its records and events carry a
// request id no other call has, and the server's trace id.
func TestMCPRequestIDPerCall(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	a := startMCP(t, r, "agent-1", "LOCKGATE_WORKER_TYPE=agent", "TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	for _, p := range []string{"src/a.py", "src/b.py"} {
		if out, isErr := a.call("acquire_lock", map[string]any{"file_path": p}); isErr {
			t.Fatalf("acquire %s: %v", p, out)
		}
	}
	data, err := os.ReadFile(filepath.Join(r.Dir, ".git", "lockgate", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Action    string `json:"action"`
			Key       string `json:"key"`
			RequestID string `json:"request_id"`
			TraceID   string `json:"trace_id"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		if ev.Action != "lock_acquire" {
			continue
		}
		if ev.RequestID == "" || ev.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("event %+v: want a request id and the server's trace id", ev)
		}
		ids[ev.Key] = ev.RequestID
	}
	if len(ids) != 2 || ids["src/a.py"] == ids["src/b.py"] {
		t.Fatalf("request ids per call = %v, want two distinct", ids)
	}
	code, out := run(t, r, "agent-1", "lock", "list", "--json")
	if code != 0 {
		t.Fatalf("lock list: exit %d: %s", code, out)
	}
	if !strings.Contains(out, ids["src/a.py"]) || !strings.Contains(out, ids["src/b.py"]) {
		t.Errorf("lock records do not carry their call's request id %v:\n%s", ids, out)
	}
}

// TestMCPBranchLocks: under locks.per_branch, acquire_lock and
// release_lock take a branch: two agents hold one path on two branches,
// and the CLI sees both.
func TestMCPBranchLocks(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nlocks: {per_branch: true}\n")
	r.Commit("policy")
	a := startMCP(t, r, "agent-1", "LOCKGATE_WORKER_TYPE=agent")
	b := startMCP(t, r, "agent-2", "LOCKGATE_WORKER_TYPE=agent")
	out, isErr := a.call("acquire_lock", map[string]any{"file_path": "art/a.psd", "branch": "main"})
	if isErr || out["acquired"] != true {
		t.Fatalf("acquire on main: %v", out)
	}
	l := out["locks"].([]any)[0].(map[string]any)
	if l["key"] != "branch:main:art/a.psd" || l["branch"] != "main" {
		t.Fatalf("lock = %v", l)
	}
	if out, isErr := b.call("acquire_lock", map[string]any{"file_path": "art/a.psd", "branch": "release"}); isErr || out["acquired"] != true {
		t.Fatalf("acquire on release: %v", out)
	}
	if out, isErr := b.call("acquire_lock", map[string]any{"file_path": "art/a.psd"}); !isErr || errClass(out) != "busy" {
		t.Fatalf("acquire on every branch = %v, want busy", out)
	}
	if code, outp := run(t, r, "agent-3", "--json", "lock", "list"); code != 0 || !strings.Contains(outp, `"branch": "main"`) || !strings.Contains(outp, `"branch": "release"`) {
		t.Fatalf("lock list = %d %s", code, outp)
	}
	if out, isErr := a.call("release_lock", map[string]any{"file_path": "art/a.psd", "branch": "main"}); isErr || fmt.Sprint(out["released"]) != "[branch:main:art/a.psd]" {
		t.Fatalf("release = %v", out)
	}
}
