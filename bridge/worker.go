package bridge

import (
	"sync"

	"github.com/flinkgo/flinkgo/operator"
)

// pool is the bounded worker pool that runs action bodies (operator.Task).
//
// The core goroutine submits tasks; size worker goroutines take them one at
// a time in FIFO order, run them, and append the results to a shared list.
// The core goroutine is woken through notify (capacity 1, so wake-ups
// coalesce) and takes all results at once with take. The core hands out up
// to go.tasks.per.thread tasks per worker (its MaxConcurrency), so a worker
// that finishes takes the next task at once; a slow task occupies one
// worker, and the tasks waiting go to the others in order.
//
// INVARIANT: results reach the core in completion order; the core applies
// each with Core.Complete on its own goroutine.
type pool struct {
	mu      sync.Mutex
	cond    *sync.Cond // workers wait here for tasks
	tasks   []*operator.Task
	head    int
	results []*operator.Result
	closed  bool
	notify  chan struct{}
	wg      sync.WaitGroup
}

func newPool(size int) *pool {
	p := &pool{notify: make(chan struct{}, 1)}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(size)
	for i := 0; i < size; i++ {
		go p.work()
	}
	return p
}

// submit queues tasks. Core goroutine only.
func (p *pool) submit(ts []*operator.Task) {
	if len(ts) == 0 {
		return
	}
	p.mu.Lock()
	if p.head > 0 && p.head == len(p.tasks) {
		p.tasks, p.head = p.tasks[:0], 0
	}
	p.tasks = append(p.tasks, ts...)
	p.mu.Unlock()
	if len(ts) == 1 {
		p.cond.Signal()
	} else {
		p.cond.Broadcast()
	}
}

// take returns the results gathered since the last call, reusing buf.
func (p *pool) take(buf []*operator.Result) []*operator.Result {
	p.mu.Lock()
	out := p.results
	p.results = buf[:0]
	p.mu.Unlock()
	return out
}

func (p *pool) work() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for p.head == len(p.tasks) && !p.closed {
			p.cond.Wait()
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		t := p.tasks[p.head]
		p.tasks[p.head] = nil
		p.head++
		p.mu.Unlock()

		res := t.Run()

		p.mu.Lock()
		p.results = append(p.results, res)
		first := len(p.results) == 1
		p.mu.Unlock()
		if first {
			select {
			case p.notify <- struct{}{}:
			default:
			}
		}
	}
}

// close stops idle workers; a worker busy in an action body stops when the
// body returns (a body cannot be interrupted). It does not wait.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
}
