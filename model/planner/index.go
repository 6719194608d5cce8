package planner

import (
	"strings"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/pathmatch"
)

// owner is who holds a lock in the index: a task of the plan or a holder
// in the store.
type owner struct {
	held bool
	name string
}

func (o owner) String() string {
	if o.held {
		return "held by " + o.name
	}
	return "of ready task " + o.name
}

type entry struct {
	key string
	own owner
}

// level is a batch of path patterns with their compiled matcher.
type level struct {
	ents []entry
	m    *pathmatch.Matcher
}

// index holds the locks of ready tasks and held locks so that finding one
// overlapping a new key costs O(log P) matcher calls plus the few pattern
// keys, P being the number of path patterns, instead of a scan of every
// lock:
//
//   - exact keys (no glob) in a map;
//   - path patterns in levels of pathmatch matchers of sizes 1, 2, 4, ...
//     (two levels of equal size are merged, like a binary counter), so
//     adding a pattern costs amortized O(log P) compilation;
//   - namespaced patterns (flag:billing/*, api templates) and path
//     patterns pathmatch refuses in a list compared with lockkey.Overlap.
//
// A new pattern key is compared with lockkey.Overlap against the other
// patterns and against the exact keys that could match it: path keys under
// its literal directory prefix, or keys of its namespace. Those lists are
// built lazily, on the first pattern query, so plans without patterns never
// pay for them.
type index struct {
	exact    map[string]owner
	exactSeq []entry // exact keys in insertion order, for the lazy lists
	indexed  int     // exactSeq[:indexed] are in byDir/byNS
	byDir    map[string][]entry
	byNS     map[string][]entry
	levels   []level
	others   []entry // namespaced patterns and patterns pathmatch refuses
	pathPats []entry // all path patterns, for pattern-vs-pattern
	buf      []int
}

func newIndex() *index {
	return &index{exact: map[string]owner{}}
}

// add records key as held by o; the first owner of a key is kept.
func (x *index) add(key string, o owner) {
	if !lockkey.IsPattern(key) {
		if _, ok := x.exact[key]; !ok {
			x.exact[key] = o
			x.exactSeq = append(x.exactSeq, entry{key, o})
		}
		return
	}
	e := entry{key, o}
	if lockkey.Namespace(key) != "" {
		x.others = append(x.others, e)
		return
	}
	m, err := pathmatch.NewMatcher([]string{key}, false)
	if err != nil {
		x.others = append(x.others, e)
		return
	}
	x.pathPats = append(x.pathPats, e)
	x.levels = append(x.levels, level{ents: []entry{e}, m: m})
	for n := len(x.levels); n >= 2 && len(x.levels[n-1].ents) == len(x.levels[n-2].ents); n = len(x.levels) {
		ents := append(append([]entry(nil), x.levels[n-2].ents...), x.levels[n-1].ents...)
		pats := make([]string, len(ents))
		for i, e := range ents {
			pats[i] = e.key
		}
		m, err := pathmatch.NewMatcher(pats, false)
		if err != nil { // cannot happen: each pattern compiled alone
			panic(err)
		}
		x.levels = append(x.levels[:n-2], level{ents: ents, m: m})
	}
}

// find returns a recorded key overlapping key, and its owner.
func (x *index) find(key string) (string, owner, bool) {
	if o, ok := x.exact[key]; ok {
		return key, o, true
	}
	ns := lockkey.Namespace(key)
	if !lockkey.IsPattern(key) {
		if ns == "" {
			for _, lv := range x.levels {
				x.buf = lv.m.AppendMatches(x.buf[:0], key)
				if len(x.buf) > 0 {
					e := lv.ents[x.buf[0]]
					return e.key, e.own, true
				}
			}
		}
		return x.scan(x.others, key)
	}
	// A pattern: compare with the other patterns and the exact keys it may cover.
	if k, o, ok := x.scan(x.others, key); ok {
		return k, o, true
	}
	if ns == "" {
		if k, o, ok := x.scan(x.pathPats, key); ok {
			return k, o, true
		}
	}
	x.catchUp()
	if ns != "" {
		return x.scan(x.byNS[ns], key)
	}
	return x.scan(x.byDir[literalDir(key)], key)
}

func (x *index) scan(list []entry, key string) (string, owner, bool) {
	for _, e := range list {
		if lockkey.Overlap(e.key, key) {
			return e.key, e.own, true
		}
	}
	return "", owner{}, false
}

// catchUp files the exact keys added since the last pattern query under
// every directory that contains them ("" for all) or under their namespace.
func (x *index) catchUp() {
	if x.byDir == nil {
		x.byDir, x.byNS = map[string][]entry{}, map[string][]entry{}
	}
	for _, e := range x.exactSeq[x.indexed:] {
		if ns := lockkey.Namespace(e.key); ns != "" {
			x.byNS[ns] = append(x.byNS[ns], e)
			continue
		}
		x.byDir[""] = append(x.byDir[""], e)
		for i := 0; i < len(e.key); i++ {
			if e.key[i] == '/' {
				d := e.key[:i]
				x.byDir[d] = append(x.byDir[d], e)
			}
		}
	}
	x.indexed = len(x.exactSeq)
}

// literalDir is the longest directory prefix of pattern p without glob
// metacharacters ("" when its first segment has one): every path p matches
// lies under it.
func literalDir(p string) string {
	i := strings.IndexAny(p, "*?[{\\")
	if i < 0 {
		i = len(p)
	}
	j := strings.LastIndexByte(p[:i], '/')
	if j < 0 {
		return ""
	}
	return p[:j]
}
