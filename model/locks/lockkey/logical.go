package lockkey

import (
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"
)

// Forms shown when no corrected key can be suggested.
const (
	apiForm      = "api:<METHOD> <PATH>, e.g. api:GET /v1/users"
	dbForm       = "db:migration-slot or db:schema:<table> with <table> matching [a-z0-9_]+, e.g. db:schema:users"
	tableForm    = "db:schema:<table>, e.g. db:schema:users"
	eventForm    = "event:<channel>, e.g. event:user.created"
	flagForm     = "flag:<namespace>, e.g. flag:billing/*"
	envForm      = "env:<resource>, e.g. env:shared-fixtures"
	contractForm = "contract:<path>, e.g. contract:openapi/v1.yaml"
	featureForm  = "feature:<id>:<purpose>, e.g. feature:FEAT-123:pause"
	taskForm     = "task:<id> with <id> matching [A-Za-z0-9][A-Za-z0-9._-]*, e.g. task:TASK-001"
	activityForm = "activity:<id> with <id> matching [A-Za-z0-9][A-Za-z0-9._-]*, e.g. activity:WI-001-A1"
	hotForm      = "hot:<basename>, e.g. hot:api.py"
	fileForm     = "file:<basename>:<hash>, e.g. file:api.py:3f2a9c1e"
	backfillForm = "backfill:type:<type>, e.g. backfill:type:lint"
)

// maxHashLen bounds the hash of file:<basename>:<hash> (a SHA-512 in hex).
const maxHashLen = 128

func (p *parser) parseLogical(ns, v string) (Key, *fail) {
	var (
		val  = v
		kind = Kind(ns)
		f    *fail
	)
	switch ns {
	case "api":
		val, f = p.parseAPI(v)
	case "db":
		f = p.parseDB(v)
	case "event":
		f = p.parseEvent(v)
	case "flag":
		f = p.parseFlag(v)
	case "env":
		f = parseEnv(v)
	case "contract":
		val, f = p.parseContract(v)
	case "feature":
		f = p.parseFeature(v)
	case "task":
		if !validID(v) {
			f = refuse("invalid task id", taskForm, "")
		}
	case "activity":
		if !validID(v) {
			f = refuse("invalid activity id", activityForm, "")
		}
	case "hot":
		if r := basenameProblem(v); r != "" {
			f = refuse(r, hotForm, p.suggestBasename("hot:", v, ""))
		}
	case "file":
		f = p.parseFile(v)
	case "backfill":
		f = p.parseBackfill(v)
	default:
		// A site-specific namespace from locks.namespaces: opaque value.
		switch {
		case v == "":
			f = refuse("empty value", ns+":<value>", "")
		case strings.TrimLeftFunc(v, unicode.IsSpace) != v:
			f = refuse("whitespace after the namespace", ns+":<value>", p.suggest(ns+":"+strings.TrimLeftFunc(v, unicode.IsSpace)))
		}
	}
	if f != nil {
		return Key{}, f
	}
	return Key{Canonical: ns + ":" + val, Kind: kind, Namespace: ns, Value: val}, nil
}

// parseAPI checks `<METHOD> <PATH>` and returns it with `//` collapsed.
func (p *parser) parseAPI(v string) (string, *fail) {
	if v == "" {
		return "", refuse("empty api key", apiForm, "")
	}
	sp := strings.IndexFunc(v, unicode.IsSpace)
	if sp < 0 {
		return "", refuse("method and path must be separated by one space", apiForm, p.repairAPI(v))
	}
	method, rest := v[:sp], v[sp:]
	urlPath := strings.TrimLeftFunc(rest, unicode.IsSpace)
	if !isUpperWord(method) {
		if isUpperWord(strings.ToUpper(method)) {
			return "", refuse("method must be uppercase", apiForm, p.repairAPI(v))
		}
		return "", refuse("method must be uppercase letters such as GET or POST", apiForm, "")
	}
	if rest[:len(rest)-len(urlPath)] != " " {
		return "", refuse("method and path must be separated by exactly one space", apiForm, p.repairAPI(v))
	}
	if urlPath == "" {
		return "", refuse("missing path", apiForm, "")
	}
	if urlPath[0] != '/' {
		return "", refuse("path must start with /", apiForm, p.repairAPI(v))
	}
	if i := strings.IndexAny(urlPath, "?#"); i >= 0 {
		return "", refuse("query strings and fragments are not part of an api key", apiForm, p.repairAPI(v))
	}
	for _, r := range urlPath {
		if unicode.IsSpace(r) {
			return "", refuse("path must not contain whitespace", apiForm, "")
		}
		if !isAPIPathRune(r) {
			return "", refuse(fmt.Sprintf("path must not contain %q", r), apiForm, "")
		}
	}
	if !validTemplates(urlPath) {
		return "", refuse("path parameters must look like {id}", "api:GET /v1/users/{id}", "")
	}
	return method + " " + collapseSlashes(urlPath), nil
}

// repairAPI suggests a corrected api key for v, or "".
func (p *parser) repairAPI(v string) string {
	v = strings.TrimSpace(v)
	var method, urlPath string
	if i := strings.IndexFunc(v, unicode.IsSpace); i >= 0 {
		method, urlPath = v[:i], strings.TrimSpace(v[i:])
	} else if i := strings.IndexByte(v, '/'); i > 0 {
		method, urlPath = v[:i], v[i:]
	} else {
		return ""
	}
	if i := strings.IndexAny(urlPath, "?#"); i >= 0 {
		urlPath = urlPath[:i]
	}
	if !strings.HasPrefix(urlPath, "/") {
		urlPath = "/" + urlPath
	}
	return p.suggest("api:" + strings.ToUpper(method) + " " + urlPath)
}

func isUpperWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// isAPIPathRune allows RFC 3986 path characters plus { } for templates.
func isAPIPathRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-._~!$&'()*+,;=:@%/{}", r)
}

// validTemplates checks that braces only form OpenAPI templates like {id}.
func validTemplates(s string) bool {
	in := false
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{':
			if in {
				return false
			}
			in, n = true, 0
		case c == '}':
			if !in || n == 0 {
				return false
			}
			in = false
		case in:
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
				return false
			}
			n++
		}
	}
	return !in
}

func collapseSlashes(s string) string {
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	return s
}

func (p *parser) parseDB(v string) *fail {
	if v == "migration-slot" {
		return nil
	}
	if table, ok := strings.CutPrefix(v, "schema:"); ok {
		if isTable(table) {
			return nil
		}
		return refuse("table must be lowercase [a-z0-9_]+", tableForm, p.suggest("db:schema:"+strings.ToLower(table)))
	}
	lv := strings.ToLower(v)
	if strings.ReplaceAll(lv, "_", "-") == "migration-slot" {
		return refuse("unknown db key", dbForm, "db:migration-slot")
	}
	if table, ok := strings.CutPrefix(lv, "schema:"); ok {
		return refuse("unknown db key", dbForm, p.suggest("db:schema:"+table))
	}
	return refuse("unknown db key", dbForm, "")
}

func isTable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// IsWord reports whether s matches [a-z0-9_-]+: a segment of an event or
// flag key, a task type.
func IsWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (p *parser) parseEvent(v string) *fail {
	ok := v != ""
	for _, seg := range strings.Split(v, ".") {
		ok = ok && IsWord(seg)
	}
	if ok {
		return nil
	}
	var segs []string
	for _, seg := range strings.Split(strings.ToLower(v), ".") {
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	return refuse("channel must be dot-separated lowercase segments of [a-z0-9_-]", eventForm, p.suggest("event:"+strings.Join(segs, ".")))
}

func (p *parser) parseFlag(v string) *fail {
	ok := v != ""
	for _, seg := range strings.Split(v, "/") {
		ok = ok && (IsWord(seg) || seg == "*" || seg == "**")
	}
	if ok {
		return nil
	}
	var segs []string
	for _, seg := range strings.Split(strings.ToLower(v), "/") {
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	if strings.HasSuffix(v, "/") && len(segs) > 0 {
		// flag:billing/ means the flags under billing.
		segs = append(segs, "*")
	}
	return refuse("flag namespace must be slash-delimited lowercase segments of [a-z0-9_-] or *", flagForm, p.suggest("flag:"+strings.Join(segs, "/")))
}

func parseEnv(v string) *fail {
	if v == "" {
		return refuse("empty env resource", envForm, "")
	}
	if isPortLike(v) {
		return refuse("env: keys are for shared non-port resources; allocate ports with `lockgate ports allocate`", envForm, "")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return refuse("env resource must match [A-Za-z0-9._/-]+", envForm, "")
		}
	}
	return nil
}

// PortNS is the namespace of port leases, `port:<N>`: only `lockgate
// ports allocate` hands them out, never a lock command.
const PortNS = "port"

// isPortLike reports env values that name a port rather than a resource:
// 8080, 8000-8010, 80,443, :8080, localhost:8080, port, ports, port:8080,
// port-8080, PORT_8080.
func isPortLike(v string) bool {
	lv := strings.ToLower(v)
	if lv == "port" || lv == "ports" {
		return true
	}
	if i := strings.LastIndexByte(lv, ':'); i >= 0 && isPortSpec(lv[i+1:]) {
		return true
	}
	for _, prefix := range []string{"ports", "port"} {
		if rest, ok := strings.CutPrefix(lv, prefix); ok {
			rest = strings.TrimLeft(rest, ":=_-./")
			if isPortSpec(rest) {
				return true
			}
		}
	}
	return isPortSpec(lv)
}

// isPortSpec matches \d+([-,]\d+)*.
func isPortSpec(s string) bool {
	if s == "" {
		return false
	}
	digit := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case (c == '-' || c == ',') && digit:
			digit = false
		default:
			return false
		}
	}
	return digit
}

func (p *parser) parseContract(v string) (string, *fail) {
	if v == "" {
		return "", refuse("empty contract path", contractForm, "")
	}
	canon, f := p.canonPath(v)
	if f != nil {
		exp := ""
		if f.expected != "" {
			exp = p.suggest("contract:" + f.expected)
		}
		return "", refuse(f.reason, contractForm, exp)

	}
	if hasMeta(canon) {
		return "", refuse("a contract key names one file, not a pattern", contractForm, "")
	}
	if !p.checkContracts {
		return canon, nil
	}
	for _, c := range p.contracts {
		c = strings.TrimSpace(c)
		cc, cf := p.canonPathQuiet(c)
		if cf == nil {
			c = cc
		}
		if c == canon || hasMeta(c) && MatchPath(c, canon) {
			return canon, nil
		}
	}
	if len(p.contracts) == 0 {
		return "", refuse(fmt.Sprintf("%s is not a contract: no contract files are configured (contracts.openapi.files)", canon), "", "")
	}
	list := p.contracts
	const maxListed = 10
	more := ""
	if len(list) > maxListed {
		list, more = list[:maxListed], ", …"
	}
	return "", refuse(fmt.Sprintf("%s is not listed in contracts.openapi.files or the generated artifacts", canon),
		"contract:<path> with <path> matching one of "+strings.Join(list, ", ")+more, "")
}

// canonPathQuiet canonicalizes a configured path without suggestions.
func (p *parser) canonPathQuiet(s string) (string, *fail) {
	p.depth++
	defer func() { p.depth-- }()
	return p.canonPath(s)
}

func (p *parser) parseFeature(v string) *fail {
	id, purpose, ok := strings.Cut(v, ":")
	if !ok {
		return refuse("missing purpose", featureForm, "")
	}
	if !validID(id) {
		return refuse("feature id must match [A-Za-z0-9][A-Za-z0-9._-]*", featureForm, "")
	}
	if contains(p.purposes, purpose) {
		return nil
	}
	known := "known purposes: " + strings.Join(p.purposes, ", ")
	if purpose == "" {
		return refuse("missing purpose ("+known+")", featureForm, "")
	}
	if lp := strings.ToLower(purpose); lp != purpose && contains(p.purposes, lp) {
		return refuse("purpose must be lowercase", featureForm, p.suggest("feature:"+id+":"+lp))
	}
	return refuse(fmt.Sprintf("unknown purpose %q (%s)", purpose, known), featureForm, "")
}

// validID matches [A-Za-z0-9][A-Za-z0-9._-]*: task, activity and feature ids.
func validID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// basenameProblem says why b is not a file basename, or "".
func basenameProblem(b string) string {
	switch {
	case b == "":
		return "empty basename"
	case strings.ContainsAny(b, `/\`):
		return "a basename has no / (use the last path element)"
	case b == "." || b == "..":
		return "a basename cannot be . or .."
	case strings.TrimSpace(b) != b:
		return "basename has leading or trailing whitespace"
	}
	return ""
}

// suggestBasename suggests prefix+base(b)+suffix when b is a path.
func (p *parser) suggestBasename(prefix, b, suffix string) string {
	b = strings.TrimSpace(strings.ReplaceAll(b, `\`, "/"))
	b = path.Base(strings.TrimRight(b, "/"))
	if basenameProblem(b) != "" {
		return ""
	}
	return p.suggest(prefix + b + suffix)
}

func (p *parser) parseFile(v string) *fail {
	i := strings.LastIndexByte(v, ':')
	if i < 0 {
		return refuse("missing hash", fileForm, "")
	}
	base, hash := v[:i], v[i+1:]
	if r := basenameProblem(base); r != "" {
		return refuse(r, fileForm, p.suggestBasename("file:", base, ":"+strings.ToLower(hash)))
	}
	if !isHex(hash) {
		exp := ""
		if lh := strings.ToLower(hash); isHex(lh) {
			exp = p.suggest("file:" + base + ":" + lh)
		}
		return refuse(fmt.Sprintf("hash must be lowercase hex of at most %d digits", maxHashLen), fileForm, exp)
	}
	return nil
}

func isHex(s string) bool {
	if s == "" || len(s) > maxHashLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (p *parser) parseBackfill(v string) *fail {
	if typ, ok := strings.CutPrefix(v, "type:"); ok {
		if IsWord(typ) {
			return nil
		}
		return refuse("backfill type must match [a-z0-9_-]+", backfillForm, p.suggest("backfill:type:"+strings.ToLower(typ)))
	}
	exp := ""
	if lv := strings.ToLower(v); IsWord(lv) {
		exp = p.suggest("backfill:type:" + lv)
	}
	return refuse("backfill keys name a task type", backfillForm, exp)
}

// MatchPath reports whether the doublestar pattern matches path. An invalid
// pattern matches nothing.
func MatchPath(pattern, path string) bool {
	ok, err := doublestar.Match(pattern, path)
	return err == nil && ok
}
