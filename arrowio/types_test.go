package arrowio

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestParseType(t *testing.T) {
	ok := []struct{ in, canonical, arrow string }{
		{"BOOLEAN", "BOOLEAN", "bool"},
		{"tinyint", "TINYINT", "int8"},
		{"SMALLINT", "SMALLINT", "int16"},
		{"INT", "INT", "int32"},
		{"INTEGER", "INT", "int32"},
		{"BIGINT", "BIGINT", "int64"},
		{"FLOAT", "FLOAT", "float32"},
		{"DOUBLE", "DOUBLE", "float64"},
		{"STRING", "STRING", "utf8"},
		{"BYTES", "BYTES", "binary"},
		{"DECIMAL(10, 2)", "DECIMAL(10, 2)", "decimal(10, 2)"},
		{"decimal(38,0)", "DECIMAL(38, 0)", "decimal(38, 0)"},
		{"DECIMAL(5)", "DECIMAL(5, 0)", "decimal(5, 0)"},
		{"DECIMAL", "DECIMAL(10, 0)", "decimal(10, 0)"},
		{"TIMESTAMP(6)", "TIMESTAMP(6)", "timestamp[us]"},
		{"TIMESTAMP(3)", "TIMESTAMP(3)", "timestamp[us]"},
		{"TIMESTAMP", "TIMESTAMP(6)", "timestamp[us]"},
		{"TIMESTAMP_LTZ(6)", "TIMESTAMP_LTZ(6)", "timestamp[us, tz=UTC]"},
		{"DATE", "DATE", "date32"},
		{"ARRAY<STRING>", "ARRAY<STRING>", "list<item: utf8, nullable>"},
		{" ARRAY < ARRAY<BIGINT> > ", "ARRAY<ARRAY<BIGINT>>", "list<item: list<item: int64, nullable>, nullable>"},
		{"ROW<a INT, b STRING>", "ROW<`a` INT, `b` STRING>", "struct<a: int32 nullable, b: utf8 nullable>"},
		{"ROW<`a b` INT, `x``y` ARRAY<DOUBLE>>", "ROW<`a b` INT, `x``y` ARRAY<DOUBLE>>",
			"struct<a b: int32 nullable, x`y: list<item: float64, nullable> nullable>"},
		{"ROW<`date` DATE>", "ROW<`date` DATE>", "struct<date: date32 nullable>"},
	}
	for _, c := range ok {
		spec, err := parseFlinkType(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if spec.String() != c.canonical || spec.arrow.String() != c.arrow {
			t.Errorf("%q: got %s / %s, want %s / %s", c.in, spec, spec.arrow, c.canonical, c.arrow)
		}
		// The canonical name parses to the same type.
		again, err := parseFlinkType(spec.String())
		if err != nil || !arrow.TypeEqual(again.arrow, spec.arrow) {
			t.Errorf("%q: canonical form does not round-trip: %v", c.in, err)
		}
	}
	bad := []struct{ in, msg string }{
		{"", "expected a type name"},
		{"VARCHAR(10)", "unknown or unsupported type VARCHAR"},
		{"MAP<STRING, INT>", "unsupported type MAP"},
		{"DECIMAL(39, 2)", "precision must be 1..38"},
		{"DECIMAL(5, 6)", "scale 0..precision"},
		{"TIMESTAMP(9)", "precision must be 3..6"},
		{"TIMESTAMP_LTZ(2)", "precision must be 3..6"},
		{"ARRAY<INT", "expected '>'"},
		{"ROW<a INT, a INT>", "duplicate field name"},
		{"ROW<>", "expected a field name"},
		{"INT NOT NULL", "unexpected"},
		{"ROW<`a INT>", "unterminated"},
		{strings.Repeat("ARRAY<", 40) + "INT" + strings.Repeat(">", 40), "nesting"},
	}
	for _, c := range bad {
		if _, err := ParseType(c.in); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.msg)
		}
	}
}

func TestOutputSchema(t *testing.T) {
	s, err := OutputSchema([]Column{{"customer", "STRING"}, {"score", "DOUBLE"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "schema:\n  fields: 3\n    - _ts: type=int64, nullable\n    - customer: type=utf8, nullable\n    - score: type=float64, nullable"
	if s.String() != want {
		t.Errorf("got\n%s\nwant\n%s", s, want)
	}
	for _, cols := range [][]Column{
		{{"a", "INT"}, {"a", "INT"}},
		{{"_ts", "INT"}},
		{{"", "INT"}},
		{{"m", "MAP<STRING, INT>"}},
	} {
		if _, err := OutputSchema(cols); !errors.Is(err, ErrSchema) {
			t.Errorf("%v: %v", cols, err)
		}
	}
}

func TestNewInputSchemaRejects(t *testing.T) {
	kg := arrow.Field{Name: "_key_group", Type: arrow.PrimitiveTypes.Int32}
	key := arrow.Field{Name: "_key", Type: arrow.BinaryTypes.Binary}
	ts := arrow.Field{Name: "_ts", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	cases := []struct {
		fields []arrow.Field
		msg    string
	}{
		{[]arrow.Field{kg, key}, "has 2 columns"},
		{[]arrow.Field{key, kg, ts}, `is "_key" binary, want "_key_group" int32`},
		{[]arrow.Field{kg, f("_key", arrow.BinaryTypes.Binary), ts}, "not null"},
		{[]arrow.Field{kg, key, f("_ts", arrow.PrimitiveTypes.Int32)}, "want \"_ts\" int64"},
		{[]arrow.Field{kg, key, ts, f("u", arrow.PrimitiveTypes.Uint32)}, `"u" has Arrow type uint32`},
		{[]arrow.Field{kg, key, ts, f("ls", arrow.BinaryTypes.LargeString)}, `"ls" has Arrow type large_utf8`},
		{[]arrow.Field{kg, key, ts, f("m", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32))}, `"m" has Arrow type map`},
		{[]arrow.Field{kg, key, ts, f("t", &arrow.TimestampType{Unit: arrow.Millisecond})}, "microseconds"},
		{[]arrow.Field{kg, key, ts, f("t", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Berlin"})}, "time zone"},
		{[]arrow.Field{kg, key, ts, f("d", &arrow.Decimal128Type{Precision: 10, Scale: -1})}, "scale"},
		{[]arrow.Field{kg, key, ts, f("l", arrow.ListOf(arrow.FixedWidthTypes.Float16))}, `"l[]" has Arrow type float16`},
		{[]arrow.Field{kg, key, ts, f("s", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.FixedWidthTypes.Time32ms}))}, `"s.x" has Arrow type time32`},
		{[]arrow.Field{kg, key, ts, f("a", arrow.PrimitiveTypes.Int32), f("a", arrow.PrimitiveTypes.Int32)}, "used twice"},
	}
	for _, c := range cases {
		s := arrow.NewSchema(c.fields, nil)
		_, err := NewInputSchema(s)
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v:\n got %v\nwant %q", s, err, c.msg)
		}
		// The same through the wire: flatbuffer pre-check or arrow-level.
		if _, err := ReadInputSchema(SchemaMessage(s)); !errors.Is(err, ErrSchema) {
			t.Errorf("wire %v: %v", s, err)
		}
	}
}

// TestInputSchemaIndex finds every column by name, and none that is not
// there, both for few columns (a linear scan) and for many (a map).
func TestInputSchemaIndex(t *testing.T) {
	for _, n := range []int{1, 3, 8, 9, 20} {
		var cols []Column
		for i := 0; i < n; i++ {
			cols = append(cols, Column{Name: fmt.Sprintf("c%d", i), Type: "BIGINT"})
		}
		is := inputSchemaOf(t, cols)
		for i, c := range cols {
			if got := is.Index(c.Name); got != i {
				t.Errorf("%d columns: Index(%q) = %d, want %d", n, c.Name, got, i)
			}
		}
		for _, missing := range []string{"", "c", fmt.Sprintf("c%d", n), "_key"} {
			if got := is.Index(missing); got != -1 {
				t.Errorf("%d columns: Index(%q) = %d, want -1", n, missing, got)
			}
		}
	}
}
