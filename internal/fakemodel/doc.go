// Package fakemodel is a scripted language-model server for tests that drive
// real coding-agent CLIs (Claude Code, Codex, Gemini CLI, opencode, Copilot
// CLI) offline. It listens on a loopback port and speaks, streaming and not,
// the four wire protocols those CLIs use:
//
//   - Anthropic Messages (POST /v1/messages, SSE message_start …
//     message_stop; /v1/messages/count_tokens),
//   - OpenAI Chat Completions (POST /v1/chat/completions, chunks and
//     [DONE]; GET /v1/models),
//   - OpenAI Responses (POST /v1/responses, response.created …
//     response.completed; function_call and custom_tool_call items),
//   - Gemini (POST /v1beta/models/M:streamGenerateContent?alt=sse,
//     :generateContent, :countTokens).
//
// A Script is a list of tool calls followed by a final text. Each model
// request that offers the next scripted call's tool is answered with that
// one call (a fresh call id every time); every other request (title
// generation, side checks, and every request once the calls are used up) is
// answered with the final text, "done" unless set:
//
//	srv := fakemodel.Start(t, fakemodel.Script{
//		Calls: fakemodel.WriteFile(fakemodel.Claude, "/repo/new.txt", "hello\n"),
//	})
//	// run the harness against srv.URL ...
//	if !srv.SawAfterCalls("blocked by lockgate") { ... }
//
// Every request is recorded (Requests) with its body, so a test can check
// what the harness told the model: that a tool's result, or a hook's deny
// reason, reached it.
//
// WriteFile, EditFile, ShellAppend and ApplyPatch build the calls with each
// harness's own tool names and argument shapes. The package uses the
// standard library only.
package fakemodel
