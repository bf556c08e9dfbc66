package statestore

import "github.com/flinkgo/flinkgo/snapshot"

// RecordVersion is the version of the action-state record format.
const RecordVersion = 1

// RecordKey identifies one action execution: the action Action triggered by
// event EventID while the key (whose SHA-256 is KeyHash) processed its input
// number Seq. Encoded unambiguously (fixed widths, length-prefixed name).
type RecordKey struct {
	KeyGroup int32
	KeyHash  [32]byte // SHA-256 of the key bytes
	Seq      uint64
	EventID  snapshot.UUID
	Action   string
}

// Status of an action execution.
type Status uint8

const (
	StatusRunning   Status = 1 // calls recorded so far; not finished
	StatusCompleted Status = 2 // finished; replay without running the body
)

// Scope of a memory update.
type Scope uint8

const (
	ScopeShortTerm Scope = 1
	ScopeSensory   Scope = 2
)

// MemUpdate is one memory write of an action, in the order it happened.
// Exactly one of: a set (no flag; Value is the new value), an object
// creation (Object, optionally Overwrite; Value nil), a delete (Delete only;
// Value nil). EncodeRecord rejects any other combination.
type MemUpdate struct {
	Scope     Scope
	Path      string
	Value     any  // value domain
	Object    bool // NewObject(path, Overwrite)
	Overwrite bool
	Delete    bool
}

// CallStatus of a durable call.
type CallStatus uint8

const (
	CallPending   CallStatus = 1 // written before a reconciled call runs
	CallSucceeded CallStatus = 2
	CallFailed    CallStatus = 3
)

// CallRecord is one durable call of an action execution. A pending or
// failed call has a nil Result; only a failed call has Error and ErrorKind; a
// succeeded call's Result is exactly one msgpack value (EncodeValue).
type CallRecord struct {
	CallID     string
	ArgsDigest [32]byte // SHA-256 of the canonical msgpack of the args
	Status     CallStatus
	Result     []byte // msgpack of the result (a nil result is msgpack nil)
	Error      string // failure message
	ErrorKind  uint8  // 0 retryable, 1 permanent, 2 needs a human
}

// Record is the value of one action-state record.
type Record struct {
	Key     RecordKey
	Status  Status
	Updates []MemUpdate // memory writes of the action, in order
	// Events sent, in order, ids and lineage as emitted; an _output_event
	// carries its row as Attrs["output"] ([]any in output-schema order).
	Events []snapshot.Event
	Calls  []CallRecord
	// Slot is the writer's per-input cache (see InputSlot), the same for
	// every record of one input; nil if the writer keeps none. Runtime
	// only: never encoded, never set on a decoded record.
	Slot *InputSlot
}
