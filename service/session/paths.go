package session

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// KeyOptions are the lockkey rules this repository's config sets.
func (e *Workspace) KeyOptions() *lockkey.Options {
	return &lockkey.Options{
		Namespaces:      e.Cfg.Locks.Namespaces,
		ContractFiles:   append(append([]string(nil), e.Cfg.Contracts.OpenAPI.Files...), e.Cfg.Contracts.Generated...),
		FeaturePurposes: e.Cfg.Locks.FeaturePurposes,
	}
}

// ParseKeys canonicalizes command-line keys. Paths and patterns are taken
// as git takes them (see cmdPath).
func (e *Workspace) ParseKeys(args []string) ([]lockkey.Key, error) {
	return e.keys(args, e.cmdPath)
}

// FileKeys canonicalizes keys read from a file (work packages, a task
// file): their paths are relative to the repository root, wherever the
// command runs.
func (e *Workspace) FileKeys(args []string) ([]lockkey.Key, error) {
	return e.keys(args, nil)
}

// keys canonicalizes args; a path or pattern is first made repo-relative
// by toRepo (nil: it is already) and then resolved through symbolic links
// (keyPath).
func (e *Workspace) keys(args []string, toRepo func(string) (string, error)) ([]lockkey.Key, error) {
	opts := e.KeyOptions()
	out := make([]lockkey.Key, 0, len(args))
	for _, s := range args {
		if IsPathArg(s) {
			var err error
			if toRepo != nil {
				if s, err = toRepo(s); err != nil {
					return nil, err
				}
			}
			if s, err = e.KeyPath(s); err != nil {
				return nil, err
			}
		}
		k, err := lockkey.Parse(s, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// IsPathArg reports whether a command-line key names a path or pattern:
// neither a reserved key nor one that starts like a namespace (`api:`, and
// `API:` too, which lockkey refuses with the right case).
func IsPathArg(arg string) bool {
	if arg == lockkey.WorkflowKey || arg == lockkey.ClaimKey {
		return false
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		case i > 0 && c == ':':
			return false
		default:
			return true
		}
	}
	return true
}

// cmdPath makes a path or pattern given on the command line repo-relative,
// as git does: a relative one is relative to the current directory as git
// sees it (symbolic links resolved, so `..` is the real parent); an absolute
// one must lie in the worktree, reached directly or through symbolic links
// (/tmp and /private/tmp, a linked checkout). One outside the worktree is
// refused here; lockkey canonicalizes (and refuses) the rest. Without a
// worktree (a bare repository) paths are repo-relative as given.
func (e *Workspace) cmdPath(arg string) (string, error) {
	top := e.repo.Toplevel
	if top == "" {
		return arg, nil
	}
	outside := func() error {
		return Usagef("%s is outside the repository %s (paths on the command line are relative to the current directory, %s)", arg, top, e.Cwd)
	}
	if filepath.IsAbs(arg) {
		rel, ok := e.InWorktree(filepath.Clean(arg))
		if !ok {
			return "", outside()
		}
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(arg, "/") {
			rel += "/" // lockkey says how to name a directory
		}
		return rel, nil
	}
	prefix := ""
	cwd, err := resolveExisting(e.Cwd)
	if err != nil {
		cwd = e.Cwd
	}
	if rel, ok := e.InWorktree(cwd); ok && rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	p := prefix + arg
	if c := path.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
		return "", outside()
	}
	return p, nil
}

// UserDir is the directory the user works in, repo-relative with a
// trailing slash ("" at the top), for the commands hints print: the
// current directory, or, at the top, GIT_PREFIX — git runs hooks (and
// aliases) at the top of the worktree and says there where the command
// was started.
func (e *Workspace) UserDir() string {
	if e.repo.Toplevel == "" {
		return ""
	}
	cwd, err := resolveExisting(e.Cwd)
	if err != nil {
		cwd = e.Cwd
	}
	if rel, ok := e.InWorktree(cwd); ok && rel != "." {
		return filepath.ToSlash(rel) + "/"
	}
	p := e.Getenv("GIT_PREFIX")
	if c := path.Clean(p); p == "" || path.IsAbs(p) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return ""
	}
	return path.Clean(p) + "/"
}

// InWorktree returns abs relative to the worktree when it lies inside it,
// as written or with symbolic links resolved. Links inside the worktree
// are left to throughLinks.
func (e *Workspace) InWorktree(abs string) (string, bool) {
	if rel, ok := within(e.repo.Toplevel, abs); ok {
		return rel, true
	}
	top := e.realTopDir()
	if rel, ok := within(top, abs); ok {
		return rel, true
	}
	// The last element as written: a link there is a file of the
	// repository.
	if real, err := resolveExisting(filepath.Dir(abs)); err == nil {
		return within(top, filepath.Join(real, filepath.Base(abs)))
	}
	return "", false
}

// realTopDir is the worktree with symbolic links resolved.
func (e *Workspace) realTopDir() string {
	if e.RealTop == "" {
		e.RealTop = e.repo.Toplevel
		if real, err := filepath.EvalSymlinks(e.repo.Toplevel); err == nil {
			e.RealTop = real
		}
	}
	return e.RealTop
}

// throughLinks returns the repo-relative path rel (slash-separated, clean)
// names once the symbolic links in its existing prefix are followed. Git
// refuses a path beyond a link; lockgate judges the file the link leads
// to, and refuses one that leads out of the worktree (to another worktree,
// say) or into a repository nested in it.
func (e *Workspace) throughLinks(rel string) (string, error) {
	top := e.realTopDir()
	abs := filepath.Join(top, filepath.FromSlash(rel))
	real, err := resolveExisting(abs)
	if err != nil {
		return "", fmt.Errorf("resolve symbolic links in %s: %w", rel, err)
	}
	if real == abs {
		return rel, nil
	}
	r, ok := within(top, real)
	if !ok {
		return "", Usagef("%s leads through a symbolic link to %s, outside the worktree %s: lockgate cannot vouch for it", rel, real, e.repo.Toplevel)
	}
	r = filepath.ToSlash(r)
	if d := e.otherRepo(r); d != "" {
		return "", Usagef("%s leads through a symbolic link into %s, another repository or worktree (it has its own .git): lockgate cannot vouch for it", rel, d)
	}
	return r, nil
}

// otherRepo returns rel or the directory below the top holding it that
// has a .git of its own — a nested repository, submodule or worktree,
// whose files are not this worktree's — or "".
func (e *Workspace) otherRepo(rel string) string {
	top := e.realTopDir()
	for d := rel; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(d), ".git")); err == nil {
			return d
		}
	}
	return ""
}

// KeyPath follows the symbolic links in the directories a repo-relative
// path or pattern names: those before its last element and before its
// first wildcard (see throughLinks). The last element is left as written:
// a link there is a file of the repository, as git tracks it.
func (e *Workspace) KeyPath(p string) (string, error) {
	if e.repo.Toplevel == "" {
		return p, nil
	}
	if !strings.ContainsAny(p, `*?[{\`) {
		c := path.Clean(p)
		dir, base := path.Split(c)
		if dir == "" || c == ".." || strings.HasPrefix(c, "../") {
			return p, nil // lockkey judges it
		}
		real, err := e.throughLinks(path.Clean(dir))
		if err != nil || real == path.Clean(dir) {
			return p, err
		}
		out := path.Join(real, base)
		if strings.HasSuffix(p, "/") {
			out += "/" // lockkey says how to name a directory
		}
		return out, nil
	}
	segs := strings.Split(p, "/")
	var dir []string
	n := 0 // segments read
	for ; n < len(segs)-1; n++ {
		s := segs[n]
		if s == ".." || strings.ContainsAny(s, `*?[{\`) {
			break
		}
		if s != "" && s != "." {
			dir = append(dir, s)
		}
	}
	if len(dir) == 0 {
		return p, nil
	}
	d := strings.Join(dir, "/")
	real, err := e.throughLinks(d)
	if err != nil || real == d {
		return p, err
	}
	if real == "." {
		return strings.Join(segs[n:], "/"), nil
	}
	return real + "/" + strings.Join(segs[n:], "/"), nil
}

// CmdFile is a file named on the command line: relative to the current
// directory (after -C).
func (e *Workspace) CmdFile(p string) string {
	if p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Cwd, p)
}

// TTLFor is the default TTL of a key for this worker (docs/config.md, locks.durations).
func (e *Workspace) TTLFor(k lockkey.Key) time.Duration {
	return e.Cfg.TTL(e.Me.HolderType, k.Kind)
}

func Canonicals(keys []lockkey.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Canonical
	}
	return out
}

// RepoPath makes p (absolute, or relative to base) a repo-relative slash
// path, refusing one outside the worktree or inside the git directory.
func (e *Workspace) RepoPath(p, base string) (string, error) {
	if e.repo.Toplevel == "" {
		return "", Usagef("%s: paths need a working tree (this is a bare repository)", p)
	}
	if strings.TrimSpace(p) == "" || strings.ContainsRune(p, 0) {
		return "", Usagef("invalid path %q", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		// As git: `..` is the parent of the real directory.
		if real, err := resolveExisting(base); err == nil {
			base = real
		}
		abs = filepath.Join(base, p)
	}
	abs = filepath.Clean(abs)
	if strings.ContainsRune(abs, 0) {
		return "", Usagef("invalid path %q", abs)
	}
	rel, ok := e.InWorktree(abs)
	if !ok {
		return "", Usagef("%s is outside the worktree %s: lockgate cannot vouch for it", p, e.repo.Toplevel)
	}
	if rel == "." {
		return "", Usagef("%s is the worktree itself, not a file in it", p)
	}
	rel = filepath.ToSlash(rel)
	if IsGitPath(rel) {
		return "", Usagef("%s is inside the git directory: not a file of the repository", p)
	}
	// An edit writes where the links lead.
	rel, err := e.throughLinks(rel)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", Usagef("%s is the worktree itself, not a file in it", p)
	}
	if IsGitPath(rel) {
		return "", Usagef("%s is inside the git directory: not a file of the repository", p)
	}
	if d := e.otherRepo(path.Dir(rel)); d != "" {
		return "", Usagef("%s is in %s, another repository or worktree (it has its own .git): lockgate cannot vouch for it", p, d)
	}
	return rel, nil
}

// within returns abs relative to root when abs lies inside root.
func within(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// resolveExisting resolves symbolic links in the longest existing prefix of
// abs (the file itself may not exist yet) and appends the rest. A dangling
// link is followed to where it leads: writing through it creates its
// target.
func resolveExisting(abs string) (string, error) {
	dir, rest := abs, ""
	for hops := 0; ; {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			if hops++; hops > maxLinkHops {
				return "", Usagef("%s: too many levels of symbolic links", abs)
			}
			target, err := os.Readlink(dir)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				// Relative to the link's real directory, as the kernel reads it.
				parent, err := filepath.EvalSymlinks(filepath.Dir(dir))
				if err != nil {
					return "", err
				}
				target = filepath.Join(parent, target)
			}
			dir = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// ToolKeys resolves the keys a tool is given: paths are relative to the
// repository root (or absolute inside the worktree), never to the server's
// working directory.
func (e *Workspace) ToolKeys(one string, many []string) ([]lockkey.Key, error) {
	args := slices.Clone(many)
	if one != "" {
		args = append([]string{one}, args...)
	}
	if len(args) == 0 {
		return nil, Usagef("give file_path or keys")
	}
	for i, s := range args {
		if filepath.IsAbs(s) {
			rel, err := e.RepoPath(s, "")
			if err != nil {
				return nil, err
			}
			args[i] = rel
		}
	}
	return e.FileKeys(args)
}

// IsGitPath reports a repo-relative path in a git directory: .git, or an
// alias of it, as any of its segments.
func IsGitPath(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		// Also .GIT and NTFS's aliases: git's own directory where the
		// file system folds them.
		if lockkey.IsGitDir(seg) {
			return true
		}
	}
	return false
}

// maxLinkHops bounds the dangling links resolveExisting follows (a loop).
const maxLinkHops = 40
