// Package statestore holds flinkgo's per-key state and its action-state log.
//
// Two things live here:
//
//   - Table: hashed per-key state grouped by key group (table.go). The
//     operator core owns one; it is not safe for concurrent use.
//   - The action-state log: ActionStore, its record (RecordKey, Record,
//     MemUpdate, CallRecord), the record's byte codec and the backends. The
//     in-memory backend is NewMemory; the Kafka backend is NewKafka
//     (docs/kafka-store.md).
//
// # Who calls what
//
// Workers (the goroutines that run actions) Put records; the core goroutine
// Gets them when it replays an input after a restore and marks finished
// inputs (InputTracker); the bridge calls Flush at every barrier and
// CheckpointComplete when Flink notifies it. Every ActionStore is safe for
// concurrent use. Get never does I/O.
//
// # The record format
//
// A record is the state of one action execution: the action Action running
// for the event EventID while the key (whose SHA-256 is KeyHash) processed its
// input number Seq. Its key is ParseRecordKey / RecordKey.AppendBinary, its
// value EncodeRecord / DecodeRecord; docs/action-state.md gives both field by
// field, and testdata/action-state holds golden records for readers in other
// languages.
//
// INVARIANT: distinct RecordKeys have distinct encodings, whatever bytes an
// action name holds (fixed-width fields, length-prefixed name); two events
// with equal attributes never share a key (their ids differ); two Flink keys
// with different serialised bytes never share a key hash (SHA-256).
//
// INVARIANT: EncodeRecord is deterministic (map keys sorted by their bytes,
// smallest integer encodings), so equal records have identical bytes and
// DecodeRecord followed by EncodeRecord reproduces them.
//
// Decoders never panic: any bytes give a record or a *RecordError whose Kind
// (ErrRecordCorrupt, ErrRecordVersion, ErrRecordKeyGroup) errors.Is can test.
//
// # Values
//
// Memory values, event attributes and durable call results are the value
// domain of docs/architecture.md: nil, bool, int64, float64, string, []byte,
// []any, map[string]any. EncodeRecord accepts exactly these; ArgsDigest and
// EncodeValue first widen other Go integer and float types.
package statestore
