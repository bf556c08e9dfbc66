package statestore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func isKind(err, kind error) bool { return err != nil && errors.Is(err, kind) }

// wantErr fails unless err is of kind and its message holds every part.
func wantErr(t *testing.T, err, kind error, parts ...string) {
	t.Helper()
	if !isKind(err, kind) {
		t.Fatalf("err = %v, want kind %v", err, kind)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name %q", err, p)
		}
	}
}

func keySet(keys []RecordKey) map[RecordKey]bool {
	m := make(map[RecordKey]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// Three subtasks own [0,9], [10,19], [20,31] of 32 key groups on 8
// partitions; after a rescale to [0,3] and [4,31] each new subtask keeps
// exactly the needed records of its key groups and reads only its
// partitions.
func testKafkaRecoverRescale(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	old := [][2]int32{{0, 9}, {10, 19}, {20, 31}}
	var markers []snapshot.Marker
	need := map[RecordKey]*Record{} // records a restore from the markers must find
	for i, r := range old {
		k := openKafka(t, env, topic, owned(r[0], r[1]))
		for kg := r[0]; kg <= r[1]; kg++ {
			key := fmt.Sprintf("key-%d", kg)
			done := kRec(kg, key, 1, "a", StatusCompleted) // finished before cut 1: pruned
			running := kRec(kg, key, 2, "a", StatusRunning)
			running.Calls = []CallRecord{{CallID: "c1", Status: CallSucceeded, Result: []byte{0xc0}}}
			putAll(t, k, done, running)
			k.MarkInputDone(kg, done.Key.KeyHash, 1, 0)
			need[running.Key] = running
		}
		flush(t, k)
		if err := k.CheckpointComplete(1); err != nil {
			t.Fatal(err)
		}
		m := flush(t, k) // checkpoint 2: in flight, the running records
		m.CheckpointID = 2
		markers = append(markers, m)
		if i == 0 { // a record after the marker that replaces a needed one: the newer wins
			newer := kRec(3, "key-3", 2, "a", StatusCompleted)
			putAll(t, k, newer)
			flush(t, k)
			need[newer.Key] = newer
		}
		_ = k.Close()
	}
	raw := readTopic(t, env, topic)
	if want := len(need) + 32 + 1; len(raw) != want {
		t.Fatalf("topic holds %d records, want %d", len(raw), want)
	}
	for _, r := range [][2]int32{{0, 3}, {4, 31}} {
		k := openKafka(t, env, topic, owned(r[0], r[1]))
		for key := range need {
			if k.MayHold(key.KeyGroup, key.KeyHash, key.Seq) {
				t.Fatalf("MayHold(%v) before Recover", key)
			}
		}
		if err := k.Recover(testCtx(t), markers); err != nil {
			t.Fatalf("Recover %v: %v", r, err)
		}
		own := snapshot.KeyGroupRange{Start: r[0], End: r[1]}
		for key, want := range need {
			got, ok := k.Get(key)
			if own.Contains(key.KeyGroup) != ok {
				t.Fatalf("owned %v: Get(%v) found=%v", r, key, ok)
			}
			// MayHold: true up to the highest recovered input of the key,
			// false beyond it and for keys of other subtasks.
			if hold := k.MayHold(key.KeyGroup, key.KeyHash, key.Seq); hold != ok {
				t.Errorf("owned %v: MayHold(%v) = %v, Get found %v", r, key, hold, ok)
			}
			if k.MayHold(key.KeyGroup, key.KeyHash, key.Seq+1) {
				t.Errorf("owned %v: MayHold after the last recovered input of %v", r, key)
			}
			if ok && got.Status != want.Status {
				t.Errorf("Get(%v).Status = %d, want %d", key, got.Status, want.Status)
			}
		}
		s := k.KafkaStats()
		wantParts := PartitionsFor(own, testParts)
		if !slices.Equal(s.ReplayedPartitions, wantParts) {
			t.Errorf("owned %v read partitions %v, want %v", r, s.ReplayedPartitions, wantParts)
		}
		// Exactly the records of those partitions from the markers on were read.
		read, latest := 0, map[RecordKey]int64{}
		for _, rr := range raw {
			key, _ := ParseRecordKey(rr.Key)
			latest[key] = rr.Offset
			if slices.Contains(wantParts, rr.Partition) && rr.Offset >= minMarker(markers, rr.Partition) {
				read++
			}
		}
		if got := int(s.RecordsReplayed + s.RecordsSkipped); got != read {
			t.Errorf("owned %v: read %d records (%d kept, %d skipped), want %d", r, got, s.RecordsReplayed, s.RecordsSkipped, read)
		}
		if s.Records != len(k.Keys()) || s.RebuildTime <= 0 || s.BytesReplayed <= 0 {
			t.Errorf("stats %+v", s)
		}
		// The restored store goes on: its marker still covers the needed records.
		m := flush(t, k)
		for _, p := range wantParts {
			if m.Offsets[p] < minMarker(markers, p) {
				t.Errorf("after recovery partition %d: marker %d below the restored %d", p, m.Offsets[p], minMarker(markers, p))
			}
		}
		for key := range need {
			if p := Partition(key.KeyGroup, testParts); own.Contains(key.KeyGroup) && m.Offsets[p] > latest[key] {
				t.Errorf("after recovery partition %d: marker %d skips %v at offset %d", p, m.Offsets[p], key, latest[key])
			}
		}
	}
}

func minMarker(ms []snapshot.Marker, p int32) int64 {
	best := int64(-1)
	for _, m := range ms {
		if off, ok := m.Offsets[p]; ok && (best < 0 || off < best) {
			best = off
		}
	}
	return best
}

// Recover stops at the end offsets listed before reading, although another
// producer keeps appending to the same partitions.
func testKafkaRecoverConcurrent(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	w := openKafka(t, env, topic, KafkaNumPartitions(2))
	const n = 500
	for i := range n {
		putAll(t, w, kRec(int32(i%4), "k", uint64(i), "a", StatusCompleted))
	}
	m := flush(t, w)
	_ = w.Close()

	prod, _ := testClient(t, env, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, stop := context.WithCancel(context.Background())
	var produced atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		val, _ := EncodeRecord(kRec(0, "x", 0, "a", StatusCompleted))
		for i := 0; ctx.Err() == nil && i < 1_000_000; i++ {
			r := kRec(int32(i%4), "concurrent", uint64(i), "a", StatusCompleted)
			if err := prod.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Key: r.Key.Bytes(), Value: val}).FirstErr(); err != nil {
				return
			}
			produced.Add(1)
		}
	}()
	defer func() { stop(); wg.Wait() }()
	for produced.Load() < 50 {
		time.Sleep(10 * time.Millisecond)
	}
	r := openKafka(t, env, topic, KafkaNumPartitions(2))
	rctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	before := produced.Load()
	if err := r.Recover(rctx, []snapshot.Marker{m}); err != nil {
		t.Fatalf("Recover while another producer appends: %v", err)
	}
	after := produced.Load()
	got := r.KafkaStats().RecordsReplayed
	if got < n || got > n+after {
		t.Errorf("replayed %d records, want between %d and %d", got, n, n+after)
	}
	t.Logf("recovered %d records in %v while %d more were produced", got, r.KafkaStats().RebuildTime, after-before)
}

func testKafkaTopicIDMismatch(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic)
	putAll(t, k, kRec(1, "a", 1, "x", StatusRunning))
	m := flush(t, k)
	live := m.TopicID
	m.TopicID[0] ^= 0xff
	r := openKafka(t, env, topic)
	err := r.Recover(testCtx(t), []snapshot.Marker{m})
	wantErr(t, err, ErrKafkaRecover, topic, TopicIDString(live), TopicIDString(m.TopicID), "recreated")
	// Another topic name is refused too.
	m.TopicID, m.Topic = live, "other-topic"
	r = openKafka(t, env, topic)
	wantErr(t, r.Recover(testCtx(t), []snapshot.Marker{m}), ErrKafkaRecover, "other-topic", topic)
	// Recover runs once, before anything is written.
	wantErr(t, r.Recover(testCtx(t), nil), ErrKafkaRecover, "once")
	w := openKafka(t, env, topic)
	putAll(t, w, kRec(1, "a", 2, "x", StatusRunning))
	wantErr(t, w.Recover(testCtx(t), nil), ErrKafkaRecover, "before the first Put")
}

func testKafkaOffsetsDeleted(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic)
	for i := range 5 {
		putAll(t, k, kRec(2, "a", uint64(i), "x", StatusRunning))
	}
	m := flush(t, k)
	_, adm := testClient(t, env)
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: 2, At: 3})
	resp, err := adm.DeleteRecords(testCtx(t), os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords: %v", err)
	}
	r := openKafka(t, env, topic)
	err = r.Recover(testCtx(t), []snapshot.Marker{m})
	wantErr(t, err, ErrKafkaRecover, "partition 2", "offset 0", "starts at offset 3")
}

// With tombstones, the records of finished inputs disappear from a replay
// of the log; those of inputs still in flight stay.
func testKafkaTombstones(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic, KafkaTombstones(true))
	var finished, inflight []*Record
	for kg := int32(0); kg < 6; kg++ {
		f := kRec(kg, "key", 1, "a", StatusCompleted)
		r := kRec(kg, "key", 2, "a", StatusRunning)
		finished, inflight = append(finished, f), append(inflight, r)
		putAll(t, k, f, r)
		k.MarkInputDone(kg, f.Key.KeyHash, 1, 4)
	}
	m := flush(t, k) // the marker of checkpoint 5 still covers both
	// Checkpoint 4 was cut before the inputs finished (lastCut 4): nothing goes.
	if err := k.CheckpointComplete(4); err != nil {
		t.Fatal(err)
	}
	if k.KafkaStats().Pruned != 0 {
		t.Fatal("pruned at a checkpoint that does not cover the inputs")
	}
	if err := k.CheckpointComplete(5); err != nil {
		t.Fatal(err)
	}
	flush(t, k)
	if s := k.KafkaStats(); s.Tombstones != int64(len(finished)) || s.Pruned != int64(len(finished)) {
		t.Fatalf("tombstones %d, pruned %d, want %d", s.Tombstones, s.Pruned, len(finished))
	}
	nulls := 0
	for _, r := range readTopic(t, env, topic) {
		if r.Value == nil {
			nulls++
			if key, _ := ParseRecordKey(r.Key); key.Seq != 1 {
				t.Errorf("tombstone for %v, an input in flight", key)
			}
		}
	}
	if nulls != len(finished) {
		t.Errorf("%d tombstones in the topic, want %d", nulls, len(finished))
	}
	r := openKafka(t, env, topic)
	if err := r.Recover(testCtx(t), []snapshot.Marker{m}); err != nil {
		t.Fatal(err)
	}
	got := keySet(r.Keys())
	for _, f := range finished {
		if got[f.Key] {
			t.Errorf("finished %v survived its tombstone", f.Key)
		}
	}
	for _, f := range inflight {
		if !got[f.Key] {
			t.Errorf("in-flight %v lost", f.Key)
		}
	}
}

func testKafkaEncryption(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	key1, key2 := make([]byte, 32), make([]byte, 32)
	for i := range key1 {
		key1[i], key2[i] = byte(i), byte(i+1)
	}
	k := openKafka(t, env, topic, KafkaEncryptionKey(key1))
	rec := typicalRecord(t) // key group 17
	rec.Updates[0].Value = "secret-sentiment"
	putAll(t, k, rec)
	m := flush(t, k)
	raw := readTopic(t, env, topic)
	if len(raw) != 1 || raw[0].Value[0] != envelopeMagic || strings.Contains(string(raw[0].Value), "secret-sentiment") {
		t.Fatalf("value in the topic is not an envelope: %q", raw[0].Value)
	}
	r := openKafka(t, env, topic, KafkaEncryptionKey(key1))
	if err := r.Recover(testCtx(t), []snapshot.Marker{m}); err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Get(rec.Key); !ok || got.Updates[0].Value != "secret-sentiment" || got.Calls[0].CallID != "llm.classify" {
		t.Fatalf("recovered %+v, %v", got, ok)
	}
	wrong := openKafka(t, env, topic, KafkaEncryptionKey(key2))
	err := wrong.Recover(testCtx(t), []snapshot.Marker{m})
	var de *DecryptError
	if !errors.As(err, &de) {
		t.Fatalf("wrong key: err = %v, want a *DecryptError", err)
	}
	wantErr(t, err, ErrDecrypt, "another key", "partition 1")
	none := openKafka(t, env, topic)
	wantErr(t, none.Recover(testCtx(t), []snapshot.Marker{m}), ErrDecrypt, "no key is configured")
}

// testKafkaCompression: records written with a codec are recovered, by a
// store whose own codec is another.
func testKafkaCompression(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic, KafkaCompression("zstd"))
	rec := typicalRecord(t)
	putAll(t, k, rec)
	m := flush(t, k)
	r := openKafka(t, env, topic) // none
	if err := r.Recover(testCtx(t), []snapshot.Marker{m}); err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Get(rec.Key); !ok || !sameRecord(t, got, rec) {
		t.Fatalf("recovered %+v, %v; want %+v", got, ok, rec)
	}
}

// testKafkaRecoveredKeep: after a Recover, what the store writes for the
// inputs it recovered records of stays readable (the core may ask: MayHold);
// for other inputs only keys and offsets are kept once acknowledged.
func testKafkaRecoveredKeep(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic, KafkaRunningLinger(0))
	putAll(t, k, kRec(1, "a", 1, "first", StatusRunning))
	m := flush(t, k)
	m.CheckpointID = 5
	r := openKafka(t, env, topic)
	if err := r.Recover(testCtx(t), []snapshot.Marker{m}); err != nil {
		t.Fatal(err)
	}
	again := kRec(1, "a", 1, "second", StatusCompleted) // the recovered input, re-run
	other := kRec(1, "b", 1, "first", StatusCompleted)
	putAll(t, r, again, other)
	flush(t, r)
	if got, ok := r.Get(again.Key); !ok || !sameRecord(t, got, again) {
		t.Errorf("Get of a recovered input's new record = %v, %v", got, ok)
	}
	if got, ok := r.Get(other.Key); ok {
		t.Errorf("Get of another input's acknowledged record = %v: its value is kept", got)
	}
	// An input done after the restored cut (5) is in no later marker: it
	// leaves memory when it is marked done.
	before := r.KafkaStats().Records
	r.MarkInputDone(1, other.Key.KeyHash, 1, 5)
	if s := r.KafkaStats(); s.Records != before-1 || s.Pruned != 1 {
		t.Errorf("after other was done: %d records held (was %d), %d pruned; want one fewer and 1", s.Records, before, s.Pruned)
	}
}

func testKafkaControl(t *testing.T, env *kafkaEnv) {
	topic, control := testTopic(t), testTopic(t)+"-control"
	k := openKafka(t, env, topic)
	for i := range 10 {
		putAll(t, k, kRec(1, "a", uint64(i), "x", StatusRunning))
	}
	m := flush(t, k) // partition 1 at offset 0
	id, _ := k.TopicID()
	open := func() *Kafka { return openKafka(t, env, topic, KafkaCleanupControlTopic(control)) }

	wantErr(t, open().Recover(testCtx(t), []snapshot.Marker{m}), ErrKafkaRecover, "no COMMITTED cleanup boundary", control)

	cl, _ := testClient(t, env)
	rec := &ControlRecord{Version: ControlVersion, PlanID: "plan-1", Topic: topic, TopicID: TopicIDString(id),
		State: ControlCommitted, Offsets: map[int32]int64{1: 4}}
	if err := WriteControl(testCtx(t), cl, control, rec); err != nil {
		t.Fatal(err)
	}
	got, err := ReadControl(testCtx(t), cl, control, topic)
	if err != nil || got == nil || got.PlanID != "plan-1" || got.Offsets[1] != 4 {
		t.Fatalf("ReadControl = %+v, %v", got, err)
	}
	wantErr(t, open().Recover(testCtx(t), []snapshot.Marker{m}), ErrKafkaRecover,
		"partition 1", "offset 0", "boundary 4", "plan-1")

	above := m
	above.Offsets = map[int32]int64{}
	maps.Copy(above.Offsets, m.Offsets)
	above.Offsets[1] = 4
	if err := open().Recover(testCtx(t), []snapshot.Marker{above}); err != nil {
		t.Fatalf("marker at the boundary: %v", err)
	}
	rec.State = ControlApplied
	rec.Offsets[1] = 6
	rec.PlanID = "plan-2"
	if err := WriteControl(testCtx(t), cl, control, rec); err != nil {
		t.Fatal(err)
	}
	wantErr(t, open().Recover(testCtx(t), []snapshot.Marker{above}), ErrKafkaRecover, "offset 4", "boundary 6")
	above.Offsets[1] = 8
	if err := open().Recover(testCtx(t), []snapshot.Marker{above}); err != nil {
		t.Fatalf("marker above the boundary: %v", err)
	}
	legacy := above
	legacy.TopicID = snapshot.UUID{}
	wantErr(t, open().Recover(testCtx(t), []snapshot.Marker{legacy}), ErrKafkaRecover, "no topic id")

	// Boundaries only move forward.
	back := *rec
	back.PlanID, back.Offsets = "plan-0", map[int32]int64{1: 2}
	wantErr(t, WriteControl(testCtx(t), cl, control, &back), ErrControl, "partition 1", "below the committed 6")

	_, err = openKafkaErr(t, env, topic, KafkaCleanupControlTopic(control), KafkaTombstones(true))
	wantErr(t, err, ErrKafkaConfig, "kafkaActionStateTombstoneEnabled", "kafkaActionStateCleanupControlTopic")
}

func testKafkaBrokerFailure(t *testing.T, env *kafkaEnv) {
	if env.stop == nil {
		t.Skip("this environment cannot stop its broker (set FLINKGO_KAFKA_SCRIPT to testdata/kafka/kafka.sh to test it on the real broker)")
	}
	k := openKafka(t, env, testTopic(t), KafkaDeliveryTimeout(time.Second))
	putAll(t, k, kRec(1, "a", 1, "x", StatusCompleted))
	flush(t, k)
	env.stop(t)
	start := time.Now()
	_ = k.Put(kRec(1, "a", 2, "x", StatusCompleted)) // may succeed: it is buffered
	_, err := k.Flush()
	wantErr(t, err, ErrKafkaWrite, "topic", "partition 1")
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Flush took %v to report the failure", d)
	}
	// Sticky: every later write reports it.
	if err2 := k.Put(kRec(1, "a", 3, "x", StatusCompleted)); !isKind(err2, ErrKafkaWrite) {
		t.Errorf("Put after the failure: %v", err2)
	}
	if err2 := k.PutDurable(kRec(1, "a", 4, "x", StatusCompleted)); !isKind(err2, ErrKafkaWrite) {
		t.Errorf("PutDurable after the failure: %v", err2)
	}
	if _, err2 := k.Flush(); !isKind(err2, ErrKafkaWrite) {
		t.Errorf("Flush after the failure: %v", err2)
	}
	t.Logf("failure reported after %v: %v", time.Since(start), err)
}

// testKafkaFlushCut: after FlushCut(c) an input done before cut c+1 is in
// no later marker, so (tombstones off) its records leave memory at once,
// not when a checkpoint completes; one still in flight at a cut stays in
// that cut's marker.
func testKafkaFlushCut(t *testing.T, env *kafkaEnv) {
	topic := testTopic(t)
	k := openKafka(t, env, topic, owned(0, 3), KafkaRunningLinger(0))
	a := kRec(1, "a", 1, "act", StatusCompleted) // done after cut 2
	b := kRec(1, "b", 1, "act", StatusCompleted) // done after cut 1
	putAll(t, k, a, b)
	m1, err := k.FlushCut(1)
	if err != nil {
		t.Fatal(err)
	}
	held := func() int { k.mu.Lock(); defer k.mu.Unlock(); return k.idx.n }
	k.MarkInputDone(1, b.Key.KeyHash, 1, 1) // finished before cut 2: no later marker needs it
	if n := held(); n != 1 {
		t.Fatalf("%d records held after b was done, want 1 (a)", n)
	}
	// a finishes after the core's cut 2 but before the store's FlushCut(2):
	// it was in flight at cut 2, so marker 2 still covers it.
	k.MarkInputDone(1, a.Key.KeyHash, 1, 2)
	if n := held(); n != 1 {
		t.Fatalf("%d records held, want a until the marker of cut 2 is taken", n)
	}
	m2, err := k.FlushCut(2)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Offsets[1] != m1.Offsets[1] {
		t.Fatalf("marker 2 at %d: a (offset %d) was in flight at cut 2", m2.Offsets[1], m1.Offsets[1])
	}
	deadline := time.Now().Add(10 * time.Second)
	for held() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // FlushCut forgets off the snapshot's path
	}
	m3, err := k.FlushCut(3)
	if err != nil || held() != 0 || m3.Offsets[1] != m1.Offsets[1]+2 {
		t.Fatalf("after a was done: %d held, marker 3 at %d (want the end, %d), %v", held(), m3.Offsets[1], m1.Offsets[1]+2, err)
	}
	if s := k.KafkaStats(); s.Pruned != 2 {
		t.Errorf("%d records pruned, want 2", s.Pruned)
	}
	// With tombstones on, records wait for their checkpoint to complete,
	// which writes their tombstones.
	tk := openKafka(t, env, testTopic(t), owned(0, 3), KafkaTombstones(true))
	putAll(t, tk, b)
	if _, err := tk.FlushCut(1); err != nil {
		t.Fatal(err)
	}
	tk.MarkInputDone(1, b.Key.KeyHash, 1, 1)
	if _, err := tk.FlushCut(2); err != nil {
		t.Fatal(err)
	}
	if s := tk.KafkaStats(); s.Records != 1 || s.Pruned != 0 {
		t.Fatalf("tombstones on: %d held, %d pruned before the checkpoint completed; want 1 and 0", s.Records, s.Pruned)
	}
	if err := tk.CheckpointComplete(2); err != nil {
		t.Fatal(err)
	}
	flush(t, tk)
	if s := tk.KafkaStats(); s.Records != 0 || s.Tombstones != 1 {
		t.Fatalf("after checkpoint 2 completed: %d held, %d tombstones; want 0 and 1", s.Records, s.Tombstones)
	}
}
