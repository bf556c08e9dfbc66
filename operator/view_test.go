package operator

import (
	"testing"
	"unsafe"
)

// viewRow is a Row whose ValueView returns strings that share buf, as
// arrowio.Row does for the bridge's batches.
type viewRow struct {
	FieldsRow
	buf []byte
}

func (r viewRow) ValueView(i int) any {
	if _, ok := r.FieldsRow[i].Value.(string); ok {
		return unsafe.String(&r.buf[0], len(r.buf))
	}
	return r.FieldsRow[i].Value
}

func sharesBuf(s string, buf []byte) bool {
	return len(s) > 0 && unsafe.StringData(s) == &buf[0]
}

// TestGetViewAndMemoryClone: GetView returns the row's shared string (and
// Value for rows that are no ViewRow); Memory.Set keeps a copy of it, not
// the shared string, so memory never pins an input batch.
func TestGetViewAndMemoryClone(t *testing.T) {
	buf := []byte("customer-42")
	var viewed, plain any
	a := &Agent{Name: "t", Actions: []Action{{Name: "keep", Listen: []string{InputEventType},
		Fn: func(ctx *Context, ev *Event) error {
			v, _ := GetView(ev.Input(), "c")
			viewed = v
			plain, _ = GetView(FieldsRow(row("c", "plain")), "c")
			return ctx.ShortTerm().Set("last", v)
		}}}}
	d := newDriver(t, a, DefaultConfig(), nil)
	d.input(0, "k", viewRow{FieldsRow: row("c", "unused"), buf: buf})
	if s, ok := viewed.(string); !ok || !sharesBuf(s, buf) {
		t.Fatalf("GetView returned %#v, not the row's shared string", viewed)
	}
	if plain != "plain" {
		t.Fatalf("GetView of a FieldsRow returned %#v", plain)
	}
	m := d.memOf(0, "k")
	i, ok := m.find("last")
	if !ok {
		t.Fatalf("memory holds no \"last\": %+v", m)
	}
	got, _ := m[i].Value.(string)
	if got != "customer-42" {
		t.Fatalf("memory holds %#v", m[i].Value)
	}
	if sharesBuf(got, buf) {
		t.Fatal("Memory.Set kept the shared string; it must keep a copy")
	}
}
