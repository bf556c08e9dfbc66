package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestAppendRowEqualsAppend: the golden rows (every type of the mapping,
// nulls, nested lists and rows) appended with AppendRow straight from a
// decoded input batch give the same OUTPUT stream, byte for byte, as the
// same values appended with Append.
func TestAppendRowEqualsAppend(t *testing.T) {
	b := decodeGolden(t)
	defer b.Release()
	ob, err := NewOutputBuilder(goldenColumns, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Release()
	for i := 0; i < b.Len(); i++ {
		ts, hasTS := b.Timestamp(i)
		if err := ob.AppendRow(ts, hasTS, b.Row(i)); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	got, err := ob.Flush()
	if err != nil {
		t.Fatal(err)
	}
	if want := buildGoldenOutput(t); !bytes.Equal(got, want) {
		t.Fatalf("AppendRow's stream (%d bytes) differs from Append's (%d bytes)", len(got), len(want))
	}
	rows := readOutput(t, got, ob.Schema())
	for i, r := range rows {
		if !reflect.DeepEqual(canon(r.values), canon(goldenRows[i].values)) {
			t.Errorf("row %d: %v, want %v", i, r.values, goldenRows[i].values)
		}
	}
}

// rowBatch decodes a one-batch input of cols holding rows, row i with
// timestamp i.
func rowBatch(t *testing.T, cols []Column, rows ...[]any) *Batch {
	t.Helper()
	return rowBatchTS(t, cols, func(i int) (int64, bool) { return int64(i), true }, rows...)
}

// rowBatchTS is rowBatch with the timestamps of ts (false: null).
func rowBatchTS(t *testing.T, cols []Column, ts func(i int) (int64, bool), rows ...[]any) *Batch {
	t.Helper()
	ib, err := NewInputBuilder(cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Release()
	for i, vals := range rows {
		at, hasTS := ts(i)
		if err := ib.Append(0, []byte{byte(i)}, at, hasTS, vals); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ib.Flush()
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeBatch(bytes.Clone(p), nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendRowConvertsOtherTypes: an output column of another type than
// its input column goes through the value and Append's checks: an INT
// widens to BIGINT, a TIMESTAMP(3) is a TIMESTAMP(6), a BIGINT that fits
// an INT narrows; one that does not fit is an error naming the column, and
// the builder is unchanged.
func TestAppendRowConvertsOtherTypes(t *testing.T) {
	in := []Column{{"n", "INT"}, {"s", "STRING"}, {"at", "TIMESTAMP(3)"}, {"big", "BIGINT"}}
	out := []Column{{"n", "BIGINT"}, {"s", "STRING"}, {"at", "TIMESTAMP(6)"}, {"big", "INT"}}
	at := time.Date(2026, 12, 1, 10, 0, 0, 123000000, time.UTC)
	b := rowBatch(t, in,
		[]any{int64(7), "seven", at, int64(1) << 20},
		[]any{nil, nil, nil, nil},
		[]any{int64(8), "eight", at, int64(1) << 40}) // big does not fit an INT
	defer b.Release()
	ob, err := NewOutputBuilder(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Release()
	for i := 0; i < 2; i++ {
		if err := ob.AppendRow(int64(i), true, b.Row(i)); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	err = ob.AppendRow(2, true, b.Row(2))
	if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), `column "big" (INT)`) {
		t.Fatalf("row 2: %v, want ErrValue naming column big", err)
	}
	if ob.Len() != 2 {
		t.Fatalf("builder holds %d rows after the rejected one, want 2", ob.Len())
	}
	p, err := ob.Flush()
	if err != nil {
		t.Fatal(err)
	}
	got := readOutput(t, p, ob.Schema())
	want := [][]any{{int64(7), "seven", at, int64(1) << 20}, {nil, nil, nil, nil}}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].values, want[i]) {
			t.Errorf("row %d: %#v, want %#v", i, got[i].values, want[i])
		}
	}
}

// TestAppendRowRejectsAnotherWidth: an input row with another number of
// columns than the output schema is an error, and nothing is appended.
func TestAppendRowRejectsAnotherWidth(t *testing.T) {
	b := rowBatch(t, []Column{{"a", "STRING"}, {"b", "STRING"}}, []any{"x", "y"})
	defer b.Release()
	ob, err := NewOutputBuilder([]Column{{"a", "STRING"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Release()
	err = ob.AppendRow(0, false, b.Row(0))
	if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "the input row has 2 columns, the output schema 1") {
		t.Fatalf("got %v", err)
	}
	if ob.Len() != 0 {
		t.Fatalf("builder holds %d rows, want 0", ob.Len())
	}
}

// TestSizeHint counts 8 bytes per fixed-width value and 4 more than the
// length of each STRING and BYTES value.
func TestSizeHint(t *testing.T) {
	b := rowBatch(t, []Column{{"n", "BIGINT"}, {"s", "STRING"}, {"p", "BYTES"}},
		[]any{int64(1), "hello", []byte("abc")}, []any{nil, "", nil})
	defer b.Release()
	if got, want := b.Row(0).SizeHint(), 8+(5+4)+(3+4); got != want {
		t.Errorf("row 0: %d, want %d", got, want)
	}
	if got, want := b.Row(1).SizeHint(), 8+4+4; got != want {
		t.Errorf("row 1: %d, want %d", got, want)
	}
}

// TestAppendRowSlicesRuns: rows whose columns all have the output's types
// are sliced out of their batches at Flush, runs of two batches
// concatenated; the stream decodes to the same rows, in order, as Append of
// their values gives (nulls, null timestamps, a row out of order, a row
// with another timestamp, and a value row after them, which makes the rows
// taken so far copies).
func TestAppendRowSlicesRuns(t *testing.T) {
	cols := []Column{{"s", "STRING"}, {"n", "BIGINT"}, {"p", "BYTES"}, {"ok", "BOOLEAN"}, {"at", "TIMESTAMP(6)"}}
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)
	mk := func(base int) *Batch {
		rows := make([][]any, 10)
		for i := range rows {
			rows[i] = []any{fmt.Sprint("s", base+i), int64(base + i), []byte{byte(i)}, i%2 == 0, at.Add(time.Duration(i) * time.Second)}
			if i == 3 {
				rows[i] = []any{nil, nil, nil, nil, nil}
			}
		}
		return rowBatchTS(t, cols, func(i int) (int64, bool) { return int64(base + i), i != 5 }, rows...)
	}
	b1, b2 := mk(0), mk(100)
	defer b1.Release()
	defer b2.Release()
	type pick struct {
		b        *Batch
		i        int
		otherTS  bool // a timestamp that is not the batch's: copied, not sliced
		asValues bool // appended with Append
	}
	for _, tc := range []struct {
		name  string
		picks []pick
		runs  int // runs held for slicing at Flush
	}{
		{"one run", []pick{{b: b1, i: 0}, {b: b1, i: 1}, {b: b1, i: 2}, {b: b1, i: 3}, {b: b1, i: 4}, {b: b1, i: 5}}, 1},
		{"runs of two batches", []pick{{b: b1, i: 2}, {b: b1, i: 3}, {b: b2, i: 0}, {b: b2, i: 1}, {b: b1, i: 9}, {b: b1, i: 4}, {b: b2, i: 5}}, 5},
		{"another timestamp", []pick{{b: b1, i: 0}, {b: b1, i: 1, otherTS: true}, {b: b1, i: 2}}, 0},
		{"a value row after a run", []pick{{b: b1, i: 0}, {b: b1, i: 1}, {b: b2, i: 7, asValues: true}, {b: b2, i: 8}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewOutputBuilder(cols, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			want, err := NewOutputBuilder(cols, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			for _, p := range tc.picks {
				ts, hasTS := p.b.Timestamp(p.i)
				if p.otherTS {
					ts, hasTS = ts+1, true
				}
				r := p.b.Row(p.i)
				vals := make([]any, r.NumFields())
				for j := range vals {
					vals[j] = r.Value(j)
				}
				if p.asValues {
					err = got.Append(ts, hasTS, vals)
				} else {
					err = got.AppendRow(ts, hasTS, r)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := want.Append(ts, hasTS, vals); err != nil {
					t.Fatal(err)
				}
			}
			if got.Len() != len(tc.picks) {
				t.Fatalf("Len %d, want %d", got.Len(), len(tc.picks))
			}
			if len(got.w.segs) != tc.runs || (tc.runs > 0) != (got.w.segRows == len(tc.picks)) {
				t.Fatalf("%d runs of %d rows held for slicing, want %d runs", len(got.w.segs), got.w.segRows, tc.runs)
			}
			gp, err := got.Flush()
			if err != nil {
				t.Fatal(err)
			}
			gotRows := readOutput(t, bytes.Clone(gp), got.Schema())
			wp, err := want.Flush()
			if err != nil {
				t.Fatal(err)
			}
			wantRows := readOutput(t, wp, want.Schema())
			if !reflect.DeepEqual(gotRows, wantRows) {
				t.Fatalf("rows\n got %v\nwant %v", gotRows, wantRows)
			}
			if got.Len() != 0 {
				t.Fatalf("Len %d after Flush", got.Len())
			}
			// The builder is reusable: a second batch after the first.
			if err := got.AppendRow(0, true, b2.Row(0)); err != nil {
				t.Fatal(err)
			}
			gp, err = got.Flush()
			if err != nil {
				t.Fatal(err)
			}
			if rows := readOutput(t, gp, got.Schema()); len(rows) != 1 || rows[0].values[0] != "s100" {
				t.Fatalf("second batch %v", rows)
			}
		})
	}
}

// TestFlushToEqualsFlush: FlushTo hands over the same stream as Flush, in
// pieces whose sizes add up, the long ones not copied; write's error comes
// back and the builder is reset either way.
func TestFlushToEqualsFlush(t *testing.T) {
	b := decodeGolden(t)
	defer b.Release()
	for _, asRow := range []bool{false, true} {
		t.Run(fmt.Sprint("AppendRow=", asRow), func(t *testing.T) {
			fill := func() *OutputBuilder {
				ob, err := NewOutputBuilder(goldenColumns, nil)
				if err != nil {
					t.Fatal(err)
				}
				for k := 0; k < 50; k++ { // long enough for buffers over longWrite
					for i := 0; i < b.Len(); i++ {
						ts, hasTS := b.Timestamp(i)
						r := b.Row(i)
						if asRow {
							err = ob.AppendRow(ts, hasTS, r)
						} else {
							vals := make([]any, r.NumFields())
							for j := range vals {
								vals[j] = r.Value(j)
							}
							err = ob.Append(ts, hasTS, vals)
						}
						if err != nil {
							t.Fatal(err)
						}
					}
				}
				return ob
			}
			want, err := fill().Flush()
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.Clone(want)
			ob := fill()
			defer ob.Release()
			var got []byte
			long := 0
			err = ob.FlushTo(func(parts [][]byte, size int) error {
				for _, p := range parts {
					got = append(got, p...)
					if len(p) >= longWrite {
						long++
					}
				}
				if size != len(got) {
					t.Errorf("size %d, the parts hold %d bytes", size, len(got))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("FlushTo's stream (%d bytes) differs from Flush's (%d bytes)", len(got), len(want))
			}
			if long == 0 {
				t.Error("no long piece: every buffer went through the scratch copy")
			}
			// A failing write: its error, and an empty builder that works on.
			fail := errors.New("socket gone")
			_ = ob.Append(1, true, goldenRows[0].values)
			if err := ob.FlushTo(func([][]byte, int) error { return fail }); err != fail {
				t.Fatalf("FlushTo returned %v, want the write's error", err)
			}
			if ob.Len() != 0 {
				t.Fatalf("Len %d after a failed FlushTo", ob.Len())
			}
			if _, err := ob.Flush(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
