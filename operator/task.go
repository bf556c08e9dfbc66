package operator

import (
	"fmt"
	"runtime/debug"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

type snapshotEvent = snapshot.Event

// Task is one action execution handed out by Ready. Run it on any goroutine
// and give the Result to Core.Complete. A Task reads the key's committed
// memory but never writes core state, so the core keeps going while it runs.
type Task struct {
	core     *Core
	ks       *keyState
	act      *Action
	ev       *Event
	seq      uint64
	emitBase uint32
	attempt  int
	short    memMap // committed short-term memory (read-only here)
	sensory  memMap // the input's sensory memory (read-only here)
	prior    []statestore.CallRecord
	slot     *statestore.InputSlot // the input's, set on every record Put
	keySHA   [32]byte              // SHA-256 of the key, set when a store is configured
	res      Result                // reused with the Task (see Core.recycle)
	ctx      Context               // the action's context, reused with the Task
	// rec and outAttrs: the record handed to a store that lends its
	// records (statestore.Lender), reused with the Task; see Context.record.
	rec      statestore.Record
	outAttrs []map[string]any
	lg       taskLinger // see linger.go
	// outEvs holds the events of Context.EmitRow, reused with the Task:
	// output events end in Emits (copied) and records (converted), never
	// in another task.
	outEvs []Event
}

// Action returns the name of the action this task runs.
func (t *Task) Action() string { return t.act.Name }

// Inline reports whether the task's action is declared Inline: its body
// never blocks, so the caller may run it on the core's goroutine.
func (t *Task) Inline() bool { return t.act.Inline }

// KeyGroup returns the key group of the task's key.
func (t *Task) KeyGroup() int32 { return t.ks.kg }

func (t *Task) recordKey() statestore.RecordKey {
	return statestore.RecordKey{KeyGroup: t.ks.kg, KeyHash: t.keySHA, Seq: t.seq, EventID: t.ev.ID, Action: t.act.Name}
}

// Result is the outcome of a Task.
type Result struct {
	task     *Task
	updates  []statestore.MemUpdate
	events   []*Event
	calls    []statestore.CallRecord
	err      error
	storeErr error
	replayed int
}

// Run executes the action body and returns its outcome. A panic in the body
// becomes a permanent error.
func (t *Task) Run() *Result {
	// The context writes straight into the result's buffers, which the Task
	// keeps when the core recycles it. Fields are set one by one: the Task
	// is reused, and rewriting whole structs costs write barriers.
	c := &t.ctx
	c.t, c.prior, c.updates, c.events, c.calls = t, t.prior, t.res.updates[:0], t.res.events[:0], nil
	c.callIdx, c.inDurable, c.misuseErr, c.storeErr, c.replayed = 0, false, nil, nil, 0
	c.short.ctx, c.short.scope, c.short.base = c, statestore.ScopeShortTerm, t.short
	c.sensory.ctx, c.sensory.scope, c.sensory.base = c, statestore.ScopeSensory, t.sensory

	err := t.runBody(c)
	if err == nil && c.misuseErr != nil {
		err = Permanent(c.misuseErr)
	}
	unrecorded := false
	if t.core.linger != nil {
		var lerr error
		if unrecorded, lerr = t.endExecution(); lerr != nil && c.storeErr == nil {
			c.storeErr = lerr
		}
	}
	res := &t.res
	res.task, res.err, res.storeErr, res.replayed, res.calls = t, err, c.storeErr, c.replayed, c.calls
	res.updates, res.events = c.updates[:0], c.events[:0]
	if err == nil {
		// Lineage is bound when outputs are finalised.
		for _, e := range c.events {
			e.UpstreamID, e.UpstreamAction = t.ev.ID, t.act.Name
		}
		res.updates, res.events = c.updates, c.events
		if store := t.core.store; store != nil && res.storeErr == nil {
			if perr := store.Put(c.record(statestore.StatusCompleted, false)); perr != nil {
				res.storeErr = perr
			}
			t.lent()
		}
	} else if store := t.core.store; unrecorded && store != nil && res.storeErr == nil {
		// A failed execution's calls are kept for its next attempt, and
		// for a restore before it, as when it runs on.
		if perr := store.Put(c.record(statestore.StatusRunning, true)); perr != nil {
			res.storeErr = perr
		}
	}
	c.prior, c.calls, c.short.base, c.sensory.base = nil, nil, nil, nil
	return res
}

func (t *Task) runBody(c *Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Permanent(fmt.Errorf("operator: action %q panicked: %v\n%s", t.act.Name, r, debug.Stack()))
		}
	}()
	return t.act.Fn(c, t.ev)
}

// sha256 returns the key's SHA-256, computed once. Core goroutine only.
func (ks *keyState) sha256() [32]byte {
	if ks.sha == nil {
		s := statestore.HashKey(ks.key)
		ks.sha = &s
	}
	return *ks.sha
}
