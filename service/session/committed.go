package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/scope"
)

// policyFiles are lockgate's own files in the repository, repo-relative:
// the policy, the allowed signers and the work packages — none while no policy file judges
// (the built-in defaults): a change that adopts lockgate loosens nothing.
func policyFiles(cfg *config.Config) []string {
	if cfg.Path == "" {
		return nil
	}
	files := []string{config.DefaultFile, SignersFile}
	if wp := cfg.WorkPackages; wp != "" && !filepath.IsAbs(wp) {
		files = append(files, path.Clean(filepath.ToSlash(wp)))
	}
	return files
}

// judgeByCommitted makes ck judge by the policy committed on HEAD too,
// when the worktree's .lockgate.yaml differs from it: the hooks and the
// guards run in the worktree an agent edits, and an edit of the policy —
// staged or not — must not loosen the rules its own commit is judged by.
// Where the worktree's is stricter, it counts as well: a change is judged
// by both. hooks.require_lock holds when either says so, and
// hooks.on_store_unavailable warns only when both say warn.
func (e *Workspace) judgeByCommitted(ctx context.Context, ck *hooks.Checker) error {
	if e.repo.Toplevel == "" || e.Opts.ConfigFile != "" || e.Judging {
		// A server judges by HEAD's already, -c names the policy, and
		// check judges by the base it read.
		return nil
	}
	committed, err := e.CommittedConfig(ctx)
	if err != nil || committed == nil {
		return err
	}
	pol := committed.Scope.Policy
	pol.IgnoreCase = ck.IgnoreCase
	compiled, err := scope.Compile(pol)
	if err != nil {
		return Usagef("HEAD:%s: scope: %v", config.DefaultFile, err)
	}
	ck.Committed = compiled
	ck.RequireLock = ck.RequireLock || committed.Hooks.RequireLock
	ck.PerBranch = ck.PerBranch || committed.Locks.PerBranch
	ck.WarnUnavailable = ck.WarnUnavailable && committed.Hooks.OnStoreUnavailable == "warn"
	ck.AgentEditable = intersect(ck.AgentEditable, committed.Scope.AgentEditable)
	for _, f := range policyFiles(committed) {
		if !slices.Contains(ck.PolicyFiles, f) {
			ck.PolicyFiles = append(ck.PolicyFiles, f)
		}
	}
	return nil
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// CommittedConfig is the policy committed on HEAD, nil when HEAD has none
// or it is byte for byte the worktree's. It is read through git once per
// HEAD commit and kept in the clone's cache, keyed by that commit: the
// pre-commit hook after a commit pays two git processes, the others none.
func (e *Workspace) CommittedConfig(ctx context.Context) (*config.Config, error) {
	head, headOK := e.headCommit()
	cacheFile := filepath.Join(e.repo.CommonDir, "lockgate", "cache", "head-policy")
	data, found, cached := readPolicyCache(cacheFile, head)
	if !headOK || !cached {
		var err error
		data, found, err = gitexec.HeadFile(ctx, e.repo, config.DefaultFile)
		if err != nil {
			var me *gitexec.MissingHeadError
			if errors.As(err, &me) {
				return nil, nil // an unborn branch: nothing committed yet
			}
			return nil, fmt.Errorf("read the policy committed on HEAD: %w", err)
		}
		if headOK {
			writePolicyCache(cacheFile, head, data, found)
		}
	}
	if !found {
		return nil, nil
	}
	if e.Cfg.Path != "" {
		if work, err := os.ReadFile(e.Cfg.Path); err == nil && bytes.Equal(work, data) {
			return nil, nil
		}
	}
	cfg, err := config.LoadBytes("HEAD:"+config.DefaultFile, data)
	if err != nil {
		return nil, fmt.Errorf("the policy committed on HEAD: %w", err)
	}
	return cfg, nil
}

// headCommit is the commit HEAD names, read from files; ok is false when
// it cannot be read so (an unborn branch, a reftable).
func (e *Workspace) headCommit() (string, bool) {
	b, err := os.ReadFile(filepath.Join(e.repo.GitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref: refs/heads/"); ok {
		sha, found, err := gitexec.BranchTip(e.repo.CommonDir, ref)
		return sha, err == nil && found
	}
	return head, gitexec.IsObjectName(head)
}

// The cache is the commit, whether it has a policy, the policy's bytes and
// a CRC-32 of all that: a torn or foreign file is a miss.
const policyCacheVersion = "lockgate-head-policy-1"

func readPolicyCache(file, head string) (data []byte, found, ok bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false, false
	}
	hdr, body, cut := bytes.Cut(b, []byte{0})
	f := strings.Fields(string(hdr))
	if !cut || len(f) != 4 || f[0] != policyCacheVersion || f[1] != head {
		return nil, false, false
	}
	sum, err := strconv.ParseUint(f[3], 16, 32)
	if err != nil || uint32(sum) != crc32.ChecksumIEEE(body) {
		return nil, false, false
	}
	return body, f[2] == "1", true
}

func writePolicyCache(file, head string, data []byte, found bool) {
	flag := "0"
	if found {
		flag = "1"
	}
	hdr := fmt.Sprintf("%s %s %s %x", policyCacheVersion, head, flag, crc32.ChecksumIEEE(data))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".head-policy-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(append(append([]byte(hdr), 0), data...))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // a cache not written costs the next hook a read
	}
}
