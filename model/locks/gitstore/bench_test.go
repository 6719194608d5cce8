package gitstore

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/locktest"
)

// BenchmarkFreshClone measures the first read of a clone that never read
// the lock ref, after n changes made a table of one live lock: its time,
// the bytes its object database holds after it (what it fetched), the
// commits the remote's ref reaches and the remote's objects after
// `git gc --prune=now`. BENCHMARKS.md has the command and the numbers;
// it uses nothing but the store's API, so that the same file measures a
// release before this one as the baseline.
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

// churn makes n changes through s on top of one live lock: the live
// lock, then another key taken and given back, over and over. The table
// ends with the live lock alone.
func churn(t testing.TB, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("live.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < n; i += 2 {
		l, _, err := s.Acquire(ctx, locktest.NewLock("churn.go", "bob", now, time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		if i+1 < n {
			if err := s.Release(ctx, "churn.go", l.Token); err != nil {
				t.Fatal(err)
			}
		}
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
