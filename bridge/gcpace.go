package bridge

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcPacer lets the heap grow to the live heap plus minHeap before the
// garbage collector runs, as long as the live heap is smaller than minHeap;
// above that it is plain GOGC=100 (collect at twice the live heap). The heap
// goal is therefore live + max(live, minHeap), within DESIGN.md's budget of
// twice the state plus 64 MiB, and a process whose state is small collects
// several times less often: with the default 64 MiB and a pass-through
// agent, the Go CPU per row fell by about 15 % (docs/design-decisions.md).
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
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		set := 100
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				if pct := gcPercentFor(int64(sample[0].Value.Uint64()), minHeap); pct != set {
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
func gcPercentFor(live, minHeap int64) int {
	live = max(live, 1<<20) // a process just started has almost nothing live
	if live >= minHeap {
		return 100
	}
	pct := int(100 * minHeap / live)
	pct -= pct % 25
	return min(max(pct, 100), 10000)
}
