package lockkey

import (
	"fmt"
	"strings"
)

// A lock on one branch (locks.per_branch) is kept under the key
// `branch:NAME:KEY`, KEY a path or pattern key: a key of its own, so that
// locks of one path on two branches are two records in every store, and
// that the stores need no notion of a branch. The manager and the hooks
// compare such a key with the path keys it shares its KEY with (a lock
// without a branch holds on every branch); docs/keys.md says so.

// BranchNamespace is the namespace of the keys of branch locks. It is
// always understood, whatever locks.namespaces permits.
const BranchNamespace = "branch"

// KindBranch is the kind of a branch lock's key.
const KindBranch Kind = BranchNamespace

// BranchKey is the key of the lock on key (a canonical path or pattern
// key) held on branch only.
func BranchKey(branch, key string) string {
	return BranchNamespace + ":" + branch + ":" + key
}

// SplitBranch is the branch and the path or pattern key of a branch
// lock's key (or of its identity, FoldCase); ok is false for any other
// key.
func SplitBranch(key string) (branch, inner string, ok bool) {
	rest, ok := strings.CutPrefix(key, BranchNamespace+":")
	if !ok {
		return "", "", false
	}
	// A branch name never holds ':' (git refuses it in a ref).
	branch, inner, ok = strings.Cut(rest, ":")
	if !ok || branch == "" || inner == "" {
		return "", "", false
	}
	return branch, inner, true
}

// Unbranched is the path or pattern key a branch lock's key covers, and
// any other key itself.
func Unbranched(key string) string {
	if _, inner, ok := SplitBranch(key); ok {
		return inner
	}
	return key
}

// BranchProblem is why name cannot be the branch of a lock, "" when it
// can: it must be a branch name git accepts (git check-ref-format
// --branch), without the characters lockgate's keys read as pattern
// syntax ('{', '}').
func BranchProblem(name string) string {
	switch {
	case name == "":
		return "the branch is empty"
	case strings.HasPrefix(name, "refs/"):
		return "name the branch without refs/heads/"
	case strings.HasPrefix(name, "-"):
		return "a branch does not start with '-'"
	case name == "HEAD" || name == "@":
		return "name a branch, not " + name
	case len(name) > 255:
		return "the branch name is longer than 255 bytes"
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return "a branch does not start or end with '/' or end with '.'"
	case strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{"):
		return "a branch does not contain '..', '//' or '@{'"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\{}", r) {
			return "a branch does not contain spaces, control characters or any of ~^:?*[\\{}"
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return "no part of a branch starts with '.' or ends with '.lock'"
		}
	}
	return ""
}

// parseBranch parses the value of a `branch:` key: NAME:KEY.
func (p *parser) parseBranch(v string) (Key, *fail) {
	const form = "branch:NAME:PATH, NAME a branch and PATH a path or pattern key"
	name, inner, ok := strings.Cut(v, ":")
	if !ok || inner == "" {
		return Key{}, refuse("a branch lock's key names a branch and a path", form, "")
	}
	if r := BranchProblem(name); r != "" {
		return Key{}, refuse(r, form, "")
	}
	k, f := p.parse(inner)
	if f != nil {
		if f.expected != "" {
			f.expected = BranchKey(name, f.expected)
		}
		return Key{}, f
	}
	if k.Kind != KindPath && k.Kind != KindPattern {
		return Key{}, refuse("only a path or pattern key can be locked on one branch", form, "")
	}
	c := BranchKey(name, k.Canonical)
	if len(c) > MaxKeyLen {
		return Key{}, refuse(fmt.Sprintf("key is longer than %d bytes", MaxKeyLen), "", "")
	}
	return Key{Canonical: c, Kind: KindBranch, Namespace: BranchNamespace, Value: name + ":" + k.Canonical}, nil
}

// foldBranch is the identity of a branch lock's key: its path folded as
// FoldPath folds paths; the branch keeps its case, as git's refs do.
func foldBranch(key string) (string, bool) {
	b, inner, ok := SplitBranch(key)
	if !ok {
		return "", false
	}
	return BranchKey(b, FoldPath(inner)), true
}

// overlapBranch compares two keys of which at least one is a branch
// lock's: they overlap on the same branch when their paths do.
func overlapBranch(a, b string) bool {
	ba, ia, okA := SplitBranch(a)
	bb, ib, okB := SplitBranch(b)
	if !okA || !okB {
		return false
	}
	return ba == bb && OverlapFoldCase(ia, ib)
}
