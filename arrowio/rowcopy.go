package arrowio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// rowPlan says how AppendRow copies the user columns of the rows of one
// input schema: column by column from the input's buffers where the two
// columns have the same Arrow layout, and through Row.Value and the checks
// Append makes where they do not.
type rowPlan struct {
	in     *InputSchema
	direct []bool
	// whole: every column has the same Arrow type in and out, so that a
	// run of rows can go into the OUTPUT batch as a slice of the input's
	// arrays.
	whole bool
	err   error // the input's columns cannot make an output row
}

// rowSeg is a run of rows [from, to) of one input batch that AppendRow took
// as they are, to be sliced out of the batch's arrays at Flush.
type rowSeg struct {
	b        *Batch
	from, to int
}

// planFor returns the plan for rows of in, building it once per input
// schema (a decoder's batches share theirs).
func (w *rowWriter) planFor(in *InputSchema) *rowPlan {
	if w.plan != nil && w.plan.in == in {
		return w.plan
	}
	p := &rowPlan{in: in}
	if len(in.user.cols) != len(w.user.cols) {
		p.err = fmt.Errorf("%w: the input row has %d columns, the output schema %d", ErrValue, len(in.user.cols), len(w.user.cols))
	} else {
		p.direct = make([]bool, len(w.user.cols))
		p.whole = true
		for j, c := range w.user.cols {
			p.direct[j] = sameLayout(in.user.cols[j].typ, c.typ)
			p.whole = p.whole && p.direct[j] && arrow.TypeEqual(in.user.cols[j].typ.arrow, c.typ.arrow)
		}
	}
	w.plan = p
	return p
}

// sameLayout reports whether a value of an input column of type in can be
// copied as it is into an output column of type out.
func sameLayout(in, out *typeSpec) bool {
	if in.kind != out.kind {
		return false
	}
	switch in.kind {
	case kindBool, kindInt8, kindInt16, kindInt32, kindInt64, kindFloat32, kindFloat64,
		kindString, kindBinary, kindDate, kindTimestamp, kindTimestampLTZ:
		// TIMESTAMP columns are timestamp[us] whatever their precision,
		// as Append writes them.
		return true
	}
	return false
}

// AppendRow adds the user columns of an input row as one output row, with
// timestamp ts (hasTS false: null): input column j becomes output column j.
// A column whose input and output types have the same Arrow layout (the
// same type, or TIMESTAMPs of any precision) is copied straight from the
// input batch, without making a Go value; any other column goes through
// r.Value and is checked as Append checks it. A row that does not fit
// (another number of columns, a value that does not fit its column) is an
// error wrapping ErrValue, and the builder is unchanged.
//
// Consecutive rows of one batch whose columns all have the output's types,
// with the batch's own timestamps, are not copied row by row: Flush slices
// them out of the batch's arrays (and concatenates the runs of several
// batches), so r's batch must not be released before the next Flush.
func (b *OutputBuilder) AppendRow(ts int64, hasTS bool, r *Row) error {
	r.check()
	w := b.w
	p := w.planFor(r.b.schema)
	if p.err != nil {
		return p.err
	}
	if p.whole && w.rows == w.segRows {
		if bts, ok := r.b.Timestamp(r.i); ok == hasTS && (!hasTS || bts == ts) {
			w.addSeg(r.b, r.i)
			return nil
		}
	}
	w.materialize()
	return w.copyRow(p, ts, hasTS, r.b, r.i)
}

// copyRow appends row i of b to the builders (see AppendRow).
func (w *rowWriter) copyRow(p *rowPlan, ts int64, hasTS bool, b *Batch, i int) error {
	conv := w.conv[:0]
	for j, d := range p.direct {
		if d {
			continue
		}
		v := b.rows[i].Value(j)
		if err := checkColumn(w.user.cols[j], v); err != nil {
			return err
		}
		conv = append(conv, v)
	}
	w.appendTS(0, ts, hasTS)
	k := 0
	for j, c := range w.user.cols {
		fb := w.rb.Field(w.lead + j)
		if p.direct[j] {
			copyCell(fb, &b.cols[j], i)
			continue
		}
		appendValue(c.typ, fb, conv[k])
		conv[k] = nil
		k++
	}
	w.conv = conv[:0]
	w.rows++
	return nil
}

// addSeg takes row i of b as it is: it extends the last run or starts one.
func (w *rowWriter) addSeg(b *Batch, i int) {
	if n := len(w.segs); n > 0 && w.segs[n-1].b == b && w.segs[n-1].to == i {
		w.segs[n-1].to++
	} else {
		w.segs = append(w.segs, rowSeg{b: b, from: i, to: i + 1})
	}
	w.segRows++
	w.rows++
}

// materialize copies the rows taken as they are into the builders, before
// a row that is not (the batch holds one kind or the other).
func (w *rowWriter) materialize() {
	if w.segRows == 0 {
		return
	}
	w.rows -= w.segRows
	for _, s := range w.segs {
		p := w.planFor(s.b.schema)
		for i := s.from; i < s.to; i++ {
			ts, hasTS := s.b.Timestamp(i)
			_ = w.copyRow(p, ts, hasTS, s.b, i) // whole: every column is direct, nothing to check
		}
	}
	w.clearSegs()
}

func (w *rowWriter) clearSegs() {
	clear(w.segs)
	w.segs, w.segRows = w.segs[:0], 0
}

// segRecord builds the record of the rows taken as they are: the _ts and
// user columns of each run sliced out of its batch, the runs concatenated.
func (w *rowWriter) segRecord() (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 1+len(w.user.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	parts := make([]arrow.Array, len(w.segs))
	for c := range cols {
		src := 2 + c // the input's _ts, then its user columns
		for k, s := range w.segs {
			parts[k] = array.NewSlice(s.b.rec.Column(src), int64(s.from), int64(s.to))
		}
		if len(parts) == 1 {
			cols[c] = parts[0]
			continue
		}
		var err error
		cols[c], err = array.Concatenate(parts, w.alloc)
		for _, a := range parts {
			a.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("arrowio: concatenating output rows: %w", err)
		}
	}
	return array.NewRecordBatch(w.schema, cols, int64(w.segRows)), nil
}

// copyCell appends value i of column c to b, a builder of the same layout.
func copyCell(b array.Builder, c *column, i int) {
	if c.isNull(i) {
		b.AppendNull()
		return
	}
	switch c.spec.kind {
	case kindBool:
		b.(*array.BooleanBuilder).Append(c.bools.Value(i))
	case kindInt8:
		b.(*array.Int8Builder).Append(c.i8[i])
	case kindInt16:
		b.(*array.Int16Builder).Append(c.i16[i])
	case kindInt32:
		b.(*array.Int32Builder).Append(c.i32[i])
	case kindInt64:
		b.(*array.Int64Builder).Append(c.i64[i])
	case kindFloat32:
		b.(*array.Float32Builder).Append(c.f32[i])
	case kindFloat64:
		b.(*array.Float64Builder).Append(c.f64[i])
	case kindDate:
		b.(*array.Date32Builder).Append(arrow.Date32(c.i32[i]))
	case kindTimestamp, kindTimestampLTZ:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(c.i64[i]))
	case kindString:
		b.(*array.StringBuilder).BinaryBuilder.Append(c.data[c.offs[i]:c.offs[i+1]])
	case kindBinary:
		b.(*array.BinaryBuilder).Append(c.data[c.offs[i]:c.offs[i+1]])
	default:
		panic("arrowio: internal: copyCell on column type " + c.spec.String())
	}
}

// SizeHint is about the number of bytes the user columns of r take in an
// Arrow batch: 8 per fixed-width value, 4 more than its length for each
// STRING and BYTES value, the column's average per row for ARRAY and ROW.
func (r *Row) SizeHint() int {
	r.check()
	n := 0
	for j := range r.b.cols {
		c := &r.b.cols[j]
		switch {
		case c.offs != nil:
			n += int(c.offs[r.i+1]-c.offs[r.i]) + 4
		case c.spec.kind == kindList || c.spec.kind == kindStruct:
			n += 8 + int(c.arr.Data().SizeInBytes())/max(c.arr.Len(), 1)
		default:
			n += 8
		}
	}
	return n
}
