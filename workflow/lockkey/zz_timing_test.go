package lockkey

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZTiming(t *testing.T) {
	dir := os.Getenv("LKDIR")
	if dir == "" {
		t.Skip()
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		lines := strings.Split(string(b), "\n")
		var args []string
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "string(") {
				s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(l, "string("), ")"))
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, s)
			}
		}
		start := time.Now()
		for _, opt := range fuzzOptions {
			for _, a := range args {
				Parse(a, opt)
			}
		}
		if len(args) >= 2 {
			Overlap(args[0], args[1])
		}
		if d := time.Since(start); d > 5*time.Millisecond {
			t.Logf("%v %s len=%d %.80q", d, filepath.Base(f), len(args[0]), args[0])
		}
	}
}
