package statestore

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
)

// memRec is a small valid record of input seq of key "k<key>".
func memRec(key string, seq uint64, action string, status Status) *Record {
	return &Record{
		Key:    RecordKey{KeyGroup: 3, KeyHash: HashKey([]byte(key)), Seq: seq, EventID: testUUID(byte(seq)), Action: action},
		Status: status,
		Updates: []MemUpdate{
			{Scope: ScopeShortTerm, Path: "last", Value: action},
		},
	}
}

func mustPut(t *testing.T, s ActionStore, r *Record) {
	t.Helper()
	if err := s.Put(r); err != nil {
		t.Fatalf("Put(%v): %v", r.Key, err)
	}
}

func mustFlush(t *testing.T, s ActionStore) snapshot.Marker {
	t.Helper()
	m, err := s.Flush()
	if err != nil {
		t.Fatalf("Flush: %v", err)
	}
	return m
}

func TestMemoryPutGet(t *testing.T) {
	for _, enc := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepEncoded=%v", enc), func(t *testing.T) {
			s := NewMemory(KeepEncoded(enc))
			r1 := memRec("a", 0, "act", StatusRunning)
			if _, ok := s.Get(r1.Key); ok {
				t.Fatal("Get on an empty store found a record")
			}
			mustPut(t, s, r1)
			r2 := memRec("a", 0, "act", StatusCompleted) // same key: replaces
			mustPut(t, s, r2)
			got, ok := s.Get(r1.Key)
			if !ok || !reflect.DeepEqual(got, r2) {
				t.Fatalf("Get = %+v, %v; want the last record Put", got, ok)
			}
			if enc == (got == r2) {
				t.Fatalf("KeepEncoded=%v: Get returned the Put pointer = %v", enc, got == r2)
			}
			st := s.Stats()
			v, _ := EncodeRecord(r2)
			if st.Puts != 2 || st.Records != 1 || st.Bytes != int64(r2.Key.EncodedLen()+len(v)) {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}

// Two events with equal attributes but different ids are different records.
func TestMemoryDistinctEvents(t *testing.T) {
	s := NewMemory()
	a := memRec("k", 0, "act", StatusCompleted)
	b := memRec("k", 0, "act", StatusCompleted)
	b.Key.EventID = testUUID(0x77)
	mustPut(t, s, a)
	mustPut(t, s, b)
	if n := s.Stats().Records; n != 2 {
		t.Fatalf("records = %d, want 2", n)
	}
}

func TestMemoryPutInvalid(t *testing.T) {
	s := NewMemory()
	err := s.Put(&Record{Key: testKey("a")}) // status 0
	if !errors.Is(err, ErrRecordInvalid) {
		t.Fatalf("err = %v, want ErrRecordInvalid", err)
	}
	mustPut(t, s, memRec("a", 0, "act", StatusRunning)) // the store still works
	if st := s.Stats(); st.Records != 1 || st.Puts != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestMemoryFlushMarker(t *testing.T) {
	s := NewMemory()
	var last int64 = -1
	check := func(want int64) {
		t.Helper()
		m := mustFlush(t, s)
		if m.Backend != "memory" || m.Version != snapshot.MarkerVersion || m.CheckpointID != 0 {
			t.Fatalf("marker = %+v", m)
		}
		off := m.Offsets[0]
		if off < last || off != want {
			t.Fatalf("offset = %d, want %d (previous %d)", off, want, last)
		}
		last = off
	}
	check(0)
	mustPut(t, s, memRec("a", 0, "x", StatusRunning))
	mustPut(t, s, memRec("a", 0, "x", StatusCompleted))
	check(2)
	check(2)
	mustPut(t, s, memRec("b", 0, "x", StatusRunning))
	s.SimulateCrash(true) // loses the record at position 2; positions do not go back
	check(3)
	if err := s.PutDurable(memRec("c", 0, "x", StatusRunning)); err != nil {
		t.Fatal(err)
	}
	check(4)
	if st := s.Stats(); st.Flushes != 5 || st.DurablePuts != 1 || st.Puts != 3 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestMemorySimulateCrash(t *testing.T) {
	s := NewMemory()
	flushed := memRec("a", 0, "x", StatusCompleted)
	replacedOld := memRec("b", 0, "x", StatusRunning)
	replacedNew := memRec("b", 0, "x", StatusCompleted)
	unflushed := memRec("c", 0, "x", StatusRunning)
	durable := memRec("d", 0, "x", StatusRunning)
	afterDurable := memRec("d", 0, "x", StatusCompleted)
	mustPut(t, s, flushed)
	mustPut(t, s, replacedOld)
	mustFlush(t, s)
	mustPut(t, s, replacedNew)
	mustPut(t, s, unflushed)
	if err := s.PutDurable(durable); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, afterDurable)

	s.SimulateCrash(true)
	want := map[RecordKey]*Record{
		flushed.Key:     flushed,
		replacedOld.Key: replacedOld, // the unflushed replacement is lost
		durable.Key:     durable,     // PutDurable survives, the Put after it not
	}
	for k, r := range want {
		if got, ok := s.Get(k); !ok || got != r {
			t.Errorf("after the crash Get(%v) = %v, %v; want %v", k, got, ok, r.Status)
		}
	}
	if _, ok := s.Get(unflushed.Key); ok {
		t.Error("an unflushed record survived SimulateCrash(true)")
	}
	st := s.Stats()
	var bytes int64
	for _, r := range want {
		v, _ := EncodeRecord(r)
		bytes += int64(r.Key.EncodedLen() + len(v))
	}
	if st.Records != 3 || st.Lost != 3 || st.Bytes != bytes {
		t.Fatalf("stats = %+v, want 3 records of %d bytes, 3 lost", st, bytes)
	}
	if keys := s.Keys(); len(keys) != 3 {
		t.Fatalf("Keys() = %v", keys)
	}

	// What survived is durable now: a second crash loses nothing more.
	s.SimulateCrash(true)
	if st := s.Stats(); st.Records != 3 || st.Lost != 3 {
		t.Fatalf("second crash: stats = %+v", st)
	}
	// Without loss, unflushed records survive.
	mustPut(t, s, unflushed)
	s.SimulateCrash(false)
	if _, ok := s.Get(unflushed.Key); !ok {
		t.Fatal("SimulateCrash(false) lost a record")
	}
}

func TestMemoryPruning(t *testing.T) {
	s := NewMemory()
	// Input 0 of key a: two actions, finished before the cut of checkpoint 1.
	a0x, a0y := memRec("a", 0, "x", StatusCompleted), memRec("a", 0, "y", StatusCompleted)
	// Input 1 of key a: finished after the cut of checkpoint 1.
	a1 := memRec("a", 1, "x", StatusCompleted)
	// Input 0 of key b: still running, never marked done.
	b0 := memRec("b", 0, "x", StatusRunning)
	for _, r := range []*Record{a0x, a0y, a1, b0} {
		mustPut(t, s, r)
	}
	hash := HashKey([]byte("a"))
	s.MarkInputDone(3, hash, 0, 0) // no cut processed yet
	s.MarkInputDone(3, hash, 1, 1) // after the cut of checkpoint 1
	s.MarkInputDone(3, hash, 7, 0) // an input without records: ignored
	mustFlush(t, s)

	present := func(rs ...*Record) {
		t.Helper()
		for _, r := range rs {
			if _, ok := s.Get(r.Key); !ok {
				t.Fatalf("record %v was pruned too early", r.Key)
			}
		}
	}
	absent := func(rs ...*Record) {
		t.Helper()
		for _, r := range rs {
			if _, ok := s.Get(r.Key); ok {
				t.Fatalf("record %v was not pruned", r.Key)
			}
		}
	}
	if err := s.CheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	absent(a0x, a0y)
	present(a1, b0) // checkpoint 1 still holds input 1 in flight
	if err := s.CheckpointComplete(2); err != nil {
		t.Fatal(err)
	}
	absent(a1)
	present(b0)
	if err := s.CheckpointComplete(100); err != nil {
		t.Fatal(err)
	}
	present(b0)
	if st := s.Stats(); st.Pruned != 3 || st.Records != 1 {
		t.Fatalf("stats = %+v", st)
	}

	// Marks are process-local: a crash forgets them.
	b0done := memRec("b", 0, "x", StatusCompleted)
	mustPut(t, s, b0done)
	s.MarkInputDone(3, HashKey([]byte("b")), 0, 100)
	s.SimulateCrash(false)
	if err := s.CheckpointComplete(101); err != nil {
		t.Fatal(err)
	}
	present(b0done)
}

func TestMemoryFailAndClose(t *testing.T) {
	s := NewMemory()
	mustPut(t, s, memRec("a", 0, "x", StatusRunning))
	boom := errors.New("send failed")
	s.Fail(boom)
	r := memRec("b", 0, "x", StatusRunning)
	if err := s.Put(r); !errors.Is(err, boom) {
		t.Fatalf("Put after Fail: %v", err)
	}
	if err := s.PutDurable(r); !errors.Is(err, boom) {
		t.Fatalf("PutDurable after Fail: %v", err)
	}
	if _, err := s.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush after Fail: %v", err)
	}
	if _, ok := s.Get(r.Key); ok {
		t.Fatal("a failed Put stored its record")
	}
	s.SimulateCrash(false)
	mustPut(t, s, r)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Put(r); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
	if _, err := s.Flush(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v", err)
	}
	if _, ok := s.Get(r.Key); !ok {
		t.Fatal("Get after Close must still read memory")
	}
}

// Run with -race: workers Put while the core Gets, flushes, marks and prunes.
func TestMemoryConcurrent(t *testing.T) {
	for _, enc := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepEncoded=%v", enc), func(t *testing.T) {
			s := NewMemory(KeepEncoded(enc))
			const workers, perWorker = 4, 200
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := fmt.Sprintf("w%d", w)
					for i := range perWorker {
						r := memRec(key, uint64(i/2), "x", Status(1+i%2)) // two Puts per key
						var err error
						if i%10 == 0 {
							err = s.PutDurable(r)
						} else {
							err = s.Put(r)
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			stop := make(chan struct{})
			var core sync.WaitGroup
			core.Add(1)
			go func() { // the core
				defer core.Done()
				var last int64
				for cp := int64(1); ; cp++ {
					select {
					case <-stop:
						return
					default:
					}
					for w := range workers {
						k := memRec(fmt.Sprintf("w%d", w), uint64(cp%50), "x", 1).Key
						if r, ok := s.Get(k); ok && r.Key != k {
							t.Errorf("Get(%v) returned %v", k, r.Key)
						}
					}
					m, err := s.Flush()
					if err != nil {
						t.Error(err)
						return
					}
					if m.Offsets[0] < last {
						t.Errorf("marker went back from %d to %d", last, m.Offsets[0])
					}
					last = m.Offsets[0]
					s.MarkInputDone(3, HashKey([]byte("w0")), uint64(cp%50), cp-1)
					if err := s.CheckpointComplete(cp); err != nil {
						t.Error(err)
					}
					_ = s.Stats()
				}
			}()
			wg.Wait()
			close(stop)
			core.Wait()
			st := s.Stats()
			if st.Puts+st.DurablePuts != workers*perWorker {
				t.Fatalf("stats = %+v, want %d puts", st, workers*perWorker)
			}
			if st.Records+int(st.Pruned) < (workers-1)*perWorker/2 || st.Records > workers*perWorker/2 {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}
