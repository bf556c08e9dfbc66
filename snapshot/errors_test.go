package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// mp builds msgpack bytes with the low-level encoder.
func mp(fn func(e *msgpack.Encoder)) []byte {
	var buf bytes.Buffer
	fn(msgpack.NewEncoder(&buf))
	return buf.Bytes()
}

// keyBody is the body of one key whose short-term memory is the raw
// msgpack mem (an array of items).
func keyBody(mem []byte) []byte {
	return append(append(mp(func(e *msgpack.Encoder) {
		_ = e.EncodeArrayLen(1)
		_ = e.EncodeArrayLen(5)
		_ = e.EncodeBytes([]byte("k"))
		_ = e.EncodeUint(0)
	}), mem...), 0xc0, 0x90)
}

// memOf is a memory array with one item [path, raw value].
func memOf(value []byte) []byte {
	return append(mp(func(e *msgpack.Encoder) {
		_ = e.EncodeArrayLen(1)
		_ = e.EncodeArrayLen(2)
		_ = e.EncodeString("p")
	}), value...)
}

func patch(b []byte, fn func(b []byte)) []byte {
	b = bytes.Clone(b)
	fn(b)
	return b
}

func TestDecodeErrors(t *testing.T) {
	const kg = 17
	good, err := EncodeSection(smallSection()) // key group 17
	if err != nil {
		t.Fatal(err)
	}
	big, err := EncodeSection(counterSection(kg, 0, 300))
	if err != nil || big[7]&byte(FlagZstd) == 0 {
		t.Fatalf("want a compressed fixture: %v", err)
	}
	withHeader := func(src []byte, fn func(b []byte)) []byte {
		return patch(src, func(b []byte) { fn(b); fixCRC(b) })
	}
	deepList := bytes.Repeat([]byte{0x91}, 5000) // [[[[...
	deepList = append(deepList, 0x01)
	tests := []struct {
		name  string
		b     []byte
		owned *KeyGroupRange
		kind  error
		want  []string
	}{
		{"empty input", nil, nil, ErrTruncated, []string{"key group unknown", "0 bytes"}},
		{"header cut", good[:20], nil, ErrTruncated, []string{"key group 17", "20 bytes"}},
		{"payload cut", good[:len(good)-1], nil, ErrTruncated, []string{"key group 17", "only"}},
		{"trailing byte", append(bytes.Clone(good), 0), nil, ErrCorrupt, []string{"key group 17", "bytes follow"}},
		{"bad magic", patch(good, func(b []byte) { b[0] = 'X' }), nil, ErrCorrupt, []string{"not a flinkgo key group section"}},
		{"newer version", patch(good, func(b []byte) { b[5] = 2 }), nil, ErrVersion, []string{"key group 17", "found format version 2", "reads version 1"}},
		{"payload bit flip", patch(good, func(b []byte) { b[len(b)-3] ^= 4 }), nil, ErrChecksum, []string{"key group 17", "stored CRC32C"}},
		{"compressed payload bit flip", patch(big, func(b []byte) { b[100] ^= 1 }), nil, ErrChecksum, []string{"key group 17"}},
		{"crc bit flip", patch(good, func(b []byte) { b[crcOffset] ^= 0x80 }), nil, ErrChecksum, []string{"key group 17"}},
		{"key count flip", patch(good, func(b []byte) { b[15] ^= 1 }), nil, ErrChecksum, []string{"key group 17"}},
		{"incremental flag", withHeader(rawSection(kg, 0, []byte{0x90}), func(b []byte) { b[7] |= byte(FlagIncremental) }), nil, ErrVersion, []string{"key group 17", "flags 0x0002"}},
		{"not owned", good, &KeyGroupRange{Start: 0, End: 16}, ErrNotOwned, []string{"key group 17", "owned range [0, 16]"}},
		{"negative key group", withHeader(good, func(b []byte) { binary.BigEndian.PutUint32(b[8:], 0xffffff00) }), nil, ErrCorrupt, []string{"key group -256", "outside [0, 32767]"}},
		{"raw length mismatch", withHeader(rawSection(kg, 0, []byte{0x90}), func(b []byte) { b[19] = 9 }), nil, ErrCorrupt, []string{"uncompressed length 9"}},
		{"zstd length too small", withHeader(big, func(b []byte) { binary.BigEndian.PutUint32(b[16:], binary.BigEndian.Uint32(b[16:])-1) }), nil, ErrCorrupt, []string{"key group 17", "zstd"}},
		{"zstd length too large", withHeader(big, func(b []byte) { binary.BigEndian.PutUint32(b[16:], binary.BigEndian.Uint32(b[16:])+1) }), nil, ErrCorrupt, []string{"decompresses to"}},
		{"zstd length impossible", withHeader(big, func(b []byte) { binary.BigEndian.PutUint32(b[16:], 1<<31-1) }), nil, ErrCorrupt, []string{"impossible"}},
		{"zstd length huge lie", withHeader(big, func(b []byte) { binary.BigEndian.PutUint32(b[16:], uint32(len(b))*1000) }), nil, ErrCorrupt, []string{"zstd"}},
		{"zstd garbage", withHeader(big, func(b []byte) { copy(b[sectionHeaderLen:], "garbage!") }), nil, ErrCorrupt, []string{"zstd"}},
		{"key count mismatch", withHeader(good, func(b []byte) { b[15]++ }), nil, ErrCorrupt, []string{"the body holds 3 keys, the header announces 4"}},
		{"key count absurd", withHeader(good, func(b []byte) { binary.BigEndian.PutUint32(b[12:], 1<<30) }), nil, ErrCorrupt, []string{"header announces 1073741824 keys"}},
		{"body not an array", rawSection(kg, 0, []byte{0xc0}), nil, ErrCorrupt, []string{"expected an array"}},
		{"array longer than body", rawSection(kg, 0, []byte{0xdd, 0x7f, 0xff, 0xff, 0xff}), nil, ErrCorrupt, []string{"array of 2147483647 elements but only 0 bytes remain"}},
		{"trailing body bytes", rawSection(kg, 0, []byte{0x90, 0x00}), nil, ErrCorrupt, []string{"1 bytes follow the last key"}},
		{"string longer than body", rawSection(kg, 1, keyBody(memOf([]byte{0xdb, 0xff, 0xff, 0xff, 0xf0}))), nil, ErrCorrupt, []string{"key #0", "4294967280 bytes announced"}},
		{"map longer than body", rawSection(kg, 1, keyBody(memOf([]byte{0xdf, 0x10, 0, 0, 0}))), nil, ErrCorrupt, []string{"map of 268435456 entries"}},
		{"too deep", rawSection(kg, 1, keyBody(memOf(deepList))), nil, ErrCorrupt, []string{"nested more than 100 deep"}},
		{"uint64 overflow", rawSection(kg, 1, keyBody(memOf([]byte{0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0}))), nil, ErrCorrupt, []string{"overflows int64"}},
		{"time in memory", rawSection(kg, 1, keyBody(memOf([]byte{0xd6, 0xff, 0, 0, 0, 1}))), nil, ErrCorrupt, []string{"code 0xd6 is not a value"}},
		{"duplicate map key", rawSection(kg, 1, keyBody(memOf([]byte{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02}))), nil, ErrCorrupt, []string{`duplicate map key "a"`}},
		{"non-string map key", rawSection(kg, 1, keyBody(memOf([]byte{0x81, 0x01, 0x01}))), nil, ErrCorrupt, []string{"map key: expected a string"}},
		{"unsorted paths", rawSection(kg, 1, keyBody([]byte{0x92, 0x91, 0xa1, 'b', 0x91, 0xa1, 'a'})), nil, ErrCorrupt, []string{`paths are not strictly increasing ("a" after "b")`}},
		{"bad item", rawSection(kg, 1, keyBody([]byte{0x91, 0x93, 0xa1, 'b', 0xc0, 0xc0})), nil, ErrCorrupt, []string{"array of 3 elements, want 1 (object) or 2"}},
		{"key is a string", rawSection(kg, 1, []byte{0x91, 0x95, 0xa1, 'k', 0x00, 0x90, 0xc0, 0x90}), nil, ErrCorrupt, []string{"key: expected a bin, found msgpack code 0xa1"}},
		{"negative next seq", rawSection(kg, 1, []byte{0x91, 0x95, 0xc4, 0x01, 'k', 0xff, 0x90, 0xc0, 0x90}), nil, ErrCorrupt, []string{"next seq: expected an unsigned integer"}},
		{"in-flight not an array", rawSection(kg, 1, []byte{0x91, 0x95, 0xc4, 0x01, 'k', 0x00, 0x90, 0xc3, 0x90}), nil, ErrCorrupt, []string{"in-flight input: expected an array"}},
		{"short uuid", rawSection(kg, 1, append([]byte{0x91, 0x95, 0xc4, 0x01, 'k', 0x00, 0x90, 0xc0, 0x91, 0x95, 0x00, 0x00, 0xc2, 0xc4, 0x01, 0x00, 0x90}, make([]byte, 20)...)), nil, ErrCorrupt, []string{"input event id: 1 bytes, a UUID has 16"}},
		{"has_ts not a bool", rawSection(kg, 1, append([]byte{0x91, 0x95, 0xc4, 0x01, 'k', 0x00, 0x90, 0xc0, 0x91, 0x95, 0x00, 0x00, 0x01, 0xc4, 0x10}, make([]byte, 17)...)), nil, ErrCorrupt, []string{"input has timestamp: expected a bool"}},
		{"odd row", rawSection(kg, 1, append(append([]byte{0x91, 0x95, 0xc4, 0x01, 'k', 0x00, 0x90, 0xc0, 0x91, 0x95, 0x00, 0x00, 0xc2, 0xc4, 0x10}, make([]byte, 16)...), 0x93, 0xa1, 'a', 0x01, 0xa1)), nil, ErrCorrupt, []string{"input row: 3 elements, want name, value pairs"}},
		{"body ends early", rawSection(kg, 1, keyBody(memOf(nil))[:9]), nil, ErrCorrupt, []string{"key #0", "only 1 bytes remain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.owned != nil {
				_, err = DecodeSectionFor(tt.b, *tt.owned)
			} else {
				_, err = DecodeSection(tt.b)
			}
			if !errors.Is(err, tt.kind) {
				t.Fatalf("got %v, want %v", err, tt.kind)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("%T is not *Error", err)
			}
			for _, w := range append(tt.want, "; ") { // "; " precedes the advice
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestUnsortedKeysRejected: a body with keys out of order is corrupt (the
// encoder would never write it, and re-encoding it would fail).
func TestUnsortedKeysRejected(t *testing.T) {
	b := mp(func(e *msgpack.Encoder) {
		_ = e.EncodeArrayLen(2)
		for _, k := range []string{"b", "a"} {
			_ = e.EncodeArrayLen(5)
			_ = e.EncodeBytes([]byte(k))
			_ = e.EncodeUint(0)
			_ = e.EncodeArrayLen(0)
			_ = e.EncodeNil()
			_ = e.EncodeArrayLen(0)
		}
	})
	_, err := DecodeSection(rawSection(3, 2, b))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "key #1") {
		t.Fatalf("got %v, want ErrCorrupt at key #1", err)
	}
}

// TestLyingLengthsAllocateLittle: a header that claims a huge uncompressed
// length, or a body that claims huge arrays, does not make the decoder
// allocate what the bytes cannot back.
func TestLyingLengthsAllocateLittle(t *testing.T) {
	big, _ := EncodeSection(counterSection(1, 0, 300))
	lie := patch(big, func(b []byte) {
		binary.BigEndian.PutUint32(b[16:], uint32(len(b))*maxZstdRatio-1)
		fixCRC(b)
	})
	arrays := rawSection(1, 1, keyBody(memOf([]byte{0xdd, 0x7f, 0xff, 0xff, 0xff})))
	for name, in := range map[string][]byte{"uncompressed length": lie, "array length": arrays} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := DecodeSection(in)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: got %v, want ErrCorrupt", name, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("%s: decoding %d bytes allocated %d bytes", name, len(in), n)
		}
	}
}

func TestMarkerDecodeErrors(t *testing.T) {
	good, err := EncodeMarker(kafkaMarker())
	if err != nil {
		t.Fatal(err)
	}
	fix := func(b []byte) { binary.BigEndian.PutUint32(b[markerCRCOffset:], markerCRC(b)) }
	withBody := func(body []byte) []byte {
		b := append(bytes.Clone(good[:markerHeaderLen]), body...)
		binary.BigEndian.PutUint32(b[8:], uint32(len(body)))
		fix(b)
		return b
	}
	okBody := func(offsets ...int64) []byte {
		return mp(func(e *msgpack.Encoder) {
			_ = e.EncodeArrayLen(5)
			_ = e.EncodeString("kafka")
			_ = e.EncodeString("t")
			_ = e.EncodeBytes(make([]byte, 16))
			_ = e.EncodeInt(1)
			_ = e.EncodeMapLen(len(offsets) / 2)
			for _, o := range offsets {
				_ = e.EncodeInt(o)
			}
		})
	}
	if _, err := DecodeMarker(withBody(okBody(1, 5, 2, 6))); err != nil {
		t.Fatalf("hand-built marker: %v", err)
	}
	tests := []struct {
		name string
		b    []byte
		kind error
		want string
	}{
		{"empty", nil, ErrTruncated, "0 bytes"},
		{"header cut", good[:10], ErrTruncated, "10 bytes"},
		{"body cut", good[:len(good)-1], ErrTruncated, "only"},
		{"trailing", append(bytes.Clone(good), 1), ErrCorrupt, "bytes follow"},
		{"magic", patch(good, func(b []byte) { b[1] = 'x' }), ErrCorrupt, "not a flinkgo recovery marker"},
		{"version", patch(good, func(b []byte) { b[5] = 3 }), ErrVersion, "found marker version 3, this build reads version 1"},
		{"bit flip", patch(good, func(b []byte) { b[len(b)-1] ^= 1 }), ErrChecksum, "stored CRC32C"},
		{"flags", patch(good, func(b []byte) { b[7] = 1; fix(b) }), ErrVersion, "flags"},
		{"unsorted partitions", withBody(okBody(2, 5, 1, 6)), ErrCorrupt, "partition 1 after 2"},
		{"duplicate partition", withBody(okBody(2, 5, 2, 6)), ErrCorrupt, "partition 2 after 2"},
		{"negative partition", withBody(okBody(-1, 5)), ErrCorrupt, "partition -1"},
		{"huge partition", withBody(okBody(1<<40, 5)), ErrCorrupt, "partition 1099511627776"},
		{"offsets not a map", withBody(append(okBody()[:len(okBody())-1], 0xa1, 'x')), ErrCorrupt, "offsets: expected a map"},
		{"short array", withBody([]byte{0x94, 0xa0, 0xa0, 0xa0, 0xa0}), ErrCorrupt, "array of 4 elements, want 5"},
		{"body ends", withBody(okBody()[:20]), ErrCorrupt, "only"},
		{"trailing body", withBody(append(okBody(), 0)), ErrCorrupt, "1 bytes follow the offsets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeMarker(tt.b)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("got %v, want %v", err, tt.kind)
			}
			if msg := err.Error(); !strings.Contains(msg, "recovery marker") || !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not contain %q and \"recovery marker\"", msg, tt.want)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	e := &Error{KeyGroup: 5, Kind: ErrChecksum, Detail: "stored CRC32C 1, computed 2"}
	want := "snapshot: key group 5: checksum mismatch: stored CRC32C 1, computed 2; the section bytes were damaged in transfer or storage; restore from an earlier checkpoint"
	if e.Error() != want {
		t.Errorf("got  %q\nwant %q", e.Error(), want)
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", e), ErrChecksum) {
		t.Error("errors.Is through a wrap failed")
	}
	odd := &Error{KeyGroup: KeyGroupMarker, Kind: errors.New("x")}
	if got := odd.Error(); got != "snapshot: recovery marker: x" {
		t.Errorf("foreign kind: got %q", got)
	}
	if got := (&Error{KeyGroup: KeyGroupUnknown}).Error(); got != "snapshot: section (key group unknown): error" {
		t.Errorf("zero Error: got %q", got)
	}
}
