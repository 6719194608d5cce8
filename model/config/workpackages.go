package config

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/lockgate/lockgate/model/locks"
)

// WorkPackages is a parsed work-packages.yaml.
type WorkPackages struct {
	Packages []WorkPackage `yaml:"packages"`
	// Path is the file the list was loaded from.
	Path string `yaml:"-"`

	byID map[string]int // id -> its package, for Find: a claim looks up thousands
}

// WorkPackage is one claimable unit of work and the locks it needs.
type WorkPackage struct {
	ID    string `yaml:"id"`
	Title string `yaml:"title"`
	// DependsOn are the ids of the packages that must be done before this
	// one is handed out.
	DependsOn []string `yaml:"depends_on"`
	// Priority orders the packages handed out: higher first, ties in file
	// order.
	Priority int          `yaml:"priority"`
	Locks    PackageLocks `yaml:"locks"`
	// Line is where the package's entry starts in Path.
	Line int `yaml:"-"`

	idLine                        int
	fileLines, keyLines, depLines []int
}

// PackageLocks are the locks a work package takes, all or nothing.
type PackageLocks struct {
	Files []string `yaml:"files"` // paths or doublestar patterns
	Keys  []string `yaml:"keys"`  // logical keys (api:, db:, …)
	// TTL, or TTLMinutes (the older spelling, in whole minutes), overrides
	// the default TTL; 0 means the default. At most one of them is set.
	// Read them through WorkPackage.TTL.
	TTL        Duration `yaml:"ttl"`
	TTLMinutes int      `yaml:"ttl_minutes"`
	Reason     string   `yaml:"reason"`
}

// maxTTLMinutes is the largest ttl_minutes a time.Duration holds.
const maxTTLMinutes = math.MaxInt64 / int64(time.Minute)

// TTL is the lifetime of the package's locks from locks.ttl or
// locks.ttl_minutes, or 0 when neither is set (the default applies).
func (p *WorkPackage) TTL() time.Duration {
	if p.Locks.TTL > 0 {
		return p.Locks.TTL.Std()
	}
	if p.Locks.TTLMinutes > 0 && int64(p.Locks.TTLMinutes) <= maxTTLMinutes {
		return time.Duration(p.Locks.TTLMinutes) * time.Minute
	}
	return 0
}

// LoadWorkPackages reads and checks a work-packages file. Problems in it
// (unknown keys, wrong types, empty or duplicate ids, a negative or double
// TTL, depends_on naming no package, the package itself or one package
// twice, dependency cycles) are reported as a *Error with their line; a
// missing file is an error wrapping fs.ErrNotExist.
func LoadWorkPackages(path string) (*WorkPackages, error) {
	data, err := readPolicy(path, MaxWorkPackagesBytes, "work packages")
	if err != nil {
		return nil, err
	}
	return LoadWorkPackagesBytes(path, data)
}

// LoadWorkPackagesBytes parses data as the work-packages file named name.
func LoadWorkPackagesBytes(name string, data []byte) (*WorkPackages, error) {
	if name == "" {
		name = "<input>"
	}
	if err := checkSize(name, data, MaxWorkPackagesBytes); err != nil {
		return nil, err
	}
	ps := &problems{file: name}
	w := &WorkPackages{Path: name}
	d := newDecoder(ps, maxWorkPackageNodes)
	if root := parseDocument(ps, data); root != nil {
		if list := packagesNode(root); list != nil && len(list.Content) > MaxWorkPackages {
			ps.add(list.Line, list.Column, "packages: %s packages, more than the %s lockgate reads", thousands(len(list.Content)), thousands(MaxWorkPackages))
			return nil, ps.err()
		}
		d.decode(root, reflect.ValueOf(w).Elem(), "")
	}
	vs := &problems{file: name}
	firstLine := map[string]int{}
	for i := range w.Packages {
		p := &w.Packages[i]
		at := fmt.Sprintf("packages[%d]", i)
		p.Line = d.pos[at]
		p.idLine = lineOr(d.pos[at+".id"], p.Line)
		p.fileLines = entryLines(d.pos, at+".locks.files", len(p.Locks.Files))
		p.keyLines = entryLines(d.pos, at+".locks.keys", len(p.Locks.Keys))
		switch {
		case strings.TrimSpace(p.ID) == "":
			vs.add(p.Line, 0, "%s: id must not be empty", at)
		case strings.ContainsFunc(p.ID, unicode.IsSpace):
			vs.add(lineOr(d.pos[at+".id"], p.Line), 0, "%s: id %s must not contain whitespace", at, quote(p.ID))
		default:
			if first, dup := firstLine[p.ID]; dup {
				vs.add(lineOr(d.pos[at+".id"], p.Line), 0, "duplicate package id %s (first defined at line %d)", quote(p.ID), first)
			} else {
				firstLine[p.ID] = lineOr(d.pos[at+".id"], p.Line)
			}
		}
		for j, f := range p.Locks.Files {
			if strings.TrimSpace(f) == "" {
				vs.add(lineOr(p.fileLines[j], p.Line), 0, "%s.locks.files[%d]: empty entry", at, j)
			}
		}
		for j, k := range p.Locks.Keys {
			if strings.TrimSpace(k) == "" {
				vs.add(lineOr(p.keyLines[j], p.Line), 0, "%s.locks.keys[%d]: empty entry", at, j)
			}
		}
		// The id names the task lock and the title or reason becomes the
		// locks' reason: both must fit a lock record.
		if len(p.ID) > locks.MaxTaskIDLen {
			vs.add(lineOr(d.pos[at+".id"], p.Line), 0, "%s: id longer than %d bytes", at, locks.MaxTaskIDLen)
		}
		if len(p.Locks.Reason) > locks.MaxReasonLen {
			vs.add(lineOr(d.pos[at+".locks.reason"], p.Line), 0, "%s.locks.reason: longer than %d bytes", at, locks.MaxReasonLen)
		}
		if len(p.Title) > locks.MaxReasonLen && p.Locks.Reason == "" {
			vs.add(lineOr(d.pos[at+".title"], p.Line), 0, "%s.title: longer than %d bytes (it is the locks' reason when locks.reason is empty)", at, locks.MaxReasonLen)
		}
		p.depLines = entryLines(d.pos, at+".depends_on", len(p.DependsOn))
		minutesAt, minutesSet := d.pos[at+".locks.ttl_minutes"]
		ttlAt, ttlSet := d.pos[at+".locks.ttl"]
		switch {
		case minutesSet && ttlSet:
			vs.add(lineOr(max(minutesAt, ttlAt), p.Line), 0, "package %s: locks.ttl and locks.ttl_minutes are both set: keep one", pkgName(i, p.ID))
		case p.Locks.TTLMinutes < 0:
			vs.add(lineOr(minutesAt, p.Line), 0, "package %s: locks.ttl_minutes must not be negative, got %d", pkgName(i, p.ID), p.Locks.TTLMinutes)
		case int64(p.Locks.TTLMinutes) > maxTTLMinutes:
			vs.add(lineOr(minutesAt, p.Line), 0, "package %s: locks.ttl_minutes must be at most %d, got %d", pkgName(i, p.ID), maxTTLMinutes, p.Locks.TTLMinutes)
		case p.Locks.TTL < 0:
			vs.add(lineOr(ttlAt, p.Line), 0, "package %s: locks.ttl must not be negative, got %s", pkgName(i, p.ID), p.Locks.TTL)
		}
	}
	checkDependencies(vs, w.Packages)
	ps.merge(vs)
	if err := ps.err(); err != nil {
		return nil, err
	}
	w.byID = make(map[string]int, len(w.Packages))
	for i := range w.Packages {
		w.byID[w.Packages[i].ID] = i // ids are unique: duplicates were refused
	}
	return w, nil
}

// packagesNode is the packages: list of a work packages document, or nil.
func packagesNode(root *yaml.Node) *yaml.Node {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "packages" && root.Content[i+1].Kind == yaml.SequenceNode {
			return root.Content[i+1]
		}
	}
	return nil
}

func entryLines(pos map[string]int, path string, n int) []int {
	if n == 0 {
		return nil // as the cache gives it back
	}
	lines := make([]int, n)
	for i := range lines {
		lines[i] = pos[fmt.Sprintf("%s[%d]", path, i)]
	}
	return lines
}

func lineOr(line, fallback int) int {
	if line > 0 {
		return line
	}
	return fallback
}

// Find returns the package with the given id.
func (w *WorkPackages) Find(id string) (*WorkPackage, bool) {
	if i, ok := w.byID[id]; ok && i < len(w.Packages) && w.Packages[i].ID == id {
		return &w.Packages[i], true
	}
	// A list not made by LoadWorkPackages has no index.
	for i := range w.Packages {
		if w.Packages[i].ID == id {
			return &w.Packages[i], true
		}
	}
	return nil, false
}

// ClaimOrder returns the packages in the order they are handed out:
// higher priority first, and in file order among equal priorities.
func (w *WorkPackages) ClaimOrder() []*WorkPackage {
	out := make([]*WorkPackage, len(w.Packages))
	for i := range w.Packages {
		out[i] = &w.Packages[i]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority > out[j].Priority })
	return out
}

// Validate runs checkID (the caller's check that an id names a task lock;
// nil for none) on every package id and check (the caller's lock-key
// validator) on every file and key of every package, and reports each
// failure with the line of its entry as a *Error; nil when all pass.
func (w *WorkPackages) Validate(checkID, check func(key string) error) error {
	name := w.Path
	if name == "" {
		name = "<input>"
	}
	ps := &problems{file: name}
	for i := range w.Packages {
		p := &w.Packages[i]
		if checkID != nil {
			if err := checkID(p.ID); err != nil {
				ps.add(lineOr(p.idLine, p.Line), 0, "package id %s: %v", quote(p.ID), err)
			}
		}
		for j, f := range p.Locks.Files {
			if err := check(f); err != nil {
				ps.add(lineAt(p.fileLines, j, p.Line), 0, "package %s: locks.files[%d]: %v", p.ID, j, err)
			}
		}
		for j, k := range p.Locks.Keys {
			if err := check(k); err != nil {
				ps.add(lineAt(p.keyLines, j, p.Line), 0, "package %s: locks.keys[%d]: %v", p.ID, j, err)
			}
		}
	}
	return ps.err()
}

func lineAt(lines []int, i, fallback int) int {
	if i < len(lines) && lines[i] > 0 {
		return lines[i]
	}
	return fallback
}

// pkgName names package i in a message: its id, quoted when it needs
// escaping or is long, or its position when it has none.
func pkgName(i int, id string) string {
	if strings.TrimSpace(id) == "" {
		return fmt.Sprintf("packages[%d]", i)
	}
	if q := quote(id); q != `"`+id+`"` {
		return q
	}
	return id
}

// maxCycleShown bounds the packages a cycle's message lists.
const maxCycleShown = 10

// checkDependencies reports depends_on entries that are empty, name the
// package itself, repeat an earlier entry or name no package, and every
// dependency cycle: a package on a cycle could never be handed out. Each
// cycle is reported once, at the entry of its first package in file order
// that leads into it.
func checkDependencies(vs *problems, pkgs []WorkPackage) {
	index := make(map[string]int, len(pkgs)) // id -> its first package
	for i := range pkgs {
		if _, dup := index[pkgs[i].ID]; !dup && strings.TrimSpace(pkgs[i].ID) != "" {
			index[pkgs[i].ID] = i
		}
	}
	type edge struct{ to, line int }
	edges := make([][]edge, len(pkgs))
	for i := range pkgs {
		p := &pkgs[i]
		first := map[string]int{} // entry -> its first line
		for j, dep := range p.DependsOn {
			line := lineAt(p.depLines, j, p.Line)
			at := fmt.Sprintf("package %s: depends_on[%d]", pkgName(i, p.ID), j)
			firstLine, dup := first[dep]
			if !dup {
				first[dep] = line
			}
			to, known := index[dep]
			switch {
			case strings.TrimSpace(dep) == "":
				vs.add(line, 0, "%s: empty entry", at)
			case dep == p.ID:
				vs.add(line, 0, "%s: a package cannot depend on itself", at)
			case dup:
				vs.add(line, 0, "%s: %s listed twice (first at line %d)", at, quote(dep), firstLine)
			case !known:
				vs.add(line, 0, "%s: no package %s in the file", at, quote(dep))
			default:
				edges[i] = append(edges[i], edge{to, line})
			}
		}
	}
	adj := make([][]int, len(pkgs))
	for i, es := range edges {
		for _, e := range es {
			adj[i] = append(adj[i], e.to)
		}
	}
	for _, scc := range cycles(adj) {
		start := scc[0]
		path := shortestCycle(adj, start, scc)
		names := make([]string, 0, min(len(path), maxCycleShown)+2)
		for k, v := range path {
			if k == maxCycleShown-1 && len(path) > maxCycleShown {
				names = append(names, fmt.Sprintf("… (%d packages in all)", len(path)))
				break
			}
			names = append(names, pkgName(v, pkgs[v].ID))
		}
		names = append(names, pkgName(start, pkgs[start].ID))
		line := pkgs[start].Line
		for _, e := range edges[start] {
			if e.to == path[1] {
				line = e.line
				break
			}
		}
		vs.add(line, 0, "package %s: depends_on: dependency cycle %s", pkgName(start, pkgs[start].ID), strings.Join(names, " → "))
	}
}

// cycles returns the strongly connected components of the graph adj that
// hold more than one node, each sorted, in the order of their first node.
// It is Tarjan's algorithm without recursion: a file may chain thousands
// of packages.
func cycles(adj [][]int) [][]int {
	n := len(adj)
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var out [][]int
	var members []int
	next := 0
	type frame struct{ v, e int }
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		calls := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		members = append(members, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if f.e < len(adj[f.v]) {
				w := adj[f.v][f.e]
				f.e++
				switch {
				case index[w] < 0:
					index[w], low[w] = next, next
					next++
					members = append(members, w)
					onStack[w] = true
					calls = append(calls, frame{w, 0})
				case onStack[w]:
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			k := len(members) - 1
			for members[k] != v {
				k--
			}
			scc := append([]int(nil), members[k:]...)
			members = members[:k]
			for _, w := range scc {
				onStack[w] = false
			}
			if len(scc) > 1 {
				sort.Ints(scc)
				out = append(out, scc)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// shortestCycle returns a shortest cycle through start inside the strongly
// connected component scc, as the nodes from start on (start not
// repeated at the end).
func shortestCycle(adj [][]int, start int, scc []int) []int {
	in := make(map[int]bool, len(scc))
	for _, v := range scc {
		in[v] = true
	}
	prev := map[int]int{start: -1}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range adj[v] {
			if w == start {
				var path []int
				for u := v; u != -1; u = prev[u] {
					path = append(path, u)
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			if _, seen := prev[w]; !seen && in[w] {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []int{start} // unreachable: start is on a cycle of scc
}
