package operator

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// cut takes a checkpoint through the real section codec and returns the
// decoded sections.
func (d *driver) cut(id int64) []*snapshot.Section {
	d.t.Helper()
	d.c.Barrier(id)
	d.drain()
	for i := len(d.emits) - 1; i >= 0; i-- {
		if e := d.emits[i]; e.Kind == EmitSnapshot && e.CheckpointID == id {
			return roundTrip(d.t, e.Sections)
		}
	}
	d.t.Fatal("no snapshot emitted")
	return nil
}

func roundTrip(t testing.TB, secs []*snapshot.Section) []*snapshot.Section {
	t.Helper()
	var out []*snapshot.Section
	for _, s := range secs {
		b, err := snapshot.EncodeSection(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := snapshot.DecodeSection(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s2)
	}
	return out
}

type replayProbe struct {
	bodies, c1, c2, reconciles atomic.Int64
	failOnce                   atomic.Bool
	block                      chan struct{}
	arg                        int64
}

func (p *replayProbe) agent() *Agent {
	return oneAction(func(ctx *Context, ev *Event) error {
		p.bodies.Add(1)
		v1, err := ctx.Durable("c1", p.arg, func() (any, error) { p.c1.Add(1); return nil, nil })
		if err != nil || v1 != nil {
			return Permanent(errors.New("nil result did not replay as nil"))
		}
		if p.failOnce.CompareAndSwap(true, false) {
			return errors.New("transient")
		}
		v2, err := ctx.DurableReconciled("c2", "x", func() (any, error) {
			p.c2.Add(1)
			if p.block != nil {
				<-p.block
			}
			return "charged", nil
		}, func() (any, error) { p.reconciles.Add(1); return "reconciled", nil })
		if err != nil {
			return err
		}
		n, _ := ctx.ShortTerm().Int64("n")
		if err := ctx.ShortTerm().Set("n", n+1); err != nil {
			return err
		}
		return ctx.SendEvent(NewOutput(v2, n+1))
	})
}

func TestReplayCompletedAction(t *testing.T) {
	store := statestore.NewMemory()
	p := &replayProbe{}
	d := newDriver(t, p.agent(), DefaultConfig(), store)
	secs := d.cut(1)
	d.input(0, "k", row())
	first := d.emits
	if p.bodies.Load() != 1 || len(d.outputs()) != 1 {
		t.Fatalf("bodies %d outputs %v", p.bodies.Load(), d.outputs())
	}
	// Crash after the action completed, before the next checkpoint.
	d2 := newDriver(t, p.agent(), DefaultConfig(), store)
	if err := d2.c.Restore(1, secs); err != nil {
		t.Fatal(err)
	}
	d2.input(0, "k", row())
	if p.bodies.Load() != 1 || p.c1.Load() != 1 || p.c2.Load() != 1 {
		t.Fatalf("body ran again: bodies %d c1 %d c2 %d", p.bodies.Load(), p.c1.Load(), p.c2.Load())
	}
	o1, o2 := lastOutput(first), lastOutput(d2.emits)
	if o1.EventID != o2.EventID || fmtOut([][]any{o1.Values}) != fmtOut([][]any{o2.Values}) {
		t.Fatalf("replayed output differs: %v %v vs %v %v", FormatUUID(o1.EventID), o1.Values, FormatUUID(o2.EventID), o2.Values)
	}
	if func() bool { it, _ := d2.memOf(0, "k").get("n"); return it.val != int64(1) }() || d2.c.Stats().ActionsReplayed != 1 {
		t.Fatalf("memory %v stats %+v", d2.memOf(0, "k"), d2.c.Stats())
	}
}

func lastOutput(es []Emit) Emit {
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Kind == EmitOutput {
			return es[i]
		}
	}
	return Emit{}
}

func TestReplayUnfinishedReusesCalls(t *testing.T) {
	store := statestore.NewMemory()
	p := &replayProbe{}
	p.failOnce.Store(true)
	d := newDriver(t, p.agent(), DefaultConfig(), store)
	secs := d.cut(1)
	d.input(0, "k", row())
	if d.err == nil || p.c1.Load() != 1 {
		t.Fatalf("err %v c1 %d", d.err, p.c1.Load())
	}
	d2 := newDriver(t, p.agent(), DefaultConfig(), store)
	if err := d2.c.Restore(1, secs); err != nil {
		t.Fatal(err)
	}
	d2.input(0, "k", row())
	if st := d2.c.Stats(); d2.err != nil || p.bodies.Load() != 2 || p.c1.Load() != 1 || p.c2.Load() != 1 ||
		st.CallsReplayed != 1 || st.ActionsRerun != 1 || st.ActionsReplayed != 0 {
		t.Fatalf("err %v bodies %d c1 %d c2 %d stats %+v", d2.err, p.bodies.Load(), p.c1.Load(), p.c2.Load(), d2.c.Stats())
	}
}

func TestReplayMismatchRunsForReal(t *testing.T) {
	store := statestore.NewMemory()
	p := &replayProbe{arg: 1}
	p.failOnce.Store(true)
	d := newDriver(t, p.agent(), DefaultConfig(), store)
	secs := d.cut(1)
	d.input(0, "k", row())
	p.arg = 2 // the call's arguments differ on the re-run
	d2 := newDriver(t, p.agent(), DefaultConfig(), store)
	if err := d2.c.Restore(1, secs); err != nil {
		t.Fatal(err)
	}
	d2.input(0, "k", row())
	if d2.err != nil || p.c1.Load() != 2 || d2.c.Stats().CallsReplayed != 0 {
		t.Fatalf("err %v c1 %d stats %+v", d2.err, p.c1.Load(), d2.c.Stats())
	}
}

func TestReplayPendingCallRunsReconciler(t *testing.T) {
	store := statestore.NewMemory()
	p := &replayProbe{block: make(chan struct{})}
	d := newDriver(t, p.agent(), DefaultConfig(), store)
	secs := d.cut(1)
	if err := d.c.Input(0, []byte("k"), 0, false, row()); err != nil {
		t.Fatal(err)
	}
	rd := d.c.Ready()
	if len(rd.Tasks) != 1 {
		t.Fatalf("tasks %d", len(rd.Tasks))
	}
	task := rd.Tasks[0]
	done := make(chan *Result)
	go func() { done <- task.Run() }()
	for p.c2.Load() == 0 { // the call is running: its pending record is durable
		time.Sleep(time.Millisecond)
	}
	// The process dies here. A new one restores and replays the input.
	p2 := &replayProbe{}
	d2 := newDriver(t, p2.agent(), DefaultConfig(), store)
	if err := d2.c.Restore(1, secs); err != nil {
		t.Fatal(err)
	}
	d2.input(0, "k", row())
	if d2.err != nil || p2.reconciles.Load() != 1 || p2.c2.Load() != 0 || p2.c1.Load() != 0 {
		t.Fatalf("err %v reconciles %d c2 %d c1 %d", d2.err, p2.reconciles.Load(), p2.c2.Load(), p2.c1.Load())
	}
	if o := d2.outputs(); len(o) != 1 || o[0][0] != "reconciled" {
		t.Fatalf("outputs %v", o)
	}
	close(p.block)
	<-done
}
