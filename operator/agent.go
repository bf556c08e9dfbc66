package operator

import (
	"fmt"
	"sort"
)

// Agent is a set of actions that react to events of one keyed stream.
type Agent struct {
	// Name identifies the agent in the manifest and in OPEN (go.agent).
	Name string
	// Actions in declaration order: for each event, the actions that listen
	// to its type run in this order.
	Actions []Action
	// Output is the schema of the rows this agent emits with NewOutput.
	Output []Column
}

// Action is one step of an agent.
type Action struct {
	// Name identifies the action in action-state records; keep it stable
	// across releases (a rename makes completed executions unknown, so they
	// run again after a restore).
	Name string
	// Listen lists the event types this action reacts to.
	Listen []string
	// Fn is the body. It may block; it runs on a worker goroutine.
	Fn func(ctx *Context, ev *Event) error
	// Inline declares a body that is short and never blocks: no I/O, no
	// sleeping, no durable call that waits for a store. The bridge runs
	// such a body on its core goroutine instead of handing it to a worker,
	// which saves the hand-off between goroutines (about half a microsecond
	// of CPU per task, more when the workers have to be woken). While an
	// inline body runs, nothing else of the subtask moves: no input is read,
	// no other key runs, no checkpoint is answered; so a body that may wait
	// must leave Inline false.
	Inline bool
}

// Column is one column of the output schema. Type is a Flink SQL type name
// (BIGINT, DOUBLE, STRING, ...; see docs/protocol.md).
type Column struct {
	Name string
	Type string
}

// compiled is an agent prepared for dispatch.
type compiled struct {
	agent     *Agent
	listeners map[string][]*Action // event type -> actions in declaration order
	onInput   []*Action
}

func compile(a *Agent) (*compiled, error) {
	if a == nil || a.Name == "" {
		return nil, fmt.Errorf("%w: an agent needs a Name", ErrAgent)
	}
	c := &compiled{agent: a, listeners: make(map[string][]*Action)}
	names := make(map[string]bool)
	for i := range a.Actions {
		act := &a.Actions[i]
		switch {
		case act.Name == "":
			return nil, fmt.Errorf("%w: agent %q: action %d has no Name", ErrAgent, a.Name, i)
		case names[act.Name]:
			return nil, fmt.Errorf("%w: agent %q: two actions are called %q; action names identify action-state records and must be unique", ErrAgent, a.Name, act.Name)
		case act.Fn == nil:
			return nil, fmt.Errorf("%w: agent %q: action %q has no Fn", ErrAgent, a.Name, act.Name)
		case len(act.Listen) == 0:
			return nil, fmt.Errorf("%w: agent %q: action %q listens to no event type", ErrAgent, a.Name, act.Name)
		}
		names[act.Name] = true
		for _, t := range act.Listen {
			if t == "" {
				return nil, fmt.Errorf("%w: agent %q: action %q listens to an empty event type", ErrAgent, a.Name, act.Name)
			}
			c.listeners[t] = append(c.listeners[t], act)
		}
	}
	cols := make(map[string]bool)
	for _, col := range a.Output {
		if col.Name == "" || col.Type == "" || cols[col.Name] || col.Name == "_ts" {
			return nil, fmt.Errorf("%w: agent %q: output column %q (type %q) needs a unique name other than _ts and a type", ErrAgent, a.Name, col.Name, col.Type)
		}
		cols[col.Name] = true
	}
	c.onInput = c.listeners[InputEventType]
	return c, nil
}

// EventTypes returns the event types some action listens to, sorted.
func (a *Agent) EventTypes() []string {
	seen := map[string]bool{}
	var out []string
	for _, act := range a.Actions {
		for _, t := range act.Listen {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	sort.Strings(out)
	return out
}
