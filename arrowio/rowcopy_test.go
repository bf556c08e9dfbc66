package arrowio

import (
	"bytes"
	"errors"
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

// rowBatch decodes a one-batch input of cols holding rows.
func rowBatch(t *testing.T, cols []Column, rows ...[]any) *Batch {
	t.Helper()
	ib, err := NewInputBuilder(cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Release()
	for i, vals := range rows {
		if err := ib.Append(0, []byte{byte(i)}, int64(i), true, vals); err != nil {
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
