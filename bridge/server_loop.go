package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// closeTimeout bounds how long a graceful stop waits for the writer to send
// what was produced to a peer that does not read.
const closeTimeout = 10 * time.Second

// batchRef counts the holds on a DATA batch: one per row the core still
// holds, one per row emitted as it is (operator.Context.EmitRow) that is
// not in a sent OUTPUT frame yet. The batch is released with the last.
type batchRef struct {
	b       *arrowio.Batch
	left    atomic.Int32
	payload []byte       // the DATA payload b reads in place
	pool    *payloadPool // where payload goes back if b lent nothing
	seq     int64        // the number of the batch's first row (rows counted from 0 over all DATA)
	freed   atomic.Bool  // free ran: no row of the batch can be emitted any more
}

// liveBatches lists the DATA batches not yet freed, oldest first, for the
// reference horizon (OUTPUT_REF): the run loop adds, the writer takes the
// freed ones off the front.
type liveBatches struct {
	mu   sync.Mutex
	refs []*batchRef
	next int64 // the number of the first row after the batches added
}

func (q *liveBatches) add(r *batchRef, rows int) {
	q.mu.Lock()
	q.refs = append(q.refs, r)
	q.next = r.seq + int64(rows)
	q.mu.Unlock()
}

// oldest returns the number of the first row of the oldest batch not yet
// freed (after every batch added, if all are freed); no row before it can
// be emitted again.
func (q *liveBatches) oldest() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := 0
	for i < len(q.refs) && q.refs[i].freed.Load() {
		i++
	}
	if i > 0 {
		n := copy(q.refs, q.refs[i:])
		clear(q.refs[n:])
		q.refs = q.refs[:n]
	}
	if len(q.refs) > 0 {
		return q.refs[0].seq
	}
	return q.next
}

// batchRow is an input row handed to the core: a zero-copy view into its
// batch. The core calls Release when the row's input has finished, and
// Retain when the row is emitted as it is; the writer releases what was
// retained once the OUTPUT frame with the row is written.
type batchRow struct {
	*arrowio.Row
	ref *batchRef
}

// Release implements operator.Releaser.
func (r *batchRow) Release() { r.ref.release(1) }

// release ends n holds.
func (r *batchRef) release(n int32) {
	if left := r.left.Add(-n); left == 0 {
		r.free()
	} else if left < 0 {
		panic("bridge: internal: a DATA batch released more often than held")
	}
}

// free releases the batch and gives its payload back for reuse, unless the
// batch lent a string or slice of it, which may live on.
func (r *batchRef) free() {
	reuse := r.pool != nil && !r.b.Lent()
	r.b.Release()
	if reuse {
		r.pool.put(r.payload)
	}
	r.payload = nil
	r.freed.Store(true)
}

// Retain implements operator.Retainer: the same row, held once more.
func (r *batchRow) Retain() operator.Row {
	r.ref.left.Add(1)
	return r
}

// loop is the run loop. It runs on the goroutine that called Serve and owns
// the core: every Core method is called here and nowhere else.
type loop struct {
	s       *server
	core    *operator.Core
	owned   snapshot.KeyGroupRange
	pool    *pool
	w       *writer
	in      chan inMsg
	stopRd  chan struct{}
	pending []outItem
	results []*operator.Result
	// toPool and inline split a Ready's tasks: inline ones (Action.Inline)
	// run here, the others on the pool.
	toPool, inline []*operator.Task
	credit         int64 // rows the operator may still send
	debt           int   // credit of restored inputs, not granted again
	// unfinished: rows received in DATA whose inputs have not finished
	// (restored inputs are the debt's). window: how many rows credit plus
	// unfinished may come to (creditWindow); grants keep them there.
	unfinished, window int64
	ended              bool // END_INPUT seen
	// readerDone: the reader sent its last message (an error) and returned.
	readerDone bool
	start      time.Time
	timer      *time.Timer
	rowsIn     int64
	// pruneErr: a CHECKPOINT_COMPLETE's pruning, which runs on a goroutine
	// of its own (it can take a while and must not hold up the core),
	// found the store failed.
	pruneErr chan error
	// storeFailed is closed when the store fails on its own (a write
	// nothing waits for was lost); nil for stores that never do.
	storeFailed <-chan struct{}
}

func (s *server) run(ctx context.Context) error {
	defer startCPUProfile(s.set.cpuProfile, s.open.Subtask, s.log)()
	if s.cfg.ProcessWide {
		if os.Getenv("GOGC") != "" {
			s.log.Info("GC pacing off: GOGC is set in the environment", "GOGC", os.Getenv("GOGC"), "option", OptGCMinHeap)
		} else {
			defer startGCPacer(s.set.gcMinHeap, gcPaceInterval, s.log)()
		}
	}
	l := &loop{
		s: s, core: s.core, owned: s.set.core.Owned, pool: newPool(s.set.workers),
		w: newWriter(s), in: make(chan inMsg, 4), stopRd: make(chan struct{}),
		credit: s.set.initialCredit(), window: s.set.initialCredit(), debt: s.debt, start: time.Now(), pruneErr: make(chan error, 1),
	}
	if f, ok := s.set.store.(failingStore); ok {
		l.storeFailed = f.Failed()
	}
	l.timer = time.NewTimer(time.Hour)
	l.timer.Stop()
	go s.reader(l.in, l.stopRd)
	go l.w.run()
	err := l.loop(ctx)
	close(l.stopRd)
	l.pool.close()
	s.stopMarking()
	if st := s.set.store; st != nil {
		if cerr := st.Close(); cerr != nil {
			s.log.Warn("closing the action-state store", "err", cerr)
		}
	}
	st := l.core.Stats()
	s.log.Info("stopped", "rows_in", l.rowsIn, "rows_out", l.w.outRows.Load(), "rows_out_by_reference", l.w.refRows.Load(), "output_frames", l.w.outFrames.Load(),
		"actions", st.ActionsExecuted, "inputs_in_flight", st.QueuedInputs, "err", err)
	return err
}

// failingStore is a store that can fail between calls (statestore.Kafka:
// an asynchronous write is lost).
type failingStore interface {
	Failed() <-chan struct{}
	Err() error
}

func (l *loop) now() int64 { return time.Since(l.start).Milliseconds() + 1 }

func (l *loop) loop(ctx context.Context) error {
	for {
		if err := l.pump(); err != nil {
			return l.abort(err)
		}
		l.flushPending()
		select {
		case m := <-l.in:
			closed, err := l.handle(m)
			if err != nil {
				return l.abort(err)
			}
			if closed {
				return l.finish(nil)
			}
		case <-l.pool.notify:
			l.complete()
		case <-l.timerC():
			l.core.Tick(l.now())
		case <-ctx.Done():
			return l.finish(context.Cause(ctx))
		case <-l.w.done:
			return l.writerFailed()
		case err := <-l.pruneErr:
			return l.abort(err)
		case <-l.storeFailed:
			err := l.s.set.store.(failingStore).Err()
			return l.abort(&ProtocolError{Code: CodeStoreFailed, Err: err, Message: fmt.Sprintf("action-state store: %v", err)})
		}
	}
}

// pump takes Ready until the core has nothing more to hand out: emits go
// to pending (in order), tasks to the pool, credit to the operator.
func (l *loop) pump() error {
	for l.core.HasReady() {
		rd := l.core.Ready()
		if rd.Err != nil {
			return readyErr(rd.Err)
		}
		// Credit first: it may precede the outputs of the inputs that
		// earned it, and then END_ACK finds all credit sent.
		l.grant(rd.Credit)
		for i := range rd.Emits {
			e := &rd.Emits[i]
			switch e.Kind {
			case operator.EmitOutput:
				// Set in place: a composite literal copied into the slice
				// stalled on its own stores (see operator.Context.EmitRow).
				l.pending = append(l.pending, outItem{})
				it := &l.pending[len(l.pending)-1]
				it.kind, it.ts, it.hasTS, it.values, it.row = outRow, e.Timestamp, e.HasTS, e.Values, e.Row
			case operator.EmitWatermark:
				l.pending = append(l.pending, outItem{kind: outWmAck, ts: e.Timestamp})
			case operator.EmitSnapshot:
				l.pending = append(l.pending, outItem{kind: outSnapshot, n: e.CheckpointID, sections: e.Sections})
			case operator.EmitEndAck:
				l.pending = append(l.pending, outItem{kind: outEndAck})
			}
		}
		l.runTasks(rd.Tasks)
	}
	return nil
}

// runTasks hands tasks to the pool, except those of Inline actions, which
// it runs here and completes at once (after the pool has its share, so the
// workers are busy meanwhile).
func (l *loop) runTasks(ts []*operator.Task) {
	l.toPool, l.inline = l.toPool[:0], l.inline[:0]
	for _, t := range ts {
		if t.Inline() {
			l.inline = append(l.inline, t)
		} else {
			l.toPool = append(l.toPool, t)
		}
	}
	if len(l.inline) == 0 {
		l.pool.submit(ts)
		return
	}
	l.pool.submit(l.toPool)
	l.core.Tick(l.now()) // retry back-off is measured from now, as in complete
	for i, t := range l.inline {
		l.core.Complete(t.Run())
		l.inline[i] = nil
	}
	clear(l.toPool)
}

// grant passes credit for finished inputs on to the operator, after the
// restored inputs (which the operator never sent) have paid their share.
func (l *loop) grant(n int) {
	if d := min(n, l.debt); d > 0 {
		l.debt -= d
		n -= d
	}
	if n <= 0 {
		return
	}
	l.unfinished -= int64(n)
	if l.unfinished < 0 {
		panic("bridge: internal: more inputs finished than DATA brought")
	}
	l.refill()
}

// refill grants the operator what the window has room for: credit plus
// unfinished rows come back up to the window, never beyond. A window that
// shrank (larger rows) grants nothing until enough inputs have finished.
func (l *loop) refill() {
	give := l.window - l.credit - l.unfinished
	if give <= 0 {
		return
	}
	l.credit += give
	if k := len(l.pending); k > 0 && l.pending[k-1].kind == outCredit {
		l.pending[k-1].n += give
		l.pending[k-1].ts = l.window
		return
	}
	l.pending = append(l.pending, outItem{kind: outCredit, n: give, ts: l.window})
}

// flushPending hands the pending items to the writer.
func (l *loop) flushPending() {
	if len(l.pending) > 0 {
		l.pending = l.w.q.push(l.pending)
	}
}

func (l *loop) complete() {
	l.core.Tick(l.now()) // retry back-off is measured from now
	rs := l.pool.take(l.results)
	for i, r := range rs {
		l.core.Complete(r)
		rs[i] = nil
	}
	l.results = rs[:0]
}

func (l *loop) timerC() <-chan time.Time {
	at, ok := l.core.NextDeadline()
	if !ok {
		return nil
	}
	l.timer.Reset(time.Duration(max(at-l.now(), 0)) * time.Millisecond)
	return l.timer.C
}

// handle applies one frame from the operator. closed: CLOSE arrived.
func (l *loop) handle(m inMsg) (closed bool, err error) {
	if m.err != nil {
		l.readerDone = true
		return false, m.err
	}
	if m.typ == FrameData {
		return false, l.data(m.batch, m.payload)
	}
	switch c := m.ctl.(type) {
	case *Watermark:
		l.core.Watermark(c.TS)
	case *Barrier:
		l.core.Barrier(c.CheckpointID)
	case *CheckpointComplete:
		if st := l.s.set.store; st != nil {
			go func(id int64) {
				if err := st.CheckpointComplete(id); err != nil {
					// Pruning is best effort, but the store only fails this
					// way when it has failed (a write was lost): never go on
					// silently.
					select {
					case l.pruneErr <- &ProtocolError{Code: CodeStoreFailed, Err: err,
						Message: fmt.Sprintf("action-state store after checkpoint %d completed: %v", id, err)}:
					default: // one is enough
					}
				}
			}(c.CheckpointID)
		}
	case *CheckpointAborted:
		l.s.log.Debug("checkpoint aborted", "checkpoint", c.CheckpointID)
	case *EndInput:
		if l.ended {
			return false, protoErrorf(CodeUnexpectedFrame, "a second END_INPUT; the operator sends it once")
		}
		l.ended = true
		l.core.EndInput()
	case *Close:
		return true, nil
	case *ErrorFrame:
		return false, fmt.Errorf("%w: %s: %s", ErrPeer, c.Code, c.Message)
	default:
		return false, protoErrorf(CodeUnexpectedFrame, "%s after READY; the operator may send DATA, WATERMARK, BARRIER, CHECKPOINT_COMPLETE, CHECKPOINT_ABORTED, END_INPUT, CLOSE or ERROR", m.typ)
	}
	return false, nil
}

// data feeds a decoded DATA batch to the core, row by row. The batch is
// checked in full first: nothing of a bad batch is applied.
func (l *loop) data(b *arrowio.Batch, payload []byte) error {
	n := b.Len()
	ref := &batchRef{b: b, payload: payload, pool: &l.s.payloads, seq: l.rowsIn}
	reject := func(err error) error {
		ref.free()
		return err
	}
	if l.ended {
		return reject(protoErrorf(CodeUnexpectedFrame, "DATA after END_INPUT"))
	}
	if int64(n) > l.credit {
		return reject(protoErrorf(CodeUnexpectedFrame, "DATA with %d rows, but the operator holds credit for %d rows only; it must wait for CREDIT (protocol.md, ordering rule 3)", n, l.credit))
	}
	for i := 0; i < n; i++ {
		if kg := b.KeyGroup(i); !l.owned.Contains(kg) {
			return reject(protoErrorf(CodeMalformedFrame, "DATA row %d has key group %d, but this subtask owns key groups %d..%d; no row of the batch was applied", i, kg, l.owned.Start, l.owned.End))
		}
	}
	if n == 0 {
		ref.free()
		return nil
	}
	l.credit -= int64(n)
	l.unfinished += int64(n)
	l.rowsIn += int64(n)
	// The window follows the latest rows' size; a larger window is granted
	// at once (after the first DATA, READY's small credit opens up).
	l.window = l.s.set.creditWindow(int64(len(payload)) / int64(n))
	l.refill()
	ref.left.Store(int32(n))
	if l.w.refs {
		l.w.live.add(ref, n)
	}
	rows := make([]batchRow, n)
	l.core.Tick(l.now()) // Input may run Inline actions: retry back-off is measured from now
	for i := range rows {
		rows[i] = batchRow{Row: b.Row(i), ref: ref}
		ts, hasTS := b.Timestamp(i)
		if err := l.core.Input(b.KeyGroup(i), b.Key(i), ts, hasTS, &rows[i]); err != nil {
			return &ProtocolError{Code: CodeInternal, Err: err, Message: fmt.Sprintf("DATA row %d: %v", i, err)}
		}
	}
	return nil
}

// readyErr maps a fatal core error to the ERROR the operator gets.
func readyErr(err error) *ProtocolError {
	code := CodeActionFailed
	var afe *operator.ActionFailedError
	if !errors.As(err, &afe) && (errors.Is(err, statestore.ErrClosed) || errors.Is(err, operator.ErrStore)) {
		code = CodeStoreFailed
	}
	return &ProtocolError{Code: code, Message: err.Error(), Err: err}
}

// abort ends the connection after a failure: a *ProtocolError is sent as
// ERROR after what is already queued; other errors (the peer's ERROR, a
// lost connection) end it without a word.
func (l *loop) abort(err error) error {
	select {
	case <-l.w.failed:
		// The writer failed first (and reported it): that is the cause.
		return l.writerFailed()
	default:
	}
	var pe *ProtocolError
	if errors.As(err, &pe) {
		l.s.log.Error("sending ERROR to the operator", "code", pe.Code, "message", pe.Message)
		_ = l.s.conn.SetWriteDeadline(time.Now().Add(errWriteTimeout))
		l.w.q.push([]outItem{{kind: outError, perr: pe}})
		l.w.q.close()
		<-l.w.done
		l.linger()
	} else {
		l.s.log.Error("stopping", "err", err)
		_ = l.s.conn.SetWriteDeadline(time.Now().Add(errWriteTimeout))
		l.w.q.close()
	}
	<-l.w.done
	_ = l.s.conn.Close()
	return err
}

// linger lets the peer read the ERROR just sent: the write side is shut,
// the reader's frames are discarded until the peer closes or lingerTimeout
// passes (see lingerClose).
func (l *loop) linger() {
	if cw, ok := l.s.conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = l.s.conn.SetReadDeadline(time.Now().Add(lingerTimeout))
	if l.readerDone {
		_, _ = io.Copy(io.Discard, l.s.br) // the reader has returned
		return
	}
	for m := range l.in { // the read deadline ends the reader
		if m.batch != nil {
			m.batch.Release()
		}
		if m.err != nil {
			l.readerDone = true
			return
		}
	}
}

// finish stops gracefully (CLOSE or ctx): everything produced so far is
// sent, then the connection is closed. cause is nil after CLOSE.
func (l *loop) finish(cause error) error {
	if cause != nil {
		l.s.log.Info("stopping", "cause", cause)
	}
	_ = l.s.conn.SetWriteDeadline(time.Now().Add(closeTimeout))
	l.flushPending()
	l.w.q.close()
	<-l.w.done
	_ = l.s.conn.Close()
	if l.w.err != nil {
		return l.w.err
	}
	return cause
}

// writerFailed returns why the writer stopped.
func (l *loop) writerFailed() error {
	<-l.w.done
	_ = l.s.conn.Close()
	if l.w.err == nil {
		return errors.New("bridge: internal: the writer stopped without an error")
	}
	l.s.log.Error("stopping: sending to the operator failed", "err", l.w.err)
	return l.w.err
}
