// Package orderscoring is the example agent of flinkgo: per-customer order
// scoring.
//
// Input rows (keyed by customer) have the columns customer STRING,
// order_id BIGINT and amount DOUBLE. For every order:
//
//   - action "score" (on _input_event) reads the customer's short-term
//     memory (order count, last five amounts), makes one durable call "risk"
//     (a deterministic CPU function of the amount and that history), updates
//     the memory and sends an "order_scored" event;
//   - action "decide" (on order_scored) emits one output row: customer,
//     order_id, orders (count including this order), avg_amount (mean of the
//     last five amounts including this one), risk and flagged.
//
// The binary is cmd/orderscoring.
package orderscoring

import (
	"fmt"

	"github.com/flinkgo/flinkgo/operator"
)

// Names of the agent, its actions, event type and memory paths.
const (
	AgentName       = "order-scoring"
	EventScored     = "order_scored"
	memOrders       = "orders"
	memAmounts      = "amounts"
	historyLen      = 5
	flagThreshold   = 0.75
	riskResamples   = 256
	riskSpikeFactor = 1.5
)

// Agent returns the order-scoring agent.
func Agent() *operator.Agent {
	return &operator.Agent{
		Name: AgentName,
		Actions: []operator.Action{
			{Name: "score", Listen: []string{operator.InputEventType}, Fn: score},
			{Name: "decide", Listen: []string{EventScored}, Fn: decide},
		},
		Output: []operator.Column{
			{Name: "customer", Type: "STRING"},
			{Name: "order_id", Type: "BIGINT"},
			{Name: "orders", Type: "BIGINT"},
			{Name: "avg_amount", Type: "DOUBLE"},
			{Name: "risk", Type: "DOUBLE"},
			{Name: "flagged", Type: "BOOLEAN"},
		},
	}
}

// InputColumns are the input columns the agent reads, with their Flink types.
func InputColumns() []operator.Column {
	return []operator.Column{{Name: "customer", Type: "STRING"}, {Name: "order_id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}
}

func score(ctx *operator.Context, ev *operator.Event) error {
	in := ev.Input()
	customer, err := operator.GetString(in, "customer")
	if err != nil {
		return operator.Permanent(err)
	}
	orderID, err := operator.GetInt64(in, "order_id")
	if err != nil {
		return operator.Permanent(err)
	}
	amount, err := operator.GetFloat64(in, "amount")
	if err != nil {
		return operator.Permanent(err)
	}

	mem := ctx.ShortTerm()
	count, _ := mem.Int64(memOrders)
	history, err := amounts(mem)
	if err != nil {
		return operator.Permanent(err)
	}

	hist := make([]any, len(history))
	for i, a := range history {
		hist[i] = a
	}
	args := map[string]any{"amount": amount, "history": hist}
	r, err := ctx.Durable("risk", args, func() (any, error) { return Risk(amount, history), nil })
	if err != nil {
		return err
	}
	risk, ok := r.(float64)
	if !ok {
		return operator.Permanent(fmt.Errorf("orderscoring: durable call risk returned %T, want float64", r))
	}

	// Memory values are never modified in place: build a new list.
	next := make([]any, 0, historyLen)
	if len(history) == historyLen {
		history = history[1:]
	}
	sum := amount
	for _, a := range history {
		next = append(next, a)
		sum += a
	}
	next = append(next, amount)
	count++
	if err := mem.Set(memOrders, count); err != nil {
		return err
	}
	if err := mem.Set(memAmounts, next); err != nil {
		return err
	}
	return ctx.SendEvent(operator.NewEvent(EventScored, map[string]any{
		"customer":   customer,
		"order_id":   orderID,
		"orders":     count,
		"avg_amount": sum / float64(len(next)),
		"risk":       risk,
	}))
}

// amounts returns the last amounts kept in memory, oldest first.
func amounts(mem *operator.Memory) ([]float64, error) {
	v, ok := mem.Get(memAmounts)
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("orderscoring: memory %q holds %T, want a list of amounts", memAmounts, v)
	}
	out := make([]float64, len(list))
	for i, e := range list {
		f, ok := e.(float64)
		if !ok {
			return nil, fmt.Errorf("orderscoring: memory %q[%d] holds %T, want float64", memAmounts, i, e)
		}
		out[i] = f
	}
	return out, nil
}

func decide(ctx *operator.Context, ev *operator.Event) error {
	a := ev.Attrs
	risk, _ := a["risk"].(float64)
	return ctx.SendEvent(operator.NewOutput(a["customer"], a["order_id"], a["orders"], a["avg_amount"], risk, risk >= flagThreshold))
}

// Risk scores an order of amount against the customer's earlier amounts
// (oldest first): the share of bootstrap resamples of the history whose mean
// the amount exceeds by more than half. It is a deterministic function
// (the resampling generator is seeded from the inputs) costing a few
// microseconds, and returns a multiple of 1/256, exact in float64. With no
// history it returns 0.5.
func Risk(amount float64, history []float64) float64 {
	n := len(history)
	if n == 0 {
		return 0.5
	}
	// xorshift64*, seeded from the amount and the history length.
	state := uint64(n)*0x9e3779b97f4a7c15 ^ uint64(int64(amount*100)) ^ 0x2545f4914f6cdd1d
	if state == 0 {
		state = 1
	}
	above := 0
	for r := 0; r < riskResamples; r++ {
		sum := 0.0
		for i := 0; i < n; i++ {
			state ^= state >> 12
			state ^= state << 25
			state ^= state >> 27
			sum += history[(state*0x2545f4914f6cdd1d>>33)%uint64(n)]
		}
		if amount > riskSpikeFactor*sum/float64(n) {
			above++
		}
	}
	return float64(above) / riskResamples
}
