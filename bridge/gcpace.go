package bridge

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// goHeapMinimum is the Go runtime's smallest heap goal at GOGC=100.
const goHeapMinimum = 4 << 20

// startGCPacer lets the heap grow to the live heap plus minHeap before the
// garbage collector runs, as long as the live heap is smaller than minHeap;
// above that it is plain GOGC=100 (collect at twice the live heap). The heap
// goal is therefore live + max(live, minHeap), within DESIGN.md's budget of
// twice the state plus 64 MiB, and a process whose state is small collects
// several times less often: with the default 32 MiB and a pass-through
// agent, the Go CPU per row fell by about 9 % (docs/design-decisions.md).
//
// It polls the live heap every interval and sets GOGC (debug.SetGCPercent)
// from it; go.memory.limit (GOMEMLIMIT) still bounds the heap whatever GOGC
// says. The returned function stops it and restores the GOGC it found.
func startGCPacer(minHeap int64, interval time.Duration, lg *slog.Logger) (stop func()) {
	if minHeap <= 0 {
		return func() {}
	}
	prev := debug.SetGCPercent(100)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		// GOGC scales the live heap plus the GC roots (goroutine stacks and
		// globals), so the roots count as live here.
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
		set := 100
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			metrics.Read(sample)
			var live int64
			ok := true
			for _, v := range sample {
				if v.Value.Kind() != metrics.KindUint64 {
					ok = false
					break
				}
				live += int64(v.Value.Uint64())
			}
			if ok {
				if pct := gcPercentFor(live, minHeap); pct != set {
					debug.SetGCPercent(pct)
					set = pct
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	lg.Info("GC pacing: the heap may grow by the live heap or by go.gc.min.heap, whichever is more", "min_heap_bytes", minHeap)
	return func() {
		close(done)
		<-finished
		debug.SetGCPercent(prev)
	}
}

// gcPercentFor is the GOGC that puts the heap goal at live + max(live,
// minHeap): 100 for a live heap of minHeap or more, more below, rounded
// down to a multiple of 25 % (so that small changes of the live heap do
// not reset GOGC all the time) and at most 10000.
//
// live counts at least 4 MiB: Go's smallest heap goal is 4 MiB scaled by
// GOGC/100, so a smaller live heap must not raise GOGC further (with
// GOGC=6400 that minimum alone would be 256 MiB).
func gcPercentFor(live, minHeap int64) int {
	live = max(live, goHeapMinimum)
	if live >= minHeap {
		return 100
	}
	pct := int(100 * minHeap / live)
	pct -= pct % 25
	return min(max(pct, 100), 10000)
}
