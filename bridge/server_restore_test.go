package bridge

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/examples/orderscoring"
	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
)

// gateAgent echoes rows; the key "gated" waits until gate is closed.
func gateAgent(gate chan struct{}) *operator.Agent {
	a := echoAgent(0)
	fn := a.Actions[0].Fn
	a.Actions[0].Fn = func(ctx *operator.Context, ev *operator.Event) error {
		if ev.Input().Value(0) == "gated" {
			<-gate
		}
		return fn(ctx, ev)
	}
	return a
}

func restoreFrames(snaps []*Snapshot) (rs []*Restore, marker []byte) {
	for _, f := range snaps {
		for _, s := range f.Sections {
			rs = append(rs, &Restore{KeyGroup: s.KeyGroup, Section: s.Section})
		}
		if f.Last {
			marker = f.Marker
		}
	}
	return rs, marker
}

// TestServeRestoreReRunsInFlight: an input in flight at the cut (and one
// queued behind it) runs again in a server restored from the snapshot.
func TestServeRestoreReRunsInFlight(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{gateAgent(gate)}}, echoCols)
	j.handshake(j.defaultOpen("echo", map[string]string{"num-async-threads": "2"}), nil, nil)
	j.data(row{kg: 4, key: "gated", ts: 1, values: []any{"gated", int64(1)}},
		row{kg: 4, key: "gated", ts: 2, values: []any{"gated", int64(2)}},
		row{kg: 8, key: "free", ts: 3, values: []any{"free", int64(3)}})
	c := j.collect(FrameOutput)
	if !reflect.DeepEqual(c.rows, [][]any{{int64(3), "free", int64(3)}}) {
		t.Fatalf("before the barrier: %v", c.rows)
	}
	j.send(&Barrier{CheckpointID: 3})
	c = j.collect(FrameSnapshot)
	restore, marker := restoreFrames(c.snaps)
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}

	open := make(chan struct{})
	close(open)
	j2 := startServe(t, ServerConfig{Agents: []*operator.Agent{gateAgent(open)}}, echoCols)
	// go.credit.bytes so large that the one-row DATA below (its share of
	// the frame's bytes is a whole frame) leaves the window at go.credit.rows.
	rd := j2.handshake(j2.defaultOpen("echo", map[string]string{OptCreditBytes: "1g"}), restore, [][]byte{marker})
	j2.data(row{kg: 8, key: "free", ts: 4, values: []any{"free", int64(4)}})
	j2.send(&EndInput{})
	c = j2.collect(FrameEndAck)
	got := byKey(c.rows, 1)
	want := map[string][][]any{
		"gated": {{int64(1), "gated", int64(1)}, {int64(2), "gated", int64(2)}},
		"free":  {{int64(4), "free", int64(4)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after restore: %v, want %v", got, want)
	}
	// The two restored inputs do not earn credit: READY's credit and what
	// followed, less the one row sent, is the window, nothing more.
	if rd.Credit != initialCreditRows || rd.Credit+c.credit-1 != defaultCreditRows {
		t.Fatalf("credit %d (READY %d), want %d (READY %d)", c.credit, rd.Credit, defaultCreditRows-initialCreditRows+1, initialCreditRows)
	}
	j2.send(&Close{})
	if err := j2.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeSnapshotSplitAndMemoryStore: with a small max frame, a snapshot
// of many key groups spans several SNAPSHOT frames; only the last has the
// marker (of the memory store). A restore from all of them continues the
// state of every key.
func TestServeSnapshotSplitAndMemoryStore(t *testing.T) {
	opts := map[string]string{"actionStateStoreBackend": "memory"}
	j := startOrders(t)
	open := j.defaultOpen(orderscoring.AgentName, opts)
	open.MaxFrame = 4096
	j.handshake(open, nil, nil)
	const customers = 120
	var rows []row
	for i := 0; i < customers; i++ {
		name := fmt.Sprintf("customer-%03d", i)
		rows = append(rows, row{kg: int32(i), key: name, ts: int64(i), values: []any{name, int64(i), float64(10 + i)}})
		if len(rows) == 20 {
			j.data(rows...)
			rows = nil
		}
	}
	j.send(&Watermark{TS: 1000})
	j.collect(FrameWmAck)
	j.send(&Barrier{CheckpointID: 5})
	c := j.collect(FrameSnapshot)
	if len(c.snaps) < 2 {
		t.Fatalf("%d SNAPSHOT frames, want a split", len(c.snaps))
	}
	for i, f := range c.snaps {
		if f.CheckpointID != 5 || f.Last != (i == len(c.snaps)-1) || (f.Marker != nil) != f.Last {
			t.Fatalf("frame %d: id %d last %v marker %d bytes", i, f.CheckpointID, f.Last, len(f.Marker))
		}
	}
	restore, marker := restoreFrames(c.snaps)
	mk, err := snapshot.DecodeMarker(marker)
	if err != nil || mk.Backend != "memory" || mk.CheckpointID != 5 {
		t.Fatalf("marker %+v, %v", mk, err)
	}
	if len(restore) != customers {
		t.Fatalf("%d sections, want %d", len(restore), customers)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}

	j2 := startOrders(t)
	j2.handshake(j2.defaultOpen(orderscoring.AgentName, nil), restore, [][]byte{marker})
	j2.data(row{kg: 7, key: "customer-007", ts: 500, values: []any{"customer-007", int64(500), 17.0}})
	j2.send(&EndInput{})
	c = j2.collect(FrameEndAck)
	want := [][]any{{int64(500), "customer-007", int64(500), int64(2), 17.0, orderscoring.Risk(17, []float64{17}), false}}
	if !reflect.DeepEqual(c.rows, want) {
		t.Fatalf("after restore: %v, want %v", c.rows, want)
	}
	j2.send(&Close{})
	if err := j2.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeRetryUsesTicks: error-handling-strategy=retry backs off on the
// runtime's clock; the retried action succeeds and its output follows.
func TestServeRetryUsesTicks(t *testing.T) {
	var calls atomic.Int32
	a := echoAgent(0)
	fn := a.Actions[0].Fn
	a.Actions[0].Fn = func(ctx *operator.Context, ev *operator.Event) error {
		if calls.Add(1) <= 2 {
			return operator.Retryable(errors.New("try again"))
		}
		return fn(ctx, ev)
	}
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{a}}, echoCols)
	j.handshake(j.defaultOpen("echo", map[string]string{"error-handling-strategy": "retry", "retry-wait-interval": "40 ms"}), nil, nil)
	start := time.Now()
	j.data(row{kg: 1, key: "a", ts: 9, values: []any{"a", int64(1)}})
	c := j.collect(FrameOutput)
	if d := time.Since(start); d < 100*time.Millisecond || calls.Load() != 3 {
		t.Fatalf("output after %v and %d calls; want two back-offs (40 ms, 80 ms) and 3 calls", d, calls.Load())
	}
	if !reflect.DeepEqual(c.rows, [][]any{{int64(9), "a", int64(1)}}) {
		t.Fatalf("rows %v", c.rows)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}
