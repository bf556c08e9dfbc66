package bridge

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// outKind says what an outItem carries.
type outKind uint8

const (
	outRow      outKind = iota + 1 // an output row
	outWmAck                       // WM_ACK
	outSnapshot                    // SNAPSHOT frames for a checkpoint
	outEndAck                      // END_ACK
	outCredit                      // rows of credit (coalesced)
	outError                       // ERROR, then the writer stops
)

// outItem is one element of the ordered stream from the core goroutine to
// the writer goroutine.
type outItem struct {
	kind     outKind
	ts       int64 // outRow: input timestamp; outWmAck: watermark; outCredit: the credit window
	hasTS    bool
	values   []any               // outRow, in output-column order
	row      operator.Row        // outRow emitted as a Row (Context.EmitRow, NewOutputRow); values nil
	n        int64               // outCredit: rows; outSnapshot: checkpoint id
	sections []*snapshot.Section // outSnapshot
	perr     *ProtocolError      // outError
}

// writer owns the write side of the connection and the OutputBuilder. It
// receives ordered item batches from the core goroutine and sends frames in
// exactly that order:
//
//   - output rows are appended to the current OUTPUT batch, which is sent
//     when it holds go.output.rows rows or about go.output.bytes bytes,
//     when the linger time since its first row has passed, and always
//     before WM_ACK, SNAPSHOT and END_ACK;
//   - credit is summed and sent as one CREDIT with the next flush;
//   - SNAPSHOT: the sections are encoded (in parallel), the action-state
//     store is flushed for the marker, and the frames are sent, split at
//     the maximum frame size, then METRICS;
//   - METRICS also goes out every go.metrics.interval.ms, between two
//     frames; it moves nothing else (see sendMetrics).
//
// The core goroutine keeps running meanwhile (see outQueue).
type writer struct {
	conn     net.Conn
	bw       *bufio.Writer
	q        *outQueue
	ob       *arrowio.OutputBuilder
	store    statestore.ActionStore
	log      *slog.Logger
	maxFrame int
	maxRows  int
	maxBytes int
	linger   time.Duration

	metricsEvery time.Duration // 0: no METRICS
	storeStats   kafkaStatser  // nil: the store keeps no metrics

	rows     int   // rows in the current OUTPUT batch
	estBytes int   // their approximate size
	credit   int64 // credit not yet sent
	ctl      []byte
	// held: the holds on DATA batches of the rows in the current OUTPUT
	// batch (the builder may slice them out of their batches at Flush),
	// released once it is sent; a run of rows of one batch is one entry,
	// released with one atomic add (the core goroutine adds to the same
	// counter).
	held []batchHold
	// By reference (OPEN's output_refs): refs is on; granted: credit rows
	// sent, READY's included; horizon: the last keep_from sent; keep: the
	// latest credit window; runs: the pending rows as OUTPUT_REF runs
	// (first, count), valid while every pending row was taken as it is.
	refs             bool
	granted, horizon int64
	keep             int64
	runs             []int64
	live             liveBatches // the DATA batches not yet freed
	hdr              []byte      // writeParts' frame header
	iov              net.Buffers // writeParts' gathering write

	done   chan struct{} // closed when run returns
	failed chan struct{} // closed when run fails, before it reports the failure
	err    error         // why run returned (nil: queue closed, all sent); read after done

	outRows, outFrames, outBytes, refRows atomic.Int64
}

func newWriter(s *server) *writer {
	w := &writer{
		conn: s.conn, bw: bufio.NewWriterSize(s.conn, 256<<10), q: newOutQueue(),
		ob: s.ob, store: s.set.store, log: s.log, maxFrame: s.maxFrame,
		maxRows: s.set.outRows, maxBytes: min(s.set.outBytes, s.maxFrame/2),
		linger: time.Duration(s.set.lingerMs) * time.Millisecond, done: make(chan struct{}), failed: make(chan struct{}),
		metricsEvery: time.Duration(s.set.metricsMs) * time.Millisecond,
		refs:         s.open.OutputRefs, granted: s.set.initialCredit(), keep: s.set.initialCredit(),
	}
	if w.metricsEvery > 0 {
		// newWriter runs on the core goroutine (Serve's): the core may be
		// read here, and in push.
		w.q.core = s.core
		w.q.stats = s.core.Stats()
		w.storeStats, _ = s.set.store.(kafkaStatser)
	}
	return w
}

// kafkaStatser is a store that keeps metrics (statestore.Kafka). Safe for
// concurrent use.
type kafkaStatser interface {
	KafkaStats() statestore.KafkaStats
}

// outQueue carries item batches from the run loop to the writer. It is
// unbounded so that the run loop never waits for the writer (a large
// snapshot being encoded, a slow socket): what it can hold is bounded by
// the credit window, because credit reaches the operator only through the
// writer, and by the outputs an input makes.
type outQueue struct {
	mu     sync.Mutex
	items  []outItem
	closed bool
	notify chan struct{} // capacity 1: wake-ups coalesce

	// The core's counters for METRICS. Core.Stats may only be called on
	// the core goroutine, which is the one that pushes: push samples it
	// (a copy of a few counters) with every hand-off, so the writer sees
	// the core as of the last items it was given, a SNAPSHOT's included.
	core  *operator.Core // nil: not sampled (METRICS off)
	stats operator.Stats
}

func newOutQueue() *outQueue { return &outQueue{notify: make(chan struct{}, 1)} }

// push hands items to the writer and returns an empty slice for the
// caller's next items. Run loop only (the core goroutine).
//
// Design note: when the writer has taken everything (the usual case), the
// slice itself changes hands, and the caller gets back the buffer the
// writer returned with its last take, which the writer has cleared.
// Copying a batch's worth of items (4096 of about 100 bytes, with write
// barriers) and clearing them on both sides was 7 % of the Go process's CPU
// in the pass-through benchmark.
func (q *outQueue) push(items []outItem) []outItem {
	q.mu.Lock()
	var next []outItem
	if len(q.items) == 0 {
		q.items, next = items, q.items[:0]
	} else {
		q.items = append(q.items, items...)
		clear(items)
		next = items[:0]
	}
	if q.core != nil {
		q.stats = q.core.Stats()
	}
	q.mu.Unlock()
	q.wake()
	return next
}

// coreStats returns the core's counters as of the last push.
func (q *outQueue) coreStats() operator.Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stats
}

// close says nothing more comes: the writer sends what it has and stops.
func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}

func (q *outQueue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// take returns the queued items, giving buf to the queue for reuse (push
// hands it to the run loop: it must be cleared), and whether the queue is
// closed.
func (q *outQueue) take(buf []outItem) ([]outItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = buf[:0]
	return out, q.closed
}

func (w *writer) run() {
	defer close(w.done)
	defer w.ob.Release()
	var timer *time.Timer
	var timerC <-chan time.Time
	var metricsC <-chan time.Time
	if w.metricsEvery > 0 {
		tick := time.NewTicker(w.metricsEvery)
		defer tick.Stop()
		metricsC = tick.C
	}
	var buf []outItem
	for {
		select {
		case <-w.q.notify:
		case <-timerC:
			timerC = nil
			if err := w.flush(); err != nil {
				w.fail(err)
				return
			}
			continue
		case <-metricsC:
			if err := w.sendMetrics(); err != nil {
				w.fail(err)
				return
			}
			continue
		}
		items, closed := w.q.take(buf)
		for i := range items {
			if err := w.handle(&items[i]); err != nil {
				w.fail(err)
				return
			}
		}
		clear(items)
		buf = items
		if closed {
			w.err = w.flush()
			return
		}
		if w.credit > 0 && w.linger > 0 {
			// Credit does not linger: the operator may be waiting for it.
			if err := w.sendCredit(); err != nil {
				w.fail(err)
				return
			}
		}
		if w.rows == 0 && w.credit == 0 {
			continue
		}
		if w.linger == 0 {
			if err := w.flush(); err != nil {
				w.fail(err)
				return
			}
			continue
		}
		if timerC == nil {
			if timer == nil {
				timer = time.NewTimer(w.linger)
			} else {
				timer.Reset(w.linger)
			}
			timerC = timer.C
		}
	}
}

// fail records err and, if it is a *ProtocolError the peer should see,
// sends it as ERROR (bounded in time).
func (w *writer) fail(err error) {
	w.err = err
	close(w.failed) // before the ERROR goes out: the peer's reaction comes later
	var pe *ProtocolError
	if errors.As(err, &pe) && pe.Code != "" {
		_ = w.conn.SetWriteDeadline(time.Now().Add(errWriteTimeout))
		if WriteControl(w.bw, pe.ErrorFrame()) == nil {
			_ = w.bw.Flush()
		}
	}
}

func (w *writer) handle(it *outItem) error {
	switch it.kind {
	case outRow:
		size, err := w.appendRow(it)
		if err != nil {
			return &ProtocolError{Code: CodeActionFailed, Err: err,
				Message: fmt.Sprintf("an output row does not fit the agent's output schema: %v; fix the action that emits it", err)}
		}
		w.rows++
		w.estBytes += 16 + size
		if w.rows >= w.maxRows || w.estBytes >= w.maxBytes {
			return w.flushRows()
		}
		return nil
	case outCredit:
		w.credit += it.n
		w.keep = it.ts
		return nil
	case outWmAck:
		return w.control(&WmAck{TS: it.ts})
	case outEndAck:
		return w.control(&EndAck{})
	case outSnapshot:
		if err := w.drain(); err != nil {
			return err
		}
		return w.snapshot(it.n, it.sections)
	case outError:
		return it.perr
	}
	return fmt.Errorf("bridge: internal: unknown output item kind %d", it.kind)
}

// appendRow appends an output row to the OUTPUT batch and returns about
// how many bytes it takes there. A row of an input batch (EmitRow of the
// input) goes in from its Arrow buffers (arrowio.OutputBuilder.AppendRow)
// and its hold is kept until the frame is written (releaseHeld); another
// Row goes in through its values and is released at once.
func (w *writer) appendRow(it *outItem) (int, error) {
	switch r := it.row.(type) {
	case nil:
		return approxSize(it.values), w.ob.Append(it.ts, it.hasTS, it.values)
	case *batchRow:
		asIs := w.ob.AsIs()
		size, err := r.SizeHint(), w.ob.AppendRow(it.ts, it.hasTS, r.Row)
		if w.refs && err == nil && w.ob.AsIs() > asIs {
			w.addRun(r.ref.seq + int64(r.Pos()))
		}
		if n := len(w.held); n > 0 && w.held[n-1].ref == r.ref {
			w.held[n-1].n++
		} else {
			w.held = append(w.held, batchHold{r.ref, 1})
		}
		return size, err
	}
	vals := operator.RowValues(it.row)
	if rel, ok := it.row.(operator.Releaser); ok {
		rel.Release()
	}
	return approxSize(vals), w.ob.Append(it.ts, it.hasTS, vals)
}

// addRun adds input row seq to the OUTPUT_REF runs.
func (w *writer) addRun(seq int64) {
	if n := len(w.runs); n > 0 && w.runs[n-2]+w.runs[n-1] == seq {
		w.runs[n-1]++
		return
	}
	w.runs = append(w.runs, seq, 1)
}

// sendRefs sends the pending rows as OUTPUT_REF if they can go by
// reference: every one taken as it is, none before the horizon (the
// operator may have dropped those). Otherwise it changes nothing and the
// rows go as values.
func (w *writer) sendRefs() (bool, error) {
	if len(w.runs) == 0 || w.ob.AsIs() != w.ob.Len() {
		return false, nil
	}
	for i := 0; i < len(w.runs); i += 2 {
		if w.runs[i] < w.horizon {
			return false, nil
		}
	}
	w.ob.DropAsIs()
	err := w.writeControl(&OutputRef{Runs: w.runs})
	w.releaseHeld()
	if err != nil {
		return true, err
	}
	n := len(w.ctl) // the frame, header included
	w.outRows.Add(int64(w.rows))
	w.refRows.Add(int64(w.rows))
	w.outFrames.Add(1)
	w.outBytes.Add(int64(n))
	w.rows, w.estBytes = 0, 0
	return true, nil
}

// batchHold is n holds on one DATA batch.
type batchHold struct {
	ref *batchRef
	n   int32
}

// releaseHeld releases the holds of the rows sent.
func (w *writer) releaseHeld() {
	for _, h := range w.held {
		h.ref.release(h.n)
	}
	clear(w.held)
	w.held = w.held[:0]
}

// control sends a control frame after the pending rows and credit.
func (w *writer) control(m ControlFrame) error {
	if err := w.drain(); err != nil {
		return err
	}
	if err := w.writeControl(m); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("bridge: sending %s: %w", m.FrameType(), err)
	}
	return nil
}

func (w *writer) writeControl(m ControlFrame) error {
	w.ctl = AppendControlFrame(w.ctl[:0], m)
	if _, err := w.bw.Write(w.ctl); err != nil {
		return fmt.Errorf("bridge: sending %s: %w", m.FrameType(), err)
	}
	return nil
}

// flushRows sends the pending rows as one OUTPUT frame.
func (w *writer) flushRows() error {
	if w.rows == 0 {
		return nil
	}
	if w.refs {
		sent, err := w.sendRefs()
		w.runs = w.runs[:0]
		if sent || err != nil {
			return err
		}
	}
	var sent int
	var werr error // the write's, as opposed to the encoder's
	err := w.ob.FlushTo(func(parts [][]byte, size int) error {
		if size+1 > w.maxFrame {
			return protoErrorf(CodeInternal, "an OUTPUT batch of %d rows is %d bytes, over the maximum frame size of %d; lower go.output.rows or go.output.bytes, or raise go.max.frame.bytes",
				w.rows, size, w.maxFrame)
		}
		sent = size
		werr = w.writeParts(FrameOutput, parts, size)
		return werr
	})
	w.releaseHeld() // after the write: the parts may alias the batches
	if err != nil {
		var pe *ProtocolError
		switch {
		case werr != nil:
			return fmt.Errorf("bridge: sending OUTPUT: %w", werr)
		case errors.As(err, &pe):
			return err
		}
		return &ProtocolError{Code: CodeInternal, Err: err, Message: fmt.Sprintf("encoding an OUTPUT batch of %d rows: %v", w.rows, err)}
	}
	w.outRows.Add(int64(w.rows))
	w.outFrames.Add(1)
	w.outBytes.Add(int64(sent + FrameHeaderLen))
	w.rows, w.estBytes = 0, 0
	return nil
}

// gatherFrom is the payload size from which writeParts sends a frame with
// one gathering write of its parts instead of copying them into bw.
const gatherFrom = 64 << 10

// writeParts sends a frame whose payload is parts (size bytes in all), in
// order after everything written before. A large payload goes out in one
// gathering write (writev) of the header and its parts, once bw is
// flushed; a small one is copied into bw to go with the frames around it.
//
// Design note: an OUTPUT batch of 1024 200-byte rows was copied twice in
// Go before the socket, into the encoder's buffer and then into bw; both
// copies together were about 5 % of the process's CPU.
func (w *writer) writeParts(typ FrameType, parts [][]byte, size int) error {
	w.hdr = AppendFrameHeader(w.hdr[:0], typ, size)
	if size < gatherFrom {
		_, err := w.bw.Write(w.hdr)
		for _, p := range parts {
			if err == nil {
				_, err = w.bw.Write(p)
			}
		}
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	w.iov = append(append(w.iov[:0], w.hdr), parts...)
	bufs := w.iov // WriteTo consumes its receiver
	_, err := bufs.WriteTo(w.conn)
	clear(w.iov)
	return err
}

// drain writes the pending rows and credit into the socket buffer.
func (w *writer) drain() error {
	if err := w.flushRows(); err != nil {
		return err
	}
	return w.writeCredit()
}

// writeCredit writes the credit not yet sent into the socket buffer.
func (w *writer) writeCredit() error {
	if w.credit == 0 {
		return nil
	}
	w.granted += w.credit
	if w.refs {
		// The operator keeps the rows from the horizon on: none before the
		// oldest batch still live (no row before it can be emitted again),
		// and at most the window and two OUTPUT batches of rows (so that
		// rows emitted a little after their credit came back still go by
		// reference, and a slow action pins nothing).
		w.horizon = max(w.horizon, w.live.oldest(), w.granted-w.keep-2*int64(w.maxRows))
	}
	if err := w.writeControl(&Credit{Rows: w.credit, KeepFrom: w.horizon}); err != nil {
		return err
	}
	w.credit = 0
	return nil
}

// sendCredit sends the credit not yet sent, ahead of the pending rows
// (protocol.md allows CREDIT to pass the outputs of the inputs that earned
// it), and flushes the socket buffer.
func (w *writer) sendCredit() error {
	if err := w.writeCredit(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("bridge: writing to the operator: %w", err)
	}
	return nil
}

// flush sends pending rows and credit and flushes the socket buffer.
func (w *writer) flush() error {
	if err := w.drain(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("bridge: writing to the operator: %w", err)
	}
	return nil
}

// snapshot encodes and sends the SNAPSHOT frames of checkpoint cp.
func (w *writer) snapshot(cp int64, sections []*snapshot.Section) error {
	start := time.Now()
	enc, err := encodeSections(sections)
	if err != nil {
		return &ProtocolError{Code: CodeInternal, Err: err, Message: fmt.Sprintf("encoding the snapshot of checkpoint %d: %v", cp, err)}
	}
	mk := snapshot.Marker{Version: snapshot.MarkerVersion, Backend: "none"}
	if w.store != nil {
		if cf, ok := w.store.(statestore.CutFlusher); ok {
			mk, err = cf.FlushCut(cp)
		} else {
			mk, err = w.store.Flush()
		}
		if err != nil {
			return &ProtocolError{Code: CodeStoreFailed, Err: err, Message: fmt.Sprintf("flushing the action-state store for checkpoint %d: %v", cp, err)}
		}
	}
	mk.CheckpointID = cp
	marker, err := snapshot.EncodeMarker(&mk)
	if err != nil {
		return &ProtocolError{Code: CodeInternal, Err: err, Message: fmt.Sprintf("encoding the recovery marker of checkpoint %d: %v", cp, err)}
	}
	frames, bytes := 0, 0
	last := &Snapshot{CheckpointID: cp, Marker: marker, Last: true}
	// A section entry costs its bytes plus at most 34 bytes of msgpack;
	// the frame's own keys and array header at most those of `last` plus 5.
	budget := w.maxFrame - 1 - len(last.Marshal()) - 5
	cur := &Snapshot{CheckpointID: cp}
	size := 0
	for i, sec := range sections {
		b := enc[i]
		cost := len(b) + 34
		if cost > budget {
			return protoErrorf(CodeInternal, "the snapshot section of key group %d is %d bytes, more than fits a frame of the maximum size %d; raise go.max.frame.bytes",
				sec.KeyGroup, len(b), w.maxFrame)
		}
		if size+cost > budget {
			if err := w.writeControl(cur); err != nil {
				return err
			}
			frames++
			cur.Sections, size = cur.Sections[:0], 0
		}
		cur.Sections = append(cur.Sections, SnapshotSection{KeyGroup: sec.KeyGroup, Section: b})
		size += cost
		bytes += len(b)
	}
	last.Sections = cur.Sections
	if err := w.writeControl(last); err != nil {
		return err
	}
	// METRICS right after the last SNAPSHOT frame (in the same write): the
	// store was just flushed, so its counters cover every record of the
	// checkpoint.
	if err := w.writeMetrics(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("bridge: sending SNAPSHOT: %w", err)
	}
	if cap(w.ctl) > 1<<20 {
		w.ctl = nil // do not keep a snapshot-sized buffer
	}
	w.log.Info("snapshot sent", "checkpoint", cp, "key_groups", len(sections), "bytes", bytes, "frames", frames+1,
		"encode_and_flush", time.Since(start).Round(time.Microsecond))
	return nil
}

// writeMetrics writes METRICS into the socket buffer, if METRICS is on.
// Called between two frames only, so it never splits or reorders anything.
func (w *writer) writeMetrics() error {
	if w.metricsEvery <= 0 {
		return nil
	}
	var ks *statestore.KafkaStats
	if w.storeStats != nil {
		st := w.storeStats.KafkaStats()
		ks = &st
	}
	return w.writeControl(&Metrics{Values: metricValues(w.q.coreStats(), ks)})
}

// sendMetrics sends METRICS now (the periodic one). Pending output rows and
// credit stay pending: METRICS carries no ordering, and the rows go out
// when their batch is due, as they would have.
func (w *writer) sendMetrics() error {
	if err := w.writeMetrics(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("bridge: sending METRICS: %w", err)
	}
	return nil
}

// metricValues are the values of a METRICS frame: the core's counters, and
// the store's if ks is not nil.
func metricValues(cs operator.Stats, ks *statestore.KafkaStats) map[string]int64 {
	m := map[string]int64{
		MetricEventsProcessed: cs.EventsProcessed,
		MetricActionsExecuted: cs.ActionsExecuted,
		MetricActionsReplayed: cs.ActionsReplayed,
		MetricCallsReplayed:   cs.CallsReplayed,
		MetricActionsRerun:    cs.ActionsRerun,
	}
	if ks != nil {
		m[MetricStoreRecordsWritten] = ks.RecordsWritten
		m[MetricStoreBytesWritten] = ks.BytesWritten
		m[MetricStoreWriteLatencyP50] = ks.WriteLatencyP50.Microseconds()
		m[MetricStoreWriteLatencyP99] = ks.WriteLatencyP99.Microseconds()
		m[MetricStoreRecordsReplayed] = ks.RecordsReplayed
		m[MetricStoreBytesReplayed] = ks.BytesReplayed
		m[MetricStoreRebuildTime] = ks.RebuildTime.Milliseconds()
	}
	return m
}

// encodeSections encodes sections in parallel (snapshot encoding is safe
// for concurrent use; the sections are immutable).
func encodeSections(sections []*snapshot.Section) ([][]byte, error) {
	out := make([][]byte, len(sections))
	errs := make([]error, len(sections))
	workers := min(runtime.GOMAXPROCS(0), len(sections))
	if workers <= 1 {
		for i, s := range sections {
			if out[i], errs[i] = snapshot.EncodeSection(s); errs[i] != nil {
				return nil, errs[i]
			}
		}
		return out, nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for g := 0; g < workers; g++ {
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sections) {
					return
				}
				out[i], errs[i] = snapshot.EncodeSection(sections[i])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// approxSize estimates the Arrow bytes of an output row.
func approxSize(values []any) int {
	n := 0
	for _, v := range values {
		switch x := v.(type) {
		case string:
			n += len(x) + 4
		case []byte:
			n += len(x) + 4
		case []any:
			n += 8 + approxSize(x)
		case map[string]any:
			for _, e := range x {
				n += 8 + approxSize([]any{e})
			}
		default:
			n += 8
		}
	}
	return n
}
