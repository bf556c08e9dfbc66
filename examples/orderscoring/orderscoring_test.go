package orderscoring

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

type order struct {
	customer string
	id       int64
	amount   float64
}

func inputRow(o order) operator.FieldsRow {
	return operator.FieldsRow{
		{Name: "customer", Value: o.customer},
		{Name: "order_id", Value: o.id},
		{Name: "amount", Value: o.amount},
	}
}

// run feeds orders to a fresh core (keyed by customer, all in key group 7),
// running every task synchronously, and returns the output rows in order.
func run(t *testing.T, store statestore.ActionStore, orders []order) ([][]any, *operator.Core) {
	t.Helper()
	cfg := operator.DefaultConfig()
	cfg.Seed = 42
	c, err := operator.NewCore(Agent(), cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	drain := func() {
		for i := 0; i < 10000; i++ {
			rd := c.Ready()
			if rd.Err != nil {
				t.Fatalf("core failed: %v", rd.Err)
			}
			for _, e := range rd.Emits {
				if e.Kind == operator.EmitOutput {
					out = append(out, append([]any(nil), e.Values...))
				}
			}
			if len(rd.Tasks) == 0 && !c.HasReady() {
				return
			}
			for _, tk := range rd.Tasks {
				c.Complete(tk.Run())
			}
		}
		t.Fatal("core makes no progress")
	}
	for _, o := range orders {
		if err := c.Input(7, []byte(o.customer), 1000+o.id, true, inputRow(o)); err != nil {
			t.Fatal(err)
		}
		drain()
	}
	return out, c
}

func TestScoringOutputs(t *testing.T) {
	orders := []order{
		{"alice", 1, 10}, {"bob", 2, 50}, {"alice", 3, 10}, {"alice", 4, 100},
		{"bob", 5, 40}, {"alice", 6, 12}, {"alice", 7, 30}, {"alice", 8, 10},
	}
	got, _ := run(t, nil, orders)
	// Risk with an all-equal history h is exact: every resample mean is h,
	// so the risk is 1 if amount > 1.5 h, else 0. With no history it is 0.5.
	want := [][]any{
		{"alice", int64(1), int64(1), 10.0, 0.5, false},
		{"bob", int64(2), int64(1), 50.0, 0.5, false},
		{"alice", int64(3), int64(2), 10.0, 0.0, false},
		{"alice", int64(4), int64(3), 40.0, 1.0, true},
		{"bob", int64(5), int64(2), 45.0, 0.0, false},
		{"alice", int64(6), int64(4), 33.0, Risk(12, []float64{10, 10, 100}), false},
		{"alice", int64(7), int64(5), 32.4, Risk(30, []float64{10, 10, 100, 12}), false},
		// The sixth order drops the first amount from the history: 10,100,12,30,10.
		{"alice", int64(8), int64(6), 32.4, Risk(10, []float64{10, 10, 100, 12, 30}), false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outputs differ\n got: %v\nwant: %v", got, want)
	}
}

func TestRisk(t *testing.T) {
	cases := []struct {
		amount  float64
		history []float64
		want    float64
	}{
		{10, nil, 0.5},
		{10, []float64{10}, 0},
		{15, []float64{10, 10}, 0}, // not more than 1.5x
		{15.01, []float64{10, 10}, 1},
		{1e6, []float64{1, 2, 3, 4, 5}, 1},
		{0, []float64{1, 2, 3, 4, 5}, 0},
		// Mixed histories: multiples of 1/256 (71/256, 87/256), fixed forever
		// (the generator is part of the function).
		{30, []float64{10, 10, 100}, 0.27734375},
		{30, []float64{10, 10, 100, 12}, 0.33984375},
	}
	for _, tc := range cases {
		if got := Risk(tc.amount, tc.history); got != tc.want {
			t.Errorf("Risk(%v, %v) = %v, want %v", tc.amount, tc.history, got, tc.want)
		}
	}
	// Mixed history: a multiple of 1/256 strictly between 0 and 1, and stable.
	r := Risk(30, []float64{10, 10, 100})
	if r <= 0 || r >= 1 || r*256 != float64(int(r*256)) || r != Risk(30, []float64{10, 10, 100}) {
		t.Errorf("Risk(30, [10 10 100]) = %v; want a stable multiple of 1/256 in (0, 1)", r)
	}
}

// TestRestoreContinues cuts the state after some orders, restores it into a
// fresh core and checks that counts and averages continue, and that with an
// action-state store the durable call is recorded.
func TestRestoreContinues(t *testing.T) {
	store := statestore.NewMemory()
	first := []order{{"alice", 1, 10}, {"alice", 2, 20}, {"carol", 3, 7}}
	_, c := run(t, store, first)
	c.Barrier(1)
	rd := c.Ready()
	var secs []*snapshot.Section
	for _, e := range rd.Emits {
		if e.Kind == operator.EmitSnapshot {
			secs = e.Sections
		}
	}
	if len(secs) != 1 || len(secs[0].Keys) != 2 {
		t.Fatalf("snapshot: want one section with 2 keys, got %v", secs)
	}
	// Through the byte format, as the bridge does.
	var restored []*snapshot.Section
	for _, s := range secs {
		b, err := snapshot.EncodeSection(s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := snapshot.DecodeSection(b)
		if err != nil {
			t.Fatal(err)
		}
		restored = append(restored, d)
	}
	cfg := operator.DefaultConfig()
	cfg.Seed = 42
	c2, err := operator.NewCore(Agent(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Restore(1, restored); err != nil {
		t.Fatal(err)
	}
	if err := c2.Input(7, []byte("alice"), 0, false, inputRow(order{"alice", 4, 30})); err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for c2.HasReady() {
		rd := c2.Ready()
		for _, e := range rd.Emits {
			if e.Kind == operator.EmitOutput {
				out = append(out, e.Values)
			}
		}
		for _, tk := range rd.Tasks {
			c2.Complete(tk.Run())
		}
	}
	want := fmt.Sprint([][]any{{"alice", int64(4), int64(3), 20.0, Risk(30, []float64{10, 20}), false}})
	if fmt.Sprint(out) != want {
		t.Fatalf("after restore got %v, want %v", out, want)
	}
	if st := store.Stats(); st.Puts == 0 {
		t.Fatalf("no action-state records were written: %+v", st)
	}
}

func BenchmarkRisk(b *testing.B) {
	h := []float64{10, 20, 30, 40, 50}
	for i := 0; i < b.N; i++ {
		_ = Risk(float64(i%100), h)
	}
}
