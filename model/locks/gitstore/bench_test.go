package gitstore

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkFreshClone measures the first read of a clone that never read
// the lock ref, after n changes made a table of one live lock: its time,
// the bytes its object database holds after it (what it fetched), the
// commits the remote's ref reaches and the remote's objects after
// `git gc --prune=now`. BENCHMARKS.md has the command and the numbers.
func BenchmarkFreshClone(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run("changes="+strconv.Itoa(n), func(b *testing.B) {
			url := bareRemote(b)
			churn(b, openClone(b, url, Options{}), n)
			commits, err := strconv.Atoi(git(b, url, "rev-list", "--count", DefaultRef))
			if err != nil {
				b.Fatal(err)
			}
			git(b, url, "gc", "-q", "--prune=now")
			remote := dirSize(b, filepath.Join(url, "objects"))
			var fetched int64
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				s := openClone(b, url, Options{})
				b.StartTimer()
				if _, err := s.List(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				fetched = dirSize(b, filepath.Join(s.opts.GitDir, "objects"))
				b.StartTimer()
			}
			b.ReportMetric(float64(fetched)/1024, "KiB-fetched")
			b.ReportMetric(float64(remote)/1024, "KiB-remote-after-gc")
			b.ReportMetric(float64(commits), "ref-commits")
		})
	}
}

// dirSize is the bytes of the files under dir.
func dirSize(tb testing.TB, dir string) int64 {
	tb.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("size of %s: %w", d.Name(), err)
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
