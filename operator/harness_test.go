package operator

import (
	"fmt"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// row builds an input row.
func row(kv ...any) FieldsRow {
	var r FieldsRow
	for i := 0; i < len(kv); i += 2 {
		r = append(r, snapshot.Field{Name: kv[i].(string), Value: kv[i+1]})
	}
	return r
}

// driver runs a core synchronously, running tasks inline in the order the
// core hands them out, and records everything emitted.
type driver struct {
	t     testing.TB
	c     *Core
	emits []Emit
	err   error
	now   int64
}

func newDriver(t testing.TB, a *Agent, cfg Config, store statestore.ActionStore) *driver {
	t.Helper()
	c, err := NewCore(a, cfg, store)
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, c: c}
}

// drain runs until the core has nothing more to do right now.
func (d *driver) drain() {
	for i := 0; i < 1_000_000; i++ {
		rd := d.c.Ready()
		d.emits = append(d.emits, append([]Emit(nil), rd.Emits...)...)
		if rd.Err != nil && d.err == nil {
			d.err = rd.Err
		}
		if len(rd.Tasks) == 0 && !d.c.HasReady() {
			return
		}
		for _, t := range rd.Tasks {
			d.c.Complete(t.Run())
		}
	}
	d.t.Fatal("driver: no progress")
}

func (d *driver) input(kg int32, key string, r Row) {
	d.t.Helper()
	if err := d.c.Input(kg, []byte(key), 0, false, r); err != nil {
		d.t.Fatal(err)
	}
	d.drain()
}

func (d *driver) tick(ms int64) {
	d.now += ms
	d.c.Tick(d.now)
	d.drain()
}

func (d *driver) outputs() [][]any {
	var out [][]any
	for _, e := range d.emits {
		if e.Kind == EmitOutput {
			out = append(out, e.Output())
		}
	}
	return out
}

func (d *driver) memOf(kg int32, key string) memMap {
	ks, ok := d.c.table.Get(kg, []byte(key))
	if !ok {
		return nil
	}
	return ks.mem
}

func fmtOut(o [][]any) string { return fmt.Sprint(o) }
