package arrowio

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// touch reads every value of a decoded batch through every accessor that
// fits its column type.
func touch(b *Batch) {
	for i := 0; i < b.Len(); i++ {
		_ = b.KeyGroup(i)
		_ = b.Key(i)
		_, _ = b.Timestamp(i)
		r := b.Row(i)
		for j := 0; j < r.NumFields(); j++ {
			_ = r.Value(j)
			_ = r.IsNull(j)
			switch b.cols[j].spec.kind {
			case kindBool:
				_ = r.Bool(j)
			case kindInt8, kindInt16, kindInt32, kindInt64:
				_ = r.Int64(j)
			case kindFloat32, kindFloat64:
				_ = r.Float64(j)
			case kindString:
				_ = r.Str(j)
				_ = r.Bytes(j)
			case kindBinary:
				_ = r.Bytes(j)
			case kindDecimal:
				_ = r.Decimal(j)
			case kindTimestamp, kindTimestampLTZ, kindDate:
				_ = r.Time(j)
			}
		}
	}
}

// reemit appends every row of b as it is (AppendRow) to an output builder
// of b's own columns, once as runs that Flush slices out of the batch and
// once after a value row (so copied column by column), and checks that
// each OUTPUT stream holds all the rows.
func reemit(t *testing.T, b *Batch) {
	for _, copied := range []bool{false, true} {
		ob, err := NewOutputBuilder(b.Schema().Columns(), nil)
		if err != nil {
			t.Fatalf("an output builder for the columns of a decoded batch: %v", err)
		}
		want := b.Len()
		if copied && b.Len() > 0 {
			if err := ob.Append(0, false, rowValues(b.Row(0))); err != nil {
				t.Fatalf("Append of a decoded row's values: %v", err)
			}
			want++
		}
		for i := 0; i < b.Len(); i++ {
			ts, hasTS := b.Timestamp(i)
			if err := ob.AppendRow(ts, hasTS, b.Row(i)); err != nil {
				t.Fatalf("AppendRow of row %d into its own columns: %v", i, err)
			}
		}
		p, err := ob.Flush()
		if err != nil {
			t.Fatalf("Flush: %v", err)
		}
		rd, err := ipc.NewReader(bytes.NewReader(p))
		if err != nil {
			t.Fatalf("the OUTPUT stream does not read: %v", err)
		}
		n := 0
		for rd.Next() {
			n += int(rd.RecordBatch().NumRows())
		}
		if rd.Err() != nil || n != want {
			t.Fatalf("OUTPUT holds %d rows (err %v), want %d", n, rd.Err(), want)
		}
		rd.Release()
		ob.Release()
	}
}

// rowValues returns the values of r (Value of every column).
func rowValues(r *Row) []any {
	vals := make([]any, r.NumFields())
	for j := range vals {
		vals[j] = r.Value(j)
	}
	return vals
}

func FuzzDecodeBatch(f *testing.F) {
	golden := buildGoldenInput(f)
	// Seeds stay small: the fuzzer minimises new inputs byte by byte.
	small, _ := NewInputBuilder(benchColumns[:2], nil)
	_ = small.Append(3, []byte("k"), 5, true, []any{"c", 1.5})
	_ = small.Append(4, []byte("kk"), 0, false, []any{nil, nil})
	smallStream, _ := small.Flush()
	f.Add(golden)
	f.Add(smallStream)
	sm, _, _, err := nextMessage(golden, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append(append([]byte(nil), sm.raw...), eos...))
	f.Add(golden[:len(golden)-8])
	is, err := ReadInputSchema(sm.raw)
	if err != nil {
		f.Fatal(err)
	}
	pool := NewPoolAllocator(1 << 20)
	f.Fuzz(func(t *testing.T, data []byte) {
		if b, err := DecodeBatch(data, nil); err == nil {
			touch(b)
			reemit(t, b)
			b.Release()
		}
		d := NewDecoder(is, pool)
		if b, err := d.DecodeBatch(data); err == nil {
			touch(b)
			b.Release()
		}
		d.Close()
		if s, err := ReadSchemaMessage(data); err == nil {
			_, _ = NewInputSchema(s)
		}
	})
}
