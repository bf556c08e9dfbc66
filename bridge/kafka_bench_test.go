package bridge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/examples/orderscoring"
	"github.com/flinkgo/flinkgo/operator"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkServeKafka measures the order-scoring agent through Serve over
// a real Unix socket with the three store settings benchmarks/kafka
// compares: no store, the Kafka store (group commit, flush at barriers) and
// the Kafka store waiting for every record (kafka.flush.per.record, as
// upstream Flink Agents does). One op is one 1024-row DATA batch; 4096
// customers, so many keys run at once; a BARRIER every 16 batches, its
// CHECKPOINT_COMPLETE as soon as its SNAPSHOT is back (pruning). An input
// runs two actions (score, with one durable call, and decide): actions/s
// is 2 x inputs/s. Needs FLINKGO_KAFKA (a real broker); skipped otherwise.
func BenchmarkServeKafka(b *testing.B) {
	addr := os.Getenv("FLINKGO_KAFKA")
	if addr == "" {
		b.Skip("FLINKGO_KAFKA is not set: benchmarks/kafka/run.sh starts a broker and sets it")
	}
	modes := []struct {
		name string
		opts map[string]string
	}{
		{"store=none", map[string]string{}},
		{"store=kafka", map[string]string{"actionStateStoreBackend": "kafka"}},
		{"store=kafka-flush-per-record", map[string]string{"actionStateStoreBackend": "kafka", "kafka.flush.per.record": "true"}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			opts := map[string]string{}
			for k, v := range m.opts {
				opts[k] = v
			}
			if opts["actionStateStoreBackend"] == "kafka" {
				opts["kafkaBootstrapServers"] = addr
				opts["kafkaActionStateTopic"] = fmt.Sprintf("flinkgo-bench-%d", time.Now().UnixNano())
			}
			if c := os.Getenv("BENCH_CREDIT"); c != "" {
				opts["go.credit.rows"] = c
			}
			if t := os.Getenv("BENCH_TASKS_PER_THREAD"); t != "" {
				opts[OptTasksPerThread] = t
			}
			if t := os.Getenv("BENCH_THREADS"); t != "" {
				opts["num-async-threads"] = t
			}
			benchOpts(b, opts)
			benchScoring(b, opts)
		})
	}
}

func benchScoring(b *testing.B, opts map[string]string) {
	const batchRows, customers = 1024, 4096
	barrierEvery := 16
	if v := os.Getenv("BENCH_BARRIER_EVERY"); v != "" { // batches between two barriers
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("BENCH_BARRIER_EVERY=%q: want a number of batches, at least 1", v)
		}
		barrierEvery = n
	}
	cols := []arrowio.Column{{Name: "customer", Type: "STRING"}, {Name: "order_id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}
	j := startServe(b, ServerConfig{Agents: []*operator.Agent{orderscoring.Agent()}}, cols)
	rd := j.handshake(j.defaultOpen(orderscoring.AgentName, opts), nil, nil)
	_ = j.conn.SetReadDeadline(time.Time{}) // the handshake's 10 s deadline; a slow mode runs longer

	var frames [][]byte
	for f := 0; f < customers/batchRows; f++ {
		for i := 0; i < batchRows; i++ {
			n := f*batchRows + i
			k := fmt.Sprintf("customer-%05d", n)
			if err := j.in.Append(int32(n%128), []byte(k), int64(n), true, []any{k, int64(n), float64(n%97) + 0.5}); err != nil {
				b.Fatal(err)
			}
		}
		p, err := j.in.Flush()
		if err != nil {
			b.Fatal(err)
		}
		frames = append(frames, append(AppendFrameHeader(nil, FrameData, len(p)), p...))
	}

	// The reader never blocks on the main loop: credit and completed
	// snapshots accumulate, wake says there is news.
	var granted atomic.Int64
	var mu sync.Mutex
	var snaps []int64
	wake := make(chan struct{}, 1)
	notify := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	done := make(chan error, 1)
	var outRows int64
	go func() {
		buf := make([]byte, 0, 1<<20)
		for {
			f, err := ReadFrame(j.br, 0, buf)
			if err != nil {
				done <- err
				return
			}
			if cap(f.Payload) > cap(buf) {
				buf = f.Payload[:0]
			}
			switch f.Type {
			case FrameOutput:
				outRows += countRows(f.Payload)
			case FrameCredit:
				m, _ := DecodeControl(f)
				granted.Add(m.(*Credit).Rows)
				notify()
			case FrameSnapshot:
				m, _ := DecodeControl(f)
				if s := m.(*Snapshot); s.Last {
					mu.Lock()
					snaps = append(snaps, s.CheckpointID)
					mu.Unlock()
				}
			case FrameError:
				m, _ := DecodeControl(f)
				done <- fmt.Errorf("ERROR from Go: %+v", m)
				return
			case FrameEndAck:
				done <- nil
				return
			}
		}
	}()

	credit := rd.Credit
	cp := int64(0)
	completeSnaps := func() {
		mu.Lock()
		ids := snaps
		snaps = nil
		mu.Unlock()
		for _, id := range ids {
			j.send(&CheckpointComplete{CheckpointID: id})
		}
	}
	b.ResetTimer()
	cpu0 := processCPU(b)
	start := time.Now()
	var creditWait time.Duration // time the sender had no credit: Go was the bottleneck
	for i := 0; i < b.N; i++ {
		for credit += granted.Swap(0); credit < batchRows; credit += granted.Swap(0) {
			w := time.Now()
			select {
			case <-wake:
			case err := <-done:
				b.Fatalf("connection ended: %v", err)
			}
			creditWait += time.Since(w)
		}
		completeSnaps()
		j.writeRaw(frames[i%len(frames)])
		credit -= batchRows
		if (i+1)%barrierEvery == 0 {
			cp++
			j.send(&Barrier{CheckpointID: cp})
		}
	}
	j.send(&EndInput{})
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	cpu := processCPU(b) - cpu0
	b.StopTimer()
	inputs := float64(b.N) * batchRows
	if outRows != int64(inputs) {
		b.Fatalf("%d output rows for %.0f inputs", outRows, inputs)
	}
	b.ReportMetric(inputs/elapsed.Seconds(), "inputs/s")
	b.ReportMetric(2*inputs/elapsed.Seconds(), "actions/s")
	b.ReportMetric(100*creditWait.Seconds()/elapsed.Seconds(), "%credit-wait")
	// CPU of this process (Go server, store, client and the benchmark's
	// own sender and reader) per input and in cores: less noisy than
	// the rates on a shared machine, and it shows whether the process was
	// short of CPU.
	b.ReportMetric(float64(cpu.Microseconds())/inputs, "cpu-µs/input")
	b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
	b.ReportMetric(float64(rssKiB("VmHWM"))/1024, "peak-rss-MiB")
	j.send(&Close{})
	if err := j.wait(); err != nil {
		b.Fatal(err)
	}
	if topic := opts["kafkaActionStateTopic"]; topic != "" {
		b.ReportMetric(float64(topicRecords(b, opts["kafkaBootstrapServers"], topic))/inputs, "records/input")
		deleteTopic(b, opts["kafkaBootstrapServers"], topic)
	}
}

// deleteTopic deletes a benchmark's topic: the topics of earlier runs would
// otherwise stay on the broker, and its work per request grows with the
// partitions it hosts (a run's figures fell by a third after twenty runs).
func deleteTopic(b *testing.B, addr, topic string) {
	withAdmin(b, addr, func(ctx context.Context, adm *kadm.Client) {
		resp, err := adm.DeleteTopic(ctx, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			b.Fatalf("deleting the benchmark topic %s: %v", topic, err)
		}
	})
}

// withAdmin runs f with an admin client of the broker at addr and a 30 s
// deadline.
func withAdmin(b *testing.B, addr string, f func(ctx context.Context, adm *kadm.Client)) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f(ctx, kadm.NewClient(cl))
}

// topicRecords is the number of records written to topic (the sum of its
// partitions' end offsets).
func topicRecords(b *testing.B, addr, topic string) int64 {
	var n int64
	withAdmin(b, addr, func(ctx context.Context, adm *kadm.Client) {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			b.Fatal(err)
		}
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	})
	return n
}

// countRows counts the rows of an OUTPUT payload (-1 if it does not decode).
func countRows(payload []byte) int64 {
	rd, err := ipc.NewReader(bytes.NewReader(payload))
	if err != nil {
		return -1
	}
	defer rd.Release()
	var n int64
	for rd.Next() {
		n += rd.RecordBatch().NumRows()
	}
	return n
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
