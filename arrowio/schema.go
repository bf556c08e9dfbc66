package arrowio

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Errors of this package. Every error returned wraps one of them, so that the
// bridge can map it to a protocol error code (bad_schema, malformed_frame).
var (
	// ErrSchema: a schema or type outside the protocol's type mapping, or a
	// batch whose schema is not the one announced in OPEN.
	ErrSchema = errors.New("arrowio: unsupported schema")
	// ErrMalformed: bytes that are not a valid self-contained Arrow IPC
	// stream of exactly one record batch.
	ErrMalformed = errors.New("arrowio: malformed Arrow IPC stream")
	// ErrValue: a Go value that does not fit its output column.
	ErrValue = errors.New("arrowio: value does not fit its column")
)

// Names of the fixed leading columns.
const (
	ColKeyGroup  = "_key_group"
	ColKey       = "_key"
	ColTimestamp = "_ts"
)

// eos is the IPC end-of-stream marker.
var eos = []byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}

// colSpec is one user column.
type colSpec struct {
	name string
	typ  *typeSpec
}

// userColumns holds the user columns of a schema and a name index.
type userColumns struct {
	cols  []colSpec
	index map[string]int
}

func (u *userColumns) add(name string, t *typeSpec) error {
	if u.index == nil {
		u.index = map[string]int{}
	}
	if name == "" {
		return fmt.Errorf("%w: user column %d has an empty name", ErrSchema, len(u.cols))
	}
	if _, dup := u.index[name]; dup || name == ColKeyGroup || name == ColKey || name == ColTimestamp {
		return fmt.Errorf("%w: column name %q is used twice (or is reserved)", ErrSchema, name)
	}
	u.index[name] = len(u.cols)
	u.cols = append(u.cols, colSpec{name: name, typ: t})
	return nil
}

// columns returns the user columns with their Flink type names.
func (u *userColumns) columns() []Column {
	out := make([]Column, len(u.cols))
	for i, c := range u.cols {
		out[i] = Column{Name: c.name, Type: c.typ.String()}
	}
	return out
}

// InputSchema is a validated input batch schema (see docs/protocol.md,
// "Input batch schema"). It is immutable and safe for concurrent use.
type InputSchema struct {
	schema *arrow.Schema
	user   userColumns
}

// NewInputSchema validates s: `_key_group` int32 not null, `_key` binary
// not null, `_ts` int64, then user columns of the type mapping with unique
// names. The error wraps ErrSchema and names the offending column and type.
func NewInputSchema(s *arrow.Schema) (*InputSchema, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no schema", ErrSchema)
	}
	if !s.IsNativeEndian() {
		return nil, fmt.Errorf("%w: schema is not little-endian", ErrSchema)
	}
	fixed := []struct {
		name     string
		typ      arrow.DataType
		nullable bool // whether a nullable column is allowed
	}{
		{ColKeyGroup, arrow.PrimitiveTypes.Int32, false},
		{ColKey, arrow.BinaryTypes.Binary, false},
		{ColTimestamp, arrow.PrimitiveTypes.Int64, true},
	}
	if s.NumFields() < len(fixed) {
		return nil, fmt.Errorf("%w: input schema has %d columns; it must start with _key_group int32, _key binary, _ts int64", ErrSchema, s.NumFields())
	}
	for i, want := range fixed {
		f := s.Field(i)
		if f.Name != want.name || !arrow.TypeEqual(f.Type, want.typ) {
			return nil, fmt.Errorf("%w: input column %d is %q %s, want %q %s", ErrSchema, i, f.Name, f.Type, want.name, want.typ)
		}
		if f.Nullable && !want.nullable {
			return nil, fmt.Errorf("%w: input column %q must be declared not null", ErrSchema, f.Name)
		}
	}
	is := &InputSchema{schema: s}
	for i := len(fixed); i < s.NumFields(); i++ {
		f := s.Field(i)
		t, err := specFromArrow(f.Type, f.Name, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: input %v", ErrSchema, err)
		}
		if err := is.user.add(f.Name, t); err != nil {
			return nil, err
		}
	}
	return is, nil
}

// ReadInputSchema decodes and validates the input_schema bytes of OPEN (an
// IPC schema message, see ReadSchemaMessage).
func ReadInputSchema(msg []byte) (*InputSchema, error) {
	s, err := ReadSchemaMessage(msg)
	if err != nil {
		return nil, err
	}
	return NewInputSchema(s)
}

// Schema returns the Arrow schema, fixed columns included.
func (s *InputSchema) Schema() *arrow.Schema { return s.schema }

// Columns returns the user columns with their Flink type names.
func (s *InputSchema) Columns() []Column { return s.user.columns() }

// NumFields returns the number of user columns.
func (s *InputSchema) NumFields() int { return len(s.user.cols) }

// Name returns the name of user column i.
func (s *InputSchema) Name(i int) string { return s.user.cols[i].name }

// Index returns the position of the user column called name, or -1.
func (s *InputSchema) Index(name string) int {
	if cols := s.user.cols; len(cols) <= 8 {
		// Faster than hashing the name, for the few columns most inputs have.
		for i := range cols {
			if cols[i].name == name {
				return i
			}
		}
		return -1
	}
	if i, ok := s.user.index[name]; ok {
		return i
	}
	return -1
}

// parseColumns parses the Flink types of cols.
func parseColumns(cols []Column) (userColumns, error) {
	var u userColumns
	for _, c := range cols {
		t, err := parseFlinkType(c.Type)
		if err != nil {
			return u, fmt.Errorf("%w: column %q: %v", ErrSchema, c.Name, err)
		}
		if err := u.add(c.Name, t); err != nil {
			return u, err
		}
	}
	return u, nil
}

func (u *userColumns) arrowFields(fixed ...arrow.Field) []arrow.Field {
	fs := append([]arrow.Field(nil), fixed...)
	for _, c := range u.cols {
		fs = append(fs, arrow.Field{Name: c.name, Type: c.typ.arrow, Nullable: true})
	}
	return fs
}

var (
	fieldKeyGroup = arrow.Field{Name: ColKeyGroup, Type: arrow.PrimitiveTypes.Int32}
	fieldKey      = arrow.Field{Name: ColKey, Type: arrow.BinaryTypes.Binary}
	fieldTS       = arrow.Field{Name: ColTimestamp, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
)

// OutputSchema returns the Arrow schema of OUTPUT batches for the agent's
// output columns: `_ts` int64 nullable, then one nullable column per entry
// of cols, typed by its Flink SQL type name (see ParseType).
func OutputSchema(cols []Column) (*arrow.Schema, error) {
	u, err := parseColumns(cols)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(u.arrowFields(fieldTS), nil), nil
}

// InputSchemaFor returns the Arrow input schema the JVM builds for a record
// type with the given user columns: `_key_group`, `_key`, `_ts`, then cols.
func InputSchemaFor(cols []Column) (*arrow.Schema, error) {
	u, err := parseColumns(cols)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(u.arrowFields(fieldKeyGroup, fieldKey, fieldTS), nil), nil
}

// SchemaMessage encodes s as one encapsulated IPC schema message (the first
// message of an IPC stream, without end-of-stream marker): the bytes of
// OPEN's input_schema and READY's output_schema.
func SchemaMessage(s *arrow.Schema) []byte {
	p := ipc.GetSchemaPayload(s, memory.DefaultAllocator)
	defer p.Release()
	var buf bytes.Buffer
	if _, err := p.WritePayload(&buf); err != nil {
		panic(err) // bytes.Buffer does not fail
	}
	return buf.Bytes()
}

// ReadSchemaMessage decodes an IPC schema message as written by
// SchemaMessage; an end-of-stream marker after it is allowed. Types outside
// the type mapping are rejected (ErrSchema).
func ReadSchemaMessage(b []byte) (s *arrow.Schema, err error) {
	m, next, isEOS, err := nextMessage(b, 0)
	if err != nil {
		return nil, err
	}
	if isEOS || m.header != msgSchema {
		return nil, fmt.Errorf("%w: expected a schema message", ErrMalformed)
	}
	if rest := b[next:]; len(rest) != 0 && !bytes.Equal(rest, eos) {
		return nil, fmt.Errorf("%w: %d unexpected bytes after the schema message", ErrMalformed, len(rest))
	}
	return parseSchema(m.raw)
}

// parseSchema lets arrow-go decode a schema message checked by nextMessage.
func parseSchema(raw []byte) (s *arrow.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%w: schema: %v", ErrMalformed, r)
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(raw), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrMalformed, err)
	}
	defer r.Release()
	return r.Schema(), nil
}
