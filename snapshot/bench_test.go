package snapshot

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The benchmark state: 1 M keys spread over 128 key groups, each with about
// 100 bytes of short-term memory: a counter, a list of the 5 most recent
// amounts and a last-seen timestamp.
const (
	benchKeys      = 1 << 20
	benchKeyGroups = 128
)

// benchSection builds the state of key group g (deterministic).
func benchSection(g int) *Section {
	rng := rand.New(rand.NewPCG(1, uint64(g)))
	per := benchKeys / benchKeyGroups
	s := &Section{KeyGroup: int32(g), Keys: make([]KeyState, per)}
	for i := range s.Keys {
		key := make([]byte, 12)
		copy(key, "acct")
		binary.BigEndian.PutUint64(key[4:], uint64(g*per+i)) // increasing
		recent := make([]any, 5)
		for j := range recent {
			recent[j] = float64(rng.IntN(1_000_000)) / 100
		}
		s.Keys[i] = KeyState{
			Key:     key,
			NextSeq: uint64(rng.IntN(100_000)),
			ShortTerm: []MemItem{
				{Path: "count", Value: int64(rng.IntN(100_000))},
				{Path: "last_seen", Value: 1_700_000_000_000 + rng.Int64N(1e10)},
				{Path: "recent", Value: recent},
			},
		}
	}
	return s
}

// benchEncoded is the state encoded, and the total size of the bodies.
var benchEncoded = sync.OnceValues(func() ([][]byte, int64) {
	out := make([][]byte, benchKeyGroups)
	var raw int64
	for i := range out {
		b, err := EncodeSection(benchSection(i))
		if err != nil {
			panic(err)
		}
		out[i] = b
		raw += int64(binary.BigEndian.Uint32(b[16:]))
	}
	return out, raw
})

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds sizes and the process CPU time per op (all threads, GC
// included): on a shared machine wall time depends on the neighbours, CPU
// time much less.
func report(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	encoded, raw := benchEncoded()
	var n int64
	for _, e := range encoded {
		n += int64(len(e))
	}
	b.SetBytes(raw) // MB/s of uncompressed body
	b.ReportMetric(float64(raw)/benchKeys, "body-B/key")
	b.ReportMetric(float64(n)/benchKeys, "encoded-B/key")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchKeys, "ns/key")
}

// forSections runs fn on every section index, on workers goroutines.
func forSections(workers int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int, benchKeyGroups)
	for i := range benchKeyGroups {
		next <- i
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	wg.Wait()
}

func benchEncode(b *testing.B, workers int) {
	benchEncoded()
	secs := make([]*Section, benchKeyGroups) // live only in this benchmark
	for i := range secs {
		secs[i] = benchSection(i)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		forSections(workers, func(i int) {
			if _, err := EncodeSection(secs[i]); err != nil {
				b.Error(err)
			}
		})
	}
	report(b, cpu0)
}

func benchDecode(b *testing.B, workers int) {
	encoded, _ := benchEncoded()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		// Keep the sections of one op alive, as a restore does.
		secs := make([]*Section, benchKeyGroups)
		forSections(workers, func(i int) {
			var err error
			if secs[i], err = DecodeSection(encoded[i]); err != nil {
				b.Error(err)
			}
		})
	}
	report(b, cpu0)
}

// BenchmarkEncode1M: one op encodes all 128 sections (1 M keys) on one goroutine.
func BenchmarkEncode1M(b *testing.B) { benchEncode(b, 1) }

// BenchmarkDecode1M: one op decodes all 128 sections (1 M keys) on one goroutine.
func BenchmarkDecode1M(b *testing.B) { benchDecode(b, 1) }

// BenchmarkEncode1MParallel spreads the sections over GOMAXPROCS goroutines.
func BenchmarkEncode1MParallel(b *testing.B) { benchEncode(b, runtime.GOMAXPROCS(0)) }

// BenchmarkDecode1MParallel spreads the sections over GOMAXPROCS goroutines.
func BenchmarkDecode1MParallel(b *testing.B) { benchDecode(b, runtime.GOMAXPROCS(0)) }
