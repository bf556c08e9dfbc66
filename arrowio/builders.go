package arrowio

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowWriter is the part shared by OutputBuilder and InputBuilder: Arrow
// builders for a schema whose user columns follow lead fixed columns, and
// an IPC encoder that reuses its output buffer and the encoded schema
// message across batches.
type rowWriter struct {
	schema    *arrow.Schema
	user      userColumns
	lead      int
	alloc     memory.Allocator
	rb        *array.RecordBuilder
	schemaMsg []byte
	out       bytes.Buffer
	rows      int
	plan      *rowPlan // AppendRow's, for the last input schema
	conv      []any    // AppendRow's scratch
	segs      []rowSeg // rows AppendRow took as they are (then the builders hold none)
	segRows   int
	pc        pieces   // flushTo's
	parts     [][]byte // flushTo's
}

func newRowWriter(schema *arrow.Schema, user userColumns, lead int, alloc memory.Allocator) *rowWriter {
	if alloc == nil {
		alloc = NewPoolAllocator(0)
	}
	return &rowWriter{
		schema:    schema,
		user:      user,
		lead:      lead,
		alloc:     alloc,
		rb:        array.NewRecordBuilder(alloc, schema),
		schemaMsg: SchemaMessage(schema),
	}
}

// check validates a row of user values without touching the builders.
func (w *rowWriter) check(values []any) error {
	if len(values) != len(w.user.cols) {
		return fmt.Errorf("%w: got %d values, the schema has %d columns", ErrValue, len(values), len(w.user.cols))
	}
	for j, c := range w.user.cols {
		if err := checkColumn(c, values[j]); err != nil {
			return err
		}
	}
	return nil
}

// checkColumn checks v against user column c: an error wrapping ErrValue
// that names the column, its type and v's Go type, or nil.
func checkColumn(c colSpec, v any) error {
	if e := checkValue(c.typ, v); e != nil {
		return fmt.Errorf("%w: column %q%s (%s): got Go type %s: %s", ErrValue, c.name, e.path, e.typ, e.goType, e.reason)
	}
	return nil
}

// appendUser appends checked user values.
func (w *rowWriter) appendUser(values []any) {
	for j, c := range w.user.cols {
		appendValue(c.typ, w.rb.Field(w.lead+j), values[j])
	}
	w.rows++
}

func (w *rowWriter) appendTS(i int, ts int64, hasTS bool) {
	b := w.rb.Field(i).(*array.Int64Builder)
	if hasTS {
		b.Append(ts)
	} else {
		b.AppendNull()
	}
}

// flush encodes the rows appended so far as one IPC stream (schema message,
// one record batch, end-of-stream marker) and resets the builders. The
// result aliases an internal buffer that the next flush overwrites.
func (w *rowWriter) flush() ([]byte, error) {
	w.out.Reset()
	err := w.flushTo(func(parts [][]byte, _ int) error {
		for _, b := range parts {
			w.out.Write(b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w.out.Bytes(), nil
}

// flushTo encodes as flush does, but hands the stream to write as the
// pieces it is made of, in order, and their total size: the record batch's
// buffers among them as they are, not copied. The pieces are valid only
// during the call; write's error is returned as it is.
func (w *rowWriter) flushTo(write func(parts [][]byte, size int) error) error {
	var rec arrow.RecordBatch
	sliced := w.segRows > 0
	if sliced {
		var err error
		if rec, err = w.segRecord(); err != nil {
			return err
		}
		w.clearSegs()
	} else {
		rec = w.rb.NewRecordBatch()
	}
	defer rec.Release()
	w.rows = 0
	p, err := ipc.GetRecordBatchPayload(rec, ipc.WithAllocator(w.alloc))
	if err != nil {
		return fmt.Errorf("arrowio: encoding a record batch: %w", err)
	}
	defer p.Release()
	w.pc.reset()
	if _, err := p.WritePayload(&w.pc); err != nil {
		return fmt.Errorf("arrowio: encoding a record batch: %w", err)
	}
	w.parts = append(w.parts[:0], w.schemaMsg)
	w.parts = w.pc.appendParts(w.parts)
	w.parts = append(w.parts, eos)
	size := len(w.schemaMsg) + w.pc.size + len(eos)
	err = write(w.parts, size)
	clear(w.parts) // the batch's buffers go back with rec and p
	if !sliced {
		w.reserveLike(rec)
	}
	return err
}

// pieces collects what the IPC writer writes: long writes (the record
// batch's buffers) as they are, short ones (the message header, lengths,
// padding, which the writer reuses) copied into one scratch array.
type pieces struct {
	small []byte
	ps    []piece
	size  int
}

// piece is a long write, or (b nil) the scratch bytes [from, to).
type piece struct {
	b        []byte
	from, to int
}

const longWrite = 512

func (c *pieces) reset() {
	c.small, c.size = c.small[:0], 0
	clear(c.ps)
	c.ps = c.ps[:0]
}

// Write implements io.Writer.
func (c *pieces) Write(b []byte) (int, error) {
	c.size += len(b)
	if len(b) >= longWrite {
		c.ps = append(c.ps, piece{b: b})
		return len(b), nil
	}
	from := len(c.small)
	c.small = append(c.small, b...)
	if n := len(c.ps); n > 0 && c.ps[n-1].b == nil && c.ps[n-1].to == from {
		c.ps[n-1].to = len(c.small) // extends the previous short run
	} else {
		c.ps = append(c.ps, piece{from: from, to: len(c.small)})
	}
	return len(b), nil
}

// appendParts appends the pieces, in order, to dst.
func (c *pieces) appendParts(dst [][]byte) [][]byte {
	for _, p := range c.ps {
		if p.b != nil {
			dst = append(dst, p.b)
		} else {
			dst = append(dst, c.small[p.from:p.to])
		}
	}
	return dst
}

// reserveLike sizes the (now empty) builders for a batch like rec, so that
// the next batch does not grow its buffers from nothing again, copying at
// every doubling (for rows of several KiB that copying was a fifth of the
// Go process's CPU).
func (w *rowWriter) reserveLike(rec arrow.RecordBatch) {
	n := int(rec.NumRows())
	for i, f := range w.rb.Fields() {
		f.Reserve(n)
		type dataReserver interface{ ReserveData(int) }
		if dr, ok := f.(dataReserver); ok {
			switch a := rec.Column(i).(type) {
			case *array.String:
				dr.ReserveData(len(a.ValueBytes()))
			case *array.Binary:
				dr.ReserveData(len(a.ValueBytes()))
			}
		}
	}
}

// OutputBuilder builds the OUTPUT batches of one agent. It is reused across
// batches: Append rows, Flush, repeat. Not safe for concurrent use.
type OutputBuilder struct{ w *rowWriter }

// NewOutputBuilder returns a builder for the output columns cols (see
// OutputSchema). A nil alloc means a private PoolAllocator, so that
// batch after batch reuses the same buffers.
func NewOutputBuilder(cols []Column, alloc memory.Allocator) (*OutputBuilder, error) {
	u, err := parseColumns(cols)
	if err != nil {
		return nil, err
	}
	s := arrow.NewSchema(u.arrowFields(fieldTS), nil)
	return &OutputBuilder{w: newRowWriter(s, u, 1, alloc)}, nil
}

// Schema returns the output schema (`_ts` first).
func (b *OutputBuilder) Schema() *arrow.Schema { return b.w.schema }

// SchemaMessage returns the encoded schema message for READY's
// output_schema. The caller must not modify it.
func (b *OutputBuilder) SchemaMessage() []byte { return b.w.schemaMsg }

// Columns returns the output columns with canonical Flink type names.
func (b *OutputBuilder) Columns() []Column { return b.w.user.columns() }

// Len returns the number of rows appended since the last Flush.
func (b *OutputBuilder) Len() int { return b.w.rows }

// AsIs returns how many of the pending rows were taken as they are
// (AppendRow of a row with the output's types and its own timestamp, not
// copied yet): all of them or none, except while the first rows come in.
func (b *OutputBuilder) AsIs() int { return b.w.segRows }

// DropAsIs forgets the pending rows if all were taken as they are (the
// caller sends them another way) and reports whether it did; otherwise it
// changes nothing.
func (b *OutputBuilder) DropAsIs() bool {
	w := b.w
	if w.segRows == 0 || w.segRows != w.rows {
		return false
	}
	w.rows = 0
	w.clearSegs()
	return true
}

// Append adds one output row: its timestamp (hasTS false: null) and one
// value per output column. Values are of the value domain (nil, bool,
// int64, float64, string, []byte, []any, map[string]any) plus time.Time for
// TIMESTAMP, TIMESTAMP_LTZ and DATE and an exact decimal string (or an
// integer) for DECIMAL; other Go integer and float types are accepted where
// they fit. A value that does not fit its column is an error wrapping
// ErrValue that names the column, its type and the Go type; the row is then
// not appended and the builder is unchanged.
//
// TIMESTAMP values are stored as t.UnixMicro() (the UTC wall clock, as
// input rows deliver them); DATE values as the calendar date of t in t's
// own location; sub-microsecond digits are dropped.
func (b *OutputBuilder) Append(ts int64, hasTS bool, values []any) error {
	if err := b.w.check(values); err != nil {
		return err
	}
	b.w.materialize()
	b.w.appendTS(0, ts, hasTS)
	b.w.appendUser(values)
	return nil
}

// Flush returns the rows appended since the last Flush as one IPC stream,
// the payload of an OUTPUT frame, and resets the builder. The bytes alias
// an internal buffer: they are valid until the next Flush.
func (b *OutputBuilder) Flush() ([]byte, error) { return b.w.flush() }

// FlushTo is Flush without the copy into one buffer: it calls write with
// the pieces of the same IPC stream, in order, and their total size (the
// payload's length). The pieces alias the builders' memory and, for rows
// taken by AppendRow as they are, the input batches' memory: they are
// valid only during the call, and those batches must not be released
// before it returns. write's error is returned as it is. The builder is
// reset either way.
func (b *OutputBuilder) FlushTo(write func(parts [][]byte, size int) error) error {
	return b.w.flushTo(write)
}

// Release frees the builder's memory. The builder must not be used after.
func (b *OutputBuilder) Release() { b.w.rb.Release() }

// InputBuilder builds DATA batches the way the JVM operator does. It exists
// for tests, benchmarks and tools; the runtime only decodes DATA. Not safe
// for concurrent use.
type InputBuilder struct{ w *rowWriter }

// NewInputBuilder returns a builder for input batches with user columns
// cols (see InputSchemaFor). A nil alloc means a private PoolAllocator.
func NewInputBuilder(cols []Column, alloc memory.Allocator) (*InputBuilder, error) {
	u, err := parseColumns(cols)
	if err != nil {
		return nil, err
	}
	s := arrow.NewSchema(u.arrowFields(fieldKeyGroup, fieldKey, fieldTS), nil)
	return &InputBuilder{w: newRowWriter(s, u, 3, alloc)}, nil
}

// Schema returns the input schema (fixed columns first).
func (b *InputBuilder) Schema() *arrow.Schema { return b.w.schema }

// SchemaMessage returns the encoded schema message for OPEN's
// input_schema. The caller must not modify it.
func (b *InputBuilder) SchemaMessage() []byte { return b.w.schemaMsg }

// Len returns the number of rows appended since the last Flush.
func (b *InputBuilder) Len() int { return b.w.rows }

// Append adds one input row; values are as in OutputBuilder.Append.
func (b *InputBuilder) Append(keyGroup int32, key []byte, ts int64, hasTS bool, values []any) error {
	if err := b.w.check(values); err != nil {
		return err
	}
	b.w.rb.Field(0).(*array.Int32Builder).Append(keyGroup)
	b.w.rb.Field(1).(*array.BinaryBuilder).Append(key)
	b.w.appendTS(2, ts, hasTS)
	b.w.appendUser(values)
	return nil
}

// Flush returns the rows appended since the last Flush as one IPC stream,
// the payload of a DATA frame; valid until the next Flush.
func (b *InputBuilder) Flush() ([]byte, error) { return b.w.flush() }

// Release frees the builder's memory.
func (b *InputBuilder) Release() { b.w.rb.Release() }
