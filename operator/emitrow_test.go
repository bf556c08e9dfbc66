package operator

import (
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flinkgo/flinkgo/statestore"
)

// pinnedRow is a FieldsRow that counts Retain and Release, as a row of an
// Arrow batch (the bridge's) pins its batch; retainable: it implements
// Retainer (otherwise only Releaser).
type pinnedRow struct {
	FieldsRow
	holds    *atomic.Int32 // holds not yet released, the input's included
	retained *atomic.Int32
}

func (r *pinnedRow) Release() {
	if r.holds.Add(-1) < 0 {
		panic("released more often than held")
	}
}

type retainableRow struct{ *pinnedRow }

func (r retainableRow) Retain() Row {
	r.holds.Add(1)
	r.retained.Add(1)
	return r
}

func newPinned(kv ...any) *pinnedRow {
	p := &pinnedRow{FieldsRow: row(kv...), holds: new(atomic.Int32), retained: new(atomic.Int32)}
	p.holds.Store(1) // the input's
	return p
}

func forwardAgent(emit func(ctx *Context, in Row) error) *Agent {
	a := oneAction(func(ctx *Context, ev *Event) error { return emit(ctx, ev.Input()) })
	a.Output = []Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "STRING"}}
	return a
}

// TestEmitRowForwardsTheInputRow: EmitRow and SendEvent(NewOutputRow) send
// the row itself (Emit.Row, no Values); a row that pins a buffer and can be
// retained, emitted once by the input's last action, takes over the input's
// hold (neither retained nor released by the core), so that the receiver's
// Release is the last; one that cannot be retained goes out as a copy of
// its values, and the core releases it when its input ends.
func TestEmitRowForwardsTheInputRow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		emit       func(ctx *Context, in Row) error
		retainable bool
	}{
		{"EmitRow", func(ctx *Context, in Row) error { return ctx.EmitRow(in) }, true},
		{"NewOutputRow", func(ctx *Context, in Row) error { return ctx.SendEvent(NewOutputRow(in)) }, true},
		{"EmitRow, not retainable", func(ctx *Context, in Row) error { return ctx.EmitRow(in) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t, forwardAgent(tc.emit), DefaultConfig(), nil)
			var pins []*pinnedRow
			for i := int64(0); i < 3; i++ {
				p := newPinned("id", i, "name", fmt.Sprint("n", i))
				pins = append(pins, p)
				var r Row = p
				if tc.retainable {
					r = retainableRow{p}
				}
				d.input(0, fmt.Sprint("k", i), r)
			}
			if d.err != nil {
				t.Fatal(d.err)
			}
			want := [][]any{{int64(0), "n0"}, {int64(1), "n1"}, {int64(2), "n2"}}
			if got := d.outputs(); !reflect.DeepEqual(got, want) {
				t.Fatalf("outputs %v, want %v", got, want)
			}
			for i, e := range d.emits {
				if e.Values != nil || e.Row == nil {
					t.Fatalf("emit %d: Values %v Row %v; want the row only", i, e.Values, e.Row)
				}
				p := pins[i]
				if !tc.retainable {
					if _, copied := e.Row.(FieldsRow); !copied || p.holds.Load() != 0 {
						t.Fatalf("emit %d: row %T, holds %d; want a FieldsRow copy and the input released", i, e.Row, p.holds.Load())
					}
					continue
				}
				if p.retained.Load() != 0 || p.holds.Load() != 1 {
					t.Fatalf("emit %d: retained %d, holds %d; want 0 and 1 (the input's, handed to the output)", i, p.retained.Load(), p.holds.Load())
				}
				e.Row.(Releaser).Release()
				if p.holds.Load() != 0 {
					t.Fatalf("emit %d: holds %d after the receiver's Release", i, p.holds.Load())
				}
			}
		})
	}
}

// TestEmitRowHoldsWhenTheInputGoesOn: an output takes over its input's
// hold only if it is the first output of the row in the result that ends
// the input. A second output of the same row is retained; an output of an
// action after which the input goes on (another action listens to an event
// it sent) is retained, and the input's end releases the input's hold. In
// every case the receivers' Releases are the last.
func TestEmitRowHoldsWhenTheInputGoesOn(t *testing.T) {
	twice := forwardAgent(func(ctx *Context, in Row) error {
		if err := ctx.EmitRow(in); err != nil {
			return err
		}
		return ctx.EmitRow(in)
	})
	goesOn := forwardAgent(func(ctx *Context, in Row) error {
		if err := ctx.EmitRow(in); err != nil {
			return err
		}
		return ctx.SendEvent(&Event{Type: "next"})
	})
	var cur *pinnedRow  // the input being driven
	var heldInB []int32 // its holds while the second action runs
	goesOn.Actions = append(goesOn.Actions, Action{Name: "b", Listen: []string{"next"}, Fn: func(ctx *Context, ev *Event) error {
		heldInB = append(heldInB, cur.holds.Load())
		return nil
	}})
	for _, tc := range []struct {
		name                string
		agent               *Agent
		emits               int
		retained, heldAfter int32 // per input, once the core is done with it
	}{
		{"the same row twice", twice, 2, 1, 2},
		{"an action after the output", goesOn, 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			heldInB = nil
			d := newDriver(t, tc.agent, DefaultConfig(), nil)
			var pins []*pinnedRow
			for i := int64(0); i < 3; i++ {
				p := newPinned("id", i, "name", fmt.Sprint("n", i))
				pins = append(pins, p)
				cur = p
				d.input(0, fmt.Sprint("k", i), retainableRow{p})
			}
			if d.err != nil {
				t.Fatal(d.err)
			}
			if got := len(d.outputs()); got != 3*tc.emits {
				t.Fatalf("%d outputs, want %d", got, 3*tc.emits)
			}
			for i, p := range pins {
				if p.retained.Load() != tc.retained || p.holds.Load() != tc.heldAfter {
					t.Fatalf("input %d: retained %d, holds %d; want %d and %d (the outputs')", i, p.retained.Load(), p.holds.Load(), tc.retained, tc.heldAfter)
				}
			}
			for _, e := range d.emits {
				if e.Kind == EmitOutput {
					e.Row.(Releaser).Release()
				}
			}
			for i, p := range pins {
				if p.holds.Load() != 0 {
					t.Fatalf("input %d: holds %d after the receivers' Releases", i, p.holds.Load())
				}
			}
			if tc.agent == goesOn && !reflect.DeepEqual(heldInB, []int32{2, 2, 2}) {
				t.Fatalf("holds of each input while its second action ran: %v, want 2 each (the input's and the output's)", heldInB)
			}
		})
	}
}

// TestEmitRowChecksTheWidth: a row with another number of columns than the
// agent's Output is refused by EmitRow with an error naming both counts.
func TestEmitRowChecksTheWidth(t *testing.T) {
	var sendErr error
	d := newDriver(t, forwardAgent(func(ctx *Context, in Row) error {
		sendErr = ctx.EmitRow(in)
		return nil
	}), DefaultConfig(), nil)
	d.input(0, "k", row("id", int64(1), "name", "x", "extra", true))
	if sendErr == nil || !strings.Contains(sendErr.Error(), `output row has 3 columns; agent "t" declares 2 output columns`) {
		t.Fatalf("EmitRow: %v", sendErr)
	}
	if out := d.outputs(); len(out) != 0 {
		t.Fatalf("outputs %v, want none", out)
	}
}

// recordingStore keeps the output rows of the records it is given.
type recordingStore struct {
	*statestore.Memory
	outputs [][]any
}

func (s *recordingStore) Put(r *statestore.Record) error {
	for _, e := range r.Events {
		if e.Type == OutputEventType {
			s.outputs = append(s.outputs, append([]any(nil), e.Attrs["output"].([]any)...))
		}
	}
	return s.Memory.Put(r)
}

// TestEmitRowIsRecorded: with an action-state store, an output sent with
// EmitRow is recorded with its values, and replayed from the record after a
// restore with the same id and values.
func TestEmitRowIsRecorded(t *testing.T) {
	store := &recordingStore{Memory: statestore.NewMemory()}
	a := forwardAgent(func(ctx *Context, in Row) error { return ctx.EmitRow(in) })
	d := newDriver(t, a, DefaultConfig(), store)
	secs := d.cut(1)
	d.input(0, "k", row("id", int64(7), "name", "seven"))
	want := [][]any{{int64(7), "seven"}}
	if !reflect.DeepEqual(store.outputs, want) {
		t.Fatalf("recorded outputs %v, want %v", store.outputs, want)
	}
	d2 := newDriver(t, a, DefaultConfig(), store)
	if err := d2.c.Restore(1, secs); err != nil {
		t.Fatal(err)
	}
	d2.input(0, "k", row("id", int64(7), "name", "seven"))
	o1, o2 := lastOutput(d.emits), lastOutput(d2.emits)
	if o1.EventID != o2.EventID || !reflect.DeepEqual(o2.Output(), want[0]) || d2.c.Stats().ActionsReplayed != 1 {
		t.Fatalf("replayed %s %v (replays %d), first %s", FormatUUID(o2.EventID), o2.Output(), d2.c.Stats().ActionsReplayed, FormatUUID(o1.EventID))
	}
}

// TestEmitRowRejectsWhatSendEventRejects: EmitRow skips SendEvent's checks
// of the event's own fields (they hold by construction) but keeps the
// others: a nil row, a row whose columns are not the agent's Output, and a
// call inside Durable are refused, the action fails and nothing is emitted.
func TestEmitRowRejectsWhatSendEventRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		emit func(ctx *Context, in Row) error
		want string
	}{
		{"nil row", func(ctx *Context, in Row) error { return ctx.EmitRow(nil) }, "EmitRow(nil)"},
		{"wrong columns", func(ctx *Context, in Row) error { return ctx.EmitRow(row("id", int64(1))) }, "output"},
		{"inside Durable", func(ctx *Context, in Row) error {
			_, err := ctx.Durable("c", nil, func() (any, error) { return nil, ctx.EmitRow(in) })
			return err
		}, "EmitRow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got error
			d := newDriver(t, forwardAgent(func(ctx *Context, in Row) error {
				got = tc.emit(ctx, in)
				return got
			}), DefaultConfig(), nil)
			d.input(0, "k", row("id", int64(1), "name", "a"))
			d.drain()
			if got == nil || !strings.Contains(got.Error(), tc.want) {
				t.Fatalf("EmitRow returned %v, want an error naming %q", got, tc.want)
			}
			for _, e := range d.emits {
				if e.Kind == EmitOutput {
					t.Fatalf("emitted %+v after a refused EmitRow", e)
				}
			}
		})
	}
}
