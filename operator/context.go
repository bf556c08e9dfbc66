package operator

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/flinkgo/flinkgo/statestore"
)

// Context is what an action body gets: the key, memory, event sending,
// durable calls, a logger and metrics. It is valid only during the call of
// the action body and only on that goroutine.
type Context struct {
	t       *Task
	updates []statestore.MemUpdate
	events  []*Event
	calls   []statestore.CallRecord // this execution's durable calls so far
	prior   []statestore.CallRecord // recorded calls to replay, in order
	callIdx int

	inDurable bool
	misuseErr error
	storeErr  error
	replayed  int // durable calls answered from the record

	short, sensory Memory
}

// Key returns the key bytes (the Flink key, serialised). Do not modify.
func (c *Context) Key() []byte { return c.t.ks.key }

// KeyGroup returns the Flink key group of the key.
func (c *Context) KeyGroup() int32 { return c.t.ks.kg }

// Seq returns the per-key sequence number of the input being processed.
func (c *Context) Seq() uint64 { return c.t.seq }

// ActionName returns the name of the running action.
func (c *Context) ActionName() string { return c.t.act.Name }

// ShortTerm returns the key's short-term memory, which persists across inputs.
func (c *Context) ShortTerm() *Memory { return &c.short }

// Sensory returns the key's sensory memory, cleared when the input finishes.
func (c *Context) Sensory() *Memory { return &c.sensory }

// Logger returns a logger that names the agent, action and key group.
func (c *Context) Logger() *slog.Logger {
	return c.t.core.logger.With("action", c.t.act.Name, "key_group", c.t.ks.kg, "seq", c.t.seq)
}

// Metrics returns the agent's user metrics, shared by all actions.
func (c *Context) Metrics() *Metrics { return c.t.core.metrics }

// SendEvent sends e (the runtime owns it afterwards: do not reuse or
// modify it): an _output_event goes downstream, any other event runs
// the actions that listen to its type, after the current action, for the
// same key. The runtime assigns the id and binds lineage; an event that
// already carries lineage is rejected.
func (c *Context) SendEvent(e *Event) error {
	if c.inDurable {
		return c.misuse("SendEvent")
	}
	switch {
	case e == nil:
		return errors.New("operator: SendEvent(nil)")
	case e.Type == "":
		return errors.New("operator: an event needs a Type")
	case e.Type == InputEventType:
		return fmt.Errorf("operator: actions cannot send %s; it is created from input records", InputEventType)
	case !e.UpstreamID.IsZero():
		return fmt.Errorf("%w: field UpstreamID is set (%s); send a new event, the runtime binds lineage", ErrLineage, FormatUUID(e.UpstreamID))
	case e.UpstreamAction != "":
		return fmt.Errorf("%w: field UpstreamAction is set (%q); send a new event, the runtime binds lineage", ErrLineage, e.UpstreamAction)
	}
	if e.Type == OutputEventType {
		var err error
		if e.outRow != nil {
			err = c.t.core.checkOutputRow(e.outRow)
		} else {
			err = c.t.core.checkOutput(e.output)
		}
		if err != nil {
			return err
		}
	} else {
		for k, v := range e.Attrs {
			if err := CheckValue(k, v); err != nil {
				return fmt.Errorf("operator: event %s attribute: %w", e.Type, err)
			}
		}
	}
	c.send(e)
	return nil
}

// send gives the event an id and appends it to the action's events; the
// runtime owns e from here on, the caller must not reuse it.
func (c *Context) send(e *Event) {
	putEventID(&e.ID, c.t.core.cfg.Seed, c.t.ks.hash, c.t.seq, c.t.emitBase+uint32(len(c.events)))
	c.events = append(c.events, e)
}

// EmitRow sends r as an output row: SendEvent(NewOutputRow(r)) without
// allocating the event (the runtime reuses it once the output is emitted;
// there is no *Event to keep). It is the fast path for an action that
// forwards its input row, ev.Input(), or another Row whose columns are the
// agent's Output columns.
func (c *Context) EmitRow(r Row) error {
	// SendEvent's checks of the event's own fields hold by construction;
	// reading them back from the event just written stalled on the stores
	// (a load across two of them is not forwarded): about 7 % of the Go
	// process's CPU in the pass-through benchmark (benchmarks/bridge).
	if c.inDurable {
		return c.misuse("EmitRow")
	}
	if r == nil {
		return errors.New("operator: EmitRow(nil)")
	}
	if err := c.t.core.checkOutputRow(r); err != nil {
		return err
	}
	// Set field by field in place: a composite literal is built on the
	// stack and copied in 16-byte loads that span its 8-byte stores, which
	// stalled in the same way.
	t := c.t
	t.outEvs = append(t.outEvs, Event{})
	e := &t.outEvs[len(t.outEvs)-1]
	e.Type, e.outRow = OutputEventType, r
	c.send(e)
	return nil
}

func (c *Context) misuse(what string) error {
	err := fmt.Errorf("%w (%s in action %q)", ErrInDurable, what, c.t.act.Name)
	if c.misuseErr == nil {
		c.misuseErr = err
	}
	return err
}

// Durable runs fn once per action execution: its outcome (result or error)
// is recorded in the action-state store, and when the action runs again
// after a restore the same call (same position, callID and args) returns
// the recorded outcome without running fn. Calls must be deterministic and
// in the same order on every run; fn must not touch memory or send events.
// The result must be in the value domain; nil is fine.
func (c *Context) Durable(callID string, args any, fn func() (any, error)) (any, error) {
	return c.durable(callID, args, fn, nil)
}

// DurableReconciled is Durable for calls with side effects outside flinkgo:
// a pending record is made durable before fn runs, and if the action runs
// again while that record is still pending (fn's outcome was lost), reconcile
// runs instead of fn to find out what happened.
func (c *Context) DurableReconciled(callID string, args any, fn, reconcile func() (any, error)) (any, error) {
	if reconcile == nil {
		return nil, Permanent(errors.New("operator: DurableReconciled needs a reconcile function"))
	}
	return c.durable(callID, args, fn, reconcile)
}

func (c *Context) durable(callID string, args any, fn, reconcile func() (any, error)) (any, error) {
	if c.inDurable {
		return nil, Permanent(c.misuse("durable call " + callID))
	}
	store := c.t.core.store
	var digest [32]byte
	if store != nil {
		d, err := statestore.ArgsDigest(args)
		if err != nil {
			return nil, Permanent(fmt.Errorf("operator: durable call %q: %w", callID, err))
		}
		digest = d
	}
	i := c.callIdx
	c.callIdx++
	if i < len(c.prior) {
		p := c.prior[i]
		if p.CallID == callID && p.ArgsDigest == digest {
			switch p.Status {
			case statestore.CallSucceeded:
				v, err := statestore.DecodeValue(p.Result)
				if err != nil {
					return nil, Permanent(fmt.Errorf("operator: recorded result of durable call %q: %w", callID, err))
				}
				c.lockCalls()
				c.calls = append(c.calls, p)
				c.unlockCalls()
				c.replayed++
				return v, nil
			case statestore.CallFailed:
				c.lockCalls()
				c.calls = append(c.calls, p)
				c.unlockCalls()
				c.replayed++
				return nil, &ActionError{Kind: ErrorKind(p.ErrorKind), Err: &DurableError{CallID: callID, Msg: p.Error}}
			case statestore.CallPending:
				c.prior = c.prior[:i+1] // later records cannot exist; keep the pending one
				if reconcile != nil {
					c.lockCalls()
					c.calls = append(c.calls, p)
					c.unlockCalls()
					return c.finishCall(callID, digest, reconcile, true)
				}
			}
		}
		c.prior = c.prior[:i] // mismatch: later records no longer apply
	}
	if reconcile != nil && store != nil {
		c.lockCalls()
		c.calls = append(c.calls, statestore.CallRecord{CallID: callID, ArgsDigest: digest, Status: statestore.CallPending})
		err := store.PutDurable(c.record(statestore.StatusRunning, false))
		c.t.lent()
		if c.t.core.linger != nil {
			c.t.lg.since = 0 // the durable record holds every call so far
		}
		c.unlockCalls()
		if err != nil {
			c.storeErr = err
			return nil, Permanent(fmt.Errorf("operator: durable call %q: pending record not written: %w", callID, err))
		}
		return c.finishCall(callID, digest, fn, true)
	}
	return c.finishCall(callID, digest, fn, false)
}

// finishCall runs fn and records its outcome; replace says the last call
// record is this call's pending record.
func (c *Context) finishCall(callID string, digest [32]byte, fn func() (any, error), replace bool) (any, error) {
	v, err := c.callGuarded(fn)
	if err == nil {
		v, err = Normalize("durable result of "+callID, v)
		if err != nil {
			err = Permanent(err)
		}
	}
	rec := statestore.CallRecord{CallID: callID, ArgsDigest: digest, Status: statestore.CallSucceeded}
	if err != nil {
		rec.Status, rec.Error, rec.ErrorKind = statestore.CallFailed, err.Error(), uint8(KindOf(err))
		v = nil
	} else if c.t.core.store != nil {
		b, eerr := statestore.EncodeValue(v)
		if eerr != nil {
			return nil, Permanent(eerr)
		}
		rec.Result = b
	}
	c.lockCalls()
	if replace {
		c.calls[len(c.calls)-1] = rec
	} else {
		c.calls = append(c.calls, rec)
	}
	if l := c.t.core.linger; l != nil {
		l.unrecorded(c.t) // written if the action still runs a linger from now
		c.unlockCalls()
		return v, err
	}
	if store := c.t.core.store; store != nil {
		if perr := store.Put(c.record(statestore.StatusRunning, true)); perr != nil {
			c.storeErr = perr
			return nil, Permanent(perr)
		}
	}
	return v, err
}

func (c *Context) callGuarded(fn func() (any, error)) (v any, err error) {
	c.inDurable = true
	defer func() {
		c.inDurable = false
		if r := recover(); r != nil {
			err = Permanent(fmt.Errorf("operator: durable call panicked: %v\n%s", r, debug.Stack()))
		}
	}()
	return fn()
}

// record builds the action-state record of this execution as it stands,
// for a Put (held: a running record the store may keep) or a PutDurable.
//
// Calls is c.calls itself, capped: a call record is never changed once a
// later one is appended (a reconciled call's pending record is replaced in
// place, but only after its PutDurable, before anything else is recorded),
// and c.calls is new for every execution. A store that lends its records
// (statestore.Lender) gets the Task's own record and buffers, reused, for
// everything it does not keep.
func (c *Context) record(st statestore.Status, held bool) *statestore.Record {
	t := c.t
	calls := c.calls[:len(c.calls):len(c.calls)]
	if held || !t.core.lends {
		r := &statestore.Record{Key: t.recordKey(), Status: st, Calls: calls, Slot: t.slot}
		if st == statestore.StatusCompleted {
			r.Updates = append([]statestore.MemUpdate(nil), c.updates...) // c.updates is pooled
			r.Events = make([]snapshotEvent, len(c.events))
			for i, e := range c.events {
				r.Events[i] = e.toSnapshot()
			}
		}
		return r
	}
	r := &t.rec
	*r = statestore.Record{Key: t.recordKey(), Status: st, Calls: calls, Slot: t.slot, Events: r.Events[:0]}
	if st == statestore.StatusCompleted {
		r.Updates = c.updates
		outs := 0
		for _, e := range c.events {
			var out map[string]any
			if e.Type == OutputEventType {
				if outs == len(t.outAttrs) {
					t.outAttrs = append(t.outAttrs, make(map[string]any, 1))
				}
				out = t.outAttrs[outs]
				outs++
			}
			r.Events = append(r.Events, e.toSnapshotIn(out))
		}
	}
	return r
}

// lent clears what a lent record (see record) refers to once the store has
// it encoded, so that the Task does not keep the execution's values alive.
func (t *Task) lent() {
	if !t.core.lends {
		return
	}
	for _, m := range t.outAttrs {
		clear(m)
	}
	clear(t.rec.Events)
	t.rec = statestore.Record{Events: t.rec.Events[:0]}
}

// DurableError is a recorded durable-call failure, replayed after a restore.
type DurableError struct {
	CallID string
	Msg    string
}

func (e *DurableError) Error() string {
	return fmt.Sprintf("durable call %q failed (recorded): %s", e.CallID, e.Msg)
}
