package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/browsertest"
	"github.com/lockgate/lockgate/internal/gittest"
)

// boardBench is a repository served by `lockgate serve --public-read`,
// whose web board is watched while locks are taken with the CLI.
type boardBench struct {
	b    *testing.B
	bin  string
	repo *gittest.Repo
	addr string
}

func newBoardBench(b *testing.B) *boardBench {
	bb := &boardBench{b: b, bin: lockgateBinary(b), repo: gittest.New(b)}
	bb.repo.Write("src/a.go", "package a\n")
	bb.lockgate("admin", "init")
	bb.repo.Git("add", "-A")
	bb.repo.Git("commit", "-qm", "init")
	env := append(append([]string(nil), bb.repo.Env...), "LOCKGATE_WORKER=server")
	bb.addr, _ = startServeIn(b, bb.bin, bb.repo.Dir, env, "--public-read")
	return bb
}

// lockgate runs lockgate in the repository as worker; a failure fails
// the benchmark.
func (bb *boardBench) lockgate(worker string, args ...string) {
	cmd := exec.Command(bb.bin, args...)
	cmd.Dir = bb.repo.Dir
	cmd.Env = append(append([]string(nil), bb.repo.Env...), "LOCKGATE_WORKER="+worker)
	if out, err := cmd.CombinedOutput(); err != nil {
		bb.b.Fatalf("lockgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// change takes a lock on key with the CLI and returns when the command
// started and how long it ran.
func (bb *boardBench) change(key string) (time.Time, time.Duration) {
	start := time.Now()
	bb.lockgate("bench", "lock", "acquire", key, "--reason", "board bench")
	return start, time.Since(start)
}

// boardFrameEvery is the longest the web board's stream goes without a
// frame (webboard's streamEvery); a change is sent sooner.
const boardFrameEvery = 2 * time.Second

// settle waits a random part of a frame interval before a change, so
// that changes fall at every phase of the streams' frames, as a lock
// taken by someone unaware of the pages does.
func settle() { time.Sleep(rand.N(boardFrameEvery)) }

// streamRound is one lock change the stream clients wait to see.
type streamRound struct {
	want string // the key, quoted as the JSON of a frame holds it
	seen []time.Time
	left int
	done chan struct{}
}

// streamWatch is clients open streams of the board, as many open pages'
// EventSource (/board/stream) are: each reads the "board" events and
// notes when a frame first holds the round's key.
type streamWatch struct {
	mu    sync.Mutex
	round *streamRound
}

// watch opens the streams and returns once each has had its first frame;
// stop closes them and returns once their readers are done.
func (w *streamWatch) watch(b *testing.B, url string, clients int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	var ready sync.WaitGroup
	ready.Add(clients)
	// Every stream on its own connection, as separate pages are.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
	for i := range clients {
		running.Go(func() {
			// Pages are opened at different times: each stream's frames
			// come at a phase of their own in the 2 s between frames.
			time.Sleep(time.Duration(i) * boardFrameEvery / time.Duration(clients))
			first := true
			defer func() {
				if first {
					ready.Done()
				}
			}()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				b.Error(err)
				return
			}
			res, err := client.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					b.Error(err)
				}
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("GET %s: %s", url, res.Status)
				return
			}
			lines := bufio.NewReaderSize(res.Body, 64<<10)
			for {
				line, err := lines.ReadString('\n')
				if err != nil {
					if ctx.Err() == nil {
						b.Errorf("stream %d ended: %v", i, err)
					}
					return
				}
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				at := time.Now()
				if first {
					first = false
					ready.Done()
				}
				w.mu.Lock()
				r := w.round
				if r != nil && r.seen[i].IsZero() && strings.Contains(data, r.want) {
					r.seen[i] = at
					r.left--
					if r.left == 0 {
						close(r.done)
					}
				}
				w.mu.Unlock()
			}
		})
	}
	ready.Wait()
	return func() {
		cancel()
		running.Wait()
	}
}

// BenchmarkServeBoardStream: clients open streams of the web board
// (/board/stream, what each open page subscribes to), a lock is taken
// with `lockgate lock acquire`, and each client's time from the command's
// start until a frame of its stream holds the lock is measured. A lone
// stream is the baseline of 100. Metrics: p50, p99 and max in ms over
// every client's sighting, the share seen within 1 s and the command's own
// time.
func BenchmarkServeBoardStream(b *testing.B) {
	for _, clients := range []int{1, 100} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			bb := newBoardBench(b)
			w := &streamWatch{}
			stop := w.watch(b, "http://"+bb.addr+"/board/stream", clients)
			defer stop()
			if b.Failed() {
				b.FailNow()
			}
			var lat []time.Duration
			var cli time.Duration
			b.ResetTimer()
			for i := range b.N {
				key := fmt.Sprintf("board/k%04d.go", i)
				r := &streamRound{want: strconv.Quote(key), seen: make([]time.Time, clients), left: clients, done: make(chan struct{})}
				w.mu.Lock()
				w.round = r
				w.mu.Unlock()
				b.StopTimer()
				settle()
				b.StartTimer()
				start, took := bb.change(key)
				cli += took
				select {
				case <-r.done:
				case <-time.After(60 * time.Second):
					b.Fatalf("round %d: %d of %d streams never showed %s", i, r.left, clients, key)
				}
				w.mu.Lock()
				w.round = nil
				w.mu.Unlock()
				for _, at := range r.seen {
					lat = append(lat, at.Sub(start))
				}
				bb.lockgate("bench", "lock", "release", key)
			}
			b.StopTimer()
			reportLatencies(b, lat)
			b.ReportMetric(float64(cli.Microseconds())/float64(b.N)/1000, "acquire-ms")
		})
	}
}

// BenchmarkServeBoardPages: a few real pages of the web board in headless
// chromium, each noting (in the page) when a row of the lock table first
// shows the key of a lock taken with `lockgate lock acquire`; the time is
// from the command's start, as BenchmarkServeBoardStream measures it.
func BenchmarkServeBoardPages(b *testing.B) {
	const pages = 3
	bb := newBoardBench(b)
	var ps []*browsertest.Page
	for range pages {
		p := browsertest.Open(b, "http://"+bb.addr+"/", browsertest.Options{Timeout: 60 * time.Second})
		p.WaitFor(`document.getElementById("status").textContent === "live"`)
		p.Eval(`window.want = ""; window.seenAt = 0;
			new MutationObserver(() => {
				if (window.seenAt || !window.want) return;
				if ([...document.querySelectorAll("#locks td.key")].some(td => td.textContent === window.want))
					window.seenAt = performance.timeOrigin + performance.now();
			}).observe(document.body, { subtree: true, childList: true, characterData: true });`)
		ps = append(ps, p)
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		key := fmt.Sprintf("board/p%04d.go", i)
		for _, p := range ps {
			p.Eval(fmt.Sprintf("window.seenAt = 0; window.want = %s;", strconv.Quote(key)))
		}
		b.StopTimer()
		settle()
		b.StartTimer()
		start, _ := bb.change(key)
		for _, p := range ps {
			p.WaitFor(`window.seenAt > 0`)
			var ms float64
			if err := json.Unmarshal(p.Eval(`window.seenAt`), &ms); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.UnixMicro(int64(ms*1000)).Sub(start))
		}
		bb.lockgate("bench", "lock", "release", key)
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

// reportLatencies reports p50, p99 and max of lat in ms, and the share
// (in %) no later than 1 s.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	within := 0
	for _, d := range lat {
		if d <= time.Second {
			within++
		}
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(100*float64(within)/float64(len(lat)), "within-1s-%")
}
