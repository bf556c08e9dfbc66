package operator

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/statestore"
)

// lingerStore is a Memory store that hands a running-record linger over to
// the core (statestore.RunningLingerer, as the Kafka store does) and logs
// every Put.
type lingerStore struct {
	*statestore.Memory
	linger time.Duration
	taken  int

	mu   sync.Mutex
	puts []lingerPut
	put  chan lingerPut // every Put, if not nil
}

type lingerPut struct {
	action string
	status statestore.Status
	calls  int
}

func newLingerStore(d time.Duration) *lingerStore {
	return &lingerStore{Memory: statestore.NewMemory(), linger: d, put: make(chan lingerPut, 64)}
}

func (s *lingerStore) TakeRunningLinger() time.Duration {
	s.taken++
	d := s.linger
	s.linger = 0
	return d
}

func (s *lingerStore) Put(r *statestore.Record) error {
	p := lingerPut{action: r.Key.Action, status: r.Status, calls: len(r.Calls)}
	s.mu.Lock()
	s.puts = append(s.puts, p)
	s.mu.Unlock()
	s.put <- p
	return s.Memory.Put(r)
}

func (s *lingerStore) log() []lingerPut {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]lingerPut(nil), s.puts...)
}

// lingerAgent's action "act" makes one durable call, then waits for hold
// (if not nil) and returns fail.
func lingerAgent(hold <-chan struct{}, fail error) *Agent {
	return &Agent{Name: "linger", Actions: []Action{{Name: "act", Listen: []string{InputEventType},
		Fn: func(ctx *Context, ev *Event) error {
			if _, err := ctx.Durable("call", nil, func() (any, error) { return int64(7), nil }); err != nil {
				return err
			}
			if hold != nil {
				<-hold
			}
			return fail
		}}}}
}

// startTask feeds one input and runs its task on its own goroutine; the
// result arrives on the returned channel.
func startTask(t *testing.T, c *Core) <-chan *Result {
	t.Helper()
	if err := c.Input(0, []byte("k"), 0, false, row("v", int64(1))); err != nil {
		t.Fatal(err)
	}
	rd := c.Ready()
	if rd.Err != nil || len(rd.Tasks) != 1 {
		t.Fatalf("Ready: %d tasks, err %v; want 1 task", len(rd.Tasks), rd.Err)
	}
	done := make(chan *Result, 1)
	go func() { done <- rd.Tasks[0].Run() }()
	return done
}

func waitPut(t *testing.T, s *lingerStore, what string) lingerPut {
	t.Helper()
	select {
	case p := <-s.put:
		return p
	case <-time.After(10 * time.Second):
		t.Fatalf("no Put within 10 s, waiting for %s; Puts so far: %+v", what, s.log())
	}
	return lingerPut{}
}

func TestLingerShortActionWritesOnlyItsCompletion(t *testing.T) {
	s := newLingerStore(time.Hour)
	c, err := NewCore(lingerAgent(nil, nil), DefaultConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	if s.taken != 1 || c.linger == nil || c.linger.d != time.Hour {
		t.Fatalf("the core did not take the store's linger over (taken %d times)", s.taken)
	}
	c.Complete(<-startTask(t, c))
	want := []lingerPut{{"act", statestore.StatusCompleted, 1}}
	if got := s.log(); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("Puts = %+v, want only the completed record with its call: %+v", got, want)
	}
}

func TestLingerLongActionWritesItsRunningRecord(t *testing.T) {
	s := newLingerStore(20 * time.Millisecond)
	hold := make(chan struct{})
	c, err := NewCore(lingerAgent(hold, nil), DefaultConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	done := startTask(t, c)
	// The action is blocked after its call: a linger later its running
	// record, holding the call's outcome, is written while it still runs.
	if p := waitPut(t, s, "the running record"); p != (lingerPut{"act", statestore.StatusRunning, 1}) {
		t.Fatalf("first Put = %+v, want the running record with 1 call", p)
	}
	close(hold)
	c.Complete(<-done)
	if p := waitPut(t, s, "the completed record"); p != (lingerPut{"act", statestore.StatusCompleted, 1}) {
		t.Fatalf("second Put = %+v, want the completed record", p)
	}
	time.Sleep(50 * time.Millisecond) // a stale linger entry must not write again
	if got := s.log(); len(got) != 2 {
		t.Fatalf("Puts = %+v, want exactly running then completed", got)
	}
}

func TestLingerBarrierWritesRunningRecords(t *testing.T) {
	s := newLingerStore(time.Hour)
	hold := make(chan struct{})
	c, err := NewCore(lingerAgent(hold, nil), DefaultConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	done := startTask(t, c)
	// Wait until the call has finished (its outcome is in the context).
	deadline := time.Now().Add(10 * time.Second)
	for pendingLinger(c) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the durable call did not finish within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	c.Barrier(1)
	if got := s.log(); len(got) != 1 || got[0] != (lingerPut{"act", statestore.StatusRunning, 1}) {
		t.Fatalf("Puts when Barrier returned = %+v, want the running record with 1 call (the cut covers it)", got)
	}
	close(hold)
	c.Complete(<-done)
	if got := s.log(); len(got) != 2 || got[1].status != statestore.StatusCompleted {
		t.Fatalf("Puts = %+v, want running then completed", got)
	}
}

func TestLingerFailedExecutionKeepsItsCalls(t *testing.T) {
	s := newLingerStore(time.Hour)
	c, err := NewCore(lingerAgent(nil, Permanent(errors.New("boom"))), DefaultConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	res := <-startTask(t, c)
	// The failed execution's call is written when it ends, not an hour
	// later: its next attempt, or a restore, reuses the outcome.
	if got := s.log(); len(got) != 1 || got[0] != (lingerPut{"act", statestore.StatusRunning, 1}) {
		t.Fatalf("Puts = %+v, want the running record with the failed execution's call", got)
	}
	c.Complete(res)
	if rd := c.Ready(); rd.Err == nil {
		t.Fatal("a permanent error with error-handling-strategy=fail did not fail the core")
	}
}

func TestLingerFailedRunningRecordFailsTheExecution(t *testing.T) {
	s := &failingLingerStore{lingerStore: newLingerStore(5 * time.Millisecond)}
	hold := make(chan struct{})
	c, err := NewCore(lingerAgent(hold, nil), DefaultConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	done := startTask(t, c)
	waitPut(t, s.lingerStore, "the running record")
	close(hold)
	res := <-done
	if !errors.Is(res.storeErr, errStoreDown) {
		t.Fatalf("execution's store error = %v, want the running record's failed Put", res.storeErr)
	}
	if got := s.log(); len(got) != 1 {
		t.Fatalf("Puts = %+v: the completion of an execution whose running record failed must not be written", got)
	}
}

var errStoreDown = errors.New("store down")

type failingLingerStore struct{ *lingerStore }

func (s *failingLingerStore) Put(r *statestore.Record) error {
	s.lingerStore.Put(r)
	return errStoreDown
}

// pendingLinger counts the executions with unrecorded calls.
func pendingLinger(c *Core) int {
	c.linger.mu.Lock()
	defer c.linger.mu.Unlock()
	return len(c.linger.q) - c.linger.head
}

// A queue entry of an execution that has ended must not write the running
// record of the next execution of the same (recycled) Task, whose own
// linger has not passed.
func TestLingerStaleEntryDoesNotWriteTheNextExecution(t *testing.T) {
	s := newLingerStore(time.Hour) // the timer never fires in this test
	hold := make(chan struct{})
	first := true
	ag := &Agent{Name: "linger", Actions: []Action{{Name: "act", Listen: []string{InputEventType},
		Fn: func(ctx *Context, ev *Event) error {
			if _, err := ctx.Durable("call", nil, func() (any, error) { return int64(7), nil }); err != nil {
				return err
			}
			if !first {
				<-hold
			}
			return nil
		}}}}
	c, err := NewCore(ag, DefaultConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	res := <-startTask(t, c)
	task1 := res.task
	c.Complete(res)
	<-s.put // the first execution's completion
	first = false
	if err := c.Input(0, []byte("k"), 0, false, row("v", int64(2))); err != nil {
		t.Fatal(err)
	}
	rd := c.Ready()
	if len(rd.Tasks) != 1 || rd.Tasks[0] != task1 {
		t.Fatalf("the second input's task is not the recycled first one (%d tasks)", len(rd.Tasks))
	}
	done := make(chan *Result, 1)
	go func() { done <- rd.Tasks[0].Run() }()
	for pendingLinger(c) < 2 { // the stale entry and the second execution's
		time.Sleep(time.Millisecond)
	}
	stale := c.linger.take(false, c.linger.q[c.linger.head].since) // the first execution's entry only
	if len(stale) != 1 {
		t.Fatalf("took %d entries, want the stale one", len(stale))
	}
	if err := c.linger.write(stale[0], false); err != nil {
		t.Fatal(err)
	}
	if got := s.log(); len(got) != 1 {
		t.Fatalf("Puts = %+v: the stale entry wrote the running execution's record before its linger", got)
	}
	close(hold)
	c.Complete(<-done)
	if got := s.log(); len(got) != 2 || got[1].status != statestore.StatusCompleted {
		t.Fatalf("Puts = %+v, want the two completions only", got)
	}
}
