package arrowio

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchColumns make rows of about 200 bytes (key and fixed columns included).
var benchColumns = []Column{
	{"customer", "STRING"},
	{"amount", "DOUBLE"},
	{"qty", "BIGINT"},
	{"category", "STRING"},
	{"note", "STRING"},
	{"flag", "BOOLEAN"},
}

const benchRows = 1024

func benchValues(i int) []any {
	return []any{
		fmt.Sprintf("customer-%014d", i),
		float64(i) * 1.25,
		int64(i),
		[]string{"books", "garden", "toys"}[i%3] + "-cat",
		strings.Repeat("n", 100+i%20),
		i%2 == 0,
	}
}

func benchStream(b testing.TB) []byte {
	ib, err := NewInputBuilder(benchColumns, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < benchRows; i++ {
		if err := ib.Append(int32(i%128), []byte(fmt.Sprintf("key-%012d", i)), int64(1700000000000+i), true, benchValues(i)); err != nil {
			b.Fatal(err)
		}
	}
	s, err := ib.Flush()
	if err != nil {
		b.Fatal(err)
	}
	return append([]byte(nil), s...)
}

// BenchmarkDecodeIterate is the Go-side ingest path: decode one DATA batch,
// read key group, key, timestamp and one user column of every row.
func BenchmarkDecodeIterate(b *testing.B) {
	for _, mode := range []struct {
		name  string
		alloc memory.Allocator
	}{{"zerocopy", nil}, {"copy-go", memory.NewGoAllocator()}, {"copy-pool", NewPoolAllocator(0)}} {
		b.Run(mode.name, func(b *testing.B) {
			stream := benchStream(b)
			sm, _, _, err := nextMessage(stream, 0)
			if err != nil {
				b.Fatal(err)
			}
			is, err := ReadInputSchema(sm.raw)
			if err != nil {
				b.Fatal(err)
			}
			d := NewDecoder(is, mode.alloc)
			amount := is.Index("amount")
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			b.ResetTimer()
			var sink float64
			var keyBytes int
			start := time.Now()
			for n := 0; n < b.N; n++ {
				batch, err := d.DecodeBatch(stream)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < batch.Len(); i++ {
					kg := batch.KeyGroup(i)
					keyBytes += len(batch.Key(i))
					ts, _ := batch.Timestamp(i)
					sink += batch.Row(i).Float64(amount) + float64(kg) + float64(ts&1)
				}
				batch.Release()
			}
			el := time.Since(start)
			b.ReportMetric(float64(b.N*benchRows)/el.Seconds(), "rows/s")
			b.ReportMetric(float64(len(stream))/benchRows, "B/row")
			_ = sink
		})
	}
}

// BenchmarkRowValues reads every user column of every row through the
// generic Value path (boxing, copies).
func BenchmarkRowValues(b *testing.B) {
	stream := benchStream(b)
	batch, err := DecodeBatch(stream, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer batch.Release()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		for i := 0; i < batch.Len(); i++ {
			r := batch.Row(i)
			for j := 0; j < r.NumFields(); j++ {
				_ = r.Value(j)
			}
		}
	}
	b.ReportMetric(float64(b.N*benchRows)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkOutputBuildEncode appends 1024 rows to a reused OutputBuilder and
// encodes them as one OUTPUT stream.
func BenchmarkOutputBuildEncode(b *testing.B) {
	ob, err := NewOutputBuilder(benchColumns, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ob.Release()
	rows := make([][]any, benchRows)
	for i := range rows {
		rows[i] = benchValues(i)
	}
	var size int
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		for i, r := range rows {
			if err := ob.Append(int64(i), true, r); err != nil {
				b.Fatal(err)
			}
		}
		out, err := ob.Flush()
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	el := time.Since(start)
	b.SetBytes(int64(size))
	b.ReportMetric(float64(b.N*benchRows)/el.Seconds(), "rows/s")
}
