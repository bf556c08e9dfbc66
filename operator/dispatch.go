package operator

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/statestore"
)

// dispatch hands out tasks up to MaxConcurrency, round robin over keys.
// Executions the action-state store already holds as completed are replayed
// here, without running the body.
func (c *Core) dispatch() {
	for c.err == nil && c.running < c.cfg.MaxConcurrency && c.readyQ.len() > 0 {
		ks := c.readyQ.pop()
		ks.inReady = false
		f := ks.cur
		if ks.running || f == nil || f.tasks.len() == 0 || f.retryAt != 0 {
			continue
		}
		if t := c.start(ks); t != nil {
			c.tasks = append(c.tasks, t)
		}
	}
}

// start returns the task of the next action of ks's in-flight input,
// counted as running, or nil if the action-state store holds the execution
// as completed: then it is replayed here, without running the body.
// REQUIRES: ks is not running, and its in-flight input has a task and no
// retry back-off.
func (c *Core) start(ks *keyState) *Task {
	f := ks.cur
	spec := f.tasks.peek()
	t := c.newTask()
	t.core, t.ks, t.act, t.ev, t.seq = c, ks, spec.act, spec.ev, f.in.seq
	t.emitBase, t.attempt, t.short, t.sensory, t.prior, t.slot = f.emitted, f.attempt, ks.mem, f.sensory, f.prior, &f.slot
	if c.store != nil {
		t.keySHA = ks.sha256()
		if f.attempt == 0 && (c.hint == nil || c.hint.MayHold(ks.kg, t.keySHA, t.seq)) {
			if rec, ok := c.store.Get(t.recordKey()); ok {
				if rec.Status == statestore.StatusCompleted {
					c.replayCompleted(ks, t, rec)
					return nil
				}
				t.prior = rec.Calls
				c.stats.ActionsRerun++
			}
		}
	}
	ks.running = true
	c.running++
	return t
}

// replayCompleted applies a completed execution from its record: memory
// updates re-applied, events re-sent with their original ids.
func (c *Core) replayCompleted(ks *keyState, t *Task, rec *statestore.Record) {
	res := &Result{task: t, updates: rec.Updates, calls: rec.Calls}
	for i := range rec.Events {
		e, err := eventFromSnapshot(&rec.Events[i], nil)
		if err != nil {
			c.fail(fmt.Errorf("operator: replay of action %q (key group %d, input %d): %w", t.act.Name, ks.kg, t.seq, err))
			return
		}
		// Lineage is rebound to this execution, ids stay as recorded.
		e.UpstreamID, e.UpstreamAction = t.ev.ID, t.act.Name
		res.events = append(res.events, e)
	}
	c.stats.ActionsReplayed++
	c.apply(ks, res)
}

// Complete takes the result of a task handed out by Ready.
func (c *Core) Complete(res *Result) {
	t := res.task
	ks := t.ks
	ks.running = false
	c.running--
	defer c.recycle(t)
	switch {
	case res.storeErr != nil:
		c.fail(fmt.Errorf("%w for action %q (key group %d, input %d): %w", ErrStore, t.act.Name, ks.kg, t.seq, res.storeErr))
	case res.err != nil:
		c.onError(ks, t, res)
	default:
		c.stats.ActionsExecuted++
		c.stats.CallsReplayed += int64(res.replayed)
		c.apply(ks, res)
	}
	c.checkEnd()
}

func (c *Core) newTask() *Task {
	if n := len(c.freeTasks); n > 0 {
		t := c.freeTasks[n-1]
		c.freeTasks = c.freeTasks[:n-1]
		return t
	}
	return &Task{}
}

// recycle keeps a completed task and its result buffers for reuse.
// REQUIRES: nothing refers to t, its result or the result's slices.
func (c *Core) recycle(t *Task) {
	clear(t.res.updates)
	clear(t.res.events)
	clear(t.outEvs)
	t.outEvs = t.outEvs[:0]
	t.ks, t.act, t.ev, t.short, t.sensory, t.prior, t.slot = nil, nil, nil, nil, nil, nil, nil
	t.res.err, t.res.storeErr, t.res.calls = nil, nil, nil
	t.res.updates, t.res.events = t.res.updates[:0], t.res.events[:0]
	if len(c.freeTasks) < 4096 {
		c.freeTasks = append(c.freeTasks, t)
	}
}

// apply makes a finished execution's effects part of the key's state and
// moves the key on.
func (c *Core) apply(ks *keyState, res *Result) {
	f := ks.cur
	for i := range res.updates {
		u := &res.updates[i]
		if u.Scope == statestore.ScopeSensory {
			f.sensory = f.sensory.apply(u)
			continue
		}
		if ks.memShared {
			ks.mem, ks.memShared = slices.Clone(ks.mem), false
		}
		ks.mem = ks.mem.apply(u)
	}
	// own: the index in c.emits of an output whose row is the input's own
	// row, not retained yet: if the input finishes now, the output takes
	// over the input's hold on its batch instead of taking one more (two
	// atomic operations on the batch's count per row of a pass-through).
	own := -1
	for _, e := range res.events {
		if e.Type == OutputEventType {
			// Built in place: an Emit built on the stack and then copied
			// into c.emits stalled on that copy (its loads span the
			// stores that built it).
			c.emits = append(c.emits, Emit{})
			em := &c.emits[len(c.emits)-1]
			em.Kind, em.KeyGroup, em.Key, em.EventID = EmitOutput, ks.kg, ks.key, e.ID
			em.Timestamp, em.HasTS = f.in.ts, f.in.hasTS
			switch {
			case e.outRow == nil:
				em.Values = e.output
			case own < 0 && isInputRow(e.outRow, f.in.row):
				em.Row = e.outRow
				own = len(c.emits) - 1
			default:
				em.Row = outputRow(e)
			}
			c.stats.OutputsEmitted++
			continue
		}
		for _, act := range c.ag.listeners[e.Type] {
			f.tasks.push(taskSpec{act: act, ev: e})
		}
		c.stats.EventsProcessed++
	}
	f.emitted += uint32(len(res.events))
	f.tasks.pop()
	f.attempt, f.prior = 0, nil
	if f.tasks.len() == 0 {
		f.handed = own >= 0
		c.finishInput(ks)
	} else {
		if own >= 0 { // the input lives on: its row needs a hold of its own
			c.emits[own].Row = c.emits[own].Row.(Retainer).Retain()
		}
		c.markReady(ks)
	}
}

// isInputRow reports whether out, a row an action emitted, is in, its
// input's row, held by in's batch and retainable: then the output can take
// over the input's hold when the input finishes.
func isInputRow(out, in Row) bool {
	if _, ok := out.(Retainer); !ok {
		return false
	}
	// Interfaces of the same non-comparable dynamic type panic on ==.
	return reflect.TypeOf(out).Comparable() && out == in
}

// outputRow returns the row of a NewOutputRow event for Emit.Row: retained
// if it pins a buffer that its input's end releases, copied into values if
// it pins one and cannot be retained, as it is otherwise.
func outputRow(e *Event) Row {
	switch r := e.outRow.(type) {
	case Retainer:
		return r.Retain()
	case Releaser:
		return FieldsRow(materialize(e.outRow))
	}
	return e.outRow
}

// finishInput ends the key's in-flight input and starts the next queued one.
func (c *Core) finishInput(ks *keyState) {
	for ks.cur != nil && ks.cur.tasks.len() == 0 {
		f := ks.cur
		ks.cur = nil
		if r, ok := f.in.row.(Releaser); ok && !f.handed {
			r.Release()
		}
		if c.slots != nil {
			c.slots.MarkInputDoneIn(&f.slot, ks.kg, ks.sha256(), f.in.seq, c.lastCut)
		} else if c.tracker != nil {
			c.tracker.MarkInputDone(ks.kg, ks.sha256(), f.in.seq, c.lastCut)
		}
		c.wm.done(f.in.seg)
		c.inFlight--
		c.credit++
		c.stats.InputsFinished++
		c.release(f)
		if ks.queue.len() > 0 {
			c.begin(ks, ks.queue.pop())
		}
	}
	c.releaseWatermarks()
	c.markReady(ks)
}

// onError applies the error-handling strategy to a failed execution.
func (c *Core) onError(ks *keyState, t *Task, res *Result) {
	f := ks.cur
	kind := KindOf(res.err)
	if c.cfg.Strategy == StrategyRetry && kind == KindRetryable && f.attempt < c.cfg.MaxRetries {
		f.attempt++
		f.prior = succeededPrefix(res.calls)
		c.stats.ActionsRetried++
		wait := c.cfg.RetryWait << (f.attempt - 1)
		if wait <= 0 || wait > time.Hour {
			wait = min(time.Hour, max(c.cfg.RetryWait, 0))
		}
		c.logger.Warn("action failed, retrying", "action", t.act.Name, "key_group", ks.kg, "seq", t.seq,
			"attempt", f.attempt, "wait", wait, "err", res.err)
		if wait == 0 {
			c.markReady(ks)
			return
		}
		f.retryAt = c.now + wait.Milliseconds()
		c.waiting = append(c.waiting, ks)
		return
	}
	if c.cfg.Strategy == StrategyIgnore {
		level := "action failed, ignored (error-handling-strategy=ignore)"
		c.logger.Error(level, "action", t.act.Name, "key_group", ks.kg, "seq", t.seq, "kind", kind, "err", res.err)
		c.stats.ActionsIgnored++
		if c.store != nil {
			// Record the execution as completed without effects, so that a
			// replay after a restore ignores it the same way.
			rec := &statestore.Record{Key: t.recordKey(), Status: statestore.StatusCompleted, Calls: res.calls, Slot: t.slot}
			if err := c.store.Put(rec); err != nil {
				c.fail(fmt.Errorf("%w: %w", ErrStore, err))
				return
			}
		}
		c.apply(ks, &Result{task: t})
		return
	}
	c.fail(&ActionFailedError{Agent: c.ag.agent.Name, Action: t.act.Name, KeyGroup: ks.kg, Seq: t.seq,
		Attempts: f.attempt + 1, Kind: kind, Strategy: c.cfg.Strategy, Err: res.err})
}

func succeededPrefix(calls []statestore.CallRecord) []statestore.CallRecord {
	for i, cr := range calls {
		if cr.Status != statestore.CallSucceeded {
			return calls[:i]
		}
	}
	return calls
}

// ActionFailedError fails the subtask: an action failed and the strategy
// does not absorb it.
type ActionFailedError struct {
	Agent, Action string
	KeyGroup      int32
	Seq           uint64
	Attempts      int
	Kind          ErrorKind
	Strategy      Strategy
	Err           error
}

func (e *ActionFailedError) Error() string {
	return fmt.Sprintf("operator: agent %q action %q failed for key group %d (input %d) after %d attempt(s) [%s error, error-handling-strategy=%s]: %v",
		e.Agent, e.Action, e.KeyGroup, e.Seq, e.Attempts, e.Kind, e.Strategy, e.Err)
}

func (e *ActionFailedError) Unwrap() error { return e.Err }
