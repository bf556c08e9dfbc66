package statestore

import (
	"slices"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/twmb/franz-go/pkg/kfake"
)

// seqsOf lists the sequence numbers of the held records of key.
func seqsOf(keys []RecordKey, key string) []uint64 {
	var out []uint64
	for _, k := range keys {
		if k.KeyHash == HashKey([]byte(key)) {
			out = append(out, k.Seq)
		}
	}
	slices.Sort(out)
	return out
}

func TestMemoryMarkDoneBelow(t *testing.T) {
	m := NewMemory()
	for seq := uint64(0); seq < 3; seq++ {
		mustPut(t, m, kRec(3, "a", seq, "act", StatusCompleted))
	}
	mustPut(t, m, kRec(3, "b", 0, "act", StatusCompleted))
	mustFlush(t, m)
	m.SimulateCrash(false) // a restore: the marks of the old process are gone

	m.MarkDoneBelow(3, HashKey([]byte("a")), 2, 5) // a: inputs 0 and 1 finished before cut 5
	m.MarkDoneBelow(3, HashKey([]byte("b")), 0, 5) // b: nothing below 0
	m.MarkDoneBelow(3, HashKey([]byte("c")), 9, 5) // c holds no records: ignored
	m.MarkDoneBelow(4, HashKey([]byte("a")), 9, 5) // another key group: another key
	if err := m.CheckpointComplete(5); err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(m.Keys(), "a"); !slices.Equal(got, []uint64{0, 1, 2}) {
		t.Fatalf("checkpoint 5 (not after the cut) pruned: a holds %v", got)
	}
	if err := m.CheckpointComplete(6); err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(m.Keys(), "a"); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("after checkpoint 6, a holds %v, want [2]", got)
	}
	if got := seqsOf(m.Keys(), "b"); !slices.Equal(got, []uint64{0}) {
		t.Fatalf("b holds %v, want [0]", got)
	}
	if st := m.Stats(); st.Pruned != 2 || st.Records != 2 {
		t.Fatalf("stats %+v, want 2 pruned and 2 held", st)
	}
	// Marks are consumed: a later mark works again (the index is rebuilt).
	m.MarkDoneBelow(3, HashKey([]byte("a")), 3, 6)
	if err := m.CheckpointComplete(7); err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(m.Keys(), "a"); len(got) != 0 {
		t.Fatalf("a holds %v after marking below 3", got)
	}
}

// TestKafkaMarkDoneBelow: the recovered records of inputs that finished
// before the restored cut are pruned once marked, and the marker moves past
// them.
func TestKafkaMarkDoneBelow(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	env := &kafkaEnv{bootstrap: c.ListenAddrs()[0]}
	topic := testTopic(t)
	k1 := openKafka(t, env, topic, KafkaNumPartitions(1))
	for seq := uint64(0); seq < 4; seq++ {
		putAll(t, k1, kRec(0, "a", seq, "act", StatusCompleted))
	}
	m1 := flush(t, k1)
	m1.CheckpointID = 1
	_ = k1.Close()

	k2 := openKafka(t, env, topic, KafkaNumPartitions(1))
	if err := k2.Recover(testCtx(t), []snapshot.Marker{m1}); err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(k2.Keys(), "a"); !slices.Equal(got, []uint64{0, 1, 2, 3}) {
		t.Fatalf("recovered %v", got)
	}
	k2.MarkDoneBelow(0, HashKey([]byte("a")), 3, 1) // input 3 was in flight at cut 1
	if err := k2.CheckpointComplete(2); err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(k2.Keys(), "a"); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("after pruning, held %v, want [3]", got)
	}
	m2 := flush(t, k2)
	if m1.Offsets[0] != 0 || m2.Offsets[0] != 3 {
		t.Fatalf("markers %v then %v: want partition 0 from offset 0, then from 3 (the record of input 3)", m1.Offsets, m2.Offsets)
	}
}
