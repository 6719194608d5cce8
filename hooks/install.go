package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/safetext"
)

// DefaultHooks are the hooks `lockgate install` installs.
var DefaultHooks = []string{"pre-commit", "pre-merge-commit", "commit-msg", "pre-push", RefTxHook}

// ReadOnlyHooks keep files' modes current after git writes the worktree
// (locks.read_only): installed by default when the policy turns it on.
var ReadOnlyHooks = []string{"post-checkout", "post-merge", "post-rewrite"}

// Known hooks lockgate implements.
var Known = []string{"pre-commit", "pre-merge-commit", "commit-msg", "pre-push", RefTxHook, "post-checkout", "post-merge", "post-rewrite", "pre-receive"}

// RefTxHook is git's reference-transaction hook, run by git 2.28 and
// later for every change of refs.
const RefTxHook = "reference-transaction"

// shimMarker identifies a hook file lockgate wrote.
const shimMarker = "# lockgate-shim"

// prevSuffix names a hook that was there before lockgate: it is kept, run
// first by the shim, and restored by Uninstall.
const prevSuffix = ".pre-lockgate"

// Shim returns the script installed as hook name: it runs the previous hook
// (if any) and then `lockgate hook NAME`, passing arguments and stdin to
// both. bin is the lockgate binary to run; when it is gone the shim looks
// for lockgate on PATH, and fails (refusing the commit) when it finds none.
// The hooks of every commit and push (HookBinaryHooks) run the hook binary
// lockgate-hook found next to that lockgate instead, when there is one,
// telling it which lockgate to hand over to (LOCKGATE_FULL_BIN).
func Shim(name, bin string) string {
	if name == RefTxHook {
		return refTxShim(bin)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n%s %s: installed by `lockgate install`; `lockgate uninstall` removes it and restores any previous hook.\n", shimMarker, shimVersion)
	writeFindLockgate(&b, bin)
	own := slices.Contains(HookBinaryHooks, name)
	if own {
		writeFindHookBinary(&b)
	}
	fmt.Fprintf(&b, "prev=\"$(dirname \"$0\")/%s%s\"\n", name, prevSuffix)
	if name == "pre-push" || name == "pre-receive" || name == "post-rewrite" {
		// These hooks read stdin: keep a copy for each.
		b.WriteString(`if [ -x "$prev" ]; then
  refs=$(cat)
  printf '%s\n' "$refs" | "$prev" "$@" || exit $?
`)
		if own {
			fmt.Fprintf(&b, `  if [ -n "$hook" ]; then
    printf '%%s\n' "$refs" | LOCKGATE_FULL_BIN=$lockgate "$hook" %s "$@"
    exit $?
  fi
`, name)
		}
		fmt.Fprintf(&b, `  printf '%%s\n' "$refs" | "$lockgate" hook %s "$@"
  exit $?
fi
`, name)
	} else {
		b.WriteString("if [ -x \"$prev\" ]; then\n  \"$prev\" \"$@\" || exit $?\nfi\n")
	}
	if own {
		fmt.Fprintf(&b, "[ -z \"$hook\" ] || LOCKGATE_FULL_BIN=$lockgate exec \"$hook\" %s \"$@\"\n", name)
	}
	fmt.Fprintf(&b, "exec \"$lockgate\" hook %s \"$@\"\n", name)
	return b.String()
}

// HookBinaryHooks are the hooks the shims run with the hook binary,
// lockgate-hook, when it is installed next to lockgate: those of every
// commit and push.
var HookBinaryHooks = []string{"pre-commit", "pre-merge-commit", "commit-msg", "pre-push", RefTxHook}

// shimVersion is the shims' format: v1 shims run `lockgate hook` alone,
// v2 the hook binary where there is one.
const shimVersion = "v2"

// writeFindHookBinary writes the lines that find the hook binary: the
// lockgate-hook next to the lockgate found, else none ("").
func writeFindHookBinary(b *strings.Builder) {
	b.WriteString(`hook=${lockgate%/*}/lockgate-hook
[ -x "$hook" ] || hook=
`)
}

// writeFindLockgate writes the lines that find the lockgate to run: bin,
// else lockgate on PATH, else the hook fails (refusing what it guards).
func writeFindLockgate(b *strings.Builder, bin string) {
	fmt.Fprintf(b, "lockgate=${LOCKGATE_BIN:-%s}\n", safetext.ShellQuote(bin))
	b.WriteString(`if [ ! -x "$lockgate" ]; then
  lockgate=$(command -v lockgate) || { echo "lockgate: binary not found; reinstall it, or remove this hook with 'lockgate uninstall'" >&2; exit 1; }
fi
`)
}

// refTxShim is the reference-transaction hook. git runs it for every
// change of refs, three times a transaction (prepared, committed,
// aborted), and only a "prepared" update of a branch can add commits to
// judge: everything else — fetches, tags, remote-tracking refs, the
// other states, lockgate's own update of its workflow branch — is let
// through by the shell, without starting lockgate.
func refTxShim(bin string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n%s %s: installed by `lockgate install`; `lockgate uninstall` removes it and restores any previous hook.\n", shimMarker, shimVersion)
	// One process (cat) on the way to "nothing to judge", whatever the
	// number of refs: the tests are patterns on the whole input.
	fmt.Fprintf(&b, "prev=\"${0%%/*}/%s%s\"\n", RefTxHook, prevSuffix)
	b.WriteString(`[ "$1" = prepared ] || [ -x "$prev" ] || exit 0
refs=$(cat)
if [ -x "$prev" ]; then
  printf '%s\n' "$refs" | "$prev" "$@" || exit $?
  [ "$1" = prepared ] || exit 0
fi
case "$refs" in
  *" refs/heads/"*) ;;
  *) exit 0 ;;
esac
heads=0
while read -r o n r; do
  case "$r" in
    refs/heads/lockgate/workflow) ;;
    refs/heads/*) heads=$((heads + 1)); ho=$o; hr=$r ;;
  esac
done <<EOF
$refs
EOF
[ "$heads" != 0 ] || exit 0
# One branch moved: a commit the commit hooks just judged is vouched for
# by their record (see hooks.RecordPass), taken once.
gd=.git
if [ -f .git ]; then read -r _ gd < .git; fi
pass="$gd/lockgate/commit-pass"
if [ "$heads" = 1 ] && [ -s "$pass" ]; then
  read -r pv pref pold ptime < "$pass"
  : > "$pass"
  case "$ho" in *[!0]*) ;; *) [ "$pold" = - ] && pold=$ho ;; esac
  case "$ptime" in ""|*[!0-9]*) ptime=0 ;; esac
  if [ "$pv" = ` + passVersion + ` ] && [ "$hr" = "$pref" ] && [ "$ho" = "$pold" ] &&
    [ $(( $(date +%s) - ptime )) -le ` + fmt.Sprint(int(passMaxAge/time.Second)) + ` ]; then
    exit 0
  fi
fi
# A branch moved only onto commits a remote-tracking ref or a tag already
# has (a fast-forward after a fetch, a branch made on pushed work) adds
# nothing to judge: one rev-list says so without starting lockgate. Local
# branches do not count as known here (one may be lockgate's workflow
# branch under another name): lockgate decides those.
known=
while read -r o n r; do
  case "$r" in refs/remotes/*|refs/tags/*) case "$n" in *[!0]*) known="$known $n" ;; esac ;; esac
done <<EOF
$refs
EOF
judge=0
while read -r o n r; do
  case "$r" in refs/heads/lockgate/workflow) continue ;; refs/heads/*) ;; *) continue ;; esac
  case "$n" in *[!0]*) ;; *) continue ;; esac
  [ "$o" != "$n" ] || continue
  not=$known
  case "$o" in *[!0]*) not="$not $o" ;; esac
  if added=$(git rev-list -n 1 "$n" --not --tags --remotes $not 2>/dev/null) && [ -z "$added" ]; then
    continue
  fi
  judge=1
  break
done <<EOF
$refs
EOF
[ "$judge" = 1 ] || exit 0
`)
	writeFindLockgate(&b, bin)
	writeFindHookBinary(&b)
	b.WriteString(`if [ -n "$hook" ]; then
  printf '%s\n' "$refs" | LOCKGATE_FULL_BIN=$lockgate "$hook" reference-transaction "$@"
  exit $?
fi
printf '%s\n' "$refs" | "$lockgate" hook reference-transaction "$@"
`)
	return b.String()
}

// IsShim reports whether the file at path is a lockgate shim.
func IsShim(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), shimMarker)
}

// InstallResult says what Install did per hook.
type InstallResult struct {
	Hook    string `json:"hook"`
	Path    string `json:"path"`
	Chained string `json:"chained,omitempty"` // the previous hook, kept and run first
	Updated bool   `json:"updated"`           // a lockgate shim was already there
	// Skipped says why the hook was not installed (a git too old to run
	// it); nothing was written.
	Skipped string `json:"skipped,omitempty"`
}

// Install writes shims for names into dir. An existing hook that is not a
// shim is renamed to NAME.pre-lockgate and chained. Installing again only
// rewrites the shims.
func Install(dir, bin string, names []string) ([]InstallResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create hooks directory: %w", err)
	}
	var out []InstallResult
	for _, name := range names {
		path := filepath.Join(dir, name)
		res := InstallResult{Hook: name, Path: path}
		prev := path + prevSuffix
		switch _, err := os.Lstat(path); {
		case err == nil && IsShim(path):
			res.Updated = true
		case err == nil:
			if _, err := os.Lstat(prev); err == nil {
				return out, fmt.Errorf("%s: both a hook and %s exist; move one away and install again", path, filepath.Base(prev))
			}
			if err := os.Rename(path, prev); err != nil {
				return out, fmt.Errorf("keep existing hook %s: %w", path, err)
			}
		case !errors.Is(err, os.ErrNotExist):
			return out, fmt.Errorf("hook %s: %w", path, err)
		}
		if _, err := os.Stat(prev); err == nil {
			res.Chained = prev
		}
		if err := writeExecutable(path, Shim(name, bin)); err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// writeExecutable replaces path atomically with an executable script. The
// script is written to a fresh file (O_EXCL: never through a link planted
// in the hooks directory) and renamed over path, which replaces a link
// there rather than writing where it points.
func writeExecutable(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".lockgate-*")
	if err != nil {
		return fmt.Errorf("write hook %s: %w", path, err)
	}
	_, err = tmp.WriteString(content)
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write hook %s: %w", path, err)
	}
	return nil
}

// UninstallResult says what Uninstall did per hook.
type UninstallResult struct {
	Hook     string `json:"hook"`
	Removed  bool   `json:"removed"`
	Restored string `json:"restored,omitempty"`
	Skipped  string `json:"skipped,omitempty"` // why nothing was done
}

// Uninstall removes lockgate's shims from dir and restores the hooks they
// chained. A hook that is not a shim is left alone.
func Uninstall(dir string, names []string) ([]UninstallResult, error) {
	var out []UninstallResult
	for _, name := range names {
		path := filepath.Join(dir, name)
		res := UninstallResult{Hook: name}
		_, err := os.Lstat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			res.Skipped = "not installed"
		case err != nil:
			return out, fmt.Errorf("hook %s: %w", path, err)
		case !IsShim(path):
			res.Skipped = "not a lockgate hook; left alone"
		default:
			if err := os.Remove(path); err != nil {
				return out, fmt.Errorf("remove hook %s: %w", path, err)
			}
			res.Removed = true
			prev := path + prevSuffix
			if _, err := os.Lstat(prev); err == nil {
				if err := os.Rename(prev, path); err != nil {
					return out, fmt.Errorf("restore %s: %w", prev, err)
				}
				res.Restored = path
			}
		}
		out = append(out, res)
	}
	return out, nil
}
