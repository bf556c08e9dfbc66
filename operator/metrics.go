package operator

import (
	"sort"
	"sync"
	"sync/atomic"
)

// Metrics holds the agent's user counters. Safe for concurrent use.
type Metrics struct {
	mu       sync.Mutex
	counters map[string]*atomic.Int64
}

// Counter returns the counter called name, creating it at zero.
func (m *Metrics) Counter(name string) *atomic.Int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counters == nil {
		m.counters = make(map[string]*atomic.Int64)
	}
	c := m.counters[name]
	if c == nil {
		c = new(atomic.Int64)
		m.counters[name] = c
	}
	return c
}

// Snapshot returns the current values, by name.
func (m *Metrics) Snapshot() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int64, len(m.counters))
	for k, c := range m.counters {
		out[k] = c.Load()
	}
	return out
}

// Names returns the counter names, sorted.
func (m *Metrics) Names() []string {
	s := m.Snapshot()
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Stats are the runtime's own counters, as in Flink Agents
// (numOfEventProcessed, numOfActionsExecuted) plus what it lacks. Read them
// on the core goroutine (Core.Stats).
type Stats struct {
	InputsReceived   int64 // records received
	InputsFinished   int64 // records whose processing completed
	EventsProcessed  int64 // events dispatched to actions (numOfEventProcessed)
	ActionsExecuted  int64 // action bodies completed (numOfActionsExecuted)
	ActionsReplayed  int64 // completed executions replayed from the store (body not run)
	ActionsRerun     int64 // unfinished executions found in the store whose body runs again (recorded calls reused)
	CallsReplayed    int64 // durable calls answered from the store
	ActionsRetried   int64
	ActionsIgnored   int64 // failures dropped under error-handling-strategy=ignore
	OutputsEmitted   int64
	Running          int // action bodies running now
	QueuedInputs     int // inputs waiting behind another of the same key
	Keys             int
	PendingWatermark int // watermarks held
}
