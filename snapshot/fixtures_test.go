package snapshot

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Fixtures shared by the codec, golden and fuzz tests.
//
// INVARIANT: the fixtures named in goldenSections and goldenMarkers are the
// expected content of released golden files; never change them.

func uid(n byte) UUID {
	var u UUID
	for i := range u {
		u[i] = n + byte(i)
	}
	return u
}

// everyValue holds one of each kind of the value domain, nested too.
func everyValue() map[string]any {
	return map[string]any{
		"nil":    nil,
		"true":   true,
		"false":  false,
		"zero":   int64(0),
		"small":  int64(7),
		"neg":    int64(-33),
		"i16":    int64(-30000),
		"u32":    int64(4000000000),
		"maxint": int64(math.MaxInt64),
		"minint": int64(math.MinInt64),
		"float":  3.25,
		"negf":   -1e-300,
		"inf":    math.Inf(1),
		"intf":   float64(2), // a float with an integral value stays a float
		"str":    "héllo, 世界",
		"empty":  "",
		"long":   strings.Repeat("x", 300),
		"bytes":  []byte{0, 1, 2, 255},
		"nobyte": []byte{},
		"list":   []any{int64(1), "two", 3.0, nil, []any{}, []any{[]any{true}}},
		"map": map[string]any{
			"z": int64(1), "a": map[string]any{"deep": []any{map[string]any{}}},
			"m": []byte("x"),
		},
		"emptymap":  map[string]any{},
		"emptylist": []any{},
	}
}

func ev(id byte, typ string, attrs map[string]any, up byte, upAction string) Event {
	e := Event{ID: uid(id), Type: typ, Attrs: attrs, UpstreamAction: upAction}
	if up != 0 {
		e.UpstreamID = uid(up)
	}
	return e
}

// tinySection: one key, a body short enough to be stored uncompressed.
func tinySection() *Section {
	return &Section{KeyGroup: 1, Keys: []KeyState{{
		Key: []byte("k"), NextSeq: 5, ShortTerm: []MemItem{{Path: "n", Value: int64(1)}},
	}}}
}

// smallSection: an idle key, a key with an input in flight and one queued.
func smallSection() *Section {
	t0 := time.Date(2024, 3, 1, 12, 30, 0, 123456789, time.UTC)
	row := func(order string, amount float64) []Field {
		return []Field{
			{Name: "order_id", Value: order},
			{Name: "amount", Value: amount},
			{Name: "price", Value: "12.50"}, // a DECIMAL as its exact string
			{Name: "ts", Value: t0},
			{Name: "note", Value: nil},
		}
	}
	return &Section{KeyGroup: 17, Keys: []KeyState{
		{
			Key:     []byte("alice"),
			NextSeq: 3,
			ShortTerm: []MemItem{
				{Path: "count", Value: int64(3)},
				{Path: "profile", Object: true},
				{Path: "profile.name", Value: "Alice"},
			},
		},
		{
			Key:     []byte("bob"),
			NextSeq: 2,
			ShortTerm: []MemItem{
				{Path: "count", Value: int64(1)},
			},
			InFlight: &InFlight{
				Input: Input{Seq: 1, Timestamp: 1709296200000, HasTS: true, EventID: uid(10), Row: row("o-1", 9.5)},
				Sensory: []MemItem{
					{Path: "scratch", Object: true},
					{Path: "scratch.step", Value: int64(2)},
				},
				Tasks: []Task{
					{Action: "score", Event: ev(11, "fraud_check", map[string]any{"amount": 9.5, "tags": []any{"new"}}, 10, "")},
					{Action: "notify", Event: ev(12, "alert", map[string]any{}, 11, "score")},
					{Action: "audit", Event: ev(13, "audit", nil, 11, "score")},
				},
				Emitted: 1,
			},
			Queued: []Input{
				{Seq: 2, EventID: uid(20), Row: row("o-2", 1.25)},
			},
		},
		{
			Key:     []byte{0xff, 0x00},
			NextSeq: 0,
			Queued: []Input{
				{Seq: 0, Timestamp: -5, HasTS: true, EventID: uid(30)},
				{Seq: 1, EventID: uid(31), Row: []Field{{Name: "x", Value: int64(1)}}},
			},
		},
	}}
}

// valuesSection: one key whose memory, sensory memory, event attributes and
// row hold every kind of value.
func valuesSection() *Section {
	vals := everyValue()
	var mem []MemItem
	for _, k := range sortedKeys(vals) {
		mem = append(mem, MemItem{Path: "v." + k, Value: vals[k]})
	}
	mem = append([]MemItem{{Path: "v", Object: true}}, mem...)
	times := []any{
		time.Date(1969, 12, 31, 23, 59, 59, 1, time.UTC), // before the epoch
		time.Date(2106, 2, 7, 6, 28, 17, 0, time.UTC),    // past 32-bit seconds
		time.Time{},
	}
	return &Section{KeyGroup: 42, Keys: []KeyState{{
		Key:       []byte("values"),
		NextSeq:   math.MaxUint64,
		ShortTerm: mem,
		InFlight: &InFlight{
			Input: Input{Seq: math.MaxUint64 - 1, Timestamp: math.MinInt64, HasTS: true, EventID: uid(1), Row: []Field{
				{Name: "all", Value: vals},
				{Name: "date", Value: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
				{Name: "times", Value: times},
				{Name: "bytes", Value: []byte("raw")},
			}},
			Sensory: mem,
			Tasks:   []Task{{Action: "a", Event: ev(2, "_input_event", vals, 0, "")}},
			Emitted: math.MaxUint32,
		},
	}}}
}

// counterSection: n keys with a counter and a list of recent amounts, the
// shape of the benchmark's state.
func counterSection(kg int32, first, n int) *Section {
	s := &Section{KeyGroup: kg, Keys: make([]KeyState, n)}
	for i := range s.Keys {
		id := first + i
		key := make([]byte, 12)
		copy(key, "user")
		binary.BigEndian.PutUint64(key[4:], uint64(id))
		recent := make([]any, 5)
		for j := range recent {
			recent[j] = float64((id*7+j*13)%10000) / 100
		}
		s.Keys[i] = KeyState{
			Key:     key,
			NextSeq: uint64(id % 1000),
			ShortTerm: []MemItem{
				{Path: "count", Value: int64(id % 5000)},
				{Path: "recent", Value: recent},
			},
		}
	}
	return s
}

func kafkaMarker() *Marker {
	return &Marker{
		Version:      MarkerVersion,
		Backend:      "kafka",
		Topic:        "flinkgo-action-state",
		TopicID:      uid(0x40),
		CheckpointID: 1234,
		Offsets:      map[int32]int64{0: 0, 1: 17, 5: 1 << 40, 63: 99, 12: 3},
	}
}

func noneMarker() *Marker {
	return &Marker{Version: MarkerVersion, Backend: "none", CheckpointID: 1}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// rawSection builds a section around an uncompressed body with a correct
// checksum, for tests that need a body the encoder would refuse to write.
func rawSection(kg int32, count uint32, body []byte) []byte {
	b := make([]byte, sectionHeaderLen+len(body))
	copy(b, sectionMagic)
	binary.BigEndian.PutUint16(b[4:], FormatVersion)
	binary.BigEndian.PutUint32(b[8:], uint32(kg))
	binary.BigEndian.PutUint32(b[12:], count)
	binary.BigEndian.PutUint32(b[16:], uint32(len(body)))
	binary.BigEndian.PutUint32(b[20:], uint32(len(body)))
	copy(b[sectionHeaderLen:], body)
	fixCRC(b)
	return b
}

// fixCRC recomputes the checksum of a section whose header is complete.
func fixCRC(b []byte) {
	if len(b) >= sectionHeaderLen {
		binary.BigEndian.PutUint32(b[crcOffset:], sectionCRC(b))
	}
}

// body returns the uncompressed body of an encoded section.
func body(b []byte) []byte {
	if binary.BigEndian.Uint16(b[6:])&FlagZstd == 0 {
		return b[sectionHeaderLen:]
	}
	dec, err := zstdDecoder()
	if err != nil {
		panic(err)
	}
	out, err := dec.DecodeAll(b[sectionHeaderLen:], make([]byte, 0, binary.BigEndian.Uint32(b[16:])))
	if err != nil {
		panic(fmt.Sprint("test body: ", err))
	}
	return out
}
