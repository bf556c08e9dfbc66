package snapshot

// FormatVersion is the version of the key-group section format written by
// EncodeSection. Readers accept exactly the versions they know.
const FormatVersion = 1

// UUID is a 16-byte event identifier. The zero UUID means "none".
type UUID [16]byte

// IsZero reports whether u is the zero UUID.
func (u UUID) IsZero() bool { return u == UUID{} }

// KeyGroupRange is an inclusive range of Flink key groups, as in Flink's
// KeyGroupRange.
type KeyGroupRange struct {
	Start, End int32
}

// Contains reports whether kg lies in r.
func (r KeyGroupRange) Contains(kg int32) bool { return kg >= r.Start && kg <= r.End }

// MemItem is one entry of a flat memory map.
type MemItem struct {
	Path   string // "."-separated path
	Object bool   // an object node; Value is nil
	Value  any    // value domain (see docs/architecture.md)
}

// Event is an event as stored in a snapshot.
type Event struct {
	ID             UUID
	Type           string
	Attrs          map[string]any // value domain; encoded with sorted keys
	UpstreamID     UUID           // zero = none
	UpstreamAction string
}

// Field is one column of an input row.
type Field struct {
	Name  string
	Value any
}

// Input is one input record of a key.
type Input struct {
	Seq       uint64 // per-key input sequence number, from 0
	Timestamp int64  // record timestamp in ms, valid if HasTS
	HasTS     bool
	EventID   UUID    // id of the input's _input_event
	Row       []Field // in input-schema order
}

// Task is an action invocation that has not completed.
type Task struct {
	Action string
	Event  Event // for an _input_event the row is InFlight.Input.Row
}

// InFlight is the input a key is processing at the cut.
type InFlight struct {
	Input   Input
	Sensory []MemItem // sorted by Path
	Tasks   []Task    // FIFO; the head was running (or next to run) at the cut
	Emitted uint32    // number of events already sent while processing Input
}

// KeyState is everything flinkgo keeps for one key.
type KeyState struct {
	Key       []byte
	NextSeq   uint64    // next input sequence number to assign
	ShortTerm []MemItem // sorted by Path
	InFlight  *InFlight // nil when the key is idle
	Queued    []Input   // FIFO, not started
}

// Section is the state of one key group.
type Section struct {
	KeyGroup int32
	Keys     []KeyState // sorted by Key (bytes.Compare)
}

// Marker is the recovery marker of one subtask at one checkpoint: where the
// action-state log must be read from after a restore.
type Marker struct {
	Version      int    // MarkerVersion
	Backend      string // "none" | "memory" | "kafka"
	Topic        string // Kafka topic name ("" otherwise)
	TopicID      UUID   // Kafka topic id (zero otherwise)
	CheckpointID int64
	Offsets      map[int32]int64 // partition -> first offset still needed
}

// MarkerVersion is the version of the recovery marker format.
const MarkerVersion = 1
