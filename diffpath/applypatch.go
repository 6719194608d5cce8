package diffpath

import (
	"bufio"
	"fmt"
	"strings"
)

// ParseApplyPatch reads the patch format of Codex's apply_patch tool (also
// opencode's and Cline's apply_patch):
//
//	*** Begin Patch
//	*** Add File: PATH        followed by "+" lines
//	*** Delete File: PATH
//	*** Update File: PATH
//	*** Move to: NEWPATH      (optional, right after Update File)
//	@@ …                      hunks of " ", "-", "+" lines, "*** End of File"
//	*** End Patch
//
// Header lines are trimmed before they are matched, and a heredoc around
// the patch (`<<EOF` … `EOF`, as a shell would feed it) is removed, as
// Codex's own parser does. A move is an 'R' Change with both paths.
//
// Unlike the git formats, the paths are file system paths as the agent
// wrote them — relative to its working directory, or absolute — and are
// returned as written (trimmed), for the caller to resolve; an empty path
// or one holding a NUL byte is a *PathError. A patch without "*** Begin
// Patch" and "*** End Patch", a file section that is not one of the four
// headers, or no file section at all is a *SyntaxError: a caller must not
// take "not a patch" for "changes nothing".
func ParseApplyPatch(text string) ([]Change, error) {
	lines := applyPatchLines(text)
	if len(lines) > 0 {
		if first := strings.TrimSpace(lines[0]); strings.HasPrefix(first, "<<") && len(lines) >= 2 {
			lines = lines[1 : len(lines)-1] // the heredoc's last line ends it
		}
	}
	syntax := func(n int, format string, a ...any) error {
		return &SyntaxError{Format: "apply_patch", Pos: n, Msg: fmt.Sprintf(format, a...)}
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "*** Begin Patch" {
		return nil, syntax(1, "want *** Begin Patch")
	}
	var changes []Change
	end := false
	for i := 1; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		n := i + 1
		if end {
			if line != "" {
				return nil, syntax(n, "text after *** End Patch")
			}
			continue
		}
		header := func(prefix string) (string, bool, error) {
			p, ok := strings.CutPrefix(line, prefix)
			if !ok {
				return "", false, nil
			}
			p = strings.TrimSpace(p)
			if p == "" || strings.IndexByte(p, 0) >= 0 {
				return "", true, fmt.Errorf("diffpath: apply_patch: line %d: %w", n, &PathError{Path: p, Reason: "empty or holds a NUL byte"})
			}
			return p, true, nil
		}
		if line == "*** End Patch" {
			end = true
			continue
		}
		for _, h := range []struct {
			prefix string
			status byte
		}{{"*** Add File:", 'A'}, {"*** Delete File:", 'D'}, {"*** Update File:", 'M'}} {
			p, ok, err := header(h.prefix)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			c := Change{Status: h.status, Path: p}
			if h.status == 'M' && i+1 < len(lines) {
				next := strings.TrimSpace(lines[i+1])
				if strings.HasPrefix(next, "*** Move to:") {
					line, n = next, i+2
					to, _, err := header("*** Move to:")
					if err != nil {
						return nil, err
					}
					c = Change{Status: 'R', Path: to, OldPath: p}
					i++
				}
			}
			changes = append(changes, c)
			line = ""
			break
		}
		switch {
		case line == "":
		case strings.HasPrefix(line, "*** Move to:"):
			return nil, syntax(n, "*** Move to: must follow *** Update File:")
		case strings.HasPrefix(line, "***") && line != "*** End of File":
			return nil, syntax(n, "unknown header %q", shortLine(line))
		case len(changes) == 0:
			return nil, syntax(n, "a line before the first file section")
		}
	}
	if !end {
		return nil, syntax(len(lines), "want *** End Patch (the patch is truncated)")
	}
	if len(changes) == 0 {
		return nil, syntax(1, "no file section")
	}
	return changes, nil
}

// applyPatchLines splits text into lines, without their ends.
func applyPatchLines(text string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), len(text)+1)
	for sc.Scan() {
		lines = append(lines, strings.TrimSuffix(sc.Text(), "\r"))
	}
	return lines
}

func shortLine(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
