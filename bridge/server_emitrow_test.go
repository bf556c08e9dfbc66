package bridge

import (
	"fmt"
	"testing"

	"github.com/flinkgo/flinkgo/operator"
)

// forwardAgent emits every input row as it is (Context.EmitRow); its
// output column v is an INT where the input's is a BIGINT, so that one
// column is copied from the batch and the other converted.
func forwardAgent(inline bool) *operator.Agent {
	return &operator.Agent{
		Name: "fwd",
		Actions: []operator.Action{{Name: "fwd", Listen: []string{operator.InputEventType}, Inline: inline,
			Fn: func(ctx *operator.Context, ev *operator.Event) error { return ctx.EmitRow(ev.Input()) }}},
		Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "INT"}},
	}
}

// TestServeEmitRow: rows an action emits as they are reach the operator
// unchanged, over batches whose rows are split across OUTPUT frames and
// copied after their inputs finished (the batch must outlive its inputs
// until the writer has copied it), inline and on the pool.
func TestServeEmitRow(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			j := startServe(t, ServerConfig{Agents: []*operator.Agent{forwardAgent(inline)}}, echoCols)
			rd := j.handshake(j.defaultOpen("fwd", map[string]string{"go.output.rows": "7", "num-async-threads": "4"}), nil, nil)
			const batches, per = 5, 40
			if rd.Credit < batches*per {
				t.Fatalf("credit %d, the test needs %d", rd.Credit, batches*per)
			}
			want := map[string]int64{}
			for b := 0; b < batches; b++ {
				rows := make([]row, per)
				for i := range rows {
					n := int64(b*per + i)
					k := fmt.Sprintf("key-%03d", n)
					want[k] = n
					rows[i] = row{kg: int32(n % 128), key: k, ts: 1000 + n, values: []any{k, n}}
				}
				j.data(rows...)
			}
			j.send(&EndInput{})
			got := j.collect(FrameEndAck)
			if len(got.rows) != batches*per {
				t.Fatalf("%d output rows, want %d", len(got.rows), batches*per)
			}
			for _, r := range got.rows {
				k, _ := r[1].(string)
				n, ok := want[k]
				if !ok || r[2] != n || r[0] != 1000+n {
					t.Fatalf("output row %v: want [%d %s %d]", r, 1000+n, k, n)
				}
				delete(want, k)
			}
			j.send(&Close{})
			if err := j.wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestServeEmitRowThatDoesNotFit: a row emitted as it is whose value does
// not fit its output column fails the subtask with ACTION_FAILED naming
// the column.
func TestServeEmitRowThatDoesNotFit(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{forwardAgent(true)}}, echoCols)
	j.handshake(j.defaultOpen("fwd", nil), nil, nil)
	j.data(row{kg: 1, key: "a", values: []any{"a", int64(1)}}, row{kg: 2, key: "b", values: []any{"b", int64(1) << 40}})
	j.expectError(CodeActionFailed, `column "v" (INT)`, "fix the action that emits it")
}
