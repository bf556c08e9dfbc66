package operator

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// Core is the deterministic execution core of one operator subtask. It does
// no I/O, reads no clock and starts no goroutine: the caller feeds it inputs,
// watermarks, barriers, end of input, task results and ticks, and after each
// step takes Ready, which says in order what to emit and which tasks to start.
//
// Not safe for concurrent use: one goroutine owns a Core. Tasks it hands out
// run anywhere.
//
// INVARIANTS:
//   - per key at most one input is in flight and at most one of its tasks runs;
//     later inputs of the key wait in FIFO order;
//   - at most MaxConcurrency tasks run at once;
//   - a watermark is acknowledged only after every input received before it
//     has finished;
//   - everything emitted before Snapshot(n) belongs to checkpoint n.
type Core struct {
	ag      *compiled
	cfg     Config
	store   statestore.ActionStore
	hint    statestore.HoldHinter   // store's, or nil: Get on every first attempt
	tracker statestore.InputTracker // store, if it prunes finished inputs
	slots   statestore.SlotTracker  // store, if it keeps a cache per input (InputSlot)
	lends   bool                    // the store is a statestore.Lender
	linger  *lingerer               // the store's running-record linger, taken over; nil: none
	lastCut int64                   // last checkpoint cut (or restored from)
	logger  *slog.Logger
	metrics *Metrics
	table   *statestore.Table[keyState]

	readyQ  fifo[*keyState] // keys with a task to start, in order
	waiting []*keyState     // keys backing off before a retry
	running int
	now     int64 // ms, from Tick

	wm          watermarks
	emits       []Emit
	spare       []Emit
	tasks       []*Task
	spareT      []*Task
	freeTasks   []*Task
	freeFlights []*inflight
	freeInputs  []*pendingInput
	credit      int
	err         error // sticky: once set, every Ready carries it
	errSeen     bool
	ended       bool // EndInput seen
	endAcked    bool
	inFlight    int // inputs received and not finished
	stats       Stats
}

type keyState struct {
	kg      int32
	key     []byte
	hash    uint64
	nextSeq uint64
	mem     memMap
	// memShared: a snapshot refers to mem's array; copy it before writing.
	memShared bool
	cur       *inflight
	queue     fifo[*pendingInput]
	running   bool
	inReady   bool
	sha       *[32]byte
}

type pendingInput struct {
	seq   uint64
	ts    int64
	hasTS bool
	id    UUID
	row   Row
	seg   uint64 // watermark segment it arrived in
}

type inflight struct {
	in      *pendingInput
	ev      Event // the _input_event
	sensory memMap
	tasks   fifo[taskSpec] // head is running or next
	emitted uint32
	// handed: an output took over the input row's hold (apply); the
	// input's end does not release the row.
	handed  bool
	attempt int
	retryAt int64
	prior   []statestore.CallRecord
	slot    statestore.InputSlot // the store's cache of this input, on every record Put for it
}

type taskSpec struct {
	act *Action
	ev  *Event
}

// EmitKind says what an Emit carries.
type EmitKind uint8

const (
	EmitOutput    EmitKind = iota + 1 // an output row
	EmitWatermark                     // a watermark may go downstream
	EmitSnapshot                      // the state at a checkpoint barrier
	EmitEndAck                        // all input finished
)

// Emit is one item of the ordered stream the core produces.
type Emit struct {
	Kind EmitKind
	// EmitOutput
	KeyGroup int32
	Key      []byte // do not modify
	EventID  UUID
	Values   []any // in the agent's Output order; nil if Row is set
	// Row is the output row of an event made by NewOutputRow, its columns
	// in the agent's Output order (nil otherwise). If it is a Releaser, the
	// receiver calls Release once it has copied the row; Output gives its
	// values.
	Row Row
	// EmitOutput (input timestamp) and EmitWatermark
	Timestamp int64
	HasTS     bool
	// EmitSnapshot
	CheckpointID int64
	Sections     []*snapshot.Section // one per key group holding keys, ascending; keys unsorted (EncodeSection sorts)
}

// Output returns the values of an EmitOutput's row: Values, or those of
// Row (which must not have been released yet).
func (e *Emit) Output() []any {
	if e.Row != nil {
		return RowValues(e.Row)
	}
	return e.Values
}

// Ready is what the caller must do after a step, in this order: send Emits
// in order, start Tasks, grant Credit more input rows. If Err is set the
// subtask must fail (Flink restarts it from the last checkpoint).
//
// The slices are reused: they are valid until the next call to Ready.
type Ready struct {
	Emits  []Emit
	Tasks  []*Task
	Credit int // inputs finished since the last Ready
	Err    error
}

// NewCore returns a core for agent a. store may be nil (no action-state
// store: the Flink checkpoint alone).
func NewCore(a *Agent, cfg Config, store statestore.ActionStore) (*Core, error) {
	ag, err := compile(a)
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Core{
		ag: ag, cfg: cfg, store: store, metrics: &Metrics{},
		logger: lg.With("agent", a.Name),
		table:  statestore.NewTable[keyState](),
	}
	c.tracker, _ = store.(statestore.InputTracker)
	c.slots, _ = store.(statestore.SlotTracker)
	_, c.lends = store.(statestore.Lender)
	c.hint, _ = store.(statestore.HoldHinter)
	if rl, ok := store.(statestore.RunningLingerer); ok {
		if d := rl.TakeRunningLinger(); d > 0 {
			c.linger = &lingerer{core: c, d: d, epoch: time.Now()}
		}
	}
	return c, nil
}

// Metrics returns the user metrics of the agent's actions.
func (c *Core) Metrics() *Metrics { return c.metrics }

// Stats returns the runtime counters.
func (c *Core) Stats() Stats {
	s := c.stats
	s.Running, s.Keys, s.PendingWatermark = c.running, c.table.Len(), c.wm.pending()
	s.QueuedInputs = c.inFlight
	return s
}

// Input accepts one record of key (bytes) in key group kg. The core keeps
// row until the input finishes (then calls Release if row implements
// Releaser); key is copied.
func (c *Core) Input(kg int32, key []byte, ts int64, hasTS bool, row Row) error {
	if c.ended {
		return errors.New("operator: input after end of input")
	}
	if !c.cfg.Owned.Contains(kg) {
		return fmt.Errorf("%w: input for key group %d, but this subtask owns %d..%d", ErrNotOwned, kg, c.cfg.Owned.Start, c.cfg.Owned.End)
	}
	h := statestore.HashKey64(key)
	ks, stored, created := c.table.GetOrCreateKey(kg, key, h)
	if created {
		ks.kg, ks.hash, ks.key = kg, h, stored
	}
	in := c.newInput() // zeroed; fields are set one by one (see Context.EmitRow)
	in.seq, in.ts, in.hasTS, in.row, in.seg = ks.nextSeq, ts, hasTS, row, c.wm.segment()
	putEventID(&in.id, c.cfg.Seed, h, in.seq, inputEventPos)
	ks.nextSeq++
	c.stats.InputsReceived++
	c.inFlight++
	c.wm.add(in.seg)
	if ks.cur != nil {
		ks.queue.push(in)
		return nil
	}
	c.begin(ks, in)
	switch {
	case ks.cur.tasks.len() == 0:
		c.finishInput(ks)
	case c.runsInline(ks):
		if t := c.start(ks); t != nil {
			c.Complete(t.Run())
		}
	default:
		c.markReady(ks)
	}
	return nil
}

// runsInline reports whether Input runs the first task of ks's input,
// just begun, itself (Config.RunInline). A begun input has no retry
// back-off and its key runs nothing, so only the slot and the action decide.
func (c *Core) runsInline(ks *keyState) bool {
	return c.cfg.RunInline && c.err == nil && c.running < c.cfg.MaxConcurrency &&
		ks.cur.tasks.peek().act.Inline
}

// begin makes in the key's in-flight input and queues its actions; the
// caller marks the key ready. If no action listens to inputs, the caller
// must finish the input (finishInput).
func (c *Core) begin(ks *keyState, in *pendingInput) {
	f := c.newFlight() // zeroed but for its task buffer
	f.in = in
	f.ev.ID, f.ev.Type, f.ev.row = in.id, InputEventType, in.row
	ks.cur = f
	c.stats.EventsProcessed++
	for _, act := range c.ag.onInput {
		f.tasks.push(taskSpec{act: act, ev: &f.ev})
	}
}

// newInput returns a zero pendingInput (release zeroes the ones it keeps).
func (c *Core) newInput() *pendingInput {
	if n := len(c.freeInputs); n > 0 {
		in := c.freeInputs[n-1]
		c.freeInputs = c.freeInputs[:n-1]
		return in
	}
	return new(pendingInput)
}

// newFlight returns an inflight that is zero but for its task buffer
// (release keeps that, emptied).
func (c *Core) newFlight() *inflight {
	if n := len(c.freeFlights); n > 0 {
		f := c.freeFlights[n-1]
		c.freeFlights = c.freeFlights[:n-1]
		return f
	}
	return new(inflight)
}

// release keeps a finished input for reuse.
// REQUIRES: no task, queue or emit refers to f, f.in or f.ev.
func (c *Core) release(f *inflight) {
	if len(c.freeInputs) < 4096 {
		*f.in = pendingInput{}
		c.freeInputs = append(c.freeInputs, f.in)
	}
	if len(c.freeFlights) < 4096 {
		tasks := f.tasks
		tasks.buf, tasks.head = tasks.buf[:0], 0
		*f = inflight{tasks: tasks}
		c.freeFlights = append(c.freeFlights, f)
	}
}

func (c *Core) markReady(ks *keyState) {
	if !ks.inReady && !ks.running && ks.cur != nil && ks.cur.tasks.len() > 0 && ks.cur.retryAt == 0 {
		ks.inReady = true
		c.readyQ.push(ks)
	}
}

// Watermark accepts a watermark; it is acknowledged (EmitWatermark) once
// every input received before it has finished.
func (c *Core) Watermark(ts int64) {
	c.wm.watermark(ts)
	c.releaseWatermarks()
}

func (c *Core) releaseWatermarks() {
	for {
		ts, ok := c.wm.pop()
		if !ok {
			return
		}
		c.emits = append(c.emits, Emit{Kind: EmitWatermark, Timestamp: ts, HasTS: true})
	}
}

// EndInput says no more input will come. EmitEndAck follows once every
// input has finished and every output was emitted.
func (c *Core) EndInput() {
	c.ended = true
	c.checkEnd()
}

func (c *Core) checkEnd() {
	if c.ended && !c.endAcked && c.inFlight == 0 && c.running == 0 {
		c.endAcked = true
		c.emits = append(c.emits, Emit{Kind: EmitEndAck})
	}
}

// Tick advances the core's notion of time (ms) for retry back-off.
func (c *Core) Tick(nowMs int64) {
	c.now = nowMs
	if len(c.waiting) == 0 {
		return
	}
	keep := c.waiting[:0]
	for _, ks := range c.waiting {
		if ks.cur != nil && ks.cur.retryAt <= nowMs {
			ks.cur.retryAt = 0
			c.markReady(ks)
		} else {
			keep = append(keep, ks)
		}
	}
	c.waiting = keep
}

// NextDeadline returns the earliest time (ms) at which Tick has work to do.
func (c *Core) NextDeadline() (int64, bool) {
	var min int64
	for i, ks := range c.waiting {
		if i == 0 || ks.cur.retryAt < min {
			min = ks.cur.retryAt
		}
	}
	return min, len(c.waiting) > 0
}

// HasReady reports whether Ready has something to hand out.
func (c *Core) HasReady() bool {
	return len(c.emits) > 0 || c.credit > 0 || (c.err != nil && !c.errSeen) ||
		(c.readyQ.len() > 0 && c.running < c.cfg.MaxConcurrency)
}

// Ready returns what to do now; see the Ready type for the order.
func (c *Core) Ready() Ready {
	c.dispatch()
	rd := Ready{Emits: c.emits, Tasks: c.tasks, Credit: c.credit, Err: c.err}
	c.errSeen = c.err != nil
	c.emits, c.spare = c.spare[:0], c.emits
	c.tasks, c.spareT = c.spareT[:0], c.tasks
	c.credit = 0
	return rd
}

// fail records a fatal error; the first one wins.
func (c *Core) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// checkOutputRow checks the row of a NewOutputRow event: its values are
// in the domain already (Row's contract); its width must match.
func (c *Core) checkOutputRow(r Row) error {
	if cols := c.ag.agent.Output; len(cols) > 0 && r.NumFields() != len(cols) {
		return fmt.Errorf("operator: output row has %d columns; agent %q declares %d output columns", r.NumFields(), c.ag.agent.Name, len(cols))
	}
	return nil
}

func (c *Core) checkOutput(values []any) error {
	cols := c.ag.agent.Output
	if len(cols) > 0 && len(values) != len(cols) {
		return fmt.Errorf("operator: output row has %d values; agent %q declares %d output columns", len(values), c.ag.agent.Name, len(cols))
	}
	for i, v := range values {
		if inDomainScalar(v) {
			continue // nothing to normalise or store back
		}
		n, err := normalizeRowValue("", v)
		if err != nil {
			name := fmt.Sprint(i)
			if i < len(cols) {
				name = cols[i].Name
			}
			_, err = normalizeRowValue(name, v) // again, for the column's name in the message
			return fmt.Errorf("operator: output column: %w", err)
		}
		values[i] = n
	}
	return nil
}
