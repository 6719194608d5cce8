package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The README is what a newcomer reads first: it stays short, and the
// manual lives in docs/.
const readmeLimit = 12 * 1024

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdFence   = regexp.MustCompile("(?s)```.*?```")
	mdHeading = regexp.MustCompile(`^#{1,6} (.*)`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	urlScheme = regexp.MustCompile(`^[a-z]+:`)
)

// TestDocsLinksResolve: every relative link in README.md and docs/*.md
// names a file that exists and, with a #fragment, a heading of it (the
// anchors GitHub makes: lower case, punctuation dropped, spaces to
// dashes, -1, -2 … for repeats).
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	if len(files) < 5 {
		t.Fatalf("found %d markdown files; the glob missed docs/", len(files))
	}
	links := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := mdFence.ReplaceAllString(string(data), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if urlScheme.MatchString(target) {
				continue // a URL or mailto:
			}
			links++
			p, frag, _ := strings.Cut(target, "#")
			dest := f
			if p != "" {
				dest = filepath.Join(filepath.Dir(f), p)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %s: no such file", filepath.Base(f), target)
				continue
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(t, dest)[frag] {
				t.Errorf("%s: link %s: no heading with that anchor in %s", filepath.Base(f), target, filepath.Base(dest))
			}
		}
	}
	if links < 20 {
		t.Fatalf("checked %d links; the pattern missed them", links)
	}
}

// anchorsOf lists the heading anchors of a markdown file.
func anchorsOf(t *testing.T, path string) map[string]bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, seen := map[string]bool{}, map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode {
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestReadmeShort: the README stays a page a newcomer reads in minutes.
func TestReadmeShort(t *testing.T) {
	t.Parallel()
	fi, err := os.Stat(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > readmeLimit {
		t.Fatalf("README.md is %d bytes, over %d: move the manual part to docs/", fi.Size(), readmeLimit)
	}
}
