package testagents

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/bridge"
	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
)

func row(id int64, customer, payload string) operator.FieldsRow {
	return operator.FieldsRow{{Name: "id", Value: id}, {Name: "customer", Value: customer}, {Name: "payload", Value: payload}}
}

// driver runs a core as the bridge does: tasks on goroutines, results back
// in completion order, emits collected in order.
type driver struct {
	t       *testing.T
	c       *operator.Core
	results chan *operator.Result
	running int
	emits   []operator.Emit
	at      []time.Time // when each emit came out
}

func newDriver(t *testing.T, a *operator.Agent) *driver {
	t.Helper()
	cfg := operator.DefaultConfig()
	cfg.Seed = 7
	cfg.MaxConcurrency = 4
	c, err := operator.NewCore(a, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, c: c, results: make(chan *operator.Result, 16)}
}

// step takes everything the core has ready and starts its tasks.
func (d *driver) step() {
	d.t.Helper()
	for d.c.HasReady() {
		rd := d.c.Ready()
		if rd.Err != nil {
			d.t.Fatalf("core failed: %v", rd.Err)
		}
		for _, e := range rd.Emits {
			e.Values, e.Row = append([]any(nil), e.Output()...), nil
			d.emits = append(d.emits, e)
			d.at = append(d.at, time.Now())
		}
		for _, tk := range rd.Tasks {
			d.running++
			go func(tk *operator.Task) { d.results <- tk.Run() }(tk)
		}
	}
}

func (d *driver) input(kg int32, id int64, customer, payload string) {
	d.t.Helper()
	if err := d.c.Input(kg, []byte(customer), 1000+id, true, row(id, customer, payload)); err != nil {
		d.t.Fatal(err)
	}
	d.step()
}

// wait completes tasks until none is running.
func (d *driver) wait() {
	d.t.Helper()
	for d.running > 0 {
		select {
		case r := <-d.results:
			d.running--
			d.c.Complete(r)
			d.step()
		case <-time.After(10 * time.Second):
			d.t.Fatal("tasks do not finish")
		}
	}
}

func (d *driver) outputs() [][]any {
	var out [][]any
	for _, e := range d.emits {
		if e.Kind == operator.EmitOutput {
			out = append(out, e.Values)
		}
	}
	return out
}

func TestDescribe(t *testing.T) {
	m, err := bridge.Describe(All()...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range m.Agents {
		got = append(got, fmt.Sprint(a.Name, " ", a.Output))
	}
	want := []string{
		"passthrough [{id BIGINT} {customer STRING} {payload STRING}]",
		"slow [{id BIGINT} {customer STRING} {payload STRING} {n BIGINT}]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("manifest agents\n got %q\nwant %q", got, want)
	}
}

func TestPassthroughEmitsInputsUnchanged(t *testing.T) {
	d := newDriver(t, Passthrough())
	d.input(3, 1, "alice", "p1")
	d.input(3, 2, "bob", "")
	if err := d.c.Input(3, []byte("carol"), 0, false, operator.FieldsRow{
		{Name: "id", Value: nil}, {Name: "customer", Value: "carol"}, {Name: "payload", Value: nil}}); err != nil {
		t.Fatal(err)
	}
	d.step()
	d.wait()
	// Keys finish in any order; sort by customer.
	got := d.outputs()
	sort.Slice(got, func(i, j int) bool { return got[i][1].(string) < got[j][1].(string) })
	want := [][]any{{int64(1), "alice", "p1"}, {int64(2), "bob", ""}, {nil, "carol", nil}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outputs\n got %v\nwant %v", got, want)
	}
}

// TestSlowKeyDoesNotStallOthersButHoldsTheWatermark: while a slow-* input
// runs, other keys' inputs finish, a later watermark waits for the slow one,
// and the per-key counter counts each key on its own.
func TestSlowKeyDoesNotStallOthersButHoldsTheWatermark(t *testing.T) {
	const delay = 500 * time.Millisecond
	d := newDriver(t, NewSlow(delay))
	start := time.Now()
	d.input(1, 1, "slow-1", "s")
	d.input(1, 2, "a", "x")
	d.c.Watermark(1002)
	d.step()
	d.input(1, 3, "a", "y")
	d.input(1, 4, "b", "z")
	d.wait()

	var kinds []string
	for i, e := range d.emits {
		switch e.Kind {
		case operator.EmitOutput:
			kinds = append(kinds, fmt.Sprint(e.Values[1], "#", e.Values[3]))
			if e.Values[1] != "slow-1" && d.at[i].Sub(start) >= delay {
				t.Errorf("output %v waited for the slow key (%v)", e.Values, d.at[i].Sub(start))
			}
		case operator.EmitWatermark:
			kinds = append(kinds, fmt.Sprint("wm", e.Timestamp))
		}
	}
	// Keys finish in any order, but each key in input order; the watermark
	// comes last, after the slow output.
	pos := map[string]int{}
	for i, k := range kinds {
		pos[k] = i
	}
	if len(kinds) != 5 || pos["a#1"] > pos["a#2"] || pos["slow-1#1"] != 3 || pos["wm1002"] != 4 {
		t.Fatalf("emits %v, want a#1 before a#2, b#1 anywhere before slow-1#1, then wm1002", kinds)
	}
	if el := time.Since(start); el < delay {
		t.Fatalf("slow input finished after %v, want >= %v", el, delay)
	}
}

// TestSlowCounterContinuesAfterRestore cuts the state while a slow input is
// in flight, restores it into a fresh core and checks that the in-flight
// input runs again and counters continue.
func TestSlowCounterContinuesAfterRestore(t *testing.T) {
	d := newDriver(t, NewSlow(50*time.Millisecond))
	d.input(5, 1, "a", "")
	d.input(5, 2, "a", "")
	d.wait()
	d.input(5, 3, "slow-9", "")
	d.c.Barrier(1)
	d.step()
	var secs []*snapshot.Section
	for _, e := range d.emits {
		if e.Kind == operator.EmitSnapshot {
			for _, s := range e.Sections {
				b, err := snapshot.EncodeSection(s)
				if err != nil {
					t.Fatal(err)
				}
				if s, err = snapshot.DecodeSection(b); err != nil {
					t.Fatal(err)
				}
				secs = append(secs, s)
			}
		}
	}
	if len(secs) != 1 {
		t.Fatalf("want one snapshot section, got %d", len(secs))
	}
	d.wait() // the first core finishes; its late output belongs to the next checkpoint

	d2 := newDriver(t, NewSlow(50*time.Millisecond))
	if err := d2.c.Restore(1, secs); err != nil {
		t.Fatal(err)
	}
	d2.step()
	d2.input(5, 4, "a", "")
	d2.wait()
	got := fmt.Sprint(d2.outputs())
	if got != fmt.Sprint([][]any{{int64(4), "a", "", int64(3)}, {int64(3), "slow-9", "", int64(1)}}) &&
		got != fmt.Sprint([][]any{{int64(3), "slow-9", "", int64(1)}, {int64(4), "a", "", int64(3)}}) {
		t.Fatalf("after restore: %s", got)
	}
}

// arrowRows decodes one DATA batch of cols with the given rows, as the
// bridge does: zero-copy rows of an Arrow batch.
func arrowRows(t *testing.T, cols []arrowio.Column, rows ...[]any) *arrowio.Batch {
	t.Helper()
	alloc := memory.NewGoAllocator()
	in, err := arrowio.NewInputBuilder(cols, alloc)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	for i, r := range rows {
		if err := in.Append(3, []byte(fmt.Sprint("k", i)), 0, false, r); err != nil {
			t.Fatal(err)
		}
	}
	p, err := in.Flush()
	if err != nil {
		t.Fatal(err)
	}
	s, err := arrowio.NewInputSchema(in.Schema())
	if err != nil {
		t.Fatal(err)
	}
	b, err := arrowio.NewDecoder(s, alloc).DecodeBatch(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPassthroughArrowRowsByTheirSchema: rows of an Arrow batch whose
// columns are id, customer, payload go out as they are (Emit.Row); rows of
// a batch with the columns in another order are picked by name (values in
// the output's order), before and after a batch of the first kind, so that
// the schema a row matched last is no answer for another.
func TestPassthroughArrowRowsByTheirSchema(t *testing.T) {
	inOrder := arrowRows(t, []arrowio.Column{{Name: "id", Type: "BIGINT"}, {Name: "customer", Type: "STRING"}, {Name: "payload", Type: "STRING"}}, []any{int64(1), "alice", "p1"})
	swapped := arrowRows(t, []arrowio.Column{{Name: "payload", Type: "STRING"}, {Name: "customer", Type: "STRING"}, {Name: "id", Type: "BIGINT"}},
		[]any{"p2", "bob", int64(2)})
	defer inOrder.Release()
	defer swapped.Release()
	cfg := operator.DefaultConfig()
	c, err := operator.NewCore(Passthrough(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		b      *arrowio.Batch
		asRow  bool
		values []any
	}{
		{swapped, false, []any{int64(2), "bob", "p2"}},
		{inOrder, true, []any{int64(1), "alice", "p1"}},
		{swapped, false, []any{int64(2), "bob", "p2"}},
		{inOrder, true, []any{int64(1), "alice", "p1"}},
	} {
		if err := c.Input(3, []byte(fmt.Sprint("key", i)), 0, false, tc.b.Row(0)); err != nil {
			t.Fatal(err)
		}
		var outs []operator.Emit
		for c.HasReady() {
			rd := c.Ready()
			if rd.Err != nil {
				t.Fatal(rd.Err)
			}
			for _, e := range rd.Emits {
				if e.Kind == operator.EmitOutput {
					outs = append(outs, e)
				}
			}
			for _, tk := range rd.Tasks {
				c.Complete(tk.Run())
			}
		}
		if len(outs) != 1 {
			t.Fatalf("input %d: %d outputs, want 1", i, len(outs))
		}
		e := outs[0]
		if (e.Row != nil) != tc.asRow {
			t.Fatalf("input %d: output as the row itself: %v, want %v", i, e.Row != nil, tc.asRow)
		}
		if got := e.Output(); !reflect.DeepEqual(got, tc.values) {
			t.Fatalf("input %d: output %v, want %v", i, got, tc.values)
		}
	}
}
