package arrowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestRoundTripAllTypes(t *testing.T) {
	stream := buildGoldenInput(t)
	for _, alloc := range []memory.Allocator{nil, memory.NewGoAllocator()} {
		b, err := DecodeBatch(stream, alloc)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, b, true)
		b.Release()
	}
	s, _ := OutputSchema(goldenColumns)
	rows := readOutput(t, buildGoldenOutput(t), s)
	if len(rows) != len(goldenRows) {
		t.Fatal(len(rows))
	}
}

func TestCopyModeIsIndependentOfInput(t *testing.T) {
	stream := buildGoldenInput(t)
	b, err := DecodeBatch(stream, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	for i := range stream {
		stream[i] = 0
	}
	checkRows(t, b, true)
}

func TestTypedGetters(t *testing.T) {
	b := decodeGolden(t)
	defer b.Release()
	r := b.Row(0)
	idx := func(n string) int { return r.Index(n) }
	if !r.Bool(idx("flag")) || r.Int64(idx("tiny")) != 127 || r.Int64(idx("big")) != 9223372036854775807 {
		t.Error("bool/int getters")
	}
	if r.Float64(idx("ratio")) != 1.5 || r.Float64(idx("score")) != 3.25 {
		t.Error("float getters")
	}
	if r.Str(idx("name")) != "héllo ✓" || string(r.Bytes(idx("name"))) != "héllo ✓" || !bytes.Equal(r.Bytes(idx("payload")), []byte{0, 1, 0xFF}) {
		t.Error("string getters")
	}
	if r.Decimal(idx("price")) != "12.50" || !r.Time(idx("day")).Equal(utc(2024, 2, 29, 0, 0, 0, 0)) {
		t.Error("decimal/time getters")
	}
	if r.Index("nope") != -1 || r.IsNull(idx("flag")) || !b.Row(1).IsNull(idx("flag")) {
		t.Error("index/isnull")
	}
	if b.Row(1).Str(idx("name")) != "" || b.Row(1).Bytes(idx("payload")) != nil || !b.Row(1).Time(idx("instant")).IsZero() {
		t.Error("null getters")
	}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(p.(string), `"name"`) {
				t.Errorf("wrong-type getter: %v", p)
			}
		}()
		r.Int64(idx("name"))
	}()
}

func TestRowAfterReleasePanics(t *testing.T) {
	b := decodeGolden(t)
	r := b.Row(0)
	b.Release()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	r.Value(0)
}

// splitStream returns the schema message, the batch message and the EOS of
// a stream written by the builders.
func splitStream(t *testing.T, s []byte) (schema, batch, end []byte) {
	m1, p, _, err := nextMessage(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	m2, p2, _, err := nextMessage(s, p)
	if err != nil {
		t.Fatal(err)
	}
	_ = m2
	return m1.raw, s[p:p2], s[p2:]
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDecodeRejects(t *testing.T) {
	stream := buildGoldenInput(t)
	sm, bm, end := splitStream(t, stream)
	other, _ := NewInputBuilder([]Column{{"x", "INT"}}, nil)
	_ = other.Append(1, []byte("k"), 0, false, []any{int64(1)})
	otherStream, _ := other.Flush()
	osm, _, _ := splitStream(t, otherStream)

	cases := []struct {
		name string
		in   []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrMalformed, "truncated"},
		{"zero batches", cat(sm, end), ErrMalformed, "no record batch"},
		{"two batches", cat(sm, bm, bm, end), ErrMalformed, "several record batches"},
		{"no eos", cat(sm, bm), ErrMalformed, "truncated"},
		{"trailing bytes", cat(sm, bm, end, []byte{1}), ErrMalformed, "after the end-of-stream"},
		{"schema mismatch", cat(osm, bm, end), ErrSchema, "differs"},
		{"batch first", cat(bm, end), ErrMalformed, "schema message"},
		{"legacy format", stream[4:], ErrMalformed, "continuation"},
	}
	is, err := ReadInputSchema(sm)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		d := NewDecoder(is, nil)
		b, err := d.DecodeBatch(c.in)
		if err == nil {
			b.Release()
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Every truncation of a valid stream is an error, never a panic.
	d := NewDecoder(is, nil)
	for n := 0; n < len(stream); n++ {
		if b, err := d.DecodeBatch(stream[:n]); err == nil {
			b.Release()
			t.Fatalf("prefix %d decoded", n)
		}
	}
	// The decoder still works after errors.
	b, err := d.DecodeBatch(stream)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, b, true)
	b.Release()
}

func TestDecodeRejectsCorruptOffsets(t *testing.T) {
	b, _ := NewInputBuilder([]Column{{"s", "STRING"}}, nil)
	_ = b.Append(1, []byte("key"), 0, false, []any{"hello"})
	_ = b.Append(1, []byte("key"), 0, false, []any{"world"})
	stream, _ := b.Flush()
	// Find the offsets of column s (0, 5, 10) in the body and break them.
	needle := make([]byte, 12)
	binary.LittleEndian.PutUint32(needle[4:], 5)
	binary.LittleEndian.PutUint32(needle[8:], 10)
	i := bytes.Index(stream, needle)
	if i < 0 {
		t.Fatal("offsets not found")
	}
	for _, bad := range []uint32{11, 0xFFFFFFFF} {
		s := bytes.Clone(stream)
		binary.LittleEndian.PutUint32(s[i+8:], bad)
		if bt, err := DecodeBatch(s, nil); err == nil {
			bt.Release()
			t.Errorf("offset %d accepted", bad)
		} else if !errors.Is(err, ErrMalformed) {
			t.Errorf("offset %d: %v", bad, err)
		}
	}
}

// Random corruptions of a valid stream decode or fail, never panic, and
// whatever decodes can be read in full.
func TestDecodeMutations(t *testing.T) {
	golden := buildGoldenInput(t)
	sm, _, _, err := nextMessage(golden, 0)
	if err != nil {
		t.Fatal(err)
	}
	is, err := ReadInputSchema(sm.raw)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	d := NewDecoder(is, NewPoolAllocator(1<<20))
	decoded := 0
	for n := 0; n < 3000; n++ {
		m := bytes.Clone(golden)
		for k := 0; k < 1+rng.Intn(4); k++ {
			m[rng.Intn(len(m))] = byte(rng.Intn(256))
		}
		for _, dec := range []func([]byte) (*Batch, error){d.DecodeBatch, func(b []byte) (*Batch, error) { return DecodeBatch(b, nil) }} {
			b, err := dec(m)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrSchema) {
					t.Fatalf("mutation %d: unclassified error %v", n, err)
				}
				continue
			}
			decoded++
			touch(b)
			b.Release()
		}
	}
	t.Logf("%d of 6000 decodes of corrupted streams succeeded (values changed only)", decoded)
}

func TestEmptyBatch(t *testing.T) {
	in, _ := NewInputBuilder(goldenColumns, nil)
	stream, err := in.Flush()
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeBatch(stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 || b.Schema().NumFields() != len(goldenColumns) {
		t.Fatal(b.Len())
	}
	b.Release()
	out, _ := NewOutputBuilder(goldenColumns, nil)
	if s, err := out.Flush(); err != nil || len(s) == 0 {
		t.Fatal(err)
	}
}
