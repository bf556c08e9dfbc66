package bridge

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/statestore"
)

// METRICS: sent by the writer after READY, periodically and right after
// every SNAPSHOT, with the core's counters and the Kafka store's.

// nextMetrics reads the next frame, which must be METRICS.
func (j *fakeJVM) nextMetrics(after string) map[string]int64 {
	j.t.Helper()
	f := j.next()
	if f.Type != FrameMetrics {
		j.t.Fatalf("%s: %s, want METRICS", after, f.Type)
	}
	m, err := DecodeControl(f)
	if err != nil {
		j.t.Fatal(err)
	}
	j.t.Logf("METRICS after %s: %v", after, m.(*Metrics).Values)
	return m.(*Metrics).Values
}

// collectRows reads frames until n OUTPUT rows have come.
func (j *fakeJVM) collectRows(n int) *collected {
	j.t.Helper()
	c := j.collect(FrameOutput)
	for len(c.rows) < n {
		more := j.collect(FrameOutput)
		c.rows = append(c.rows, more.rows...)
		c.metrics = append(c.metrics, more.metrics...)
	}
	return c
}

func sortedNames(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var coreMetricNames = []string{MetricActionsExecuted, MetricActionsReplayed, MetricActionsRerun, MetricCallsReplayed, MetricEventsProcessed}

// TestMetricValues: the core's and the store's counters under their wire
// names and units, and exactly the names of the golden frame (which the
// Java shim's test reads as the names it registers).
func TestMetricValues(t *testing.T) {
	cs := operator.Stats{EventsProcessed: 1, ActionsExecuted: 2, ActionsReplayed: 3, CallsReplayed: 4, ActionsRerun: 12, InputsReceived: 99}
	ks := statestore.KafkaStats{RecordsWritten: 5, BytesWritten: 6, WriteLatencyP50: 7 * time.Microsecond,
		WriteLatencyP99: 8 * time.Millisecond, RecordsReplayed: 9, BytesReplayed: 10, RebuildTime: 11*time.Millisecond + 999*time.Microsecond,
		DurableWrites: 98}
	want := map[string]int64{
		MetricEventsProcessed: 1, MetricActionsExecuted: 2, MetricActionsReplayed: 3, MetricCallsReplayed: 4, MetricActionsRerun: 12,
		MetricStoreRecordsWritten: 5, MetricStoreBytesWritten: 6, MetricStoreWriteLatencyP50: 7, MetricStoreWriteLatencyP99: 8000,
		MetricStoreRecordsReplayed: 9, MetricStoreBytesReplayed: 10, MetricStoreRebuildTime: 11,
	}
	if got := metricValues(cs, &ks); !reflect.DeepEqual(got, want) {
		t.Fatalf("with the Kafka store:\n got %v\nwant %v", got, want)
	}
	if got := sortedNames(metricValues(cs, nil)); !slices.Equal(got, coreMetricNames) {
		t.Fatalf("without a store: %v, want %v", got, coreMetricNames)
	}
	var golden Metrics
	if err := golden.Unmarshal(readGolden(t, "metrics.bin")[FrameHeaderLen:]); err != nil {
		t.Fatal(err)
	}
	if got, gold := sortedNames(want), sortedNames(golden.Values); !slices.Equal(got, gold) {
		t.Fatalf("names sent %v, names of testdata/wire/metrics.bin %v", got, gold)
	}
}

// TestServeMetricsAfterSnapshot: the frame after the last SNAPSHOT frame is
// METRICS with the core's counters as of the cut; a store without metrics
// (memory) adds none.
func TestServeMetricsAfterSnapshot(t *testing.T) {
	j := startEcho(t, map[string]string{"actionStateStoreBackend": "memory", OptMetrics: "3600000", "num-async-threads": "4"})
	in := func(key string, v int64) row { return row{kg: int32(v % 7), key: key, ts: v, values: []any{key, v}} }
	j.data(in("a", 1), in("b", 2), in("a", 3))
	j.collectRows(3)
	j.send(&Barrier{CheckpointID: 1})
	c := j.collect(FrameSnapshot)
	if len(c.metrics) != 0 {
		t.Fatalf("METRICS before the first snapshot with go.metrics.interval.ms=3600000: %v", c.metrics[0].Values)
	}
	want := map[string]int64{MetricEventsProcessed: 3, MetricActionsExecuted: 3, MetricActionsReplayed: 0, MetricActionsRerun: 0, MetricCallsReplayed: 0}
	if got := j.nextMetrics("SNAPSHOT(1)"); !reflect.DeepEqual(got, want) {
		t.Fatalf("METRICS after SNAPSHOT(1): %v, want %v", got, want)
	}

	j.data(in("c", 4), in("a", 5))
	j.collectRows(2)
	j.send(&Barrier{CheckpointID: 2})
	j.collect(FrameSnapshot)
	want[MetricEventsProcessed], want[MetricActionsExecuted] = 5, 5
	if got := j.nextMetrics("SNAPSHOT(2)"); !reflect.DeepEqual(got, want) {
		t.Fatalf("METRICS after SNAPSHOT(2): %v, want %v", got, want)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeMetricsPeriodic: with no frames to send, METRICS still comes
// every go.metrics.interval.ms, and carries what the core did since.
func TestServeMetricsPeriodic(t *testing.T) {
	j := startEcho(t, map[string]string{OptMetrics: "20"})
	start := time.Now()
	for i := 0; i < 3; i++ {
		got := j.nextMetrics("READY")
		if want := map[string]int64{MetricEventsProcessed: 0, MetricActionsExecuted: 0, MetricActionsReplayed: 0, MetricActionsRerun: 0,
			MetricCallsReplayed: 0}; !reflect.DeepEqual(got, want) {
			t.Fatalf("METRICS of an idle server: %v, want %v", got, want)
		}
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("3 METRICS within %v, with an interval of 20 ms", d)
	}
	j.data(row{kg: 3, key: "a", ts: 1, values: []any{"a", int64(1)}})
	deadline := time.Now().Add(5 * time.Second)
	for {
		f := j.next()
		if f.Type == FrameMetrics {
			m, err := DecodeControl(f)
			if err != nil {
				t.Fatal(err)
			}
			if m.(*Metrics).Values[MetricActionsExecuted] == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no METRICS with actions_executed=1 within 5 s of an input that finished")
		}
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeMetricsOff: go.metrics.interval.ms=0 sends no METRICS at all,
// not even after a SNAPSHOT (an operator older than METRICS rejects it).
func TestServeMetricsOff(t *testing.T) {
	j := startEcho(t, map[string]string{OptMetrics: "0"})
	j.data(row{kg: 3, key: "a", ts: 1, values: []any{"a", int64(1)}})
	j.send(&Barrier{CheckpointID: 1})
	j.collect(FrameSnapshot)
	time.Sleep(50 * time.Millisecond)
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
	// What Go sent after the SNAPSHOT, up to the end of the connection.
	var rest []FrameType
	_ = j.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		f, err := ReadFrame(j.br, 0, nil)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, f.Type)
	}
	if slices.Contains(rest, FrameMetrics) {
		t.Fatalf("METRICS with go.metrics.interval.ms=0: %v", rest)
	}
}

// TestServeMetricsKafkaStore: the store's counters after a snapshot, and
// after a restore the actions replayed from the log, the records the
// rebuild read and its time.
func TestServeMetricsKafkaStore(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b *kafkaBroker) {
		topic := kafkaTopicName(t)
		var bodies, calls atomic.Int64
		agent := countingAgent(&bodies, &calls)
		opts := kafkaOpts(b, topic)
		opts[OptMetrics] = "3600000"
		in := func(v int64) row { return row{kg: 5, key: "a", ts: v, values: []any{"a", v}} }

		j := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		j.handshake(j.defaultOpen("echo", opts), nil, nil)
		j.data(in(1))
		j.collectRows(1)
		j.send(&Barrier{CheckpointID: 1})
		restore, marker1 := restoreFrames(j.collect(FrameSnapshot).snaps)
		m1 := j.nextMetrics("SNAPSHOT(1)")
		for k, want := range map[string]int64{MetricActionsExecuted: 1, MetricActionsReplayed: 0, MetricCallsReplayed: 0,
			MetricStoreRecordsReplayed: 0, MetricStoreBytesReplayed: 0} {
			if m1[k] != want {
				t.Errorf("after SNAPSHOT(1): %s=%d, want %d", k, m1[k], want)
			}
		}
		if m1[MetricStoreRecordsWritten] < 1 || m1[MetricStoreBytesWritten] <= m1[MetricStoreRecordsWritten] {
			t.Errorf("after SNAPSHOT(1): %d records, %d bytes written; want the records of input 1, each of several bytes",
				m1[MetricStoreRecordsWritten], m1[MetricStoreBytesWritten])
		}
		if p50, p99 := m1[MetricStoreWriteLatencyP50], m1[MetricStoreWriteLatencyP99]; p50 <= 0 || p99 < p50 || p99 > 60e6 {
			t.Errorf("after SNAPSHOT(1): write latency p50 %d µs, p99 %d µs", p50, p99)
		}

		j.data(in(2), in(3))
		j.collectRows(2)
		j.send(&Barrier{CheckpointID: 2}) // flushes the records of inputs 2 and 3; checkpoint 2 never completes
		j.collect(FrameSnapshot)
		m2 := j.nextMetrics("SNAPSHOT(2)")
		if m2[MetricActionsExecuted] != 3 || m2[MetricStoreRecordsWritten] <= m1[MetricStoreRecordsWritten] ||
			m2[MetricStoreBytesWritten] <= m1[MetricStoreBytesWritten] {
			t.Errorf("after SNAPSHOT(2): %v; want 3 actions executed and more records and bytes written than %v", m2, m1)
		}
		j.send(&Close{})
		if err := j.wait(); err != nil {
			t.Fatal(err)
		}

		// Restore checkpoint 1: inputs 2 and 3 come again and are replayed.
		j2 := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		start := time.Now()
		j2.handshake(j2.defaultOpen("echo", opts), restore, [][]byte{marker1})
		handshake := time.Since(start)
		j2.data(in(2), in(3))
		j2.collectRows(2)
		j2.send(&Barrier{CheckpointID: 3})
		j2.collect(FrameSnapshot)
		m3 := j2.nextMetrics("SNAPSHOT(3) after the restore")
		for k, want := range map[string]int64{MetricActionsExecuted: 0, MetricActionsReplayed: 2, MetricActionsRerun: 0, MetricCallsReplayed: 0} {
			if m3[k] != want {
				t.Errorf("after the restore: %s=%d, want %d", k, m3[k], want)
			}
		}
		if m3[MetricStoreRecordsReplayed] < 2 || m3[MetricStoreBytesReplayed] <= m3[MetricStoreRecordsReplayed] {
			t.Errorf("after the restore: %d records, %d bytes replayed; want at least the records of inputs 2 and 3",
				m3[MetricStoreRecordsReplayed], m3[MetricStoreBytesReplayed])
		}
		if r, ok := m3[MetricStoreRebuildTime]; !ok || r < 0 || r > handshake.Milliseconds() {
			t.Errorf("after the restore: rebuild %d ms (present %v), but the whole handshake took %v", r, ok, handshake)
		}
		if bodies.Load() != 3 {
			t.Errorf("%d bodies ran, want 3 (the restored inputs replayed)", bodies.Load())
		}
		j2.send(&Close{})
		if err := j2.wait(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMetricsCanonicalOrder: names are encoded in the byte order of their
// UTF-8 (as OPEN's options); decoding takes any order and integer width.
func TestMetricsCanonicalOrder(t *testing.T) {
	m := &Metrics{Values: map[string]int64{"b": 1, "a": 2, "\uff21": 3, "\U0001F600": 4, "B": 5}}
	var order []string
	r := &mpReader{b: m.Marshal()}
	n, err := r.length("map")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		k, _ := r.str()
		_, _ = r.int(-1<<63, 1<<63-1)
		order = append(order, k)
	}
	if want := []string{"B", "a", "b", "\uff21", "\U0001F600"}; !slices.Equal(order, want) {
		t.Fatalf("order %q, want %q", order, want)
	}
	var back Metrics
	payload := append([]byte{0x82, 0xa1, 'z', 0xd3, 0, 0, 0, 0, 0, 0, 0, 7}, 0xa1, 'a', 0xcc, 200)
	if err := back.Unmarshal(payload); err != nil || !reflect.DeepEqual(back.Values, map[string]int64{"z": 7, "a": 200}) {
		t.Fatalf("lenient decode: %v %v", back.Values, err)
	}
	if !bytes.Equal(back.Marshal(), []byte{0x82, 0xa1, 'a', 0xcc, 200, 0xa1, 'z', 7}) {
		t.Fatalf("re-encoding % x", back.Marshal())
	}
}
