package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSectionRoundTrip(t *testing.T) {
	bigKey := bytes.Repeat([]byte{0xab}, 2000)
	tests := []struct {
		name string
		s    *Section
		flag string // "zstd" or "raw": the payload must be stored so
	}{
		{name: "empty", s: &Section{KeyGroup: 0}, flag: "raw"},
		{name: "empty max key group", s: &Section{KeyGroup: MaxKeyGroup}},
		{name: "empty key, no state", s: &Section{KeyGroup: 1, Keys: []KeyState{{Key: []byte{}}}}},
		{name: "small", s: smallSection()},
		{name: "every value kind", s: valuesSection(), flag: "zstd"},
		{name: "many keys", s: counterSection(5, 0, 2000), flag: "zstd"},
		{name: "long key", s: &Section{KeyGroup: 3, Keys: []KeyState{{Key: bigKey, NextSeq: 1}}}},
		{name: "in-flight without tasks", s: &Section{KeyGroup: 9, Keys: []KeyState{{
			Key: []byte("k"), InFlight: &InFlight{Input: Input{EventID: uid(1)}},
		}}}},
		{name: "highly compressible", s: &Section{KeyGroup: 4, Keys: []KeyState{{
			Key: []byte("k"), ShortTerm: []MemItem{{Path: "blob", Value: strings.Repeat("a", 8<<20)}},
		}}}, flag: "zstd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := EncodeSection(tt.s)
			if err != nil {
				t.Fatalf("EncodeSection: %v", err)
			}
			if z := binary.BigEndian.Uint16(b[6:])&FlagZstd != 0; tt.flag != "" && z != (tt.flag == "zstd") {
				t.Errorf("zstd flag = %v, want payload %s (section of %d bytes)", z, tt.flag, len(b))
			}
			got, err := DecodeSection(b)
			if err != nil {
				t.Fatalf("DecodeSection: %v", err)
			}
			if !reflect.DeepEqual(got, tt.s) {
				t.Fatalf("round trip differs:\n got %#v\nwant %#v", got, tt.s)
			}
			b2, err := EncodeSection(got)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			if !bytes.Equal(b, b2) {
				t.Fatal("encode → decode → encode changed the bytes")
			}
			b3, _ := EncodeSection(tt.s)
			if !bytes.Equal(b, b3) {
				t.Fatal("encoding the same section twice gave different bytes")
			}
			if got, err := DecodeSectionFor(b, KeyGroupRange{Start: tt.s.KeyGroup, End: tt.s.KeyGroup}); err != nil || got.KeyGroup != tt.s.KeyGroup {
				t.Fatalf("DecodeSectionFor its own key group: %v", err)
			}
		})
	}
}

// TestValueKinds checks that each value comes back with exactly the Go type
// of the value domain.
func TestValueKinds(t *testing.T) {
	vals := everyValue()
	s := valuesSection()
	b, err := EncodeSection(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSection(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got.Keys[0].ShortTerm[1:] {
		want := vals[strings.TrimPrefix(it.Path, "v.")]
		if reflect.TypeOf(it.Value) != reflect.TypeOf(want) {
			t.Errorf("%s: decoded as %T, want %T", it.Path, it.Value, want)
		}
	}
	row := got.Keys[0].InFlight.Input.Row
	if tm, ok := row[1].Value.(time.Time); !ok || tm.Location() != time.UTC {
		t.Errorf("row time decoded as %#v, want a UTC time.Time", row[1].Value)
	}
}

// TestFloatBits: NaN, -0 and infinities keep their exact bits.
func TestFloatBits(t *testing.T) {
	fs := []float64{math.NaN(), math.Copysign(0, -1), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64}
	l := make([]any, len(fs))
	for i, f := range fs {
		l[i] = f
	}
	s := &Section{KeyGroup: 1, Keys: []KeyState{{Key: []byte("f"), ShortTerm: []MemItem{{Path: "f", Value: l}}}}}
	b, err := EncodeSection(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSection(b)
	if err != nil {
		t.Fatal(err)
	}
	gl := got.Keys[0].ShortTerm[0].Value.([]any)
	for i, f := range fs {
		if math.Float64bits(gl[i].(float64)) != math.Float64bits(f) {
			t.Errorf("float %d: got bits %x, want %x", i, math.Float64bits(gl[i].(float64)), math.Float64bits(f))
		}
	}
}

// TestNormalisedForms: inputs that are not in canonical form decode to it
// and re-encode to the same bytes.
func TestNormalisedForms(t *testing.T) {
	local := time.FixedZone("X", 3600)
	tm := time.Date(2024, 1, 2, 3, 4, 5, 6, local)
	s := &Section{KeyGroup: 2, Keys: []KeyState{{
		Key:       []byte("k"),
		ShortTerm: []MemItem{{Path: "l", Value: []any(nil)}, {Path: "m", Value: map[string]any(nil)}, {Path: "nb", Value: []byte(nil)}},
		Queued:    []Input{{EventID: uid(1), Row: []Field{{Name: "t", Value: tm}}}},
	}}}
	b, err := EncodeSection(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSection(b)
	if err != nil {
		t.Fatal(err)
	}
	mem := got.Keys[0].ShortTerm
	if l, ok := mem[0].Value.([]any); !ok || l == nil || len(l) != 0 {
		t.Errorf("nil []any decoded as %#v, want empty []any", mem[0].Value)
	}
	if m, ok := mem[1].Value.(map[string]any); !ok || m == nil || len(m) != 0 {
		t.Errorf("nil map decoded as %#v, want empty map", mem[1].Value)
	}
	if nb, ok := mem[2].Value.([]byte); !ok || nb == nil || len(nb) != 0 {
		t.Errorf("nil []byte decoded as %#v, want empty []byte", mem[2].Value)
	}
	gt := got.Keys[0].Queued[0].Row[0].Value.(time.Time)
	if !gt.Equal(tm) || gt.Location() != time.UTC {
		t.Errorf("time decoded as %v, want %v in UTC", gt, tm)
	}
	b2, err := EncodeSection(got)
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("re-encode of normalised section differs (err %v)", err)
	}
}

// TestDecodedOwnsMemory: mutating the input bytes after decoding does not
// change the decoded section.
func TestDecodedOwnsMemory(t *testing.T) {
	s := smallSection()
	b, _ := EncodeSection(s)
	if b[6]|b[7] != 0 {
		t.Skip("small section is compressed; ownership of the uncompressed path not tested")
	}
	got, err := DecodeSection(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := sectionHeaderLen; i < len(b); i++ {
		b[i] = 0xee
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatal("decoded section changed when the input bytes were overwritten")
	}
}

// Keys in any order are sorted by EncodeSection: same bytes as sorted input.
func TestEncodeSortsKeys(t *testing.T) {
	key := func(k string) KeyState { return KeyState{Key: []byte(k)} }
	sorted, err := EncodeSection(&Section{KeyGroup: 7, Keys: []KeyState{key("a"), key("b"), key("c")}})
	if err != nil {
		t.Fatal(err)
	}
	shuffled := &Section{KeyGroup: 7, Keys: []KeyState{key("c"), key("a"), key("b")}}
	got, err := EncodeSection(shuffled)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sorted) || string(shuffled.Keys[0].Key) != "a" {
		t.Fatal("unsorted keys did not encode like sorted ones")
	}
}

func TestEncodeErrors(t *testing.T) {
	key := func(k string, mem ...MemItem) KeyState { return KeyState{Key: []byte(k), ShortTerm: mem} }
	deep := any(int64(1))
	for range maxDepth + 1 {
		deep = []any{deep}
	}
	tests := []struct {
		name string
		s    *Section
		want []string // substrings of the message
	}{
		{"nil section", nil, []string{"nil section"}},
		{"negative key group", &Section{KeyGroup: -1}, []string{"key group -1"}},
		{"key group too large", &Section{KeyGroup: MaxKeyGroup + 1}, []string{"key group 32768"}},
		{"duplicate keys", &Section{KeyGroup: 7, Keys: []KeyState{key("a"), key("a")}}, []string{"duplicate key"}},
		{"unsorted paths", &Section{KeyGroup: 7, Keys: []KeyState{key("a", MemItem{Path: "b"}, MemItem{Path: "a"})}}, []string{"short-term memory", "paths are not sorted", `"a" after "b"`}},
		{"duplicate paths", &Section{KeyGroup: 7, Keys: []KeyState{key("a", MemItem{Path: "b"}, MemItem{Path: "b"})}}, []string{"duplicate path"}},
		{"object with value", &Section{KeyGroup: 7, Keys: []KeyState{key("a", MemItem{Path: "o", Object: true, Value: "x"})}}, []string{`object node "o"`, "string"}},
		{"go int", &Section{KeyGroup: 7, Keys: []KeyState{key("a", MemItem{Path: "n", Value: 5})}}, []string{`path "n"`, "unsupported Go type int"}},
		{"nested bad type", &Section{KeyGroup: 7, Keys: []KeyState{key("a", MemItem{Path: "n", Value: []any{int64(1), map[string]any{"x": float32(1)}}})}}, []string{`path "n" at [1]["x"]`, "float32"}},
		{"time in memory", &Section{KeyGroup: 7, Keys: []KeyState{key("a", MemItem{Path: "t", Value: time.Now()})}}, []string{"time.Time is allowed only in input row fields"}},
		{"too deep", &Section{KeyGroup: 7, Keys: []KeyState{key("a", MemItem{Path: "d", Value: deep})}}, []string{"nested more than 100 deep"}},
		{"bad attr", &Section{KeyGroup: 7, Keys: []KeyState{{Key: []byte("a"), InFlight: &InFlight{Tasks: []Task{{Action: "act", Event: Event{Type: "e", Attrs: map[string]any{"u": uint64(1)}}}}}}}}, []string{`task #0 (action "act")`, `event "e" attrs at ["u"]`, "uint64"}},
		{"bad row", &Section{KeyGroup: 7, Keys: []KeyState{{Key: []byte("a"), Queued: []Input{{Seq: 4, Row: []Field{{Name: "c", Value: struct{}{}}}}}}}}, []string{"queued input #0 (seq 4)", `row field #0 "c"`, "struct {}"}},
		{"bad sensory", &Section{KeyGroup: 7, Keys: []KeyState{{Key: []byte("a"), InFlight: &InFlight{Sensory: []MemItem{{Path: "s", Value: int32(1)}}}}}}, []string{"in-flight input", "sensory memory", "int32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EncodeSection(tt.s)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("%T is not *Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestConcurrent encodes and decodes the same sections from several
// goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	secs := []*Section{smallSection(), valuesSection(), counterSection(3, 0, 500)}
	want := make([][]byte, len(secs))
	for i, s := range secs {
		var err error
		if want[i], err = EncodeSection(s); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 20 {
				i := (g + n) % len(secs)
				b, err := EncodeSection(secs[i])
				if err != nil || !bytes.Equal(b, want[i]) {
					t.Errorf("goroutine %d: encode differs (err %v)", g, err)
					return
				}
				got, err := DecodeSection(b)
				if err != nil || !reflect.DeepEqual(got, secs[i]) {
					t.Errorf("goroutine %d: decode differs (err %v)", g, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestMarkerRoundTrip(t *testing.T) {
	for _, m := range []*Marker{kafkaMarker(), noneMarker(), {Version: MarkerVersion, Backend: "memory", CheckpointID: -1, Offsets: map[int32]int64{math.MaxInt32: math.MinInt64}}} {
		t.Run(m.Backend, func(t *testing.T) {
			b, err := EncodeMarker(m)
			if err != nil {
				t.Fatal(err)
			}
			for range 10 { // map iteration order varies between calls
				if b2, _ := EncodeMarker(m); !bytes.Equal(b, b2) {
					t.Fatal("marker encoding is not deterministic")
				}
			}
			got, err := DecodeMarker(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("got %#v, want %#v", got, m)
			}
		})
	}
	zero := &Marker{Backend: "none"}
	b, err := EncodeMarker(zero)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeMarker(b); err != nil || got.Version != MarkerVersion {
		t.Fatalf("version 0 should be written as %d: %v %v", MarkerVersion, got, err)
	}
	for _, bad := range []*Marker{nil, {Version: 9}, {Offsets: map[int32]int64{-1: 0}}} {
		if _, err := EncodeMarker(bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "recovery marker") {
			t.Errorf("EncodeMarker(%v) = %v, want ErrInvalid naming the recovery marker", bad, err)
		}
	}
}
