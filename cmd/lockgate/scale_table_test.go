package main

import "testing"

// TestScaleTable holds the scale benchmark's table to what BENCHMARKS.md
// pastes: a column per size, each later size with its ratio to the first,
// no ratio for rows that are not compared (the seeding's time) and a dash
// where a figure is missing.
func TestScaleTable(t *testing.T) {
	tab := &scaleTable{sizes: []int{1000, 10000, 100000}}
	tab.put("seeding", "git", "s", false, 1000, 1.5)
	tab.put("seeding", "git", "s", false, 100000, 90)
	tab.put("`lock acquire`", "file", "ms", true, 1000, 10)
	tab.put("`lock acquire`", "file", "ms", true, 10000, 11)
	tab.put("`lock acquire`", "file", "ms", true, 100000, 250)
	tab.put("bytes", "git", "B", true, 1000, 2048)
	tab.put("bytes", "git", "B", true, 10000, 3<<20)
	tab.note("git, 10^3 ops: a note.")
	want := "| what | store | 10^3 ops | 10^4 ops | × 10^3 ops | 10^5 ops | × 10^3 ops |\n" +
		"|---|---|---:|---:|---:|---:|---:|\n" +
		"| seeding | git | 1.5 s | — | | 90.0 s | |\n" +
		"| `lock acquire` | file | 10.0 ms | 11.0 ms | 1.10× | 250 ms | 25.00× |\n" +
		"| bytes | git | 2.0 KiB | 3.0 MiB | 1536.00× | — | |\n" +
		"\n- git, 10^3 ops: a note.\n"
	if got := tab.markdown(); got != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, want)
	}
	for n, want := range map[int]string{1000: "10^3 ops", 100000: "10^5 ops", 1500: "1500 ops", 200: "200 ops"} {
		if got := sizeName(n); got != want {
			t.Errorf("sizeName(%d) = %q, want %q", n, got, want)
		}
	}
}
