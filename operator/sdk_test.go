package operator

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/statestore"
)

func oneAction(fn func(ctx *Context, ev *Event) error) *Agent {
	return &Agent{Name: "t", Actions: []Action{{Name: "a", Listen: []string{InputEventType}, Fn: fn}}}
}

func TestMemoryPaths(t *testing.T) {
	var errs []error
	var seen []any
	a := oneAction(func(ctx *Context, ev *Event) error {
		m := ctx.ShortTerm()
		step, _ := GetString(ev.Input(), "step")
		switch step {
		case "write":
			errs = append(errs,
				m.Set("a.b.c", int(7)),                   // creates a and a.b
				m.Set("a.b", "x"),                        // a.b is an object
				m.Set("a.b.c.d", 1),                      // a.b.c is a value
				m.Set("bad", struct{}{}),                 // not in the value domain
				m.Set("", 1),                             // empty path
				m.Set("x..y", 1),                         // empty segment
				m.NewObject("a", false),                  // exists
				m.NewObject("o", false),                  // new
				m.Set("l", []any{int32(1), "s", nil}),    // list, widened
				m.Set("m", map[string]any{"k": int8(2)}), // map, widened
			)
			v, ok := m.Get("a.b.c")
			seen = append(seen, v, ok, m.IsObject("a.b"), strings.Join(m.Fields("a"), ","), strings.Join(m.Fields(""), ","))
		case "read":
			v, ok := m.Get("a.b.c")
			l, _ := m.Get("l")
			mm, _ := m.Get("m")
			seen = append(seen, v, ok, l, mm)
			errs = append(errs, m.NewObject("a", true)) // replaces the subtree
			_, ok = m.Get("a.b.c")
			seen = append(seen, ok, m.IsObject("a"))
			errs = append(errs, m.Delete("o"))
			_, ok = m.Get("o")
			seen = append(seen, ok)
		}
		return nil
	})
	d := newDriver(t, a, DefaultConfig(), nil)
	d.input(1, "k", row("step", "write"))
	want := []string{"", "is an object", "holds a value", "Go type struct {}", "not a", "not a", "already exists", "", "", ""}
	for i, w := range want {
		switch {
		case w == "" && errs[i] != nil:
			t.Errorf("write %d: unexpected error %v", i, errs[i])
		case w != "" && (errs[i] == nil || !strings.Contains(errs[i].Error(), w)):
			t.Errorf("write %d: error %v, want one containing %q", i, errs[i], w)
		case w != "" && !errors.Is(errs[i], ErrMemory):
			t.Errorf("write %d: error %v is not ErrMemory", i, errs[i])
		}
	}
	if seen[0] != int64(7) || seen[1] != true || seen[2] != true || seen[3] != "b" || seen[4] != "a,l,m,o" {
		t.Fatalf("reads within the action: %v", seen)
	}
	d.input(1, "k", row("step", "read"))
	if seen[5] != int64(7) || seen[6] != true {
		t.Fatalf("committed read: %v", seen[5:])
	}
	if l := seen[7].([]any); l[0] != int64(1) || l[1] != "s" || l[2] != nil {
		t.Fatalf("list not normalised: %#v", l)
	}
	if m := seen[8].(map[string]any); m["k"] != int64(2) {
		t.Fatalf("map not normalised: %#v", m)
	}
	if seen[9] != false || seen[10] != true || seen[11] != false {
		t.Fatalf("overwrite/delete: %v", seen[9:])
	}
	if errs[10] != nil || errs[11] != nil {
		t.Fatal(errs[10:])
	}
	if _, ok := d.memOf(1, "k").get("a.b.c"); ok {
		t.Fatal("a.b.c survived NewObject(a, overwrite)")
	}
}

func TestSensoryClearedShortTermKept(t *testing.T) {
	var got []any
	a := &Agent{Name: "t", Actions: []Action{
		{Name: "first", Listen: []string{InputEventType}, Fn: func(ctx *Context, ev *Event) error {
			v, ok := ctx.Sensory().Get("s")
			got = append(got, v, ok)
			n, _ := ctx.ShortTerm().Int64("n")
			if err := ctx.ShortTerm().Set("n", n+1); err != nil {
				return err
			}
			return ctx.Sensory().Set("s", "from-first")
		}},
		{Name: "second", Listen: []string{InputEventType}, Fn: func(ctx *Context, ev *Event) error {
			v, _ := ctx.Sensory().Get("s")
			n, _ := ctx.ShortTerm().Int64("n")
			got = append(got, v, n)
			return nil
		}},
	}}
	d := newDriver(t, a, DefaultConfig(), nil)
	d.input(0, "k", row())
	d.input(0, "k", row())
	want := []any{nil, false, "from-first", int64(1), nil, false, "from-first", int64(2)}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("step %d: got %v want %v (all %v)", i, got[i], want[i], got)
		}
	}
}

func TestLineage(t *testing.T) {
	var sendErrs []error
	var up []string
	a := &Agent{Name: "t", Actions: []Action{
		{Name: "src", Listen: []string{InputEventType}, Fn: func(ctx *Context, ev *Event) error {
			bad := NewEvent("e", nil)
			bad.UpstreamID = UUID{1}
			sendErrs = append(sendErrs, ctx.SendEvent(bad))
			bad2 := NewEvent("e", nil)
			bad2.UpstreamAction = "x"
			sendErrs = append(sendErrs, ctx.SendEvent(bad2))
			sendErrs = append(sendErrs, ctx.SendEvent(NewEvent("e", map[string]any{"v": time.Now()})))
			return ctx.SendEvent(NewEvent("e", map[string]any{"v": int64(1)}))
		}},
		{Name: "dst", Listen: []string{"e"}, Fn: func(ctx *Context, ev *Event) error {
			up = append(up, ev.UpstreamAction, FormatUUID(ev.UpstreamID))
			return ctx.SendEvent(NewOutput(ev.Attrs["v"]))
		}},
	}}
	d := newDriver(t, a, DefaultConfig(), nil)
	d.input(0, "k", row())
	if !errors.Is(sendErrs[0], ErrLineage) || !strings.Contains(sendErrs[0].Error(), "UpstreamID") {
		t.Fatalf("lineage id: %v", sendErrs[0])
	}
	if !errors.Is(sendErrs[1], ErrLineage) || !strings.Contains(sendErrs[1].Error(), "UpstreamAction") {
		t.Fatalf("lineage action: %v", sendErrs[1])
	}
	if sendErrs[2] == nil || !strings.Contains(sendErrs[2].Error(), "time.Time") {
		t.Fatalf("attr domain: %v", sendErrs[2])
	}
	inputID := eventID(0, statestore.HashKey64([]byte("k")), 0, inputEventPos)
	if len(up) != 2 || up[0] != "src" || up[1] != FormatUUID(inputID) {
		t.Fatalf("lineage bound to %v, want src and the input event id", up)
	}
	if o := d.outputs(); len(o) != 1 || o[0][0] != int64(1) {
		t.Fatalf("outputs %v", o)
	}
}
