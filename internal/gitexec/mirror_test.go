package gitexec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestRemoteMirror: remote.<name>.mirror read as git reads it — in the
// clone's config, the global one or on git's command line — and false
// where no config file says "mirror", which costs no git process.
func TestRemoteMirror(t *testing.T) {
	tests := []struct {
		name         string
		local, other string // lines of the clone's config, of the global config
		params       string // GIT_CONFIG_PARAMETERS, as `git -c` passes it
		want         bool
	}{
		{name: "unset"},
		{name: "set in the clone", local: "[remote \"origin\"]\n\tmirror = true\n", want: true},
		{name: "false in the clone", local: "[remote \"origin\"]\n\tmirror = false\n"},
		{name: "another remote's", local: "[remote \"backup\"]\n\tmirror = true\n"},
		{name: "set globally", other: "[remote \"origin\"]\n\tmirror = yes\n", want: true},
		{name: "on the command line", params: "'remote.origin.mirror'='true'", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gittest.New(t)
			if tt.local != "" {
				f, err := os.OpenFile(filepath.Join(r.Dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteString(tt.local); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			global := filepath.Join(t.TempDir(), "gitconfig")
			if err := os.WriteFile(global, []byte(tt.other), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("GIT_CONFIG_GLOBAL", global)
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			t.Setenv("GIT_CONFIG_PARAMETERS", tt.params)
			repo, err := Discover(context.Background(), r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := RemoteMirror(context.Background(), repo, "origin")
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "config", "--bool", "remote.origin.mirror")
			cmd.Dir = r.Dir
			out, _ := cmd.Output()
			if git := strings.TrimSpace(string(out)) == "true"; got != tt.want || got != git {
				t.Fatalf("RemoteMirror %v, git says %v (%q), want %v", got, git, out, tt.want)
			}
		})
	}
}
