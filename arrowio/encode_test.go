package arrowio

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

func TestAppendRejectsWithoutSideEffects(t *testing.T) {
	b, err := NewOutputBuilder(goldenColumns, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	good := goldenRows[0].values
	if err := b.Append(1, true, good); err != nil {
		t.Fatal(err)
	}
	with := func(col string, v any) []any {
		vals := append([]any(nil), good...)
		for j, c := range goldenColumns {
			if c.Name == col {
				vals[j] = v
			}
		}
		return vals
	}
	cases := []struct {
		values []any
		msg    string
	}{
		{good[:3], "got 3 values, the schema has 18 columns"},
		{with("flag", 1), `column "flag" (BOOLEAN): got Go type int: want bool`},
		{with("tiny", 128), `column "tiny" (TINYINT): got Go type int: 128 is out of range`},
		{with("num", int64(1)<<31), `column "num" (INT)`},
		{with("big", uint64(1)<<63), `column "big" (BIGINT): got Go type uint64`},
		{with("big", 1.0), `column "big" (BIGINT): got Go type float64: want an integer`},
		{with("score", "1"), `column "score" (DOUBLE): got Go type string: want float64`},
		{with("name", []byte("x")), `column "name" (STRING): got Go type []uint8: want string`},
		{with("payload", "x"), `column "payload" (BYTES): got Go type string: want []byte`},
		{with("price", "12.345"), `column "price" (DECIMAL(10, 2)): got Go type string: "12.345" has more fraction digits than the scale allows`},
		{with("price", "123456789"), `too many integer digits`},
		{with("price", "1e3"), `not a plain decimal number`},
		{with("price", "-"), `not a plain decimal number`},
		{with("price", 1.5), `want a decimal string or an integer`},
		{with("price", int64(100000000)), `out of range for the precision`},
		{with("local_ts", "2024-01-01"), `column "local_ts" (TIMESTAMP(6)): got Go type string: want time.Time`},
		{with("day", time.Date(9999999, 1, 1, 0, 0, 0, 0, time.UTC)), `out of the range of dates`},
		{with("tags", []string{"a"}), `column "tags" (ARRAY<STRING>): got Go type []string: want []any`},
		{with("tags", []any{"a", 1}), `column "tags"[1] (STRING): got Go type int: want string`},
		{with("matrix", []any{[]any{int64(1), "x"}}), `column "matrix"[0][1] (BIGINT)`},
		{with("point", map[string]any{"x": 1.0, "z": 2.0}), "no field \"z\" in ROW<`x` DOUBLE, `y` DOUBLE, `label` STRING>"},
		{with("meta", map[string]any{"inner": map[string]any{"ok": "yes"}}), `column "meta".inner.ok (BOOLEAN): got Go type string: want bool`},
		{with("meta", map[string]any{"scores": []any{1.0, nil, "x"}}), `column "meta".scores[2] (DOUBLE)`},
	}
	for _, c := range cases {
		err := b.Append(2, true, c.values)
		if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("got %v\nwant %q", err, c.msg)
		}
	}
	if b.Len() != 1 {
		t.Fatalf("Len %d after rejected rows", b.Len())
	}
	out, err := b.Flush()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := OutputSchema(goldenColumns)
	rows := readOutput(t, out, s)
	if len(rows) != 1 || rows[0].ts != 1 {
		t.Fatalf("rows: %+v", rows)
	}
	// Reuse after Flush: a second batch is independent of the first.
	if err := b.Append(5, false, goldenRows[1].values); err != nil {
		t.Fatal(err)
	}
	out2, _ := b.Flush()
	rows = readOutput(t, bytes.Clone(out2), s)
	if len(rows) != 1 || rows[0].hasTS || rows[0].values[0] != nil {
		t.Fatalf("second batch: %+v", rows)
	}
}

func TestAppendAcceptsGoIntegersAndFloats(t *testing.T) {
	cols := []Column{{"a", "TINYINT"}, {"b", "INT"}, {"c", "BIGINT"}, {"d", "FLOAT"}, {"e", "DECIMAL(5, 2)"}, {"f", "DATE"}, {"g", "TIMESTAMP_LTZ(3)"}}
	in, _ := NewInputBuilder(cols, nil)
	berlin := time.FixedZone("CET", 3600)
	vals := []any{int8(-3), uint16(65535), int(7), float32(0.5), 123, time.Date(2024, 3, 1, 0, 30, 0, 0, berlin), time.Date(2024, 3, 1, 0, 30, 0, 1999, berlin)}
	if err := in.Append(0, []byte("k"), 0, false, vals); err != nil {
		t.Fatal(err)
	}
	out, _ := in.Flush()
	b, err := DecodeBatch(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	r := b.Row(0)
	want := []any{int64(-3), int64(65535), int64(7), float64(0.5), "123.00",
		time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC),       // calendar date in the value's zone
		time.Date(2024, 2, 29, 23, 30, 0, 1000, time.UTC)} // instant, micro precision
	for j := range want {
		if got := r.Value(j); canon(got) != canon(want[j]) {
			t.Errorf("column %s: got %v, want %v", cols[j].Name, got, want[j])
		}
	}
}

func TestDecimalFormatParse(t *testing.T) {
	cases := []struct {
		in        string
		p, s      int32
		canonical string
	}{
		{"0", 10, 2, "0.00"},
		{"-0", 10, 2, "0.00"},
		{"+1.5", 10, 2, "1.50"},
		{".5", 10, 2, "0.50"},
		{"5.", 10, 2, "5.00"},
		{"-0.01", 10, 2, "-0.01"},
		{"00012.30", 10, 2, "12.30"},
		{"99999999999999999999999999999999999999", 38, 0, "99999999999999999999999999999999999999"},
		{"-99999999999999999999999999999999999999", 38, 0, "-99999999999999999999999999999999999999"},
		{"-18446744073709551616", 38, 0, "-18446744073709551616"},
		{"18446744073709551616", 38, 0, "18446744073709551616"},
		{"-18446744073709551615", 38, 0, "-18446744073709551615"},
		{"0.00000000000000000000000000000000000001", 38, 38, "0.00000000000000000000000000000000000001"},
		{"7", 1, 0, "7"},
	}
	for _, c := range cases {
		n, reason := parseDecimal(c.in, c.p, c.s)
		if reason != "" {
			t.Errorf("%q: %s", c.in, reason)
			continue
		}
		if got := formatDecimal(n, c.s); got != c.canonical {
			t.Errorf("%q: got %q, want %q", c.in, got, c.canonical)
		}
	}
	if got := formatDecimal(decimal128.New(-1, 0), 3); got != "-18446744073709551.616" {
		t.Errorf("2^64 negative: %s", got)
	}
	for _, bad := range []string{"", "+", ".", "1.2.3", "1,5", " 1", "1 ", "0x10", "1e2", "--1", "١"} {
		if _, reason := parseDecimal(bad, 10, 2); reason == "" {
			t.Errorf("%q accepted", bad)
		}
	}
}
