package operator

import (
	"encoding/hex"
	"fmt"

	"github.com/flinkgo/flinkgo/snapshot"
)

// Built-in event types, as in Flink Agents.
const (
	InputEventType  = "_input_event"
	OutputEventType = "_output_event"
)

// UUID is a 16-byte event id.
type UUID = snapshot.UUID

// FormatUUID renders u in the canonical 8-4-4-4-12 form.
func FormatUUID(u UUID) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// Event is what actions react to and send.
//
// An _input_event carries the input row (see Input); an _output_event carries
// an output row (see Output); other events carry Attrs. ID and lineage are
// assigned by the runtime: an action sends events with neither.
type Event struct {
	ID             UUID
	Type           string
	Attrs          map[string]any // value domain
	UpstreamID     UUID           // the event whose action sent this one
	UpstreamAction string         // the action that sent this one

	row    Row   // _input_event
	output []any // _output_event, in output-schema order
	outRow Row   // _output_event of NewOutputRow (output is made from it when asked for)
}

// NewEvent returns an event of type typ with attributes attrs. The map is
// not copied: do not change it after sending the event.
func NewEvent(typ string, attrs map[string]any) *Event {
	return &Event{Type: typ, Attrs: attrs}
}

// NewOutput returns an _output_event carrying one output row, values in the
// order of the agent's Output columns.
func NewOutput(values ...any) *Event {
	return &Event{Type: OutputEventType, output: values}
}

// NewOutputRow returns an _output_event whose output row is r: r's columns,
// by position, are the values of the agent's Output columns. It is the
// cheap way to emit an input row (ev.Input() as it is) or any other Row:
// nothing is boxed into an []any, and the bridge copies a row of an input
// batch into the OUTPUT batch column by column, straight from the input's
// Arrow buffers. r must not change after it is sent. A column that does not
// fit its output column fails the subtask, as it does with NewOutput.
func NewOutputRow(r Row) *Event {
	return &Event{Type: OutputEventType, outRow: r}
}

// Input returns the row of an _input_event, nil for other events.
func (e *Event) Input() Row { return e.row }

// Output returns the row of an _output_event, nil for other events. For
// an event of NewOutputRow it is made from the row (once) on first call.
func (e *Event) Output() []any {
	if e.output == nil && e.outRow != nil {
		e.output = RowValues(e.outRow)
	}
	return e.output
}

// RowValues returns the values of r in a new slice, strings shared with
// the input batch where they are never reused (as GetView returns them).
func RowValues(r Row) []any {
	vals := make([]any, r.NumFields())
	vr, _ := r.(ViewRow)
	for i := range vals {
		if vr != nil {
			vals[i] = vr.ValueView(i)
		} else {
			vals[i] = r.Value(i)
		}
	}
	return vals
}

// String is for logs.
func (e *Event) String() string {
	return fmt.Sprintf("%s{id=%s}", e.Type, FormatUUID(e.ID))
}

// toSnapshot converts e for a snapshot or an action-state record. The row of
// an _input_event is not included (it is stored once, with the input).
func (e *Event) toSnapshot() snapshot.Event { return e.toSnapshotIn(nil) }

// toSnapshotIn is toSnapshot; an _output_event's row goes into out (an
// empty map the caller reuses) instead of a new map, if out is not nil.
func (e *Event) toSnapshotIn(out map[string]any) snapshot.Event {
	se := snapshot.Event{ID: e.ID, Type: e.Type, Attrs: e.Attrs, UpstreamID: e.UpstreamID, UpstreamAction: e.UpstreamAction}
	if e.Type == OutputEventType {
		if out == nil {
			out = make(map[string]any, 1)
		}
		out["output"] = e.Output()
		se.Attrs = out
	}
	return se
}

// eventFromSnapshot is the inverse of toSnapshot; row is the input's row for
// an _input_event.
func eventFromSnapshot(se *snapshot.Event, row Row) (*Event, error) {
	e := &Event{ID: se.ID, Type: se.Type, Attrs: se.Attrs, UpstreamID: se.UpstreamID, UpstreamAction: se.UpstreamAction}
	switch se.Type {
	case InputEventType:
		e.row, e.Attrs = row, nil
	case OutputEventType:
		out, ok := se.Attrs["output"].([]any)
		if !ok && se.Attrs["output"] != nil {
			return nil, fmt.Errorf("operator: stored %s %s has no output row", se.Type, FormatUUID(se.ID))
		}
		e.output, e.Attrs = out, nil
	}
	return e, nil
}

// Row is an input record: named columns with values normalised to the value
// domain plus time.Time (see docs/architecture.md). Rows from the bridge are
// zero-copy views into an Arrow batch.
type Row interface {
	NumFields() int
	Name(i int) string
	Value(i int) any
	Index(name string) int // -1 if there is no such column
}

// Get returns the value of the column called name.
func Get(r Row, name string) (any, bool) {
	i := r.Index(name)
	if i < 0 {
		return nil, false
	}
	return r.Value(i), true
}

// ViewRow is implemented by rows that can return a STRING column without
// copying it (arrowio.Row, in the bridge). See GetView.
type ViewRow interface {
	ValueView(i int) any
}

// GetView is Get for hot paths: a STRING column may come back sharing the
// input batch's memory instead of as a copy (rows that are not a ViewRow
// return what Value does). Such a string is valid forever, like a
// substring, but keeps the whole input batch (up to go.batch.size rows) in
// memory while it is referenced: use it for values the action reads,
// compares or emits, and clone (strings.Clone) one that it keeps beyond
// the action. Memory.Set clones a string value it is given; strings inside
// a list or an object it stores as they are.
func GetView(r Row, name string) (any, bool) {
	i := r.Index(name)
	if i < 0 {
		return nil, false
	}
	if vr, ok := r.(ViewRow); ok {
		return vr.ValueView(i), true
	}
	return r.Value(i), true
}

// GetInt64 returns an integer column; an error names the column when it is
// missing or of another type.
func GetInt64(r Row, name string) (int64, error) {
	v, ok := Get(r, name)
	if !ok {
		return 0, fmt.Errorf("operator: input has no column %q", name)
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("operator: column %q is %T, not an integer", name, v)
	}
	return n, nil
}

// GetFloat64 returns a floating point column (integers are converted).
func GetFloat64(r Row, name string) (float64, error) {
	v, ok := Get(r, name)
	if !ok {
		return 0, fmt.Errorf("operator: input has no column %q", name)
	}
	switch n := v.(type) {
	case float64:
		return n, nil
	case int64:
		return float64(n), nil
	}
	return 0, fmt.Errorf("operator: column %q is %T, not a number", name, v)
}

// GetString returns a string column.
func GetString(r Row, name string) (string, error) {
	v, ok := Get(r, name)
	if !ok {
		return "", fmt.Errorf("operator: input has no column %q", name)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("operator: column %q is %T, not a string", name, v)
	}
	return s, nil
}

// FieldsRow is a Row backed by a slice of fields; restored inputs use it.
type FieldsRow []snapshot.Field

func (r FieldsRow) NumFields() int     { return len(r) }
func (r FieldsRow) Name(i int) string  { return r[i].Name }
func (r FieldsRow) Value(i int) any    { return r[i].Value }
func (r FieldsRow) Index(n string) int { return fieldsIndex(r, n) }

func fieldsIndex(r FieldsRow, name string) int {
	for i := range r {
		if r[i].Name == name {
			return i
		}
	}
	return -1
}

// materialize copies a row out of whatever backs it (an Arrow batch).
func materialize(r Row) []snapshot.Field {
	if fr, ok := r.(FieldsRow); ok {
		return fr
	}
	n := r.NumFields()
	out := make([]snapshot.Field, n)
	for i := 0; i < n; i++ {
		out[i] = snapshot.Field{Name: r.Name(i), Value: cloneValue(r.Value(i))}
	}
	return out
}

// cloneValue deep-copies byte slices, which may point into an Arrow buffer.
func cloneValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return append([]byte(nil), x...)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = cloneValue(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	}
	return v
}

// Releaser is implemented by rows that pin a buffer (an Arrow batch). The
// core calls Release once it no longer needs the row.
type Releaser interface{ Release() }

// Retainer is implemented by Releaser rows that can outlive their input:
// Retain returns a row with the same values that stays valid until its own
// Release, after the input's. The core retains an input row emitted with
// NewOutputRow and hands it on in Emit.Row; when the action that emits it
// ends the input, the first such output takes over the input's own hold
// instead (no Retain, and the input's end does not Release it). A Retainer
// should be comparable (a pointer, say): the core tells the input's row by
// ==, and a row of a type that is not comparable is always retained.
type Retainer interface{ Retain() Row }
