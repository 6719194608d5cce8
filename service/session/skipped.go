package session

import (
	"fmt"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// maxSkipWarnings bounds the journal lines named one by one in warnings.
const maxSkipWarnings = 5

// warnSkipped says which lines of the journal at path were skipped because
// they are not events: the first few by number, then how many more.
func (e *Workspace) warnSkipped(path string, lines []int) {
	for _, line := range lines[:min(len(lines), maxSkipWarnings)] {
		e.Warn("warning", fmt.Sprintf("%s:%d is not an event; skipped", path, line))
	}
	if more := len(lines) - maxSkipWarnings; more > 0 {
		e.Warn("warning", fmt.Sprintf("%s: … and %d more lines that are not events; skipped", path, more))
	}
}

// WarnSkippedLines is warnSkipped for the lines bad names, segment by
// segment of the journal.
func (e *Workspace) WarnSkippedLines(bad []*journal.CorruptLineError) {
	var paths []string
	lines := map[string][]int{}
	for _, ce := range bad {
		if _, ok := lines[ce.Path]; !ok {
			paths = append(paths, ce.Path)
		}
		lines[ce.Path] = append(lines[ce.Path], ce.Line)
	}
	for _, p := range paths {
		e.warnSkipped(p, lines[p])
	}
}
