package arrowio

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Batch is one decoded DATA batch: n rows of key group, key, timestamp and
// user columns, read in place from the Arrow buffers.
//
// Lifetime: the byte slices returned by Key and by the zero-copy Row getters
// (Bytes), and the *Row values themselves, are valid until Release. After
// Release the Batch and its rows are recycled; using a Row afterwards panics.
// Values returned by Row.Value, Str, Time and Decimal are independent
// copies and stay valid forever. Strings returned by Row.StrView and
// Row.ValueView share the batch's bytes when its decoder was told they are
// never reused once such a string is out (Decoder.ShareInput, Lent), and
// are copies otherwise: valid forever either way.
//
// A Batch is read-only: concurrent reads are safe; Release must happen once,
// after all reads.
type Batch struct {
	rec    arrow.RecordBatch
	schema *InputSchema
	n      int
	gen    uint64      // incremented on Release; rows carry the value they were made with
	shared bool        // the bytes are not reused once lent: StrView may alias them
	lent   atomic.Bool // a string or slice sharing the bytes was handed out (Lent)

	kg      []int32
	keyOffs []int32
	keyData []byte
	ts      []int64
	tsValid []byte // nil: no null timestamps

	cols []column
	rows []Row
}

// column is a user column with typed views of its Arrow buffers.
type column struct {
	spec  *typeSpec
	arr   arrow.Array
	valid []byte // validity bitmap; nil: no nulls

	bools *array.Boolean
	i8    []int8
	i16   []int16
	i32   []int32 // int32 and date32
	i64   []int64 // int64 and timestamps
	f32   []float32
	f64   []float64
	offs  []int32 // utf8, binary
	data  []byte  // utf8, binary
}

var (
	batchPool = sync.Pool{New: func() any { return new(Batch) }}
	specInt32 = newSpec(&typeSpec{kind: kindInt32})
	specInt64 = newSpec(&typeSpec{kind: kindInt64})
)

// newBatch validates rec against schema and builds the views. It takes its
// own reference to rec.
func newBatch(schema *InputSchema, rec arrow.RecordBatch, shared bool) (b *Batch, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%w: record batch: %v", ErrMalformed, r)
		}
	}()
	n64 := rec.NumRows()
	if int(rec.NumCols()) != 3+len(schema.user.cols) {
		return nil, fmt.Errorf("%w: record batch has %d columns, schema %d", ErrMalformed, rec.NumCols(), 3+len(schema.user.cols))
	}
	n := int(n64)
	for i, c := range rec.Columns() {
		if c.Len() != n {
			return nil, fmt.Errorf("%w: column %q has %d rows, the batch %d", ErrMalformed, rec.Schema().Field(i).Name, c.Len(), n)
		}
	}
	kgArr, ok1 := rec.Column(0).(*array.Int32)
	keyArr, ok2 := rec.Column(1).(*array.Binary)
	tsArr, ok3 := rec.Column(2).(*array.Int64)
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("%w: unexpected array types for the fixed columns", ErrMalformed)
	}
	if kgArr.NullN() != 0 || keyArr.NullN() != 0 {
		return nil, fmt.Errorf("%w: null in %s or %s", ErrMalformed, ColKeyGroup, ColKey)
	}
	if err := checkArray(specInt32, kgArr, ColKeyGroup); err != nil {
		return nil, err
	}
	if err := checkArray(specInt64, tsArr, ColTimestamp); err != nil {
		return nil, err
	}
	kd := keyArr.Data()
	keyData := bufBytes(kd.Buffers()[2])
	keyOffs, err := checkOffsets(kd.Buffers()[1], n, len(keyData))
	if err != nil {
		return nil, fmt.Errorf("column %q: %w", ColKey, err)
	}

	b = batchPool.Get().(*Batch)
	b.rec, b.schema, b.n, b.shared = rec, schema, n, shared
	b.kg = kgArr.Int32Values()
	b.keyOffs, b.keyData = keyOffs, keyData
	b.ts = tsArr.Int64Values()
	b.tsValid = validity(tsArr)
	if cap(b.cols) < len(schema.user.cols) {
		b.cols = make([]column, len(schema.user.cols))
	}
	b.cols = b.cols[:len(schema.user.cols)]
	for j, cs := range schema.user.cols {
		a := rec.Column(3 + j)
		if err := checkArray(cs.typ, a, cs.name); err != nil {
			b.recycle()
			return nil, err
		}
		b.cols[j] = makeColumn(cs.typ, a)
	}
	if cap(b.rows) < n {
		b.rows = make([]Row, n)
	}
	b.rows = b.rows[:n]
	for i := range b.rows {
		b.rows[i] = Row{b: b, i: i, gen: b.gen}
	}
	rec.Retain()
	return b, nil
}

func validity(a arrow.Array) []byte {
	if a.NullN() == 0 {
		return nil
	}
	v := bufBytes(a.Data().Buffers()[0])
	if len(v) == 0 {
		return nil
	}
	return v
}

func makeColumn(t *typeSpec, a arrow.Array) column {
	c := column{spec: t, arr: a, valid: validity(a)}
	switch t.kind {
	case kindBool:
		c.bools = a.(*array.Boolean)
	case kindInt8:
		c.i8 = a.(*array.Int8).Int8Values()
	case kindInt16:
		c.i16 = a.(*array.Int16).Int16Values()
	case kindInt32:
		c.i32 = a.(*array.Int32).Int32Values()
	case kindInt64:
		c.i64 = a.(*array.Int64).Int64Values()
	case kindFloat32:
		c.f32 = a.(*array.Float32).Float32Values()
	case kindFloat64:
		c.f64 = a.(*array.Float64).Float64Values()
	case kindDate:
		c.i32 = arrow.Int32Traits.CastFromBytes(bufBytes(a.Data().Buffers()[1]))[:a.Len()]
	case kindTimestamp, kindTimestampLTZ:
		c.i64 = arrow.Int64Traits.CastFromBytes(bufBytes(a.Data().Buffers()[1]))[:a.Len()]
	case kindString, kindBinary:
		d := a.Data()
		c.data = bufBytes(d.Buffers()[2])
		if a.Len() > 0 {
			c.offs = arrow.Int32Traits.CastFromBytes(bufBytes(d.Buffers()[1]))[:a.Len()+1]
		}
	}
	return c
}

func (c *column) isNull(i int) bool {
	return c.valid != nil && c.valid[i>>3]&(1<<(i&7)) == 0
}

// Len returns the number of rows.
func (b *Batch) Len() int { return b.n }

// Schema returns the batch's input schema.
func (b *Batch) Schema() *InputSchema { return b.schema }

// KeyGroup returns the Flink key group of row i.
func (b *Batch) KeyGroup(i int) int32 { return b.kg[i] }

// Key returns the key bytes of row i. The slice aliases the batch's memory
// (valid until Release); its capacity ends with the key, so appending to it
// copies.
func (b *Batch) Key(i int) []byte {
	s, e := b.keyOffs[i], b.keyOffs[i+1]
	return b.keyData[s:e:e]
}

// Timestamp returns the record timestamp of row i in milliseconds, and false
// if the row has none.
func (b *Batch) Timestamp(i int) (int64, bool) {
	if b.tsValid != nil && b.tsValid[i>>3]&(1<<(i&7)) == 0 {
		return 0, false
	}
	return b.ts[i], true
}

// Row returns the user columns of row i as a row view (zero-copy; valid
// until Release).
func (b *Batch) Row(i int) *Row { return &b.rows[i] }

// Release returns the batch's memory. The batch and its rows must not be
// used afterwards.
func (b *Batch) Release() {
	if b.rec == nil {
		panic("arrowio: Batch released twice")
	}
	b.rec.Release()
	b.recycle()
}

// Lent reports whether a value sharing the batch's bytes has been handed
// out: a string of StrView or ValueView, or a slice of Bytes, on a batch
// whose decoder shares its input (Decoder.ShareInput). Such a string is
// valid forever, so the bytes passed to DecodeBatch must then never be
// reused; if Lent is false when the batch is released, they may be. Call it
// before Release.
func (b *Batch) Lent() bool { return b.lent.Load() }

// lend notes that a shared string or slice of the batch's bytes was handed
// out (an atomic store only the first time: rows are read concurrently).
func (b *Batch) lend() {
	if !b.lent.Load() {
		b.lent.Store(true)
	}
}

func (b *Batch) recycle() {
	b.gen++
	b.rec, b.schema, b.shared = nil, nil, false
	b.lent.Store(false)
	b.kg, b.keyOffs, b.keyData, b.ts, b.tsValid = nil, nil, nil, nil, nil
	clear(b.cols)
	b.cols = b.cols[:0]
	clear(b.rows)
	b.rows = b.rows[:0]
	batchPool.Put(b)
}

// Row is a view of the user columns of one row of a Batch. It satisfies the
// operator's Row interface (NumFields, Name, Value, Index) and offers typed
// getters for hot paths. The typed getters panic if the column has another
// type, like reflect.Value does; Value never panics.
type Row struct {
	b   *Batch
	i   int
	gen uint64
}

// Pos returns the row's position in its batch.
func (r *Row) Pos() int { return r.i }

func (r *Row) check() {
	if r.b.gen != r.gen {
		panic("arrowio: Row used after its Batch was released")
	}
}

func (r *Row) col(j int) *column {
	r.check()
	return &r.b.cols[j]
}

// Schema returns the input schema of the row's batch: the decoder's, the
// same pointer for every row it decodes, so that a check of the columns can
// be done once per schema rather than once per row.
func (r *Row) Schema() *InputSchema { r.check(); return r.b.schema }

// NumFields returns the number of user columns.
func (r *Row) NumFields() int { r.check(); return len(r.b.cols) }

// Name returns the name of user column j.
func (r *Row) Name(j int) string { r.check(); return r.b.schema.user.cols[j].name }

// Index returns the position of the user column called name, or -1.
func (r *Row) Index(name string) int { r.check(); return r.b.schema.Index(name) }

// Value returns the value of user column j, normalised: integers as int64,
// floats as float64, STRING as string, BYTES as []byte, DECIMAL as its exact
// decimal string, TIMESTAMP, TIMESTAMP_LTZ and DATE as time.Time in UTC,
// ARRAY as []any, ROW as map[string]any, null as nil. The result is a copy
// that outlives the batch.
func (r *Row) Value(j int) any {
	c := r.col(j)
	i := r.i
	if c.isNull(i) {
		return nil
	}
	switch c.spec.kind {
	case kindInt8, kindInt16, kindInt32, kindInt64:
		return r.Int64(j)
	case kindFloat32, kindFloat64:
		return r.Float64(j)
	case kindString:
		return strAt(c, i, false)
	case kindBinary:
		return append([]byte{}, c.data[c.offs[i]:c.offs[i+1]]...)
	}
	return valueAt(c.spec, c.arr, i)
}

// IsNull reports whether user column j is null in this row.
func (r *Row) IsNull(j int) bool { return r.col(j).isNull(r.i) }

func (r *Row) wrongType(j int, want string) string {
	return fmt.Sprintf("arrowio: column %q has type %s, not %s", r.Name(j), r.b.cols[j].spec, want)
}

// Bool returns a BOOLEAN column (false if null).
func (r *Row) Bool(j int) bool {
	c := r.col(j)
	if c.spec.kind != kindBool {
		panic(r.wrongType(j, "BOOLEAN"))
	}
	return !c.isNull(r.i) && c.bools.Value(r.i)
}

// Int64 returns a TINYINT, SMALLINT, INT or BIGINT column widened to int64
// (0 if null).
func (r *Row) Int64(j int) int64 {
	c := r.col(j)
	switch c.spec.kind {
	case kindInt64:
		return c.i64[r.i]
	case kindInt32:
		return int64(c.i32[r.i])
	case kindInt16:
		return int64(c.i16[r.i])
	case kindInt8:
		return int64(c.i8[r.i])
	}
	panic(r.wrongType(j, "an integer type"))
}

// Float64 returns a FLOAT or DOUBLE column as float64 (0 if null).
func (r *Row) Float64(j int) float64 {
	c := r.col(j)
	switch c.spec.kind {
	case kindFloat64:
		return c.f64[r.i]
	case kindFloat32:
		return float64(c.f32[r.i])
	}
	panic(r.wrongType(j, "FLOAT or DOUBLE"))
}

// Bytes returns a STRING or BYTES column without copying: the slice aliases
// the batch's memory and is valid until Release (nil if null).
func (r *Row) Bytes(j int) []byte {
	c := r.col(j)
	if c.spec.kind != kindString && c.spec.kind != kindBinary {
		panic(r.wrongType(j, "STRING or BYTES"))
	}
	if c.isNull(r.i) {
		return nil
	}
	if r.b.shared {
		r.b.lend()
	}
	s, e := c.offs[r.i], c.offs[r.i+1]
	return c.data[s:e:e]
}

// Str returns a STRING column as a string ("" if null). The string is a copy.
func (r *Row) Str(j int) string { return r.strCol(j, false) }

// StrView returns a STRING column as a string ("" if null) without copying
// when the batch's bytes are never reused once lent (Decoder.ShareInput;
// the bridge decodes so), and as a copy otherwise. A shared string is valid forever,
// like a substring: it keeps the batch's payload (one DATA frame, up to
// go.batch.size rows) in memory for as long as it is referenced, so clone
// (strings.Clone) what is kept beyond the action.
func (r *Row) StrView(j int) string { return r.strCol(j, r.b.shared) }

func (r *Row) strCol(j int, share bool) string {
	c := r.col(j)
	if c.spec.kind != kindString {
		panic(r.wrongType(j, "STRING"))
	}
	if c.isNull(r.i) {
		return ""
	}
	if share {
		r.b.lend()
	}
	return strAt(c, r.i, share)
}

// strAt returns value i of a STRING column: sharing the column's bytes if
// share, else a copy.
func strAt(c *column, i int, share bool) string {
	s, e := c.offs[i], c.offs[i+1]
	if !share {
		return string(c.data[s:e])
	}
	if s == e {
		return ""
	}
	return unsafe.String(&c.data[s], e-s)
}

// ValueView is Value, except that STRING columns come as StrView does:
// shared with the batch's bytes when they are never reused once lent.
func (r *Row) ValueView(j int) any {
	c := r.col(j)
	if c.spec.kind == kindString && !c.isNull(r.i) {
		if r.b.shared {
			r.b.lend()
		}
		return strAt(c, r.i, r.b.shared)
	}
	return r.Value(j)
}

// Time returns a TIMESTAMP, TIMESTAMP_LTZ or DATE column as a UTC time
// (the zero time if null).
func (r *Row) Time(j int) time.Time {
	c := r.col(j)
	switch c.spec.kind {
	case kindTimestamp, kindTimestampLTZ:
		if c.isNull(r.i) {
			return time.Time{}
		}
		return time.UnixMicro(c.i64[r.i]).UTC()
	case kindDate:
		if c.isNull(r.i) {
			return time.Time{}
		}
		return dateTime(c.i32[r.i])
	}
	panic(r.wrongType(j, "TIMESTAMP, TIMESTAMP_LTZ or DATE"))
}

// Decimal returns a DECIMAL column as its exact decimal string ("" if null).
func (r *Row) Decimal(j int) string {
	c := r.col(j)
	if c.spec.kind != kindDecimal {
		panic(r.wrongType(j, "DECIMAL"))
	}
	if c.isNull(r.i) {
		return ""
	}
	return formatDecimal(c.arr.(*array.Decimal128).Value(r.i), c.spec.scale)
}
