package statestore

import (
	"testing"
)

// The typical record: 2 memory updates, 1 output event, 1 durable call.

func BenchmarkEncodeRecord(b *testing.B) {
	r := typicalRecord(b)
	v, _ := EncodeRecord(r)
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeRecord(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendRecord(b *testing.B) {
	r := typicalRecord(b)
	buf, _ := EncodeRecord(r)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendRecord(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRecord(b *testing.B) {
	r := typicalRecord(b)
	key := r.Key.Bytes()
	v, _ := EncodeRecord(r)
	b.SetBytes(int64(len(key) + len(v)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRecord(key, v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordKey(b *testing.B) {
	k := testKey("classify")
	buf := k.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		buf = k.AppendBinary(buf[:0])
		if _, err := ParseRecordKey(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArgsDigest(b *testing.B) {
	args := map[string]any{"prompt": "How do you feel?", "temperature": 0.2, "tags": []any{"a", "b"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ArgsDigest(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryPut(b *testing.B) {
	s := NewMemory()
	r := typicalRecord(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Put(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryGet(b *testing.B) {
	s := NewMemory()
	r := typicalRecord(b)
	if err := s.Put(r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.Get(r.Key); !ok {
			b.Fatal("missing")
		}
	}
}
