package statestore

import (
	"math"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
)

// Shared fixtures of the record codec tests.

func testUUID(b byte) snapshot.UUID {
	var u snapshot.UUID
	for i := range u {
		u[i] = b + byte(i)
	}
	return u
}

func mustValue(t testing.TB, v any) []byte {
	t.Helper()
	b, err := EncodeValue(v)
	if err != nil {
		t.Fatalf("EncodeValue(%v): %v", v, err)
	}
	return b
}

func mustDigest(t testing.TB, v any) [32]byte {
	t.Helper()
	d, err := ArgsDigest(v)
	if err != nil {
		t.Fatalf("ArgsDigest(%v): %v", v, err)
	}
	return d
}

func testKey(action string) RecordKey {
	return RecordKey{
		KeyGroup: 17,
		KeyHash:  HashKey([]byte("user-42")),
		Seq:      3,
		EventID:  testUUID(0x10),
		Action:   action,
	}
}

// typicalRecord is the benchmark's record: 2 memory updates, 1 output event,
// 1 durable call.
func typicalRecord(t testing.TB) *Record {
	return &Record{
		Key:    testKey("classify"),
		Status: StatusCompleted,
		Updates: []MemUpdate{
			{Scope: ScopeShortTerm, Path: "profile.sentiment", Value: "positive"},
			{Scope: ScopeSensory, Path: "scratch", Object: true, Overwrite: true},
		},
		Events: []snapshot.Event{{
			ID:             testUUID(0x20),
			Type:           "_output_event",
			Attrs:          map[string]any{"output": []any{"user-42", int64(7), 0.875}},
			UpstreamID:     testUUID(0x10),
			UpstreamAction: "classify",
		}},
		Calls: []CallRecord{{
			CallID:     "llm.classify",
			ArgsDigest: mustDigest(t, map[string]any{"prompt": "How do you feel?", "temperature": 0.2}),
			Status:     CallSucceeded,
			Result:     mustValue(t, map[string]any{"label": "positive", "score": 0.93}),
		}},
	}
}

// allKinds holds every kind of the value domain, nested.
func allKinds() map[string]any {
	return map[string]any{
		"nil":    nil,
		"true":   true,
		"false":  false,
		"ints":   []any{int64(0), int64(1), int64(-1), int64(127), int64(128), int64(-32), int64(-33), int64(255), int64(256), int64(65535), int64(65536), int64(-129), int64(-32769), int64(math.MaxUint32), int64(math.MaxInt64), int64(math.MinInt64)},
		"floats": []any{0.0, 1.5, -2.25, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1)},
		"str":    "héllo, wörld",
		"empty":  "",
		"bytes":  []byte{0, 1, 2, 0xff},
		"nobyte": []byte{},
		"list":   []any{},
		"map":    map[string]any{},
		"nested": map[string]any{"a": []any{map[string]any{"b": []any{nil, "x", []byte("y")}}}},
	}
}

// valueCases are memory-update values, one per kind and edge.
var valueCases = []struct {
	name string
	v    any
}{
	{"nil", nil},
	{"true", true},
	{"false", false},
	{"int0", int64(0)},
	{"intNegFix", int64(-32)},
	{"int8", int64(-100)},
	{"uint8", int64(200)},
	{"int16", int64(-30000)},
	{"uint16", int64(60000)},
	{"int32", int64(-2_000_000_000)},
	{"uint32", int64(4_000_000_000)},
	{"int64", int64(math.MinInt64)},
	{"uint64", int64(math.MaxInt64)},
	{"float", 3.25},
	{"floatWhole", 2.0}, // stays a float, not an int
	{"floatInf", math.Inf(-1)},
	{"string", "text"},
	{"stringLong", string(make([]byte, 70000))},
	{"emptyString", ""},
	{"bytes", []byte("raw")},
	{"emptyBytes", []byte{}},
	{"list", []any{int64(1), "two", 3.0}},
	{"emptyList", []any{}},
	{"map", map[string]any{"z": int64(1), "a": "b"}},
	{"emptyMap", map[string]any{}},
	{"allKinds", allKinds()},
}
