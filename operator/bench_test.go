package operator

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// counterAgent: one action that updates a counter in memory and emits one
// output — the core benchmark of docs and benchmarks/README.md.
func counterAgent() *Agent {
	return &Agent{Name: "counter", Output: []Column{{"count", "BIGINT"}}, Actions: []Action{{
		Name: "count", Listen: []string{InputEventType},
		Fn: func(ctx *Context, ev *Event) error {
			m := ctx.ShortTerm()
			n, _ := m.Int64("count")
			if err := m.Set("count", n+1); err != nil {
				return err
			}
			return ctx.SendEvent(NewOutput(n + 1))
		},
	}}}
}

// BenchmarkCoreCounter measures inputs/s through the core with the action
// body run inline on the core goroutine (no worker hop): the cost of the
// core itself plus a trivial action.
func BenchmarkCoreCounter(b *testing.B) {
	const keys = 10_000
	c, err := NewCore(counterAgent(), DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ks := make([][]byte, keys)
	kgs := make([]int32, keys)
	for i := range ks {
		ks[i] = []byte(fmt.Sprintf("customer-%06d", i))
		kgs[i] = int32(i % 128)
	}
	r := row("amount", 1.0)
	outputs := 0
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		k := i % keys
		if err := c.Input(kgs[k], ks[k], int64(i), true, r); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 || i == b.N-1 {
			for {
				rd := c.Ready()
				outputs += len(rd.Emits)
				if len(rd.Tasks) == 0 {
					break
				}
				for _, t := range rd.Tasks {
					c.Complete(t.Run())
				}
			}
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "inputs/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/input")
	if outputs != b.N {
		b.Fatalf("outputs %d, inputs %d", outputs, b.N)
	}
}

// bigCore returns a core holding n keys with ~100 B of memory each (a
// counter and the last 5 amounts) spread over 128 key groups.
func bigCore(tb testing.TB, n int) *Core {
	c, err := NewCore(counterAgent(), DefaultConfig(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i++ {
		key := []byte(fmt.Sprintf("customer-%07d", i))
		ks, stored, _ := c.table.GetOrCreateKey(int32(i%128), key, statestore.HashKey64(key))
		ks.kg, ks.key, ks.hash, ks.nextSeq = int32(i%128), stored, statestore.HashKey64(key), 7
		ks.mem = memMap{
			{Path: "count", Value: int64(i)},
			{Path: "recent", Value: []any{12.5, 99.0, 3.25, 42.0, 7.75}},
			{Path: "tier", Value: "gold"},
		}
	}
	return c
}

// BenchmarkCut1M measures a snapshot of 1 M keys: the consistent cut on the
// core goroutine (cut-ms: how long the core does nothing else) and then
// sorting and encoding the sections on one goroutine per CPU, as the bridge
// does (ns/op and total-ms: barrier to all bytes ready).
func BenchmarkCut1M(b *testing.B) {
	c := bigCore(b, 1_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c.Barrier(int64(i + 1))
		rd := c.Ready()
		cut := time.Since(t0)
		secs := rd.Emits[len(rd.Emits)-1].Sections
		sizes := make([]int, len(secs))
		var wg sync.WaitGroup
		next := make(chan int, len(secs))
		for j := range secs {
			next <- j
		}
		close(next)
		for w := 0; w < runtimeCPUs(); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					enc, err := snapshot.EncodeSection(secs[j])
					if err != nil {
						panic(err)
					}
					sizes[j] = len(enc)
				}
			}()
		}
		wg.Wait()
		total := time.Since(t0)
		bytes := 0
		for _, n := range sizes {
			bytes += n
		}
		b.ReportMetric(float64(cut.Milliseconds()), "cut-ms")
		b.ReportMetric(float64(total.Milliseconds()), "total-ms")
		b.ReportMetric(float64(bytes)/1e6, "snapshot-MB")
	}
}

// BenchmarkRestore1M measures decoding and restoring 1 M keys.
func BenchmarkRestore1M(b *testing.B) {
	c := bigCore(b, 1_000_000)
	c.Barrier(1)
	var encs [][]byte
	for _, s := range c.Ready().Emits[0].Sections {
		enc, err := snapshot.EncodeSection(s)
		if err != nil {
			b.Fatal(err)
		}
		encs = append(encs, enc)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var secs []*snapshot.Section
		for _, e := range encs {
			s, err := snapshot.DecodeSection(e)
			if err != nil {
				b.Fatal(err)
			}
			secs = append(secs, s)
		}
		c2, _ := NewCore(counterAgent(), DefaultConfig(), nil)
		if err := c2.Restore(1, secs); err != nil {
			b.Fatal(err)
		}
		if c2.table.Len() != 1_000_000 {
			b.Fatal("keys lost")
		}
	}
}

// cpuTime returns the CPU time (user+system, ns) this process has used: a
// figure that other load on the machine inflates far less than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkCoreCounterSharded runs one core per CPU on disjoint key-group
// ranges, as shard-owner goroutines do: the capacity of the core on this
// machine. b.N inputs in total.
func BenchmarkCoreCounterSharded(b *testing.B) {
	const keys = 10_000
	shards := runtimeCPUs()
	per := b.N / shards
	cores := make([]*Core, shards)
	for s := range cores {
		cfg := DefaultConfig()
		cfg.Owned = snapshot.KeyGroupRange{Start: int32(s * 128 / shards), End: int32((s+1)*128/shards - 1)}
		c, err := NewCore(counterAgent(), cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		cores[s] = c
	}
	r := row("amount", 1.0)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	done := make(chan int, shards)
	for s := 0; s < shards; s++ {
		go func(s int) {
			c := cores[s]
			span := c.cfg.Owned.End - c.cfg.Owned.Start + 1
			ks := make([][]byte, keys/shards)
			for i := range ks {
				ks[i] = []byte(fmt.Sprintf("customer-%d-%06d", s, i))
			}
			outputs := 0
			for i := 0; i < per; i++ {
				k := i % len(ks)
				if err := c.Input(c.cfg.Owned.Start+int32(k)%span, ks[k], int64(i), true, r); err != nil {
					panic(err)
				}
				if i%64 == 63 || i == per-1 {
					for {
						rd := c.Ready()
						outputs += len(rd.Emits)
						if len(rd.Tasks) == 0 {
							break
						}
						for _, t := range rd.Tasks {
							c.Complete(t.Run())
						}
					}
				}
			}
			done <- outputs
		}(s)
	}
	total := 0
	for s := 0; s < shards; s++ {
		total += <-done
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "inputs/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(max(total, 1)), "cpu-ns/input")
	if total != per*shards {
		b.Fatalf("outputs %d, inputs %d", total, per*shards)
	}
}

func runtimeCPUs() int { return max(1, runtime.GOMAXPROCS(0)) }
