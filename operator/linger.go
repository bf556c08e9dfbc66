package operator

import (
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/statestore"
)

// The running-record linger, taken over from a store that implements
// statestore.RunningLingerer (the Kafka store's
// kafka.running.record.linger.ms).
//
// After a durable call the action's record, with the call's outcome, is
// written only if the action is still running a linger after its first
// unrecorded call, or when a barrier comes first: an action that finishes
// within the linger writes its completed record alone, which holds the
// calls too. A store that holds such records itself has to be given each
// of them: the core builds it, the store checks and indexes it, and the
// completion replaces it at once. Here a call costs a timestamp and two
// uncontended locks. The timer that writes the records whose linger is
// over (fire) is "the sweeper" below.
//
// Locks: Task.lg.mu guards the execution's calls and lg's fields against
// the sweeper and the barrier; lingerer.mu guards the queue. A task's lock
// is taken before the queue's (add), never the other way round. A reconciled
// call's pending record is written under the task's lock, so a barrier that
// comes meanwhile waits for that write.

// taskLinger is a Task's part of it.
type taskLinger struct {
	mu    sync.Mutex
	since time.Duration // > 0: calls not recorded yet since then (lingerer clock)
	gen   uint64        // bumped when an execution ends: older queue entries are stale
	err   error         // a failed Put of the running record, for the execution to report
}

// lingerer is the core's queue of executions with unrecorded calls, oldest
// first, and the timer that writes the running records whose linger is over.
type lingerer struct {
	core  *Core
	d     time.Duration
	epoch time.Time

	mu    sync.Mutex
	q     []lingerEntry
	head  int
	armed bool
}

type lingerEntry struct {
	t     *Task
	gen   uint64
	since time.Duration
}

func (l *lingerer) now() time.Duration { return max(time.Since(l.epoch), 1) }

// unrecorded notes that t's execution has a call whose record is not
// written yet. REQUIRES: t.lg.mu held (see Context.lockCalls).
func (l *lingerer) unrecorded(t *Task) {
	if t.lg.since == 0 {
		t.lg.since = l.now()
		l.add(lingerEntry{t: t, gen: t.lg.gen, since: t.lg.since})
	}
}

func (l *lingerer) add(e lingerEntry) {
	l.mu.Lock()
	l.q = append(l.q, e)
	if !l.armed {
		l.armed = true
		time.AfterFunc(l.d, l.fire)
	}
	l.mu.Unlock()
}

// take removes and returns the entries put at or before cutoff (all: every
// entry).
func (l *lingerer) take(all bool, cutoff time.Duration) []lingerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.head
	for i < len(l.q) && (all || l.q[i].since <= cutoff) {
		i++
	}
	out := append([]lingerEntry(nil), l.q[l.head:i]...)
	clear(l.q[l.head:i])
	l.head = i
	if l.head == len(l.q) {
		l.q, l.head = l.q[:0], 0
	} else if l.head > 1024 && 2*l.head > len(l.q) {
		n := copy(l.q, l.q[l.head:])
		clear(l.q[n:])
		l.q, l.head = l.q[:n], 0
	}
	return out
}

// fire writes the running records whose linger is over and sets the timer
// for the next one.
func (l *lingerer) fire() {
	now := l.now()
	for _, e := range l.take(false, now-l.d) {
		l.write(e, false)
	}
	l.mu.Lock()
	l.armed = false
	if l.head < len(l.q) {
		l.armed = true
		time.AfterFunc(max(l.q[l.head].since+l.d-l.now(), time.Millisecond), l.fire)
	}
	l.mu.Unlock()
}

// lockCalls and unlockCalls guard the execution's calls against the
// lingerer; without one they do nothing.
func (c *Context) lockCalls() {
	if c.t.core.linger != nil {
		c.t.lg.mu.Lock()
	}
}

func (c *Context) unlockCalls() {
	if c.t.core.linger != nil {
		c.t.lg.mu.Unlock()
	}
}

// write Puts the running record of e's execution if it is still that
// execution and its calls are still unrecorded. A failed Put is the
// execution's to report (see endExecution), or, at a barrier, the core's.
func (l *lingerer) write(e lingerEntry, barrier bool) error {
	t := e.t
	t.lg.mu.Lock()
	defer t.lg.mu.Unlock()
	if t.lg.gen != e.gen || t.lg.since == 0 {
		return nil // finished, or recorded since
	}
	t.lg.since = 0
	err := l.core.store.Put(t.ctx.record(statestore.StatusRunning, true))
	if err != nil && !barrier && t.lg.err == nil {
		t.lg.err = err
	}
	return err
}

// flushAll writes the running records of every execution with unrecorded
// calls: a barrier's cut covers them. Core goroutine.
func (l *lingerer) flushAll() error {
	var first error
	for _, e := range l.take(true, 0) {
		if err := l.write(e, true); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// endExecution closes t's execution for the lingerer: no running record is
// written for it from now on. It returns whether calls were left unrecorded
// and the error of a running record's failed Put.
func (t *Task) endExecution() (unrecorded bool, err error) {
	t.lg.mu.Lock()
	unrecorded, err = t.lg.since != 0, t.lg.err
	t.lg.since, t.lg.err = 0, nil
	t.lg.gen++
	t.lg.mu.Unlock()
	return unrecorded, err
}
