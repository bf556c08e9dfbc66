package bridge

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
)

// cpuTime is the CPU time (user + system) of this process so far; it
// includes the fake operator, which only writes prepared frames and reads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssKiB reads a memory figure (VmRSS, VmHWM) of this process from
// /proc/self/status; 0 where there is no procfs.
func rssKiB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// passAgent emits every input row as its output row; inline: its action
// runs on the core goroutine (operator.Action.Inline); asRow: it emits the
// row itself (operator.NewOutputRow), not its values (NewOutput).
func passAgent(inline, asRow bool) *operator.Agent {
	return &operator.Agent{
		Name: "pass",
		Actions: []operator.Action{{Name: "pass", Listen: []string{operator.InputEventType},
			Fn: func(ctx *operator.Context, ev *operator.Event) error {
				in := ev.Input()
				if asRow {
					return ctx.EmitRow(in)
				}
				vals := make([]any, in.NumFields())
				vr, _ := in.(operator.ViewRow)
				for i := range vals {
					if vr != nil {
						vals[i] = vr.ValueView(i)
					} else {
						vals[i] = in.Value(i)
					}
				}
				return ctx.SendEvent(operator.NewOutput(vals...))
			}, Inline: inline}},
		Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "n", Type: "BIGINT"}, {Name: "payload", Type: "STRING"}},
	}
}

var passCols = []arrowio.Column{{Name: "k", Type: "STRING"}, {Name: "n", Type: "BIGINT"}, {Name: "payload", Type: "STRING"}}

// BenchmarkServePassThrough measures rows/s through Serve over a real Unix
// socket for a pass-through agent: 1024-row DATA batches of ~200-byte rows
// in, OUTPUT batches out, credit honoured as the operator does. One op is
// one batch. MB/s counts DATA bytes in plus OUTPUT bytes out (the
// JVM→Go→JVM Arrow hop).
func BenchmarkServePassThrough(b *testing.B) {
	for _, threads := range []int{0, 64} {
		name := "threads=default"
		if threads > 0 {
			name = fmt.Sprintf("threads=%d", threads)
		}
		b.Run(name, func(b *testing.B) { benchPass(b, passCase{threads: threads}) })
	}
	b.Run("inline", func(b *testing.B) { benchPass(b, passCase{inline: true}) })
	b.Run("inline-row", func(b *testing.B) { benchPass(b, passCase{inline: true, asRow: true}) })
	// The job benchmark's path (benchmarks/bridge): rows emitted as they are
	// go back by reference (OUTPUT_REF), so only DATA carries rows.
	b.Run("inline-row-ref", func(b *testing.B) { benchPass(b, passCase{inline: true, asRow: true, refs: true}) })
}

// passCase is one BenchmarkServePassThrough setting: threads, the worker
// pool's size (0: the default); inline and asRow, as for passAgent; refs,
// output_refs offered in OPEN, as the operator does for a Row input equal
// to the output type.
type passCase struct {
	threads             int
	inline, asRow, refs bool
}

func benchPass(b *testing.B, pc passCase) {
	const batchRows = 1024
	j := startServe(b, ServerConfig{Agents: []*operator.Agent{passAgent(pc.inline, pc.asRow)}}, passCols)
	opts := map[string]string{}
	if pc.threads > 0 {
		opts["num-async-threads"] = fmt.Sprint(pc.threads)
	}
	benchOpts(b, opts)
	open := j.defaultOpen("pass", opts)
	open.OutputRefs = pc.refs
	rd := j.handshake(open, nil, nil)

	// Four distinct batches (different keys), reused round robin.
	payload := strings.Repeat("x", 160)
	var frames [][]byte
	for f := 0; f < 4; f++ {
		for i := 0; i < batchRows; i++ {
			k := fmt.Sprintf("customer-%06d", f*batchRows+i)
			if err := j.in.Append(int32(i%128), []byte(k), int64(i), true, []any{k, int64(i), payload}); err != nil {
				b.Fatal(err)
			}
		}
		p, err := j.in.Flush()
		if err != nil {
			b.Fatal(err)
		}
		frames = append(frames, append(AppendFrameHeader(nil, FrameData, len(p)), p...))
	}
	rowBytes := len(frames[0]) / batchRows

	credits := make(chan int64, 1024)
	result := make(chan [2]int64, 1) // OUTPUT (and OUTPUT_REF) bytes and frames
	go func() {
		var outBytes, outFrames int64
		buf := make([]byte, 0, 1<<20)
		for {
			f, err := ReadFrame(j.br, 0, buf)
			if err != nil {
				close(credits)
				result <- [2]int64{-1, 0}
				return
			}
			if cap(f.Payload) > cap(buf) {
				buf = f.Payload[:0]
			}
			switch f.Type {
			case FrameOutput, FrameOutputRef:
				outBytes += int64(len(f.Payload) + FrameHeaderLen)
				outFrames++
			case FrameCredit:
				m, _ := DecodeControl(f)
				credits <- m.(*Credit).Rows
			case FrameEndAck:
				result <- [2]int64{outBytes, outFrames}
				return
			}
		}
	}()

	cpu0 := cpuTime()
	credit := rd.Credit
	var inBytes int64
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for credit < batchRows {
			c, ok := <-credits
			if !ok {
				b.Fatal("connection ended")
			}
			credit += c
		}
		fr := frames[i%len(frames)]
		j.writeRaw(fr)
		inBytes += int64(len(fr))
		credit -= batchRows
	}
	j.send(&EndInput{})
	res := <-result
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := cpuTime() - cpu0
	if res[0] < 0 {
		b.Fatal("connection ended before END_ACK")
	}
	rows := float64(b.N) * batchRows
	b.ReportMetric(rows/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(inBytes+res[0])/elapsed.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(rowBytes), "B/row-in")
	b.ReportMetric(rows/float64(max(res[1], 1)), "rows/OUTPUT")
	b.ReportMetric(float64(cpu.Nanoseconds())/rows, "cpu-ns/row")
	b.ReportMetric(float64(rssKiB("VmRSS"))/1024, "rss-MiB")
	b.ReportMetric(float64(rssKiB("VmHWM"))/1024, "peak-rss-MiB")
	j.send(&Close{})
	if err := j.wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCoreOnlyPass runs the same pass-through agent on the core
// alone, synchronously, with rows that are not Arrow views: the cost the
// bridge adds is the difference to BenchmarkServePassThrough's cpu-ns/row.
func BenchmarkCoreOnlyPass(b *testing.B) {
	for _, c := range []struct {
		name              string
		inline, runInline bool
	}{
		{"values", false, false},            // NewOutput of the values, tasks from Ready
		{"inline-row", true, false},         // EmitRow of an Inline action, run from Ready
		{"inline-row-in-input", true, true}, // the same, run inside Input (Config.RunInline, the bridge's setting)
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := operator.DefaultConfig()
			cfg.MaxConcurrency, cfg.RunInline = 64, c.runInline
			benchCoreOnly(b, passAgent(c.inline, c.inline), cfg)
		})
	}
}

func benchCoreOnly(b *testing.B, a *operator.Agent, cfg operator.Config) {
	c, err := operator.NewCore(a, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	payload := strings.Repeat("x", 160)
	rows := make([]operator.Row, 1024) // converted once: no allocation per Input
	keys := make([][]byte, 1024)
	for i := range rows {
		k := fmt.Sprintf("customer-%06d", i)
		keys[i] = []byte(k)
		rows[i] = operator.FieldsRow{{Name: "k", Value: k}, {Name: "n", Value: int64(i)}, {Name: "payload", Value: payload}}
	}
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		for i := range rows {
			_ = c.Input(int32(i%128), keys[i], 0, false, rows[i])
		}
		for c.HasReady() {
			rd := c.Ready()
			for _, t := range rd.Tasks {
				c.Complete(t.Run())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/row")
}

// benchOpts adds the agent options of BENCH_OPTS (name=value,name=value) to
// opts, for trying settings without editing a benchmark.
func benchOpts(b *testing.B, opts map[string]string) {
	for _, kv := range strings.FieldsFunc(os.Getenv("BENCH_OPTS"), func(r rune) bool { return r == ',' }) {
		name, v, ok := strings.Cut(kv, "=")
		if !ok {
			b.Fatalf("BENCH_OPTS: %q is not name=value", kv)
		}
		opts[name] = v
	}
}

// BenchmarkHeldDataMemory measures what a subtask's Go side holds when its
// action is stalled (a slow model call, say) and the operator sends all the
// credit lets it: 16 KiB rows, sent in 64-row DATA frames while there is
// credit, until no more comes for 200 ms. It reports the rows and the
// DATA bytes held then, and the Go heap in use (after a GC), for the
// default window and for the window before go.credit.bytes existed:
// go.credit.bytes so large that only go.credit.rows binds, at 16384 rows,
// the default of go.credit.rows then. One op is one such run.
func BenchmarkHeldDataMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		opts map[string]string
	}{
		{"default", nil},
		{"rows-only", map[string]string{OptCreditBytes: "1t", OptCreditRows: "16384"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var rows, dataBytes, heap int64
			for i := 0; i < b.N; i++ {
				rows, dataBytes, heap = heldDataRun(b, c.opts)
			}
			b.ReportMetric(float64(rows), "rows-held")
			b.ReportMetric(float64(dataBytes)/(1<<20), "DATA-MiB-held")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
		})
	}
}

func heldDataRun(b *testing.B, opts map[string]string) (rows, dataBytes, heap int64) {
	gate := make(chan struct{})
	j := startServe(b, ServerConfig{Agents: []*operator.Agent{holdAgent(gate)}}, holdCols)
	credit := j.handshake(j.defaultOpen("hold", opts), nil, nil).Credit
	const perFrame = 64
	for {
		for credit >= perFrame {
			j.data(holdRows(int(rows), perFrame, 16<<10)...)
			rows += perFrame
			credit -= perFrame
		}
		_ = j.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		f, err := ReadFrame(j.br, 0, nil)
		if err != nil {
			break // no more credit: the window is full
		}
		if f.Type == FrameCredit {
			m, _ := DecodeControl(f)
			credit += m.(*Credit).Rows
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap = int64(ms.HeapInuse)
	dataBytes = rows * (16<<10 + 16) // payload, key and offsets, about
	close(gate)
	j.send(&EndInput{})
	if got := j.collect(FrameEndAck); int64(len(got.rows)) != rows {
		b.Fatalf("%d rows out, want %d", len(got.rows), rows)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		b.Fatal(err)
	}
	return rows, dataBytes, heap
}
