package bridge

import (
	"io"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// gogc reads the current GOGC without changing it.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func TestGCPercentFor(t *testing.T) {
	const m = 64 << 20
	for _, c := range []struct {
		live int64
		want int
	}{
		{0, 1600},         // below 4 MiB counts as 4 MiB (Go's own minimum): goal 68 MiB
		{1 << 20, 1600},   // so does 1 MiB
		{10 << 20, 625},   // 10 MiB live: 6.4x, rounded down to 625 %: goal 72.5 MiB
		{32 << 20, 200},   // half of the minimum: goal 96 MiB = live + 64 MiB
		{m, 100},          // at the minimum: plain GOGC=100
		{1 << 30, 100},    // far above it: twice the live heap
		{100 << 10, 1600}, // tiny
	} {
		got := gcPercentFor(c.live, m)
		if got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
		// Neither Go's goal nor its scaled minimum passes live + max(live,
		// minimum) (DESIGN.md's budget).
		live := max(c.live, goHeapMinimum)
		budget := c.live + max(c.live, m)
		if goal := c.live + live*int64(got)/100; goal > budget+goHeapMinimum {
			t.Errorf("live %d: goal %d over the budget %d", c.live, goal, budget)
		}
		if minimum := goHeapMinimum * int64(got) / 100; minimum > budget+goHeapMinimum {
			t.Errorf("live %d: Go's minimum heap %d over the budget %d", c.live, minimum, budget)
		}
	}
	if got := gcPercentFor(4<<20, 1<<40); got != 10000 {
		t.Errorf("a huge minimum is capped at GOGC=10000, got %d", got)
	}
}

// TestGCPacerSetsAndRestoresGOGC: with a small live heap the pacer raises
// GOGC within an interval, and stop puts back what it found.
func TestGCPacerSetsAndRestoresGOGC(t *testing.T) {
	orig := debug.SetGCPercent(150)
	defer debug.SetGCPercent(orig)
	stop := startGCPacer(1<<30, 5*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(5 * time.Second)
	for {
		cur := gogc()
		if cur > 1000 {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("GOGC is %d after 5 s; the pacer did not raise it for a small live heap", cur)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if cur := gogc(); cur != 150 {
		t.Fatalf("after stop GOGC is %d, want the 150 it found", cur)
	}
	if stop := startGCPacer(0, time.Millisecond, slog.Default()); stop == nil {
		t.Fatal("nil stop")
	} else {
		stop() // 0 disables: nothing runs
	}
}

func TestGCMinHeapOption(t *testing.T) {
	for v, want := range map[string]int64{"": -1, "0": 0, "128m": 128 << 20, "1g": 1 << 30} {
		opts := map[string]string{}
		if v != "" {
			opts[OptGCMinHeap] = v
		}
		s, err := parseSettings(&Open{Agent: "a", Options: opts})
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if want == -1 {
			want = defaultGCMinHeap
		}
		if s.gcMinHeap != want {
			t.Errorf("%s=%q: %d, want %d", OptGCMinHeap, v, s.gcMinHeap, want)
		}
	}
	_, err := parseSettings(&Open{Agent: "a", Options: map[string]string{OptGCMinHeap: "lots"}})
	if err == nil || !strings.Contains(err.Error(), OptGCMinHeap) {
		t.Fatalf("a bad size: %v, want an error naming %s", err, OptGCMinHeap)
	}
}

func TestMaxProcsOption(t *testing.T) {
	s, err := parseSettings(&Open{Agent: "a", Options: map[string]string{OptMaxProcs: "1"}})
	if err != nil || s.maxProcs != 1 {
		t.Fatalf("%s=1: %v, %d", OptMaxProcs, err, s.maxProcs)
	}
	if s, err = parseSettings(&Open{Agent: "a"}); err != nil || s.maxProcs != 0 {
		t.Fatalf("unset: %v, %d", err, s.maxProcs)
	}
	for _, bad := range []string{"0", "-2", "two", "5000"} {
		_, err := parseSettings(&Open{Agent: "a", Options: map[string]string{OptMaxProcs: bad}})
		if err == nil || !strings.Contains(err.Error(), OptMaxProcs) {
			t.Errorf("%s=%q: %v, want an error naming the option", OptMaxProcs, bad, err)
		}
	}
}
