package hooks

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHookEngineLinksNoStore holds what the hook engine links: no lock
// store (it knows the Store interface; the service hands in the stores
// and the git store's readers, LockStates), none of go-git's object or
// transport packages, no Redis client, no MCP SDK or JSON schema, no
// zstd, no OpenPGP, no cobra. Each costs every hook its initialisation,
// so an import that brings one back fails here instead of slowing hooks
// silently.
func TestHookEngineLinksNoStore(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "github.com/lockgate/lockgate/model/locks\n") {
		t.Fatalf("go list -deps gave %d packages, not the hook engine's: %s", len(deps), out)
	}
	forbidden := []string{
		"github.com/lockgate/lockgate/model/locks/filestore",
		"github.com/lockgate/lockgate/model/locks/gitstore",
		"github.com/lockgate/lockgate/model/locks/redisstore",
		"github.com/lockgate/lockgate/workflow",
		"github.com/go-git/go-git/v5/plumbing/object",
		"github.com/go-git/go-git/v5/plumbing/transport",
		"github.com/redis/",
		"github.com/modelcontextprotocol/",
		"github.com/google/jsonschema-go",
		"github.com/klauspost/compress",
		"github.com/ProtonMail/go-crypto",
		"github.com/spf13/cobra",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("the hook engine links %s (forbidden: %s)", d, f)
			}
		}
	}
}
