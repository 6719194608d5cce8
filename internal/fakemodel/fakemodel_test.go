package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// event is one server-sent event.
type event struct {
	name string
	data string
}

// post sends body to path and returns the response.
func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// events reads a whole event stream, checking its framing: every event
// is "event:" (optional) then "data:" lines, ended by a blank line.
func events(t *testing.T, resp *http.Response) []event {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	var out []event
	var cur event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data == "" {
				t.Fatalf("empty event after %d events", len(out))
			}
			out = append(out, cur)
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if cur.data != "" {
				t.Fatalf("two data lines in one event: %q", line)
			}
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if cur != (event{}) {
		t.Fatalf("stream ended inside an event: %+v", cur)
	}
	return out
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %q: %v", s, err)
	}
	return m
}

func names(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}

func TestAnthropicStream(t *testing.T) {
	s := Start(t, Script{Calls: append(WriteFile(Claude, "/r/a.txt", "x\n"), WriteFile(Claude, "/r/b.txt", "y\n")...)})
	body := `{"model":"claude-x","stream":true,"tools":[{"name":"Read"},{"name":"Write"}],"messages":[]}`
	var ids []string
	for i := 0; i < 2; i++ {
		evs := events(t, post(t, s, "/v1/messages?beta=true", body))
		want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
		if strings.Join(names(evs), " ") != strings.Join(want, " ") {
			t.Fatalf("events %v, want %v", names(evs), want)
		}
		for _, e := range evs {
			if got := decode(t, e.data)["type"]; got != e.name {
				t.Fatalf("event %s has type %v", e.name, got)
			}
		}
		block := decode(t, evs[1].data)["content_block"].(map[string]any)
		if block["type"] != "tool_use" || block["name"] != "Write" {
			t.Fatalf("content block %v, want a Write tool_use", block)
		}
		ids = append(ids, block["id"].(string))
		delta := decode(t, evs[2].data)["delta"].(map[string]any)
		args := decode(t, delta["partial_json"].(string))
		if want := []string{"/r/a.txt", "/r/b.txt"}[i]; args["file_path"] != want {
			t.Fatalf("call %d args %v, want file_path %s", i, args, want)
		}
		if stop := decode(t, evs[4].data)["delta"].(map[string]any)["stop_reason"]; stop != "tool_use" {
			t.Fatalf("stop_reason %v", stop)
		}
	}
	if ids[0] == ids[1] {
		t.Fatalf("tool_use id repeated: %s", ids[0])
	}
	// Calls used up: text.
	evs := events(t, post(t, s, "/v1/messages", body))
	delta := decode(t, evs[2].data)["delta"].(map[string]any)
	if delta["type"] != "text_delta" || delta["text"] != "done" {
		t.Fatalf("final delta %v", delta)
	}
	if s.CallsMade() != 2 {
		t.Fatalf("CallsMade = %d", s.CallsMade())
	}
}

func TestAnthropicNoToolsGetsText(t *testing.T) {
	s := Start(t, Script{Calls: WriteFile(Claude, "/r/a.txt", "x\n"), Final: "ok"})
	// A side request (title, quota check) offers no tools: it must not
	// use up the scripted call.
	resp := post(t, s, "/v1/messages", `{"model":"m","messages":[]}`)
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	content := m["content"].([]any)[0].(map[string]any)
	if content["type"] != "text" || content["text"] != "ok" {
		t.Fatalf("non-streaming answer %v", m)
	}
	if s.CallsMade() != 0 {
		t.Fatal("a request without tools used up the call")
	}
	resp = post(t, s, "/v1/messages/count_tokens", `{"messages":[]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("count_tokens: %s", resp.Status)
	}
}

func TestChatStream(t *testing.T) {
	s := Start(t, Script{Calls: WriteFile(OpenCode, "/r/a.txt", "x\n")})
	body := `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"write"}}]}`
	for round, want := range []string{"tool_calls", "stop"} {
		evs := events(t, post(t, s, "/v1/chat/completions", body))
		if last := evs[len(evs)-1]; last.data != "[DONE]" {
			t.Fatalf("last event %q, want [DONE]", last.data)
		}
		var finish any
		var call map[string]any
		var text string
		for _, e := range evs[:len(evs)-1] {
			c := decode(t, e.data)
			if c["object"] != "chat.completion.chunk" {
				t.Fatalf("chunk object %v", c["object"])
			}
			for _, ch := range c["choices"].([]any) {
				ch := ch.(map[string]any)
				if f := ch["finish_reason"]; f != nil {
					finish = f
				}
				d := ch["delta"].(map[string]any)
				if tc, ok := d["tool_calls"].([]any); ok {
					call = tc[0].(map[string]any)
				}
				if s, ok := d["content"].(string); ok {
					text += s
				}
			}
		}
		if finish != want {
			t.Fatalf("round %d finish_reason %v, want %s", round, finish, want)
		}
		if round == 0 {
			fn := call["function"].(map[string]any)
			if fn["name"] != "write" || decode(t, fn["arguments"].(string))["filePath"] != "/r/a.txt" {
				t.Fatalf("tool call %v", call)
			}
		} else if text != "done" {
			t.Fatalf("text %q", text)
		}
	}
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/models: %s", resp.Status)
	}
}

func TestResponsesStream(t *testing.T) {
	patch := AddFilePatch("a.txt", "one\ntwo\n")
	s := Start(t, Script{Calls: append(ApplyPatch(patch), ShellAppend(Codex, "f.txt", "x")...)})
	body := `{"model":"gpt-5.5","stream":true,"tools":[{"type":"function","name":"exec_command"},{"type":"custom","name":"apply_patch"}]}`
	items := []map[string]any{}
	for i := 0; i < 3; i++ {
		evs := events(t, post(t, s, "/v1/responses", body))
		n := names(evs)
		if n[0] != "response.created" || n[len(n)-1] != "response.completed" {
			t.Fatalf("events %v", n)
		}
		var done map[string]any
		for k, e := range evs {
			d := decode(t, e.data)
			if d["type"] != e.name {
				t.Fatalf("event %s has type %v", e.name, d["type"])
			}
			if int(d["sequence_number"].(float64)) != k {
				t.Fatalf("sequence_number %v at %d", d["sequence_number"], k)
			}
			if e.name == "response.output_item.done" {
				done = d["item"].(map[string]any)
			}
		}
		completed := decode(t, evs[len(evs)-1].data)["response"].(map[string]any)
		if completed["usage"] == nil || completed["status"] != "completed" {
			t.Fatalf("completed response %v", completed)
		}
		items = append(items, done)
	}
	if items[0]["type"] != "custom_tool_call" || items[0]["name"] != "apply_patch" || items[0]["input"] != patch {
		t.Fatalf("first item %v", items[0])
	}
	if items[1]["type"] != "function_call" || items[1]["name"] != "exec_command" ||
		decode(t, items[1]["arguments"].(string))["cmd"] != "echo x >> f.txt" {
		t.Fatalf("second item %v", items[1])
	}
	if items[0]["call_id"] == items[1]["call_id"] {
		t.Fatal("call_id repeated")
	}
	if items[2]["type"] != "message" {
		t.Fatalf("third item %v", items[2])
	}
}

func TestGeminiStream(t *testing.T) {
	s := Start(t, Script{Calls: EditFile(Gemini, "/r/a.txt", "a\n", "b\n")})
	body := `{"contents":[],"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"replace"}]}]}`
	evs := events(t, post(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", body))
	if len(evs) != 1 || evs[0].name != "" {
		t.Fatalf("events %+v", evs)
	}
	d := decode(t, evs[0].data)
	if d["modelVersion"] != "gemini-2.5-flash" {
		t.Fatalf("modelVersion %v", d["modelVersion"])
	}
	part := d["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	fc := part["functionCall"].(map[string]any)
	if fc["name"] != "replace" || fc["args"].(map[string]any)["new_string"] != "b\n" {
		t.Fatalf("function call %v", fc)
	}
	// Non-streaming side request (next-speaker check): text.
	resp := post(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[]}`)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"text":"done"`) {
		t.Fatalf("generateContent answer %s", b)
	}
}

func TestRecordsAndAfterCall(t *testing.T) {
	s := Start(t, Script{Calls: Shell(Copilot, "echo hi")})
	tools := `"tools":[{"type":"function","function":{"name":"bash"}}]`
	post(t, s, "/v1/chat/completions", `{"model":"m",`+tools+`}`)
	if s.SawAfterCalls("blocked by lockgate") {
		t.Fatal("SawAfterCalls before any later request")
	}
	// The tool result comes back JSON-escaped inside the next request.
	post(t, s, "/v1/chat/completions", `{"model":"m",`+tools+`,"messages":[{"role":"tool","content":"Denied: \"blocked by lockgate\"\n"}]}`)
	if !s.SawAfterCalls(`"blocked by lockgate"`) {
		t.Fatalf("SawAfterCalls missed the escaped text:\n%s", s.Describe())
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Answered != 0 || reqs[1].Answered != -1 || reqs[0].API != "chat" {
		t.Fatalf("requests %+v", reqs)
	}
	if len(s.AfterCall(0)) != 1 {
		t.Fatalf("AfterCall(0) = %d requests", len(s.AfterCall(0)))
	}
	resp := post(t, s, "/nothing", `{}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %s", resp.Status)
	}
}

func TestBodyContainsDoubleEscaped(t *testing.T) {
	inner, _ := json.Marshal(map[string]string{"output": `say "no"`})
	outer, _ := json.Marshal(map[string]string{"content": string(inner)})
	if !BodyContains(outer, `say "no"`) {
		t.Fatalf("BodyContains missed a twice-escaped string in %s", outer)
	}
}

func TestHelpersPerHarness(t *testing.T) {
	for _, h := range Harnesses {
		read, write, edit, shell := ToolNames(h)
		if c := WriteFile(h, "p", "c\n"); c[len(c)-1].Name != write {
			t.Errorf("%s: WriteFile uses %s, want %s", h, c[len(c)-1].Name, write)
		}
		if c := EditFile(h, "p", "a\n", "b\n"); c[len(c)-1].Name != edit {
			t.Errorf("%s: EditFile uses %s, want %s", h, c[len(c)-1].Name, edit)
		}
		if c := ShellAppend(h, "f.txt", "x y"); c[0].Name != shell || !strings.Contains(c[0].ArgsJSON(), `echo 'x y' >> f.txt`) {
			t.Errorf("%s: ShellAppend = %+v", h, c)
		}
		if read != "" && ReadFile(h, "p")[0].Name != read {
			t.Errorf("%s: ReadFile", h)
		}
	}
	want := "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** End Patch\n"
	if got := UpdateFilePatch("a.txt", "b.txt", "x\n", "y\n"); got != want {
		t.Fatalf("UpdateFilePatch = %q", got)
	}
}

func TestBodyContainsHTMLEscapes(t *testing.T) {
	html, _ := json.Marshal(map[string]string{"content": "a > b & c"})
	raw := []byte(`{"content":"a > b & c"}`)
	for _, b := range [][]byte{html, raw} {
		if !BodyContains(b, "a > b & c") {
			t.Fatalf("BodyContains missed the text in %s", b)
		}
	}
}
