package lockkey

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lockgate/lockgate/internal/safetext"
)

// Kind names the kind of a lock key.
type Kind string

// The kinds of docs/keys.md. A permitted namespace that lockkey has no rules for
// (a site-specific entry in locks.namespaces) gets Kind(namespace).
const (
	KindPath     Kind = "path"
	KindPattern  Kind = "pattern"
	KindAPI      Kind = "api"
	KindDB       Kind = "db"
	KindEvent    Kind = "event"
	KindFlag     Kind = "flag"
	KindEnv      Kind = "env"
	KindContract Kind = "contract"
	KindFeature  Kind = "feature"
	KindTask     Kind = "task"
	KindActivity Kind = "activity"
	KindHot      Kind = "hot"
	KindFile     Kind = "file"
	KindBackfill Kind = "backfill"
	// KindReserved is the kind of the bare keys `workflow` (held while the
	// workflow branch is written) and `claim` (the global claim lock).
	KindReserved Kind = "reserved"
)

// The reserved bare keys.
const (
	WorkflowKey = "workflow"
	ClaimKey    = "claim"
)

// MaxKeyLen bounds a key's length in bytes; longer keys are refused so that
// stores can always encode them and matching stays cheap.
const MaxKeyLen = 4096

// DefaultNamespaces are the namespaces permitted when Options.Namespaces is
// nil (the default of locks.namespaces).
var DefaultNamespaces = []string{"api", "db", "event", "flag", "env", "contract", "feature", "task", "activity", "hot", "file", "backfill"}

// DefaultFeaturePurposes are the purposes accepted in feature:<id>:<purpose>
// when Options.FeaturePurposes is nil:
//
//   - pause: stop the line — workers on the feature wait while it is held
//   - contract: a contract revision bump for the feature is in progress
//   - plan: the feature's plan is being revised
//   - merge: serializes merges of the feature's work into its target branch
//   - release: the feature is being released or deployed
var DefaultFeaturePurposes = []string{"pause", "contract", "plan", "merge", "release"}

// Options tunes validation to a repository's configuration. A nil *Options
// means the defaults, except that contract:<path> keys are then only checked
// for form, because without configuration the list of contract files is
// unknown (useful when re-reading keys already stored).
type Options struct {
	// Namespaces are the permitted namespaces (locks.namespaces); nil means
	// DefaultNamespaces. Entries may be written with or without the colon.
	Namespaces []string
	// ContractFiles are contracts.openapi.files plus generated artifact
	// paths or doublestar patterns; contract:<path> must match one. With a
	// non-nil *Options, an empty list permits no contract key.
	ContractFiles []string
	// FeaturePurposes are the purposes permitted in feature keys; nil means
	// DefaultFeaturePurposes.
	FeaturePurposes []string
}

// Key is a parsed, canonical lock key.
type Key struct {
	// Canonical is the canonical spelling; stores and messages use it.
	Canonical string
	// Kind is the key's kind.
	Kind Kind
	// Namespace is the prefix before the first ':' of a namespaced key, ""
	// for path, pattern and reserved keys.
	Namespace string
	// Value is the part after "<namespace>:", or the whole key when there
	// is no namespace.
	Value string
}

// Error is an invalid or not permitted key. It is data: Parse never panics.
type Error struct {
	// Input is the key as given.
	Input string
	// Reason says what is wrong; when there is no Expected it also shows
	// the expected form.
	Reason string
	// Expected is a corrected canonical key when one can be suggested.
	Expected string
	// NotPermitted is set when the key names a namespace that is not
	// permitted (exit code 6 rather than 2).
	NotPermitted bool
}

// Error formats the refusal, for example
// `invalid lock key "api:get /v1/users": method must be uppercase: api:GET /v1/users`.
func (e *Error) Error() string {
	var b strings.Builder
	if e.NotPermitted {
		fmt.Fprintf(&b, "lock key %q not permitted: %s", Shorten(e.Input), e.Reason)
	} else {
		fmt.Fprintf(&b, "invalid lock key %q: %s", Shorten(e.Input), e.Reason)
	}
	if e.Expected != "" {
		b.WriteString(": ")
		b.WriteString(Shorten(e.Expected))
	}
	return b.String()
}

// Shorten returns s for a message: whole when short, else its start and
// its length (safetext.Shorten).
func Shorten(s string) string { return safetext.Shorten(s) }

// Canonical returns the canonical form of s, or an *Error.
func Canonical(s string, opt *Options) (string, error) {
	k, err := Parse(s, opt)
	if err != nil {
		return "", err
	}
	return k.Canonical, nil
}

// Parse validates s and returns its canonical Key, or an *Error whose
// message shows the expected form. opt may be nil.
func Parse(s string, opt *Options) (Key, error) {
	p := newParser(opt)
	k, f := p.parse(s)
	if f != nil {
		return Key{}, f.toError(s)
	}
	return k, nil
}

// TaskKey returns the task lock key for a task or work-package id.
func TaskKey(id string) string { return "task:" + id }

// ActivityKey returns the activity lock key for an activity id.
func ActivityKey(id string) string { return "activity:" + id }

// PauseKey returns the stop-the-line key of a feature: feature:<id>:pause.
func PauseKey(feature string) string { return "feature:" + feature + ":pause" }

// IsPause reports whether key is a feature pause key, feature:<id>:pause.
func IsPause(key string) bool {
	rest, ok := strings.CutPrefix(key, "feature:")
	if !ok {
		return false
	}
	id, ok := strings.CutSuffix(rest, ":pause")
	return ok && validID(id)
}

// Namespace returns the namespace of a canonical key (the text before the
// first ':' when it has the form `^[a-z][a-z0-9-]*:`), or "".
func Namespace(key string) string {
	ns, _, _ := splitNS(key)
	return ns
}

// fail is an internal refusal; Parse turns it into an *Error.
type fail struct {
	reason       string
	form         string // the expected form, shown when there is no expected key
	expected     string
	notPermitted bool
}

func refuse(reason, form, expected string) *fail {
	return &fail{reason: reason, form: form, expected: expected}
}

// toError builds the *Error, whose message shows either the suggested key
// or, when there is none, the expected form.
func (f *fail) toError(input string) *Error {
	reason := f.reason
	if f.expected == "" && f.form != "" {
		reason += "; expected " + f.form
	}
	return &Error{Input: input, Reason: reason, Expected: f.expected, NotPermitted: f.notPermitted}
}

type parser struct {
	namespaces     []string
	purposes       []string
	contracts      []string
	checkContracts bool
	// depth > 0 while a suggestion is being verified; suggestions are only
	// made at depth 0, which bounds the work and rules out recursion.
	depth int
}

func newParser(opt *Options) *parser {
	p := &parser{namespaces: DefaultNamespaces, purposes: DefaultFeaturePurposes}
	if opt == nil {
		return p
	}
	if opt.Namespaces != nil {
		p.namespaces = make([]string, 0, len(opt.Namespaces))
		for _, n := range opt.Namespaces {
			n = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(n), ":"))
			if n != "" {
				p.namespaces = append(p.namespaces, n)
			}
		}
	}
	if opt.FeaturePurposes != nil {
		p.purposes = opt.FeaturePurposes
	}
	p.checkContracts = true
	p.contracts = opt.ContractFiles
	return p
}

// suggest returns the canonical form of cand when it is a valid key, else "".
func (p *parser) suggest(cand string) string {
	if p.depth > 0 || cand == "" {
		return ""
	}
	p.depth++
	defer func() { p.depth-- }()
	k, f := p.parse(cand)
	if f != nil {
		return ""
	}
	return k.Canonical
}

func (p *parser) parse(s string) (Key, *fail) {
	if s == "" {
		return Key{}, refuse("empty key", "a repo-relative path such as src/app.py or a namespaced key such as api:GET /v1/users", "")
	}
	if len(s) > MaxKeyLen {
		return Key{}, refuse(fmt.Sprintf("key is longer than %d bytes", MaxKeyLen), "", "")
	}
	if !utf8.ValidString(s) {
		return Key{}, refuse("key is not valid UTF-8", "", "")
	}
	// A trailing newline or tab is whitespace to trim, not a control
	// character inside the key.
	t := strings.TrimSpace(s)
	for _, r := range t {
		if safetext.Unsafe(r) {
			return Key{}, refuse(fmt.Sprintf("key contains the control character %U", r), "", "")
		}
	}
	if t != s {
		if t == "" {
			return Key{}, refuse("blank key", "a repo-relative path such as src/app.py or a namespaced key such as api:GET /v1/users", "")
		}
		k, f := p.parse(t)
		if f != nil {
			return Key{}, f
		}
		return Key{}, &fail{reason: "leading or trailing whitespace", expected: k.Canonical}
	}
	if s == WorkflowKey || s == ClaimKey {
		return Key{Canonical: s, Kind: KindReserved, Value: s}, nil
	}
	if ns, v, ok := splitNS(s); ok {
		if ns == BranchNamespace {
			return p.parseBranch(v)
		}
		if !contains(p.namespaces, ns) {
			return Key{}, &fail{
				reason:       fmt.Sprintf("namespace %q is not permitted; permitted namespaces (locks.namespaces): %s", ns, strings.Join(p.namespaces, ", ")),
				notPermitted: true,
			}
		}
		return p.parseLogical(ns, v)
	}
	// API:GET /x is a namespaced key written in the wrong case, not a file.
	if ns, v, ok := splitFoldedNS(s); ok && contains(p.namespaces, strings.ToLower(ns)) {
		return Key{}, refuse("namespace must be lowercase", strings.ToLower(ns)+":…", p.suggest(strings.ToLower(ns)+":"+v))
	}
	canon, f := p.canonPath(s)
	if f != nil {
		if f.expected != "" {
			// The repaired path must also be a valid key as a whole.
			f.expected = p.suggest(f.expected)
		}
		return Key{}, f
	}
	if p.readsAsKey(canon) {
		// ./a:b cleans to a:b, which is not a path: keep Parse idempotent. A
		// one-character class names the same file without the ambiguity.
		return Key{}, refuse("path reads as a namespaced or reserved key once cleaned; name it with a pattern", "", p.suggest("["+canon[:1]+"]"+canon[1:]))
	}
	kind := KindPath
	if hasMeta(canon) {
		kind = KindPattern
	}
	return Key{Canonical: canon, Kind: kind, Value: canon}, nil
}

// readsAsKey reports whether a cleaned path would be parsed as something
// other than a path.
func (p *parser) readsAsKey(c string) bool {
	if c == WorkflowKey || c == ClaimKey {
		return true
	}
	if _, _, ok := splitNS(c); ok {
		return true
	}
	ns, _, ok := splitFoldedNS(c)
	return ok && contains(p.namespaces, strings.ToLower(ns))
}

// splitNS splits s at a namespace prefix of the form ^[a-z][a-z0-9-]*: .
func splitNS(s string) (ns, value string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// splitFoldedNS is splitNS allowing uppercase letters.
func splitFoldedNS(s string) (ns, value string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasMeta reports doublestar metacharacters that make a key cover more
// than itself.
func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[{") }
