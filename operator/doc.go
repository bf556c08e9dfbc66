// Package operator is the agent SDK and the deterministic execution core of
// flinkgo.
//
// Agent authors write an Agent: named actions that listen to event types and
// get a *Context with per-key short-term and sensory memory, event sending
// and durable calls (Context.Durable). See examples/ for a complete agent.
//
// The bridge drives a Core, one per operator subtask. The core follows the
// shape of etcd-io/raft's RawNode: it does no I/O, reads no clock and starts
// no goroutines. Inputs (records, watermarks, barriers, end of input, task
// results, ticks) go in through methods; Ready returns, in order, what to
// emit and which tasks to start. Action bodies run as Tasks on the caller's
// workers and may block for seconds without holding up other keys,
// watermarks of other inputs, or checkpoints.
//
// Semantics follow Apache Flink Agents: per key one input in flight and
// later inputs queued in order; actions dispatched by event type in
// declaration order; watermarks held until earlier inputs finish; memory
// writes visible to the key when the action completes; durable calls
// replayed from the action-state store after a restore. Event ids are
// deterministic (see ids.go), so a re-run reproduces them.
//
// Concurrency: a Core and everything reached from it belong to one
// goroutine. Task.Run may run on any goroutine; it reads the key's committed
// memory, which the core changes only when that task's own Result is applied.
package operator
