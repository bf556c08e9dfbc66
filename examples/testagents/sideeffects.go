package testagents

import (
	"fmt"
	"os"
	"time"

	"github.com/flinkgo/flinkgo/operator"
)

// SideEffectsName is the agent that records its side effects (go.agent).
const SideEffectsName = "sideeffects"

// Modes of the sideeffects agent (input column "mode").
const (
	// ModePlain runs every step at once.
	ModePlain = "plain"
	// ModeHang makes the reconciled call "charge" wait (after its pending
	// record is durable) until the file "<log>.release" exists, at most
	// HangLimit; a test kills the process meanwhile.
	ModeHang = "hang"
)

// HangLimit bounds how long a ModeHang call waits.
const HangLimit = 5 * time.Minute

// stepEvent is the event "first" sends to "second".
const stepEvent = "sideeffects.step"

// SideEffectsInputColumns are the input columns of the sideeffects agent:
// the log column names the file every action body appends its lines to
// (an input column, so that a test sets it without options or
// environment).
func SideEffectsInputColumns() []operator.Column {
	return []operator.Column{{Name: "id", Type: "BIGINT"}, {Name: "customer", Type: "STRING"},
		{Name: "mode", Type: "STRING"}, {Name: "log", Type: "STRING"}}
}

// SideEffects returns the agent for failure tests with the Kafka store.
// Per input (id, customer, mode, log), each step appends one line
// "<step> <id>" to the file log, so a test sees which bodies ran how often:
//
//   - action "first" (on the input): line "first"; sends a step event;
//   - action "second" (on the step event): line "second"; durable call
//     "call1" (line "call1", returns id*10); reconciled durable call
//     "charge" (line "charge"; in ModeHang it then waits, see ModeHang;
//     returns "charged"; its reconciler writes line "reconcile" and returns
//     "reconciled"); counts the key's inputs in short-term memory "n"; emits
//     (id, customer, n, call1, charge).
func SideEffects() *operator.Agent {
	return &operator.Agent{
		Name: SideEffectsName,
		Actions: []operator.Action{
			{Name: "first", Listen: []string{operator.InputEventType}, Fn: sideFirst},
			{Name: "second", Listen: []string{stepEvent}, Fn: sideSecond},
		},
		Output: []operator.Column{{Name: "id", Type: "BIGINT"}, {Name: "customer", Type: "STRING"},
			{Name: "n", Type: "BIGINT"}, {Name: "call1", Type: "BIGINT"}, {Name: "charge", Type: "STRING"}},
	}
}

func sideFirst(ctx *operator.Context, ev *operator.Event) error {
	in := ev.Input()
	id, err := operator.GetInt64(in, "id")
	if err != nil {
		return operator.Permanent(err)
	}
	customer, _ := operator.GetString(in, "customer")
	mode, _ := operator.GetString(in, "mode")
	log, err := operator.GetString(in, "log")
	if err != nil || log == "" {
		return operator.Permanent(fmt.Errorf("sideeffects: input %d has no log file: %v", id, err))
	}
	if err := appendLine(log, "first", id); err != nil {
		return err
	}
	return ctx.SendEvent(operator.NewEvent(stepEvent, map[string]any{"id": id, "customer": customer, "mode": mode, "log": log}))
}

func sideSecond(ctx *operator.Context, ev *operator.Event) error {
	id, _ := ev.Attrs["id"].(int64)
	customer, _ := ev.Attrs["customer"].(string)
	mode, _ := ev.Attrs["mode"].(string)
	log, _ := ev.Attrs["log"].(string)
	if err := appendLine(log, "second", id); err != nil {
		return err
	}
	c1, err := ctx.Durable("call1", id, func() (any, error) {
		return id * 10, appendLine(log, "call1", id)
	})
	if err != nil {
		return err
	}
	charge, err := ctx.DurableReconciled("charge", id, func() (any, error) {
		if err := appendLine(log, "charge", id); err != nil {
			return nil, err
		}
		if mode == ModeHang {
			waitForFile(log+".release", HangLimit)
		}
		return "charged", nil
	}, func() (any, error) {
		return "reconciled", appendLine(log, "reconcile", id)
	})
	if err != nil {
		return err
	}
	n, _ := ctx.ShortTerm().Int64("n")
	n++
	if err := ctx.ShortTerm().Set("n", n); err != nil {
		return err
	}
	return ctx.SendEvent(operator.NewOutput(id, customer, n, c1, charge))
}

// appendLine appends "<step> <id>\n" with one write (O_APPEND), so that
// lines of concurrent bodies do not interleave.
func appendLine(name, step string, id int64) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return operator.Permanent(fmt.Errorf("sideeffects: %w", err))
	}
	_, err = fmt.Fprintf(f, "%s %d\n", step, id)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return operator.Permanent(fmt.Errorf("sideeffects: %w", err))
	}
	return nil
}

func waitForFile(name string, limit time.Duration) {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return
		}
	}
}
