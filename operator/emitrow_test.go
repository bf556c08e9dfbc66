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
// retained is retained once per output and released by the core once (its
// input's hold), so that the receiver's Release is the last; one that
// cannot be retained goes out as a copy of its values, and the core
// releases it when its input ends.
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
				if p.retained.Load() != 1 || p.holds.Load() != 1 {
					t.Fatalf("emit %d: retained %d, holds %d; want 1 and 1 (the output's)", i, p.retained.Load(), p.holds.Load())
				}
				e.Row.(Releaser).Release()
				if p.holds.Load() != 0 {
					t.Fatalf("emit %d: holds %d after the receiver's Release", i, p.holds.Load())
				}
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
