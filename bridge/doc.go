// Package bridge is the Go process that runs agents for a Flink operator: it
// speaks the flinkgo wire protocol (docs/protocol.md) with the JVM operator
// over a Unix domain socket, feeds the operator core, runs actions on a
// worker pool and supervises itself (parent death, signals).
//
// # Wire codec (wire*.go)
//
// Every frame is `u32 length (big-endian) | u8 type | payload`, the length
// counting the type byte. ReadFrame checks the length against the maximum
// frame size before it allocates anything and reports a zero length, an
// oversize length and an unknown type as a *ProtocolError carrying the
// matching ERROR code; WriteFrame writes a frame.
//
// DATA and OUTPUT carry an Arrow IPC stream (package arrowio). Every other
// frame carries one msgpack map, decoded into a typed struct (Hello, Open,
// Restore, RestoreDone, Ready, Credit, Watermark, WmAck, Barrier, Snapshot,
// CheckpointComplete, CheckpointAborted, EndInput, EndAck, Metrics,
// ErrorFrame, Close). Unmarshal ignores unknown keys, accepts every msgpack encoding of
// a value and reports a missing required key, a wrong type or trailing bytes
// as malformed_frame, naming the frame and the key. Marshal is canonical:
// keys in the order of docs/protocol.md, the smallest msgpack form of every
// integer, string, binary, array and map, OPEN's options and METRICS'
// names sorted by key. The
// Java operator encodes the same way, so both produce identical bytes; the
// golden frames in testdata/wire pin this down.
//
// The codec is stateless and safe for concurrent use; a Frame's payload
// belongs to the caller of ReadFrame (it may alias the buffer passed in).
//
// # Server (server*.go, worker.go, main.go, describe.go, supervise.go)
//
// Main is the main function of an agent binary: "describe" prints the
// manifest (Describe); otherwise Run reads FLINKGO_SOCKET, FLINKGO_TOKEN,
// FLINKGO_PROTOCOL and FLINKGO_PARENT_PID, connects and calls Serve, which
// runs HELLO, OPEN, RESTORE*, RESTORE_DONE and READY on the calling
// goroutine and then the run loop. Exit codes: 0 after CLOSE or SIGTERM,
// 1 when the subtask fails, 2 without the operator's environment.
//
// Concurrency model, after READY (who owns what):
//
//   - The run loop (the goroutine that called Serve) owns the
//     operator.Core, the credit account and the frame state (END_INPUT
//     seen). Every Core method is called there. After each step it takes
//     Core.Ready until the core has nothing more: emits are copied, in
//     order, into one item batch for the writer; tasks go to the pool;
//     credit is added to the batch. It also drives Core.Tick from a timer
//     set to Core.NextDeadline.
//   - The reader goroutine owns the read side of the socket and the Arrow
//     decoder. It decodes every frame completely (DATA into a zero-copy
//     arrowio.Batch over a payload buffer of its own) before handing it to
//     the run loop over a channel, so a malformed frame is rejected before
//     anything of it is applied. The run loop checks a whole batch (credit,
//     key groups) before its first row reaches the core.
//   - The worker pool (worker.go) has num-async-threads goroutines; the
//     core hands out go.tasks.per.thread tasks per worker (its
//     MaxConcurrency), which wait in FIFO order, so a worker never waits
//     for the run loop; a slow action holds one worker only. Results come
//     back to the run loop in completion order.
//   - The writer goroutine owns the write side of the socket, the
//     arrowio.OutputBuilder and the action-state store's Flush. It sends
//     frames in exactly the order of the items: rows are batched into
//     OUTPUT (go.output.rows, go.output.bytes, go.output.linger.ms) and
//     always flushed before WM_ACK, SNAPSHOT and END_ACK; credit is summed
//     into one CREDIT per flush; a SNAPSHOT's sections are encoded in
//     parallel and the store flushed (for the marker) on the writer, so
//     the run loop keeps running actions meanwhile. Its queue (outQueue)
//     is unbounded, so the run loop never waits for it; what it can hold
//     is bounded by the credit (the rows in flight) and the barriers the
//     operator sends, and an operator that does not read stalls the
//     writer, then credit, then the operator itself. It also sends
//     METRICS (go.metrics.interval.ms, and right after each SNAPSHOT)
//     between two frames: the store's counters it reads itself
//     (KafkaStats, safe for concurrent use), the core's come from a copy
//     of Core.Stats the run loop takes with every hand-off of items.
//
// INVARIANTS: the rows of a DATA batch are views into it; the core calls
// Release on each when its input finishes, and the batch is released with
// the last one (a count kept on the run loop). Everything the writer sends
// before SNAPSHOT(n) was emitted by the core before the cut of n. Credit is
// granted only for finished inputs, never for restored ones, so the inputs
// held in Go stay within the window the operator was granted.
//
// Failures: a protocol violation, a failed action or store, or an output
// row that does not fit the output schema is reported as ERROR with the
// protocol's code, then the connection is closed. CLOSE and SIGTERM are
// graceful (what was produced is sent). The process also stops when the
// operator's JVM (FLINKGO_PARENT_PID) disappears, polled every 500 ms.
package bridge
