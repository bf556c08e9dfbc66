package arrowio

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

var update = flag.Bool("update", false, "write golden files that do not exist yet (existing files are never rewritten)")

const goldenDir = "../testdata/wire"

// goldenColumns covers every type of the type mapping, nested lists and rows.
var goldenColumns = []Column{
	{"flag", "BOOLEAN"},
	{"tiny", "TINYINT"},
	{"small", "SMALLINT"},
	{"num", "INT"},
	{"big", "BIGINT"},
	{"ratio", "FLOAT"},
	{"score", "DOUBLE"},
	{"name", "STRING"},
	{"payload", "BYTES"},
	{"price", "DECIMAL(10, 2)"},
	{"wide", "DECIMAL(38, 10)"},
	{"local_ts", "TIMESTAMP(6)"},
	{"instant", "TIMESTAMP_LTZ(6)"},
	{"day", "DATE"},
	{"tags", "ARRAY<STRING>"},
	{"matrix", "ARRAY<ARRAY<BIGINT>>"},
	{"point", "ROW<x DOUBLE, y DOUBLE, label STRING>"},
	{"meta", "ROW<id BIGINT, scores ARRAY<DOUBLE>, inner ROW<ok BOOLEAN>>"},
}

type goldenRow struct {
	kg     int32
	key    []byte
	ts     int64
	hasTS  bool
	values []any
}

func utc(y int, mo time.Month, d, h, mi, s, us int) time.Time {
	return time.Date(y, mo, d, h, mi, s, us*1000, time.UTC)
}

// goldenRows are the rows of input_batch.arrow and output_batch.arrow, in
// normalised form (what Row.Value returns). testdata/wire/README.md lists
// them; keep both in step.
var goldenRows = []goldenRow{
	{kg: 0, key: []byte("alice"), ts: 1700000000000, hasTS: true, values: []any{
		true, int64(127), int64(32767), int64(2147483647), int64(9223372036854775807),
		float64(1.5), float64(3.25), "héllo ✓", []byte{0x00, 0x01, 0xFF},
		"12.50", "123456789012345678901234567.0123456789",
		utc(2024, 2, 29, 12, 34, 56, 789012), utc(2024, 1, 1, 0, 0, 0, 1), utc(2024, 2, 29, 0, 0, 0, 0),
		[]any{"a", "b"},
		[]any{[]any{int64(1), int64(2)}, []any{int64(3)}},
		map[string]any{"x": float64(1), "y": float64(-2.5), "label": "p"},
		map[string]any{"id": int64(7), "scores": []any{0.5, 1.5}, "inner": map[string]any{"ok": true}},
	}},
	{kg: 17, key: []byte{}, ts: 0, hasTS: false, values: make([]any, 18)},
	{kg: 128, key: []byte{0x00, 0x00, 0x00, 0x2A}, ts: 1, hasTS: true, values: []any{
		false, int64(-128), int64(-32768), int64(-2147483648), int64(-9223372036854775808),
		float64(-0.25), float64(1e300), "", []byte{},
		"-0.05", "-9999999999999999999999999999.9999999999",
		utc(1969, 12, 31, 23, 59, 59, 999999), utc(1970, 1, 1, 0, 0, 0, 0), utc(1969, 12, 31, 0, 0, 0, 0),
		[]any{},
		[]any{[]any{}, nil, []any{nil, int64(5)}},
		map[string]any{"x": nil, "y": float64(0), "label": nil},
		map[string]any{"id": nil, "scores": nil, "inner": nil},
	}},
	{kg: 32767, key: []byte{0xFF, 0xFF, 0xFF}, ts: -1, hasTS: true, values: []any{
		nil, int64(0), nil, int64(42), nil,
		nil, float64(0.1), "ключ", nil,
		"0.00", "0.0000000001",
		nil, nil, utc(1970, 1, 1, 0, 0, 0, 0),
		[]any{"x", nil},
		nil,
		nil,
		map[string]any{"id": int64(-1), "scores": []any{}, "inner": map[string]any{"ok": nil}},
	}},
}

// canon makes values comparable with reflect.DeepEqual.
func canon(v any) any {
	switch x := v.(type) {
	case time.Time:
		return "time:" + x.UTC().Format(time.RFC3339Nano) + fmt.Sprintf("/%v", x.Location())
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canon(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canon(e)
		}
		return out
	}
	return v
}

func buildGoldenInput(t testing.TB) []byte {
	b, err := NewInputBuilder(goldenColumns, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range goldenRows {
		if err := b.Append(r.kg, r.key, r.ts, r.hasTS, r.values); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	out, err := b.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(out)
}

func buildGoldenOutput(t testing.TB) []byte {
	b, err := NewOutputBuilder(goldenColumns, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range goldenRows {
		if err := b.Append(r.ts, r.hasTS, r.values); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	out, err := b.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(out)
}

// golden returns the content of a golden file. With -update a missing file
// is written from want first; an existing file is never rewritten.
func golden(t *testing.T, name string, want []byte) []byte {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	got, err := os.ReadFile(path)
	if os.IsNotExist(err) && *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return want
	}
	if err != nil {
		t.Fatalf("%v (run `go test ./arrowio -run Golden -update` once to create it)", err)
	}
	return got
}

func checkRows(t *testing.T, b *Batch, wantKeys bool) {
	t.Helper()
	if b.Len() != len(goldenRows) {
		t.Fatalf("rows: got %d, want %d", b.Len(), len(goldenRows))
	}
	for i, want := range goldenRows {
		if wantKeys {
			if b.KeyGroup(i) != want.kg || !bytes.Equal(b.Key(i), want.key) {
				t.Errorf("row %d: key group/key = %d/%x, want %d/%x", i, b.KeyGroup(i), b.Key(i), want.kg, want.key)
			}
		}
		ts, ok := b.Timestamp(i)
		if ok != want.hasTS || (ok && ts != want.ts) {
			t.Errorf("row %d: ts = %d,%v, want %d,%v", i, ts, ok, want.ts, want.hasTS)
		}
		r := b.Row(i)
		if r.NumFields() != len(goldenColumns) {
			t.Fatalf("row %d: %d fields", i, r.NumFields())
		}
		for j, c := range goldenColumns {
			if r.Name(j) != c.Name || r.Index(c.Name) != j {
				t.Errorf("column %d: name %q index %d", j, r.Name(j), r.Index(c.Name))
			}
			if got, w := canon(r.Value(j)), canon(want.values[j]); !reflect.DeepEqual(got, w) {
				t.Errorf("row %d column %q: got %#v, want %#v", i, c.Name, got, w)
			}
		}
	}
}

func TestGoldenInputBatch(t *testing.T) {
	built := buildGoldenInput(t)
	file := golden(t, "input_batch.arrow", built)
	if !bytes.Equal(file, built) {
		t.Errorf("re-encoding the golden rows gives different bytes than input_batch.arrow (arrow-go encoder changed?)")
	}
	b, err := DecodeBatch(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	checkRows(t, b, true)

	schema := golden(t, "input_schema.arrow", SchemaMessage(b.Schema().Schema()))
	is, err := ReadInputSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	if len(is.Columns()) != len(goldenColumns) {
		t.Fatalf("input_schema.arrow has %d user columns", len(is.Columns()))
	}
	for j, c := range is.Columns() {
		want, err := parseFlinkType(goldenColumns[j].Type)
		if err != nil || c.Name != goldenColumns[j].Name || c.Type != want.String() {
			t.Errorf("input_schema.arrow column %d: %v, want %v", j, c, goldenColumns[j])
		}
	}
	d := NewDecoder(is, nil)
	b2, err := d.DecodeBatch(file)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Release()
	checkRows(t, b2, true)
}

func TestGoldenOutputBatch(t *testing.T) {
	built := buildGoldenOutput(t)
	file := golden(t, "output_batch.arrow", built)
	if !bytes.Equal(file, built) {
		t.Errorf("re-encoding the golden rows gives different bytes than output_batch.arrow (arrow-go encoder changed?)")
	}
	s, err := OutputSchema(goldenColumns)
	if err != nil {
		t.Fatal(err)
	}
	schema := golden(t, "output_schema.arrow", SchemaMessage(s))
	got, err := ReadSchemaMessage(schema)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(s) {
		t.Errorf("output_schema.arrow: %v", got)
	}
	// Decode the output batch with the input machinery by viewing it through
	// a schema check of its own: _ts first, then the user columns.
	rows := readOutput(t, file, s)
	if len(rows) != len(goldenRows) {
		t.Fatalf("rows: %d", len(rows))
	}
	for i, want := range goldenRows {
		if rows[i].hasTS != want.hasTS || rows[i].ts != want.ts {
			t.Errorf("row %d ts: %d,%v", i, rows[i].ts, rows[i].hasTS)
		}
		for j, c := range goldenColumns {
			if g, w := canon(rows[i].values[j]), canon(want.values[j]); !reflect.DeepEqual(g, w) {
				t.Errorf("row %d column %q: got %#v, want %#v", i, c.Name, g, w)
			}
		}
	}
}

// readOutput decodes an OUTPUT stream with plain arrow-go (as an independent
// reader would) and normalises its values with valueAt.
func readOutput(t *testing.T, stream []byte, want *arrow.Schema) []goldenRow {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Schema().Equal(want) {
		t.Fatalf("schema %v, want %v", r.Schema(), want)
	}
	var out []goldenRow
	n := 0
	for r.Next() {
		n++
		rec := r.RecordBatch()
		specs := make([]*typeSpec, rec.NumCols())
		for j := 1; j < int(rec.NumCols()); j++ {
			if specs[j], err = specFromArrow(rec.Schema().Field(j).Type, "", 0); err != nil {
				t.Fatal(err)
			}
		}
		tsCol := rec.Column(0).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			row := goldenRow{hasTS: tsCol.IsValid(i)}
			if row.hasTS {
				row.ts = tsCol.Value(i)
			}
			for j := 1; j < int(rec.NumCols()); j++ {
				row.values = append(row.values, valueAt(specs[j], rec.Column(j), i))
			}
			out = append(out, row)
		}
	}
	if r.Err() != nil || n != 1 {
		t.Fatalf("batches %d, err %v", n, r.Err())
	}
	return out
}
