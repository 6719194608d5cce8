// Package agenttest runs real coding-agent CLIs — Claude Code, Codex,
// Gemini CLI, opencode and Copilot CLI — headless and offline against a
// scripted model (internal/fakemodel), for tests of the pre-tool hooks that
// lockgate installs into them.
//
// The CLIs are npm packages that scripts/test-agents-deps.sh installs,
// pinned, into a cache outside the repository:
// ${LOCKGATE_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lockgate/agents}.
// Binary finds one there; Require fails the test (it never skips) with a
// message naming the script when it is missing.
//
//	srv := fakemodel.Start(t, fakemodel.Script{Calls: fakemodel.WriteFile(h, path, "x\n")})
//	res, err := agenttest.Run(ctx, h, repoDir, "write the file", srv.URL)
//
// Run gives every run its own HOME, CODEX_HOME, COPILOT_HOME and XDG_*
// directories in a temporary directory, stdin from /dev/null, a timeout,
// update checks and telemetry off, the harness's switches for trusting the
// workspace and its hooks, and the configuration that points it at the
// model server. It does not write the harness's hook configuration: the
// test writes that into the repository, as `lockgate init --agent NAME`
// would.
//
// The tests that drive the CLIs are behind the build tag "agents":
//
//	scripts/test-agents-deps.sh && go test -tags agents ./internal/agenttest/
package agenttest
