package statestore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The store test suite, run against kfake (kafka_kfake_test.go) and against
// a real broker (kafka_real_test.go). Every subtest uses topics of its own.

// kafkaEnv is where the suite runs.
type kafkaEnv struct {
	bootstrap string
	// stop makes the brokers unreachable for the rest of the test (and
	// restores them at cleanup if it can); nil skips the failure test.
	stop func(t *testing.T)
}

const (
	testMaxPar = 32
	testParts  = 8
)

func runKafkaSuite(t *testing.T, env *kafkaEnv) {
	tests := []struct {
		name string
		fn   func(*testing.T, *kafkaEnv)
	}{
		{"TopicCreated", testKafkaTopicCreated},
		{"TopicReusedWithWarning", testKafkaTopicReused},
		{"PutGetFlushMarker", testKafkaPutGetFlush},
		{"PutDurable", testKafkaPutDurable},
		{"RunningLinger", testKafkaRunningLinger},
		{"TakeRunningLinger", testKafkaTakeRunningLinger},
		{"RecycledBuffers", testKafkaRecycledBuffers},
		{"InvalidPut", testKafkaInvalidPut},
		{"RecoverRescale", testKafkaRecoverRescale},
		{"RecoverEndOffsetsCaptured", testKafkaRecoverConcurrent},
		{"RecoverTopicIDMismatch", testKafkaTopicIDMismatch},
		{"RecoverOffsetsDeleted", testKafkaOffsetsDeleted},
		{"Tombstones", testKafkaTombstones},
		{"Encryption", testKafkaEncryption},
		{"Compression", testKafkaCompression},
		{"RecoveredInputsKeepValues", testKafkaRecoveredKeep},
		{"FlushCutForgetsDoneInputs", testKafkaFlushCut},
		{"ControlTopic", testKafkaControl},
		{"BrokerFailure", testKafkaBrokerFailure}, // last: it stops the broker
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, env) })
	}
}

func testTopic(t *testing.T) string {
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	return fmt.Sprintf("flinkgo-%s-%d", name, time.Now().UnixNano()%1e9)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func openKafka(t *testing.T, env *kafkaEnv, topic string, opts ...KafkaOpt) *Kafka {
	t.Helper()
	k, err := openKafkaErr(t, env, topic, opts...)
	if err != nil {
		t.Fatalf("NewKafka(%s): %v", topic, err)
	}
	return k
}

func openKafkaErr(t *testing.T, env *kafkaEnv, topic string, opts ...KafkaOpt) (*Kafka, error) {
	base := []KafkaOpt{
		KafkaBootstrapServers(env.bootstrap), KafkaTopic(topic), KafkaNumPartitions(testParts),
		KafkaKeyGroups(snapshot.KeyGroupRange{Start: 0, End: testMaxPar - 1}, testMaxPar),
		KafkaDeliveryTimeout(5 * time.Second), KafkaLogger(discardLog),
	}
	k, err := NewKafka(testCtx(t), append(base, opts...)...)
	if err == nil {
		t.Cleanup(func() { _ = k.Close() })
	}
	return k, err
}

func owned(start, end int32) KafkaOpt {
	return KafkaKeyGroups(snapshot.KeyGroupRange{Start: start, End: end}, testMaxPar)
}

func testClient(t *testing.T, env *kafkaEnv, opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(env.bootstrap)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

// kRec is a small valid record of input seq of key in key group kg.
func kRec(kg int32, key string, seq uint64, action string, st Status) *Record {
	return &Record{
		Key:     RecordKey{KeyGroup: kg, KeyHash: HashKey([]byte(key)), Seq: seq, EventID: testUUID(byte(seq)), Action: action},
		Status:  st,
		Updates: []MemUpdate{{Scope: ScopeShortTerm, Path: "last", Value: action}},
	}
}

func putAll(t *testing.T, s ActionStore, recs ...*Record) {
	t.Helper()
	for _, r := range recs {
		if err := s.Put(r); err != nil {
			t.Fatalf("Put(%v): %v", r.Key, err)
		}
	}
}

func flush(t *testing.T, s ActionStore) snapshot.Marker {
	t.Helper()
	m, err := s.Flush()
	if err != nil {
		t.Fatalf("Flush: %v", err)
	}
	return m
}

// readTopic reads every record of topic from each partition's start to the
// end offset listed first.
func readTopic(t *testing.T, env *kafkaEnv, topic string) []*kgo.Record {
	t.Helper()
	ctx := testCtx(t)
	_, adm := testClient(t, env)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	at := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	ends.Each(func(lo kadm.ListedOffset) {
		if s, _ := starts.Lookup(topic, lo.Partition); s.Offset < lo.Offset {
			at[lo.Partition] = kgo.NewOffset().At(s.Offset)
			left[lo.Partition] = lo.Offset
		}
	})
	if len(at) == 0 {
		return nil
	}
	cons, _ := testClient(t, env, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: at}))
	var out []*kgo.Record
	for len(left) > 0 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("reading %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			out = append(out, r)
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return out
}

func topicConfigs(t *testing.T, env *kafkaEnv, topic string) map[string]string {
	t.Helper()
	_, adm := testClient(t, env)
	rcs, err := adm.DescribeTopicConfigs(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	out := map[string]string{}
	for _, c := range rc.Configs {
		out[c.Key] = c.MaybeValue()
	}
	return out
}

func testKafkaTopicCreated(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic)
	id, parts := k.TopicID()
	if id.IsZero() || parts != testParts {
		t.Fatalf("topic id %v, %d partitions; want a non-zero id and %d", id, parts, testParts)
	}
	cfg := topicConfigs(t, env, topic)
	for key, want := range createdTopicConfigs {
		if cfg[key] != want {
			t.Errorf("created topic: %s = %q, want %q", key, cfg[key], want)
		}
	}
	if w := k.Warnings(); len(w) != 0 {
		t.Errorf("warnings on a topic the store created: %q", w)
	}
	// A second store (another subtask) reuses it, whatever it is configured with.
	k2 := openKafka(t, env, topic, KafkaNumPartitions(3))
	id2, parts2 := k2.TopicID()
	if id2 != id || parts2 != testParts {
		t.Fatalf("reopened: id %v / %d partitions, want %v / %d", id2, parts2, id, testParts)
	}
	if w := strings.Join(k2.Warnings(), "\n"); !strings.Contains(w, "has 8 partitions") {
		t.Errorf("want a warning about the partition count, got %q", w)
	}
}

func testKafkaTopicReused(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	_, adm := testClient(t, env)
	ctx := testCtx(t)
	if _, err := adm.CreateTopic(ctx, 4, 1, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact,delete"),
		"retention.ms":   kadm.StringPtr("3600000"),
	}, topic); err != nil {
		t.Fatal(err)
	}
	var logBuf syncBuffer
	k := openKafka(t, env, topic, KafkaLogger(slog.New(slog.NewTextHandler(&logBuf, nil))))
	if _, parts := k.TopicID(); parts != 4 {
		t.Fatalf("partitions %d, want the existing topic's 4", parts)
	}
	w := strings.Join(k.Warnings(), "\n")
	if !strings.Contains(w, "retention.ms=3600000") || !strings.Contains(w, "set retention.ms=-1") {
		t.Errorf("warnings %q should report retention.ms=3600000 and the fix", w)
	}
	if !strings.Contains(logBuf.String(), "level=WARN") || !strings.Contains(logBuf.String(), "retention.ms=3600000") {
		t.Errorf("the warning was not logged: %q", logBuf.String())
	}
	if cfg := topicConfigs(t, env, topic); cfg["retention.ms"] != "3600000" || cfg["cleanup.policy"] != "compact,delete" {
		t.Errorf("existing topic changed: %v", cfg)
	}
	// It works on the existing topic: the marker names its 4 partitions.
	putAll(t, k, kRec(5, "a", 0, "x", StatusCompleted))
	if m := flush(t, k); len(m.Offsets) != 4 {
		t.Errorf("marker offsets %v, want the 4 partitions", m.Offsets)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testKafkaPutGetFlush(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	// Partitions 0..3. Running records are written at once, so that the
	// log holds the records in Put order (RunningLinger covers holding).
	k := openKafka(t, env, topic, owned(0, 3), KafkaRunningLinger(0))
	m0 := flush(t, k)
	if m0.Backend != "kafka" || m0.Topic != topic || m0.Version != snapshot.MarkerVersion {
		t.Fatalf("marker %+v", m0)
	}
	if id, _ := k.TopicID(); m0.TopicID != id {
		t.Fatalf("marker topic id %v, live %v", m0.TopicID, id)
	}
	if got := slices.Sorted(maps.Keys(m0.Offsets)); !slices.Equal(got, []int32{0, 1, 2, 3}) {
		t.Fatalf("marker partitions %v, want [0 1 2 3]", got)
	}
	// Input 1 of key a (still running) and inputs 2, 3 of key b, all in key group 1.
	a1 := kRec(1, "a", 1, "act", StatusRunning)
	b2 := kRec(1, "b", 2, "act", StatusCompleted)
	b3 := kRec(1, "b", 3, "act", StatusCompleted)
	putAll(t, k, a1, b2, b3)
	m1 := flush(t, k)
	// Acknowledged records of inputs MayHold rejects (nothing was
	// recovered) keep their key and offset, not their value: the core never
	// asks for them.
	if r, ok := k.Get(b2.Key); ok || k.idx.newest(b2.Key).plain != nil {
		t.Fatalf("Get(b2) = %v, %v after its acknowledgement: the value is kept", r, ok)
	}
	if m1.Offsets[1] != m0.Offsets[1] {
		t.Errorf("partition 1: %d, want %d (a1, the first record still needed)", m1.Offsets[1], m0.Offsets[1])
	}
	// b2 and b3 finish before cut 1; when checkpoint 2 completes they go, a1 stays.
	k.MarkInputDone(1, b2.Key.KeyHash, 2, 1)
	k.MarkInputDone(1, b3.Key.KeyHash, 3, 1)
	if err := k.CheckpointComplete(2); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Get(b2.Key); ok {
		t.Error("b2 kept after its checkpoint completed")
	}
	if m := flush(t, k); m.Offsets[1] != m1.Offsets[1] {
		t.Errorf("partition 1 moved to %d while a1 (offset %d) is in flight", m.Offsets[1], m1.Offsets[1])
	}
	// a1 completes with a new version: it replaces the first in the log.
	a1done := kRec(1, "a", 1, "act", StatusCompleted)
	putAll(t, k, a1done)
	m2 := flush(t, k)
	if m2.Offsets[1] != m0.Offsets[1]+3 {
		t.Errorf("partition 1: %d, want %d (the new version of a1)", m2.Offsets[1], m0.Offsets[1]+3)
	}
	k.MarkInputDone(1, a1.Key.KeyHash, 1, 2)
	if err := k.CheckpointComplete(3); err != nil {
		t.Fatal(err)
	}
	m3 := flush(t, k)
	if m3.Offsets[1] != m0.Offsets[1]+4 {
		t.Errorf("partition 1: %d, want the end %d once nothing is needed", m3.Offsets[1], m0.Offsets[1]+4)
	}
	for _, ms := range [][2]snapshot.Marker{{m0, m1}, {m1, m2}, {m2, m3}} {
		for p, off := range ms[0].Offsets {
			if ms[1].Offsets[p] < off {
				t.Errorf("partition %d went back from %d to %d", p, off, ms[1].Offsets[p])
			}
		}
	}
	s := k.KafkaStats()
	if s.RecordsWritten != 4 || s.Flushes != 5 || s.Records != 0 || s.Pruned != 3 || s.LatencySamples != 4 || s.WriteLatencyP99 <= 0 {
		t.Errorf("stats %+v", s)
	}
}

func testKafkaPutDurable(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	// The longest producer linger there is: PutDurable must not wait for it
	// (it sends its partition at once); Put's records may.
	const linger = time.Second
	k := openKafka(t, env, topic, KafkaProducerLinger(linger))
	// The producer learns the topic's partitions with its first record; only
	// then can it send one partition ahead of the linger.
	putAll(t, k, kRec(8, "warm", 0, "a", StatusCompleted))
	flush(t, k)
	r := kRec(9, "k", 4, "call", StatusRunning)
	r.Calls = []CallRecord{{CallID: "llm", Status: CallPending}}
	start := time.Now()
	if err := k.PutDurable(r); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 3*linger/4 {
		t.Errorf("PutDurable took %v with a producer linger of %v: it waited for the linger", took, linger)
	}
	// Acknowledged means readable by anyone, without a Flush.
	recs := readTopic(t, env, topic)
	if len(recs) != 2 {
		t.Fatalf("topic holds %d records after the PutDurable, want 2", len(recs))
	}
	var got *Record
	for _, kr := range recs {
		if d, err := DecodeRecord(kr.Key, kr.Value); err != nil {
			t.Fatal(err)
		} else if d.Key == r.Key {
			if kr.Partition != Partition(9, testParts) {
				t.Fatalf("durable record in partition %d, want %d", kr.Partition, Partition(9, testParts))
			}
			got = d
		}
	}
	if got == nil || got.Calls[0].Status != CallPending {
		t.Fatalf("durable record %v not in the topic, or not pending", got)
	}
	// Nor does a Flush (a barrier) wait for the linger.
	putAll(t, k, kRec(8, "k", 5, "a", StatusCompleted))
	start = time.Now()
	flush(t, k)
	if took := time.Since(start); took >= 3*linger/4 {
		t.Errorf("Flush took %v with a producer linger of %v: it waited for the linger", took, linger)
	}
	if s := k.KafkaStats(); s.DurableWrites != 1 || s.RecordsWritten != 3 {
		t.Errorf("stats %+v", s)
	}
}

// testKafkaRecycledBuffers: the buffers of acknowledged records are reused
// for later ones (recBufs); every record still reaches the topic with its
// own bytes, over waves of records of growing and shrinking sizes.
func testKafkaRecycledBuffers(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic)
	want := map[string]string{}
	seq := uint64(0)
	for wave := range 4 {
		for i := range 500 {
			seq++
			size := []int{10, 300, 3000, 40}[(wave+i)%4] + i%7
			val := strings.Repeat(string(rune('a'+(i+wave)%26)), size)
			r := kRec(int32(seq%testMaxPar), fmt.Sprint("key", seq%37), seq, "act", StatusCompleted)
			r.Updates[0].Value = val
			want[fmt.Sprint(seq)] = val
			putAll(t, k, r)
		}
		flush(t, k)
	}
	recs := readTopic(t, env, topic)
	if len(recs) != len(want) {
		t.Fatalf("topic holds %d records, want %d", len(recs), len(want))
	}
	for _, kr := range recs {
		r, err := DecodeRecord(kr.Key, kr.Value)
		if err != nil {
			t.Fatalf("record at offset %d: %v", kr.Offset, err)
		}
		got, _ := r.Updates[0].Value.(string)
		if w := want[fmt.Sprint(r.Key.Seq)]; got != w {
			t.Fatalf("record of input %d holds a value of %d bytes starting %.10q, want %d bytes starting %.10q (a buffer reused too early?)",
				r.Key.Seq, len(got), got, len(w), w)
		}
	}
}

// testKafkaTakeRunningLinger: TakeRunningLinger hands the linger over once;
// afterwards a running record is written at once, without a Flush.
func testKafkaTakeRunningLinger(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic, KafkaRunningLinger(time.Minute))
	if d := k.TakeRunningLinger(); d != time.Minute {
		t.Fatalf("TakeRunningLinger = %v, want the configured minute", d)
	}
	if d := k.TakeRunningLinger(); d != 0 {
		t.Fatalf("second TakeRunningLinger = %v, want 0 (already handed over)", d)
	}
	r := kRec(1, "a", 1, "slow", StatusRunning)
	r.Updates = nil
	r.Calls = []CallRecord{{CallID: "c", Status: CallSucceeded, Result: []byte{0xc0}}}
	putAll(t, k, r)
	deadline := time.Now().Add(30 * time.Second)
	for len(readTopic(t, env, topic)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a running record Put after TakeRunningLinger was still not written after 30 s (held for the minute?)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pk := openKafka(t, env, testTopic(t), KafkaRunningLinger(time.Minute), KafkaFlushPerRecord(true)); pk.TakeRunningLinger() != 0 {
		t.Fatal("TakeRunningLinger with one flush per record: want 0 (nothing is held in that mode)")
	}
}

// testKafkaRunningLinger: a running record is held for the linger; a newer
// version of the same action within it replaces it unwritten; otherwise it
// is written when the linger ends, at a Flush (covered by the marker) or
// before a PutDurable of the same action.
func testKafkaRunningLinger(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	const linger = 300 * time.Millisecond
	k := openKafka(t, env, topic, KafkaRunningLinger(linger))
	call := func(r *Record, n int) *Record {
		if r.Status == StatusRunning {
			r.Updates = nil // as the core writes them: calls only
		}
		for i := range n {
			r.Calls = append(r.Calls, CallRecord{CallID: fmt.Sprintf("c%d", i), Status: CallSucceeded, Result: []byte{0xc0}})
		}
		return r
	}
	decoded := func(recs []*kgo.Record) map[string][]Status {
		out := map[string][]Status{}
		for _, kr := range recs {
			r, err := DecodeRecord(kr.Key, kr.Value)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%d/%s", r.Key.Seq, r.Key.Action)
			out[name] = append(out[name], r.Status)
		}
		return out
	}
	m0 := flush(t, k)

	// 1: two running versions and the completion within the linger: only
	// the completion is written.
	putAll(t, k, call(kRec(1, "a", 1, "coalesced", StatusRunning), 1), call(kRec(1, "a", 1, "coalesced", StatusRunning), 2),
		call(kRec(1, "a", 1, "coalesced", StatusCompleted), 2))
	// 2: a running version and a PutDurable of the same action: only the
	// durable one is written (it holds the earlier call).
	putAll(t, k, call(kRec(2, "b", 2, "durable", StatusRunning), 1))
	pending := call(kRec(2, "b", 2, "durable", StatusRunning), 1)
	pending.Calls = append(pending.Calls, CallRecord{CallID: "side-effect", Status: CallPending})
	if err := k.PutDurable(pending); err != nil {
		t.Fatal(err)
	}
	after := map[string][]Status{"1/coalesced": {StatusCompleted}, "2/durable": {StatusRunning}}
	if got := decoded(readTopic(t, env, topic)); !maps.EqualFunc(got, after, slices.Equal) {
		t.Fatalf("after the durable put the topic holds %v, want %v", got, after)
	}
	// 3: a running record nothing replaces is written once the linger is
	// over, without a Flush.
	putAll(t, k, call(kRec(3, "c", 3, "slow", StatusRunning), 1))
	deadline := time.Now().Add(10 * linger)
	for {
		if _, ok := decoded(readTopic(t, env, topic))["3/slow"]; ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held running record of 3/slow was not written %v after its linger", 10*linger)
		}
		time.Sleep(linger / 4)
	}
	// 4: a Flush writes what is held, and its marker covers it.
	putAll(t, k, call(kRec(4, "d", 4, "at-cut", StatusRunning), 1))
	m1 := flush(t, k)
	recs := readTopic(t, env, topic)
	got := decoded(recs)
	want := map[string][]Status{"1/coalesced": {StatusCompleted}, "2/durable": {StatusRunning},
		"3/slow": {StatusRunning}, "4/at-cut": {StatusRunning}}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("topic holds %v, want %v", got, want)
	}
	for _, kr := range recs {
		if r, _ := DecodeRecord(kr.Key, kr.Value); r.Key.Action == "at-cut" && m1.Offsets[kr.Partition] > kr.Offset {
			t.Errorf("marker %d of partition %d is past the held record of 4/at-cut at %d", m1.Offsets[kr.Partition], kr.Partition, kr.Offset)
		}
	}
	if m1.Offsets[Partition(1, testParts)] != m0.Offsets[Partition(1, testParts)] {
		t.Errorf("marker of partition %d moved while 1/coalesced is held in memory", Partition(1, testParts))
	}
	if s := k.KafkaStats(); s.RunningCoalesced != 3 || s.RecordsWritten != 4 {
		t.Errorf("stats: %d running records coalesced, %d written; want 3 and 4", s.RunningCoalesced, s.RecordsWritten)
	}
}

func testKafkaInvalidPut(t *testing.T, env *kafkaEnv) {
	k := openKafka(t, env, testTopic(t), owned(0, 3))
	if err := k.Put(&Record{Key: testKey("a")}); !isKind(err, ErrRecordInvalid) {
		t.Errorf("invalid record: %v", err)
	}
	// A running record with calls only is held unencoded: it is checked all
	// the same (a succeeded call's result must be one msgpack value).
	held := kRec(3, "a", 1, "x", StatusRunning)
	held.Updates, held.Calls = nil, []CallRecord{{CallID: "c", Status: CallSucceeded, Result: []byte{0x92, 0x01}}}
	if err := k.Put(held); !isKind(err, ErrRecordInvalid) || !strings.Contains(err.Error(), "calls[0]") {
		t.Errorf("held running record with a truncated result: %v", err)
	}
	if err := k.Put(kRec(4, "a", 1, "x", StatusCompleted)); !isKind(err, ErrRecordKeyGroup) {
		t.Errorf("key group 4 outside [0, 3]: %v", err)
	}
	// Neither made the store fail.
	putAll(t, k, kRec(3, "a", 1, "x", StatusCompleted))
	flush(t, k)
}

// sameRecord reports whether a and b encode to the same bytes.
func sameRecord(t *testing.T, a, b *Record) bool {
	t.Helper()
	ea, err := EncodeRecord(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := EncodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ea, eb)
}
