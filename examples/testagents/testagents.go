// Package testagents holds small agents for end-to-end tests and
// benchmarks of the bridge; cmd/flinkgo-testagent is their binary.
//
// Both agents read the input columns id BIGINT, customer STRING and
// payload STRING (the stream is keyed by customer):
//
//   - "passthrough" emits (id, customer, payload) unchanged, one output row
//     per input; it measures what the bridge itself costs.
//   - "slow" keeps a per-key input counter n in short-term memory (so a
//     restore can be checked: n continues, never repeats) and emits
//     (id, customer, payload, n). An input whose customer starts with
//     "slow" takes SlowDelay (3 s) before it emits, as an LLM call would;
//     every other input emits at once.
package testagents

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
)

// Agent names (go.agent).
const (
	PassthroughName = "passthrough"
	SlowName        = "slow"
)

// SlowPrefix marks the customers whose inputs the slow agent delays.
const SlowPrefix = "slow"

// SlowDelay is how long the slow agent's action takes for a customer that
// starts with SlowPrefix.
const SlowDelay = 3 * time.Second

// memCount is the slow agent's per-key counter in short-term memory.
const memCount = "n"

// InputColumns are the input columns both agents read, with Flink types.
func InputColumns() []operator.Column {
	return []operator.Column{{Name: "id", Type: "BIGINT"}, {Name: "customer", Type: "STRING"}, {Name: "payload", Type: "STRING"}}
}

// All returns every agent of the test binary.
func All() []*operator.Agent {
	return []*operator.Agent{Passthrough(), Slow()}
}

// Passthrough returns the agent that emits every input row unchanged.
func Passthrough() *operator.Agent {
	return &operator.Agent{
		Name: PassthroughName,
		// forward only copies three values: it never blocks, so it runs
		// inline, without a hand-off to a worker goroutine.
		Actions: []operator.Action{{Name: "forward", Listen: []string{operator.InputEventType}, Fn: forward, Inline: true}},
		Output:  InputColumns(),
	}
}

func forward(ctx *operator.Context, ev *operator.Event) error {
	in := ev.Input()
	if hasInputColumns(in) {
		// The row goes out as it is, copied by the bridge from the input
		// batch into the OUTPUT batch without making a Go value of any
		// column (EmitRow).
		return ctx.EmitRow(in)
	}
	// Other columns, or these in another order: pick them by name. GetView:
	// the strings go straight to the output row, so they need not be copied
	// out of the input batch.
	id, _ := operator.GetView(in, "id")
	customer, _ := operator.GetView(in, "customer")
	payload, _ := operator.GetView(in, "payload")
	return ctx.SendEvent(operator.NewOutput(id, customer, payload))
}

// hasInputColumns reports whether r's columns are InputColumns, in order.
// For a row of an Arrow batch the answer is that of its schema, checked
// once: comparing the names for every row was about 7 % of the Go process's
// CPU in the pass-through benchmark.
func hasInputColumns(r operator.Row) bool {
	sr, ok := r.(interface{ Schema() *arrowio.InputSchema })
	if !ok {
		return namesMatch(r)
	}
	s := sr.Schema()
	if s == matchedSchema.Load() {
		return true
	}
	if !namesMatch(s) {
		return false
	}
	matchedSchema.Store(s)
	return true
}

// matchedSchema is the last input schema whose columns are InputColumns.
var matchedSchema atomic.Pointer[arrowio.InputSchema]

func namesMatch(r interface {
	NumFields() int
	Name(int) string
}) bool {
	if r.NumFields() != len(inputNames) {
		return false
	}
	for i, n := range inputNames {
		if r.Name(i) != n {
			return false
		}
	}
	return true
}

var inputNames = []string{"id", "customer", "payload"}

// Slow returns the slow agent with SlowDelay.
func Slow() *operator.Agent { return NewSlow(SlowDelay) }

// NewSlow returns the slow agent delaying the inputs of "slow*" customers
// by delay (unit tests use a short one; the binary uses SlowDelay).
func NewSlow(delay time.Duration) *operator.Agent {
	return &operator.Agent{
		Name: SlowName,
		Actions: []operator.Action{{
			Name: "count", Listen: []string{operator.InputEventType},
			Fn: func(ctx *operator.Context, ev *operator.Event) error {
				in := ev.Input()
				customer, err := operator.GetString(in, "customer")
				if err != nil {
					return operator.Permanent(err)
				}
				id, _ := operator.Get(in, "id")
				payload, _ := operator.Get(in, "payload")
				n, _ := ctx.ShortTerm().Int64(memCount)
				n++
				if err := ctx.ShortTerm().Set(memCount, n); err != nil {
					return err
				}
				if strings.HasPrefix(customer, SlowPrefix) {
					time.Sleep(delay)
				}
				return ctx.SendEvent(operator.NewOutput(id, customer, payload, n))
			},
		}},
		Output: append(InputColumns(), operator.Column{Name: "n", Type: "BIGINT"}),
	}
}
