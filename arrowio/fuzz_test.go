package arrowio

import (
	"testing"
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
