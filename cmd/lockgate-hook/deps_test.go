package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHookBinaryLinksOnlyTheHooks holds what the hook binary links: the
// session, its stores and the hook engine, and none of what only other
// commands use — go-git (the workflow branch's writer and the git store,
// which it hands to lockgate), SSH signatures (handed over too), gob,
// zstd, OpenPGP, the MCP SDK and its JSON schemas, cobra, the HTTP server,
// the planner, agent setup and the service's other use cases. Go initialises every package a binary links, used or
// not, on every start: an import that brings one back fails here instead
// of slowing every commit silently.
func TestHookBinaryLinksOnlyTheHooks(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "github.com/lockgate/lockgate/service/session\n") {
		t.Fatalf("go list -deps gave %d packages, not the hook binary's: %s", len(deps), out)
	}
	forbidden := []string{
		"github.com/lockgate/lockgate/service",
		"github.com/lockgate/lockgate/frontend/cli",
		"github.com/lockgate/lockgate/frontend/mcpserver",
		"github.com/lockgate/lockgate/frontend/httpserver",
		"github.com/lockgate/lockgate/model/locks/gitstore",
		"github.com/lockgate/lockgate/model/planner",
		"github.com/lockgate/lockgate/service/agentsetup",
		"github.com/lockgate/lockgate/internal/signature",
		"golang.org/x/crypto/ssh",
		"github.com/sergi/go-diff/",
		"github.com/lockgate/lockgate/workflow",
		"github.com/go-git/",
		"encoding/gob",
		"net/http",
		"text/template",
		"github.com/modelcontextprotocol/",
		"github.com/google/jsonschema-go/",
		"github.com/klauspost/compress/",
		"github.com/ProtonMail/go-crypto/",
		"github.com/spf13/cobra",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			// A name ending in / forbids every package under it.
			if d == f || strings.HasSuffix(f, "/") && strings.HasPrefix(d, f) {
				t.Errorf("the hook binary links %s (forbidden: %s)", d, f)
			}
		}
	}
}
