package statestore

import (
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
)

// ActionStore is the action-state log: one record per action execution, the
// last Put for a key replacing earlier ones (as a compacted topic keeps the
// last). Safe for concurrent use: workers Put while the core goroutine Gets.
type ActionStore interface {
	// Get returns the last record Put for k. It reads memory only, never
	// does I/O. The record is shared: the caller must not modify it. A
	// HoldHinter need not find a record of an input MayHold rejects.
	Get(k RecordKey) (*Record, bool)
	// Put stores r, buffered (group commit): it is durable after the next
	// Flush. The store keeps r; the caller must not modify it afterwards.
	// A failed write makes every later call fail with the same error
	// (errors are sticky).
	Put(r *Record) error
	// PutDurable stores r and returns once r is durable: a reconciled
	// call's pending record, written before the call runs.
	PutDurable(r *Record) error
	// Flush is the barrier: it returns once everything Put before it is
	// durable, with the recovery marker taken after the flush.
	Flush() (snapshot.Marker, error)
	// CheckpointComplete lets the store drop records no restore can need
	// any more (see InputTracker). Best effort; never needed for
	// correctness.
	CheckpointComplete(checkpointID int64) error
	// Close releases the store. Idempotent.
	Close() error
}

// InputTracker is implemented by stores that can prune the records of
// finished inputs. The core calls MarkInputDone when input seq of the key
// whose SHA-256 is keyHash has finished (all its actions completed and their
// records Put), passing lastCut: the id of the last checkpoint whose barrier
// the core had processed before the input finished (or the id of the
// checkpoint it restored from, if it has processed none since; 0 if neither).
//
// A later CheckpointComplete(id) with id > lastCut drops every record of that
// input. This is safe: Flink restores from the latest completed checkpoint or
// a newer one, checkpoint id was cut after the input finished, so its snapshot
// holds neither the input in flight nor in the queue and no restore from it
// or a later checkpoint replays the input. (A manual restore from an older
// savepoint re-runs such inputs for real, as with upstream pruning.)
//
// The cut, not the Flush, decides: the bridge flushes after the cut, and an
// input finishing between the two is still in flight in that checkpoint.
type InputTracker interface {
	MarkInputDone(kg int32, keyHash [32]byte, seq uint64, lastCut int64)
}

// InputSlot is a per-input cache that a store may fill so that it finds an
// input's records again without a lookup. The core keeps one slot per input
// in flight, sets it on every record of that input it Puts (Record.Slot) and
// hands it to MarkInputDoneIn when the input finishes; it reuses the slot
// (zeroed) only after that. A store that does not implement SlotTracker
// ignores it.
//
// INVARIANT: only the store reads or writes a slot's contents, under its own
// lock; the core only zeroes a slot it no longer hands out.
type InputSlot struct {
	in *kInput // the Kafka store's index entry of the input, once it has one
}

// Lender is an ActionStore that keeps no record past a Put or PutDurable
// except a running record Put (one it may hold back): it encodes the others
// before it returns. The caller may then reuse such a record, and what it
// refers to, as soon as the call returns.
type Lender interface {
	ActionStore
	LendsRecords()
}

// CutFlusher is an ActionStore whose Flush can be told the checkpoint id of
// the cut it follows (the bridge flushes right after the core's cut for
// checkpoint id): FlushCut(id) is Flush, after which the store may forget
// records of inputs done before that cut, and those done later as soon as
// they are marked done, since no later marker can need them.
type CutFlusher interface {
	FlushCut(checkpointID int64) (snapshot.Marker, error)
}

// SlotTracker is an InputTracker that uses InputSlots: the core calls
// MarkInputDoneIn, with the slot of the input's records, instead of
// MarkInputDone. slot may be nil.
type SlotTracker interface {
	InputTracker
	MarkInputDoneIn(slot *InputSlot, kg int32, keyHash [32]byte, seq uint64, lastCut int64)
}

// inputID names one input of one key.
type inputID struct {
	kg   int32
	hash [32]byte
	seq  uint64
}

func (k *RecordKey) input() inputID { return inputID{k.KeyGroup, k.KeyHash, k.Seq} }

// RestoredInputTracker is implemented by stores that can prune the records
// of inputs a restore no longer replays. After a restore the core knows, per
// key, the first input it will process again (the input in flight at the
// restored cut, else the first queued one, else the key's next sequence
// number): every input of that key with a smaller sequence number finished
// before the cut and is done. MarkInputDone never reports them (they do not
// run again), so without MarkDoneBelow their recovered records would stay
// held, and keep the Kafka marker back, for ever.
//
// MarkDoneBelow(kg, keyHash, seq, lastCut) marks every input of the key
// with a sequence number below seq as done with lastCut (normally the
// restored checkpoint's id), as MarkInputDone does for one input; a later
// CheckpointComplete(id) with id > lastCut drops their records. It covers
// the records the store holds when it is called (the recovered ones); it is
// cheap (no I/O, O(1) per call after the first) and safe to call from any
// goroutine while the store is in use.
type RestoredInputTracker interface {
	MarkDoneBelow(kg int32, keyHash [32]byte, seq uint64, lastCut int64)
}

// HoldHinter is an ActionStore that can tell, without a lookup and without
// its lock, that it holds no record of an input: a store that rebuilds its
// records once at startup (Kafka's Recover) holds records of a key only up
// to the highest input it recovered, since records this process Puts are of
// executions the core already knows about. The core skips Get on a first
// attempt when MayHold is false.
//
// MayHold(kg, keyHash, seq) must be true whenever Get of a record key of
// that input could succeed on a first attempt.
type HoldHinter interface {
	MayHold(kg int32, keyHash [32]byte, seq uint64) bool
}

// RunningLingerer is an ActionStore that holds a running record back for a
// while (the Kafka store's kafka.running.record.linger.ms), so that the
// completion of a short action replaces it before it is written.
// TakeRunningLinger hands that linger over to the caller: it returns the
// store's linger (0: the store writes running records at once, so there is
// nothing to hand over) and from then on the store writes every running
// record it is given at once. The caller, which knows when an action
// finishes, then Puts a running record only for an action still running a
// linger after its first unrecorded durable call, or at a barrier: most
// actions never need one. The core calls it once, before its first Put.
type RunningLingerer interface {
	TakeRunningLinger() time.Duration
}
