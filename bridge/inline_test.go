package bridge

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flinkgo/flinkgo/operator"
)

// chainAgent: an inline action turns every input into a "mid" event, which
// a pooled action turns into the output row (k, v). The inline action
// records whether it ran on the run loop's goroutine; the pooled one
// whether it did not.
func chainAgent(inlineOnLoop, pooledOnLoop *atomic.Int64) *operator.Agent {
	onLoop := func() bool {
		buf := make([]byte, 16<<10)
		// From Ready (runTasks) or inside Input (data): either way the
		// loop's own goroutine.
		return strings.Contains(string(buf[:runtime.Stack(buf, false)]), "bridge.(*loop).loop(")
	}
	return &operator.Agent{
		Name: "chain",
		Actions: []operator.Action{
			{Name: "first", Listen: []string{operator.InputEventType}, Inline: true,
				Fn: func(ctx *operator.Context, ev *operator.Event) error {
					if onLoop() {
						inlineOnLoop.Add(1)
					}
					in := ev.Input()
					k, _ := operator.GetView(in, "k")
					v, _ := operator.Get(in, "v")
					return ctx.SendEvent(operator.NewEvent("mid", map[string]any{"k": k, "v": v}))
				}},
			{Name: "second", Listen: []string{"mid"},
				Fn: func(ctx *operator.Context, ev *operator.Event) error {
					if onLoop() {
						pooledOnLoop.Add(1)
					}
					return ctx.SendEvent(operator.NewOutput(ev.Attrs["k"], ev.Attrs["v"]))
				}},
		},
		Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}},
	}
}

// TestServeInlineActions runs an agent whose first action is Inline through
// the server with a barrier in the middle: inline bodies run on the run
// loop and pooled ones on workers, every input gives exactly one output,
// per key in input order, and the checkpoint has nothing in flight once
// every output is out.
func TestServeInlineActions(t *testing.T) {
	var inlineOnLoop, pooledOnLoop atomic.Int64
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{chainAgent(&inlineOnLoop, &pooledOnLoop)}}, echoCols)
	j.handshake(j.defaultOpen("chain", map[string]string{"num-async-threads": "4"}), nil, nil)
	const keys, perKey = 13, 20
	send := func(from, to int) {
		var rows []row
		for i := from; i < to; i++ {
			k := fmt.Sprintf("key%02d", i%keys)
			rows = append(rows, row{kg: int32(i % keys), key: k, values: []any{k, int64(i)}})
		}
		j.data(rows...)
	}
	send(0, keys*perKey/2)
	j.send(&Barrier{CheckpointID: 1})
	got := j.collect(FrameSnapshot).rows
	send(keys*perKey/2, keys*perKey)
	j.send(&EndInput{})
	got = append(got, j.collect(FrameEndAck).rows...)

	if len(got) != keys*perKey {
		t.Fatalf("%d outputs for %d inputs", len(got), keys*perKey)
	}
	last := map[string]int64{}
	seen := map[int64]bool{}
	for _, r := range got {
		k, v := r[1].(string), r[2].(int64)
		if want := fmt.Sprintf("key%02d", v%keys); k != want {
			t.Fatalf("output %v: key %q, want %q", r, k, want)
		}
		if p, ok := last[k]; ok && v <= p {
			t.Fatalf("key %s: output %d after %d; a key's outputs must keep input order", k, v, p)
		}
		last[k] = v
		if seen[v] {
			t.Fatalf("output %d twice", v)
		}
		seen[v] = true
	}
	if n := inlineOnLoop.Load(); n != keys*perKey {
		t.Errorf("the inline action ran on the run loop %d times of %d", n, keys*perKey)
	}
	if n := pooledOnLoop.Load(); n != 0 {
		t.Errorf("the pooled action ran on the run loop %d times; it must run on a worker", n)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}
