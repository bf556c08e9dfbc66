package statestore

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
)

func roundTrip(t *testing.T, r *Record) *Record {
	t.Helper()
	v, err := EncodeRecord(r)
	if err != nil {
		t.Fatalf("EncodeRecord: %v", err)
	}
	got, err := DecodeRecord(r.Key.Bytes(), v)
	if err != nil {
		t.Fatalf("DecodeRecord: %v", err)
	}
	again, err := EncodeRecord(got)
	if err != nil {
		t.Fatalf("EncodeRecord(decoded): %v", err)
	}
	if !bytes.Equal(v, again) {
		t.Fatalf("re-encoding differs:\n first %x\nsecond %x", v, again)
	}
	return got
}

func TestRecordRoundTripValues(t *testing.T) {
	for _, tc := range valueCases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Record{Key: testKey("a"), Status: StatusRunning,
				Updates: []MemUpdate{{Scope: ScopeShortTerm, Path: "x.y", Value: tc.v}}}
			got := roundTrip(t, r)
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", got.Updates[0].Value, tc.v)
			}
		})
	}
}

func TestRecordRoundTrip(t *testing.T) {
	kinds := allKinds()
	cases := []struct {
		name string
		r    *Record
	}{
		{"typical", typicalRecord(t)},
		{"empty running", &Record{Key: testKey(""), Status: StatusRunning}},
		{"updates of every form", &Record{Key: testKey("mem"), Status: StatusCompleted, Updates: []MemUpdate{
			{Scope: ScopeShortTerm, Path: "a", Value: int64(1)},
			{Scope: ScopeShortTerm, Path: "a.b", Object: true},
			{Scope: ScopeShortTerm, Path: "a.c", Object: true, Overwrite: true},
			{Scope: ScopeSensory, Path: "a", Delete: true},
			{Scope: ScopeSensory, Path: "", Value: nil},
		}}},
		{"events", &Record{Key: testKey("send"), Status: StatusCompleted, Events: []snapshot.Event{
			{ID: testUUID(1), Type: "my_event", Attrs: kinds, UpstreamID: testUUID(2), UpstreamAction: "send"},
			{ID: testUUID(3), Type: "no_lineage", Attrs: map[string]any{}},
			{ID: testUUID(4), Type: "_output_event", Attrs: map[string]any{"output": []any{nil, int64(1), "x"}}},
		}}},
		{"nil result", &Record{Key: testKey("call"), Status: StatusCompleted, Calls: []CallRecord{
			{CallID: "returns-nil", Status: CallSucceeded, Result: mustValue(t, nil)},
		}}},
		{"every result kind", &Record{Key: testKey("call"), Status: StatusCompleted, Calls: []CallRecord{
			{CallID: "kinds", ArgsDigest: mustDigest(t, kinds), Status: CallSucceeded, Result: mustValue(t, kinds)},
			{CallID: "int", Status: CallSucceeded, Result: mustValue(t, 5)},
		}}},
		{"failed calls", &Record{Key: testKey("call"), Status: StatusRunning, Calls: []CallRecord{
			{CallID: "retryable", Status: CallFailed, Error: "timeout", ErrorKind: 0},
			{CallID: "permanent", Status: CallFailed, Error: "bad request", ErrorKind: 1},
			{CallID: "human", Status: CallFailed, Error: "", ErrorKind: 2},
		}}},
		{"pending call", &Record{Key: testKey("call"), Status: StatusRunning, Calls: []CallRecord{
			{CallID: "ok", Status: CallSucceeded, Result: mustValue(t, "done")},
			{CallID: "reconciled", ArgsDigest: mustDigest(t, []any{"a", 1}), Status: CallPending},
		}}},
		{"action name of any bytes", &Record{Key: testKey("a_b\x00\xff\n_1"), Status: StatusRunning}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := roundTrip(t, tc.r); !reflect.DeepEqual(got, tc.r) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.r)
			}
		})
	}
}

func TestNilResultIsMsgpackNil(t *testing.T) {
	b := mustValue(t, nil)
	if !bytes.Equal(b, []byte{0xc0}) {
		t.Fatalf("EncodeValue(nil) = %x, want c0", b)
	}
	v, err := DecodeValue(b)
	if err != nil || v != nil {
		t.Fatalf("DecodeValue(c0) = %v, %v; want nil, nil", v, err)
	}
}

func TestDecodeEmptyContainers(t *testing.T) {
	// nil containers encode as empty ones and decode as empty, non-nil ones.
	r := &Record{Key: testKey("a"), Status: StatusCompleted,
		Updates: []MemUpdate{{Scope: ScopeShortTerm, Path: "p", Value: map[string]any{"l": []any(nil), "m": map[string]any(nil), "b": []byte(nil)}}},
		Events:  []snapshot.Event{{ID: testUUID(1), Type: "t"}},
		Calls:   []CallRecord{},
	}
	got := roundTrip(t, r)
	want := map[string]any{"l": []any{}, "m": map[string]any{}, "b": []byte{}}
	if !reflect.DeepEqual(got.Updates[0].Value, want) {
		t.Errorf("value = %#v, want %#v", got.Updates[0].Value, want)
	}
	if got.Events[0].Attrs == nil || len(got.Events[0].Attrs) != 0 {
		t.Errorf("attrs = %#v, want empty map", got.Events[0].Attrs)
	}
	if got.Calls != nil {
		t.Errorf("calls = %#v, want nil", got.Calls)
	}
}

func TestEncodeDeterministic(t *testing.T) {
	a := map[string]any{}
	b := map[string]any{}
	for i := range 50 {
		a[string(rune('a'+i%26))+strings.Repeat("k", i)] = int64(i)
	}
	for k, v := range a {
		b[k] = v
	}
	r1 := &Record{Key: testKey("x"), Status: StatusCompleted, Events: []snapshot.Event{{ID: testUUID(1), Type: "t", Attrs: a}}}
	r2 := &Record{Key: testKey("x"), Status: StatusCompleted, Events: []snapshot.Event{{ID: testUUID(1), Type: "t", Attrs: b}}}
	first, err := EncodeRecord(r1)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, err := EncodeRecord(r2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("equal records encode differently:\n%x\n%x", first, got)
		}
	}
}

func TestArgsDigest(t *testing.T) {
	d := func(v any) [32]byte { return mustDigest(t, v) }
	if d(int(1)) != d(int64(1)) || d(uint8(1)) != d(int64(1)) || d(int32(-5)) != d(int64(-5)) {
		t.Error("integer widths must not change the digest")
	}
	if d(float32(0.5)) != d(0.5) {
		t.Error("float32 0.5 and float64 0.5 must give the same digest")
	}
	if d(int64(1)) == d(1.0) || d(int64(1)) == d("1") || d("a") == d([]byte("a")) || d(nil) == d(false) {
		t.Error("different kinds must give different digests")
	}
	m1 := map[string]any{"a": int64(1), "b": []any{"x"}}
	m2 := map[string]any{"b": []any{"x"}, "a": 1}
	if d(m1) != d(m2) {
		t.Error("maps with equal content must give the same digest")
	}
	for _, bad := range []any{struct{}{}, []string{"a"}, map[string]int{}, uint64(math.MaxUint64), []any{1, map[string]any{"k": make(chan int)}}} {
		_, err := ArgsDigest(bad)
		var ve *ValueError
		if !errors.As(err, &ve) || !errors.Is(err, ErrValueDomain) {
			t.Errorf("ArgsDigest(%T): err %v, want a *ValueError", bad, err)
		}
	}
	_, err := ArgsDigest([]any{1, map[string]any{"k": make(chan int)}})
	if msg := err.Error(); !strings.Contains(msg, "[1].k") || !strings.Contains(msg, "chan int") {
		t.Errorf("error %q should name the path [1].k and the Go type chan int", msg)
	}
}

func TestEncodeRecordInvalid(t *testing.T) {
	cyclic := []any{nil}
	cyclic[0] = cyclic
	upd := func(u MemUpdate) *Record {
		return &Record{Key: testKey("a"), Status: StatusRunning, Updates: []MemUpdate{u}}
	}
	call := func(c CallRecord) *Record {
		return &Record{Key: testKey("a"), Status: StatusRunning, Calls: []CallRecord{c}}
	}
	cases := []struct {
		name   string
		r      *Record
		domain bool // also ErrValueDomain
	}{
		{"status 0", &Record{Key: testKey("a")}, false},
		{"status 3", &Record{Key: testKey("a"), Status: 3}, false},
		{"negative key group", &Record{Key: RecordKey{KeyGroup: -1}, Status: StatusRunning}, false},
		{"action name too long", &Record{Key: testKey(strings.Repeat("x", MaxActionNameLen+1)), Status: StatusRunning}, false},
		{"scope 0", upd(MemUpdate{Path: "a"}), false},
		{"object with value", upd(MemUpdate{Scope: 1, Path: "a", Object: true, Value: int64(1)}), false},
		{"delete with value", upd(MemUpdate{Scope: 1, Path: "a", Delete: true, Value: "x"}), false},
		{"delete and object", upd(MemUpdate{Scope: 1, Path: "a", Delete: true, Object: true}), false},
		{"overwrite without object", upd(MemUpdate{Scope: 1, Path: "a", Overwrite: true}), false},
		{"int value", upd(MemUpdate{Scope: 1, Path: "a", Value: 1}), true},
		{"nested bad value", upd(MemUpdate{Scope: 1, Path: "a", Value: map[string]any{"t": []string{"x"}}}), true},
		{"cyclic value", upd(MemUpdate{Scope: 1, Path: "a", Value: cyclic}), true},
		{"bad attr", &Record{Key: testKey("a"), Status: StatusRunning, Events: []snapshot.Event{{Attrs: map[string]any{"f": float32(1)}}}}, true},
		{"call status 0", call(CallRecord{CallID: "c"}), false},
		{"succeeded without result", call(CallRecord{Status: CallSucceeded}), false},
		{"succeeded with two values", call(CallRecord{Status: CallSucceeded, Result: []byte{0xc0, 0xc0}}), false},
		{"succeeded with ext", call(CallRecord{Status: CallSucceeded, Result: []byte{0xd4, 1, 1}}), false},
		{"succeeded with truncated result", call(CallRecord{Status: CallSucceeded, Result: []byte{0xa5, 'a'}}), false},
		{"succeeded with error", call(CallRecord{Status: CallSucceeded, Result: []byte{0xc0}, Error: "x"}), false},
		{"pending with result", call(CallRecord{Status: CallPending, Result: []byte{0xc0}}), false},
		{"failed with result", call(CallRecord{Status: CallFailed, Result: []byte{0xc0}}), false},
		{"failed kind 3", call(CallRecord{Status: CallFailed, ErrorKind: 3}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeRecord(tc.r)
			var re *RecordError
			if !errors.As(err, &re) || !errors.Is(err, ErrRecordInvalid) {
				t.Fatalf("err = %v, want a *RecordError of kind ErrRecordInvalid", err)
			}
			if errors.Is(err, ErrValueDomain) != tc.domain {
				t.Fatalf("errors.Is(err, ErrValueDomain) = %v, want %v (err %v)", !tc.domain, tc.domain, err)
			}
		})
	}
}

func TestDecodeRecordCorrupt(t *testing.T) {
	r := typicalRecord(t)
	key := r.Key.Bytes()
	val, err := EncodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	// Every truncation and every single-byte extension is an error, never a panic.
	for i := range len(val) {
		if _, err := DecodeRecord(key, val[:i]); !errors.Is(err, ErrRecordCorrupt) {
			t.Fatalf("truncated at %d: err = %v, want ErrRecordCorrupt", i, err)
		}
	}
	if _, err := DecodeRecord(key, append(bytes.Clone(val), 0)); !errors.Is(err, ErrRecordCorrupt) {
		t.Fatalf("trailing byte: err = %v", err)
	}
	cases := []struct {
		name string
		val  []byte
	}{
		{"not an array", []byte{0x01}},
		{"empty array", []byte{0x90}},
		{"nil version", []byte{0x95, 0xc0, 1, 0x90, 0x90, 0x90}},
		{"4 fields", []byte{0x94, 1, 1, 0x90, 0x90}},
		{"nil status", []byte{0x95, 1, 0xc0, 0x90, 0x90, 0x90}},
		{"status 3", []byte{0x95, 1, 3, 0x90, 0x90, 0x90}},
		{"huge array claim", []byte{0x95, 1, 1, 0xdd, 0xff, 0xff, 0xff, 0xff}},
		{"huge str claim", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xdb, 0xff, 0xff, 0xff, 0xff}},
		{"uint64 above int64", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 0, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x90, 0x90}},
		{"ext value", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 0, 0xd4, 1, 1, 0x90, 0x90}},
		{"duplicate map key", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 0, 0x82, 0xa1, 'k', 1, 0xa1, 'k', 2, 0x90, 0x90}},
		{"bin map key", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 0, 0x81, 0xc4, 1, 'k', 1, 0x90, 0x90}},
		{"unknown flag", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 8, 0xc0, 0x90, 0x90}},
		{"object with value", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 1, 1, 0x90, 0x90}},
		{"bool as path", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xc3, 0, 0xc0, 0x90, 0x90}},
		{"reserved code", []byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 0, 0xc1, 0x90, 0x90}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRecord(key, tc.val)
			var re *RecordError
			if !errors.As(err, &re) || !errors.Is(err, ErrRecordCorrupt) {
				t.Fatalf("err = %v, want a *RecordError of kind ErrRecordCorrupt", err)
			}
		})
	}
	// Deep nesting is refused, not recursed into.
	deep := append([]byte{0x95, 1, 1, 0x91, 0x94, 1, 0xa0, 0}, bytes.Repeat([]byte{0x91}, 100000)...)
	if _, err := DecodeRecord(key, deep); !errors.Is(err, ErrRecordCorrupt) || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("deep nesting: err = %v", err)
	}
}

func TestDecodeRecordVersion(t *testing.T) {
	key := testKey("a").Bytes()
	_, err := DecodeRecord(key, []byte{0x93, 2, 0xc0, 0xc0})
	if !errors.Is(err, ErrRecordVersion) {
		t.Fatalf("err = %v, want ErrRecordVersion", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "version 2 found") || !strings.Contains(msg, "supports version 1") {
		t.Errorf("message %q should name both versions", msg)
	}
	bad := bytes.Clone(key)
	bad[0] = 9
	if _, err := DecodeRecord(bad, nil); !errors.Is(err, ErrRecordVersion) {
		t.Fatalf("key version 9: err = %v, want ErrRecordVersion", err)
	}
}

func TestDecodeRecordFor(t *testing.T) {
	r := typicalRecord(t) // key group 17
	val, err := EncodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeRecordFor(r.Key.Bytes(), val, snapshot.KeyGroupRange{Start: 17, End: 17}); err != nil {
		t.Fatalf("owned: %v", err)
	}
	for _, owned := range []snapshot.KeyGroupRange{{Start: 0, End: 16}, {Start: 18, End: 127}} {
		_, err := DecodeRecordFor(r.Key.Bytes(), val, owned)
		if !errors.Is(err, ErrRecordKeyGroup) || !strings.Contains(err.Error(), "key group 17") {
			t.Errorf("owned %v: err = %v, want ErrRecordKeyGroup naming key group 17", owned, err)
		}
	}
	// Ownership is checked before the value: garbage of another key group is skipped cheaply.
	if _, err := DecodeRecordFor(r.Key.Bytes(), []byte{0xc1}, snapshot.KeyGroupRange{Start: 0, End: 1}); !errors.Is(err, ErrRecordKeyGroup) {
		t.Errorf("err = %v, want ErrRecordKeyGroup", err)
	}
}

func TestDecodeValueNoAlias(t *testing.T) {
	r := typicalRecord(t)
	key := r.Key.Bytes()
	val, _ := EncodeRecord(r)
	got, err := DecodeRecord(key, val)
	if err != nil {
		t.Fatal(err)
	}
	for i := range val {
		val[i] = 0
	}
	for i := range key {
		key[i] = 0
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatal("decoded record changed when the input bytes were overwritten")
	}
}

// TestEncodeKeyValue: the Kafka store's one-allocation encoding is the key
// and the value as RecordKey.Bytes and EncodeRecord give them.
func TestEncodeKeyValue(t *testing.T) {
	for name, r := range goldenRecords(t) {
		key, val, err := encodeKeyValue(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := EncodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(key, r.Key.Bytes()) || !bytes.Equal(val, want) || cap(key) != len(key) {
			t.Errorf("%s: key %x value %x (key cap %d), want %x and %x", name, key, val, cap(key), r.Key.Bytes(), want)
		}
	}
	if _, _, err := encodeKeyValue(&Record{Key: RecordKey{Action: ""}}); err == nil {
		t.Error("an invalid record encoded")
	}
}
