package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/pathmatch"
)

// FileKey returns the file:<name>:<hash> key of a canonical path or path
// pattern: hash is the first 12 hex digits of the SHA-256 of p, and name
// is the basename of a path or, for a pattern, its last path element
// without glob metacharacters (see keyName).
func FileKey(p string) string {
	return "file:" + keyName(p) + ":" + shortHash(p)
}

// pairKey returns the file: key two different overlapping patterns a and b
// share: file:<name>:<hash>, hash being the first 12 hex digits of the
// SHA-256 of the two patterns, sorted, joined by a NUL byte, and name the
// keyName of the narrower pattern (the one with the longer literal
// prefix; of two equally long, the smaller). It does not depend on the
// order of a and b.
func pairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	named := a
	if literalLen(b) > literalLen(a) {
		named = b
	}
	return "file:" + keyName(named) + ":" + shortHash(a+"\x00"+b)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// keyName names a file: key after p: its last path element without glob
// metacharacters, searched from the end (src/x/util.py → util.py,
// src/**/api.py → api.py, gen/t5/** → t5, src/*/*.py → src), or "glob"
// when every element has one (**/*.py). A name with metacharacters would
// make the key itself a pattern.
func keyName(p string) string {
	for p != "" {
		i := strings.LastIndexByte(p, '/')
		el := p[i+1:]
		if !strings.ContainsAny(el, "*?[{") {
			return el
		}
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return "glob"
}

// literalLen is the length of p before its first glob metacharacter.
func literalLen(p string) int {
	if i := strings.IndexAny(p, "*?[{"); i >= 0 {
		return i
	}
	return len(p)
}

// injectShared appends file: keys to the Injected keys of the schedulable
// tasks (empty Status) of plans, which parallels tasks:
//
//   - FileKey(p) for a file p that two or more of them touch, whether they
//     list p itself or a pattern matching it (doublestar semantics);
//   - FileKey(q) for a pattern q that two or more of them list;
//   - pairKey(q, r) for two different patterns q and r, listed by two or
//     more of them, that may overlap (lockkey.Overlap, conservative).
//
// Two tasks that may touch a common file thus always share a key, and
// tasks that cannot (src/a.py and src/b.py, both under another task's
// src/**) do not. Files are matched against all patterns at once with
// one pathmatch.Matcher; a pattern is compared only with the patterns
// whose literal directory contains its own or lies inside it, since the
// files two patterns may both match lie under both literal directories,
// and only when one's literal tail ends the other's (see literalTail).
func injectShared(tasks []Task, plans []TaskPlan) error {
	files, pats, patTasks := indexTouched(tasks, plans)
	var m *pathmatch.Matcher
	if len(pats) > 0 {
		var err error
		if m, err = pathmatch.NewMatcher(pats, false); err != nil {
			return fmt.Errorf("touched_paths: %w", err)
		}
	}
	s := &sharers{seen: make([]int, len(tasks))}
	give := func(key func() string) {
		if len(s.list) < 2 {
			return
		}
		k := key()
		for _, i := range s.list {
			plans[i].Injected = append(plans[i].Injected, k)
		}
	}
	var matches []int
	for p, tl := range files {
		if m != nil {
			matches = m.AppendMatches(matches[:0], p)
		}
		if len(tl.more) == 0 && len(matches) == 0 {
			continue
		}
		s.reset()
		s.add([]int32{tl.first})
		s.add(tl.more)
		for _, j := range matches {
			s.add(patTasks[j])
		}
		give(func() string { return FileKey(p) })
	}
	sharePatterns(pats, patTasks, s, give)
	return nil
}

// indexTouched indexes the touched paths of the schedulable tasks: the
// tasks listing each file, and the distinct patterns in first-seen order
// with the tasks listing each, all ascending.
func indexTouched(tasks []Task, plans []TaskPlan) (files map[string]taskList, pats []string, patTasks [][]int32) {
	n := 0
	for _, t := range tasks {
		n += len(t.TouchedPaths)
	}
	files = make(map[string]taskList, n)
	patIdx := map[string]int{} // pattern -> index in pats
	for i, t := range tasks {
		if plans[i].Status != "" {
			continue
		}
		for _, p := range uniq(t.TouchedPaths) {
			if !lockkey.IsPattern(p) {
				tl, ok := files[p]
				if !ok {
					files[p] = taskList{first: int32(i)}
				} else {
					tl.more = append(tl.more, int32(i))
					files[p] = tl
				}
				continue
			}
			j, ok := patIdx[p]
			if !ok {
				j = len(pats)
				patIdx[p] = j
				pats = append(pats, p)
				patTasks = append(patTasks, nil)
			}
			patTasks[j] = append(patTasks[j], int32(i))
		}
	}
	return files, pats, patTasks
}

// sharePatterns gives a file: key to the tasks listing one pattern, and
// to the tasks of two patterns that may overlap; give hands the key to the
// tasks s holds when they are two or more.
func sharePatterns(pats []string, patTasks [][]int32, s *sharers, give func(key func() string)) {
	at := map[string][]int{}    // literal directory -> patterns with exactly it
	under := map[string][]int{} // directory -> patterns whose literal directory is it or below it
	dirs := make([]string, len(pats))
	tails := make([]string, len(pats))
	for j, q := range pats {
		d := literalDir(q)
		dirs[j] = d
		tails[j] = literalTail(q)
		at[d] = append(at[d], j)
		under[d] = append(under[d], j)
		forAncestors(d, func(a string) { under[a] = append(under[a], j) })
	}
	for j, q := range pats {
		s.reset()
		s.add(patTasks[j])
		give(func() string { return FileKey(q) })
		pair := func(k int) {
			tj, tk := tails[j], tails[k]
			if k <= j || !strings.HasSuffix(tj, tk) && !strings.HasSuffix(tk, tj) || !lockkey.Overlap(q, pats[k]) {
				return
			}
			s.reset()
			s.add(patTasks[j])
			s.add(patTasks[k])
			give(func() string { return pairKey(q, pats[k]) })
		}
		for _, k := range under[dirs[j]] {
			pair(k)
		}
		forAncestors(dirs[j], func(a string) {
			for _, k := range at[a] {
				pair(k)
			}
		})
	}
}

// literalTail returns a suffix of pattern p that ends every path p
// matches: the text after its last glob metacharacter, without a leading
// '/' (a ** before it may match nothing). Two patterns whose tails are not
// suffixes one of the other match no common path.
func literalTail(p string) string {
	t := p[strings.LastIndexAny(p, "*?[]{},\\")+1:]
	return strings.TrimPrefix(t, "/")
}

// forAncestors calls fn with every directory strictly containing d: ""
// (the root) and each proper prefix of d that ends before a '/'. It calls
// nothing for d == "".
func forAncestors(d string, fn func(string)) {
	if d == "" {
		return
	}
	fn("")
	for i := 0; i < len(d); i++ {
		if d[i] == '/' {
			fn(d[:i])
		}
	}
}

// taskList holds the tasks listing one file: nearly every file has one.
type taskList struct {
	first int32
	more  []int32
}

// sharers collects distinct task indices; seen holds, per task, the
// generation it was last added in.
type sharers struct {
	seen []int
	gen  int
	list []int32
}

func (s *sharers) reset() {
	s.gen++
	s.list = s.list[:0]
}

func (s *sharers) add(ts []int32) {
	for _, i := range ts {
		if s.seen[i] != s.gen {
			s.seen[i] = s.gen
			s.list = append(s.list, i)
		}
	}
}
