package operator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
)

func echoAgent() *Agent {
	return oneAction(func(ctx *Context, ev *Event) error {
		n, _ := GetInt64(ev.Input(), "n")
		return ctx.SendEvent(NewOutput(n))
	})
}

// A slow input holds the watermark after it, but not other keys' outputs.
func TestWatermarkHeldBySlowInput(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxConcurrency = 4
	c, _ := NewCore(echoAgent(), cfg, nil)
	must(t, c.Input(0, []byte("slow"), 1, true, row("n", int64(1))))
	slow := append([]*Task(nil), c.Ready().Tasks...) // Ready reuses its slices
	must(t, c.Input(1, []byte("fast"), 2, true, row("n", int64(2))))
	c.Watermark(2)
	must(t, c.Input(1, []byte("fast"), 3, true, row("n", int64(3))))
	var kinds []EmitKind
	for i := 0; i < 10; i++ {
		rd := c.Ready()
		for _, e := range rd.Emits {
			kinds = append(kinds, e.Kind)
		}
		for _, tk := range rd.Tasks {
			c.Complete(tk.Run())
		}
	}
	if len(kinds) != 2 || kinds[0] != EmitOutput || kinds[1] != EmitOutput {
		t.Fatalf("before the slow input finished: %v", kinds)
	}
	c.Complete(slow[0].Run())
	rd := c.Ready()
	if len(rd.Emits) != 2 || rd.Emits[0].Kind != EmitOutput || rd.Emits[1].Kind != EmitWatermark || rd.Emits[1].Timestamp != 2 {
		t.Fatalf("after: %+v", rd.Emits)
	}
	if rd.Credit != 1 {
		t.Fatalf("credit %d", rd.Credit)
	}
}

// Per key one input in flight; keys in parallel up to MaxConcurrency.
func TestConcurrencyBounds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxConcurrency = 2
	c, _ := NewCore(echoAgent(), cfg, nil)
	for i := 0; i < 3; i++ {
		must(t, c.Input(0, []byte("a"), 0, false, row("n", int64(i))))
		must(t, c.Input(0, []byte("b"), 0, false, row("n", int64(10+i))))
		must(t, c.Input(0, []byte("c"), 0, false, row("n", int64(20+i))))
	}
	var got []int64
	for round := 0; round < 10; round++ {
		rd := c.Ready()
		for _, e := range rd.Emits {
			got = append(got, e.Values[0].(int64))
		}
		if len(rd.Tasks) > 2 {
			t.Fatalf("%d tasks at once, limit 2", len(rd.Tasks))
		}
		seen := map[string]bool{}
		for _, tk := range rd.Tasks {
			if seen[string(tk.ks.key)] {
				t.Fatal("two tasks of one key at once")
			}
			seen[string(tk.ks.key)] = true
		}
		for _, tk := range rd.Tasks {
			c.Complete(tk.Run())
		}
	}
	last := map[int64]int64{0: -1, 1: -1, 2: -1}
	for _, v := range got {
		if v <= last[v/10] {
			t.Fatalf("per-key order broken: %v", got)
		}
		last[v/10] = v
	}
	if len(got) != 9 {
		t.Fatalf("outputs %v", got)
	}
}

func TestEndInputDrains(t *testing.T) {
	c, _ := NewCore(echoAgent(), DefaultConfig(), nil)
	must(t, c.Input(0, []byte("a"), 0, false, row("n", int64(1))))
	c.EndInput()
	rd := c.Ready()
	if len(rd.Emits) != 0 {
		t.Fatalf("end acknowledged before the input finished: %+v", rd.Emits)
	}
	c.Complete(rd.Tasks[0].Run())
	rd = c.Ready()
	if len(rd.Emits) != 2 || rd.Emits[1].Kind != EmitEndAck {
		t.Fatalf("%+v", rd.Emits)
	}
	if err := c.Input(0, []byte("a"), 0, false, row()); err == nil {
		t.Fatal("input after end of input accepted")
	}
}

func TestRestoreRejectsForeignKeyGroupAndLeavesCoreEmpty(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Owned = snapshot.KeyGroupRange{Start: 0, End: 63}
	c, _ := NewCore(echoAgent(), cfg, nil)
	secs := []*snapshot.Section{
		{KeyGroup: 3, Keys: []snapshot.KeyState{{Key: []byte("a"), NextSeq: 1}}},
		{KeyGroup: 64, Keys: []snapshot.KeyState{{Key: []byte("b")}}},
	}
	err := c.Restore(1, secs)
	var se *snapshot.Error
	if !errors.As(err, &se) || se.KeyGroup != 64 || !errors.Is(err, snapshot.ErrNotOwned) {
		t.Fatalf("err %v", err)
	}
	if c.table.Len() != 0 {
		t.Fatal("restore half-applied")
	}
	if err := c.Input(64, []byte("b"), 0, false, row()); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("input for a foreign key group: %v", err)
	}
	secs[1].Keys[0].InFlight = &snapshot.InFlight{Tasks: []snapshot.Task{{Action: "renamed", Event: snapshot.Event{Type: InputEventType}}}}
	secs[1].KeyGroup = 5
	if err := c.Restore(1, secs); err == nil || c.table.Len() != 0 {
		t.Fatalf("unknown action: %v, keys %d", err, c.table.Len())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Identical input gives byte-identical snapshots, whatever the order in
// which keys were created or tasks completed.
func TestSnapshotDeterministic(t *testing.T) {
	enc := func(order []int, conc int) [][]byte {
		cfg := DefaultConfig()
		cfg.MaxConcurrency = conc
		d := newDriver(t, (&simAgent{bodies: map[string]int{}}).agent(), cfg, nil)
		for _, i := range order {
			key := []byte{byte('a' + i%7)}
			must(t, d.c.Input(int32(i%3), key, int64(i), true, row("n", int64(i))))
		}
		d.drain()
		var out [][]byte
		for _, s := range d.cut(9) {
			b, err := snapshot.EncodeSection(s)
			must(t, err)
			out = append(out, b)
		}
		return out
	}
	var fwd, mixed []int
	for i := 0; i < 50; i++ {
		fwd = append(fwd, i)
	}
	// Same per-key order, different interleaving of keys.
	for r := 0; r < 7; r++ {
		for i := 6 - r; i < 50; i += 7 {
			mixed = append(mixed, i)
		}
	}
	a, b := enc(fwd, 1), enc(mixed, 5)
	if len(a) != 3 || len(a) != len(b) {
		t.Fatalf("sections %d vs %d", len(a), len(b))
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			t.Fatalf("section %d differs", i)
		}
	}
}

// RunInline: Input runs an Inline action of an idle key itself, and only
// then: a busy key's input waits its turn, a full MaxConcurrency hands the
// task out in Ready, and without RunInline every task goes through Ready.
func TestRunInline(t *testing.T) {
	var firsts int
	chain := &Agent{Name: "chain", Actions: []Action{
		{Name: "first", Listen: []string{InputEventType}, Inline: true, Fn: func(ctx *Context, ev *Event) error {
			firsts++
			n, _ := GetInt64(ev.Input(), "n")
			if n >= 100 { // the second action makes the output
				return ctx.SendEvent(NewEvent("mid", map[string]any{"n": n}))
			}
			return ctx.SendEvent(NewOutput(n))
		}},
		{Name: "second", Listen: []string{"mid"}, Fn: func(ctx *Context, ev *Event) error {
			return ctx.SendEvent(NewOutput(ev.Attrs["n"]))
		}},
	}}
	outputs := func(rd Ready) (got []any) {
		for _, e := range rd.Emits {
			if e.Kind == EmitOutput {
				got = append(got, e.Output()[0])
			}
		}
		return got
	}
	for _, runInline := range []bool{false, true} {
		firsts = 0
		cfg := DefaultConfig()
		cfg.MaxConcurrency, cfg.RunInline = 1, runInline
		c, err := NewCore(chain, cfg, nil)
		must(t, err)
		must(t, c.Input(0, []byte("a"), 0, false, row("n", int64(1))))
		rd := c.Ready()
		if !runInline {
			if firsts != 0 || len(rd.Tasks) != 1 {
				t.Fatalf("RunInline off: %d bodies ran inside Input, Ready has %d tasks; want 0 and 1", firsts, len(rd.Tasks))
			}
			c.Complete(rd.Tasks[0].Run())
			if got := outputs(c.Ready()); fmt.Sprint(got) != "[1]" {
				t.Fatalf("RunInline off: outputs %v, want [1]", got)
			}
			continue
		}
		if firsts != 1 || len(rd.Tasks) != 0 || rd.Credit != 1 || fmt.Sprint(outputs(rd)) != "[1]" {
			t.Fatalf("idle key: %d bodies ran inside Input; Ready has %d tasks, credit %d, outputs %v; want 1, 0, 1, [1]",
				firsts, len(rd.Tasks), rd.Credit, outputs(rd))
		}
		// Key b: "first" runs inside Input, "second" is handed out and
		// holds the only task slot.
		must(t, c.Input(0, []byte("b"), 0, false, row("n", int64(100))))
		mid := append([]*Task(nil), c.Ready().Tasks...)
		if firsts != 2 || len(mid) != 1 || mid[0].Action() != "second" {
			t.Fatalf("key b: %d bodies of first, tasks %d; want 2 and one of second", firsts, len(mid))
		}
		must(t, c.Input(0, []byte("b"), 0, false, row("n", int64(2)))) // b is busy: waits
		must(t, c.Input(0, []byte("c"), 0, false, row("n", int64(3)))) // the slot is taken: Ready
		if firsts != 2 {
			t.Fatalf("a busy key's input or one beyond MaxConcurrency ran inside Input (%d bodies of first, want 2)", firsts)
		}
		c.Complete(mid[0].Run())
		var got []any
		for i := 0; i < 10 && c.HasReady(); i++ {
			rd := c.Ready()
			got = append(got, outputs(rd)...)
			for _, tk := range rd.Tasks {
				c.Complete(tk.Run())
			}
		}
		if fmt.Sprint(got) != "[100 3 2]" || firsts != 4 {
			t.Fatalf("after the slot freed: outputs %v, %d bodies of first; want [100 3 2] and 4", got, firsts)
		}
	}
}
