package statestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
)

func TestRecordKeyRoundTrip(t *testing.T) {
	cases := []RecordKey{
		{},
		testKey("classify"),
		{KeyGroup: 32767, KeyHash: HashKey(nil), Seq: ^uint64(0), EventID: testUUID(0xf0), Action: "a"},
		testKey("name with _ and \x00 and \xff and 日本"),
		testKey(strings.Repeat("x", MaxActionNameLen)),
	}
	for _, k := range cases {
		b := k.Bytes()
		if len(b) != k.EncodedLen() {
			t.Errorf("len(Bytes()) = %d, EncodedLen() = %d", len(b), k.EncodedLen())
		}
		got, err := ParseRecordKey(b)
		if err != nil {
			t.Fatalf("ParseRecordKey(%v): %v", k, err)
		}
		if !reflect.DeepEqual(got, k) {
			t.Fatalf("round trip: got %v, want %v", got, k)
		}
		if kg, err := RecordKeyGroup(b); err != nil || kg != k.KeyGroup {
			t.Fatalf("RecordKeyGroup = %d, %v; want %d", kg, err, k.KeyGroup)
		}
		if p := k.AppendBinary([]byte("prefix")); !bytes.Equal(p[6:], b) || string(p[:6]) != "prefix" {
			t.Fatal("AppendBinary must append")
		}
	}
}

func TestRecordKeyLayout(t *testing.T) {
	k := RecordKey{KeyGroup: 0x01020304, Seq: 0x0a0b0c0d0e0f1011, Action: "act"}
	k.KeyHash[0], k.KeyHash[31] = 0xaa, 0xbb
	k.EventID[0], k.EventID[15] = 0xcc, 0xdd
	b := k.Bytes()
	want := []struct {
		off int
		val []byte
	}{
		{0, []byte{1}},
		{1, []byte{1, 2, 3, 4}},
		{5, []byte{0xaa}}, {36, []byte{0xbb}},
		{37, []byte{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11}},
		{45, []byte{0xcc}}, {60, []byte{0xdd}},
		{61, []byte{0, 3}},
		{63, []byte("act")},
	}
	for _, w := range want {
		if got := b[w.off : w.off+len(w.val)]; !bytes.Equal(got, w.val) {
			t.Errorf("bytes at %d = %x, want %x", w.off, got, w.val)
		}
	}
	if len(b) != 66 {
		t.Errorf("len = %d, want 66", len(b))
	}
}

func TestParseRecordKeyErrors(t *testing.T) {
	good := testKey("act").Bytes()
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		b    []byte
		kind error
	}{
		{"empty", nil, ErrRecordCorrupt},
		{"version 0", mod(func(b []byte) []byte { b[0] = 0; return b }), ErrRecordVersion},
		{"version 2", mod(func(b []byte) []byte { b[0] = 2; return b }), ErrRecordVersion},
		{"header only part", good[:40], ErrRecordCorrupt},
		{"name cut", good[:len(good)-1], ErrRecordCorrupt},
		{"trailing byte", append(bytes.Clone(good), 'x'), ErrRecordCorrupt},
		{"negative key group", mod(func(b []byte) []byte { b[1] = 0x80; return b }), ErrRecordCorrupt},
		{"length too big", mod(func(b []byte) []byte { binary.BigEndian.PutUint16(b[61:], 0xffff); return b }), ErrRecordCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRecordKey(tc.b)
			var re *RecordError
			if !errors.As(err, &re) || !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want a *RecordError of kind %v", err, tc.kind)
			}
		})
	}
}

// Upstream built keys with toString and an unescaped "_": a key "1_2" with
// action "x" and a key "1" with action "2_x" collided, as did Long(1) and "1".
// Ours are fixed-width fields plus a length-prefixed name.
func TestRecordKeyUnambiguous(t *testing.T) {
	long1 := []byte{0, 0, 0, 0, 0, 0, 0, 1} // Flink LongSerializer, 1L
	str1 := []byte{0x02, '1'}               // Flink StringSerializer, "1"
	if HashKey(long1) == HashKey(str1) {
		t.Fatal("Long(1) and \"1\" must hash differently")
	}
	base := testKey("x")
	kLong, kStr := base, base
	kLong.KeyHash, kStr.KeyHash = HashKey(long1), HashKey(str1)
	if bytes.Equal(kLong.Bytes(), kStr.Bytes()) {
		t.Fatal("Long(1) and \"1\" give the same record key")
	}

	// Two events with equal attributes but different ids never collide.
	e1, e2 := base, base
	e1.EventID, e2.EventID = testUUID(1), testUUID(2)
	if bytes.Equal(e1.Bytes(), e2.Bytes()) {
		t.Fatal("distinct event ids give the same record key")
	}

	// Names holding separators, NULs, length-like bytes and whole encoded
	// keys: every distinct key has a distinct encoding.
	names := []string{"", "_", "a", "a_", "_a", "a_b", "a\x00", "\x00a", "\x00\x03abc", "\xff\xfe", "a.b", "1_2_x",
		string(base.Bytes()), string(base.Bytes()[:63])}
	seen := map[string]RecordKey{}
	add := func(k RecordKey) {
		b := string(k.Bytes())
		if prev, dup := seen[b]; dup && prev != k {
			t.Fatalf("keys %v and %v share the encoding %x", prev, k, b)
		}
		seen[b] = k
	}
	for _, n := range names {
		for _, seq := range []uint64{0, 1, 0x5f} { // 0x5f is '_'
			for _, ev := range []snapshot.UUID{{}, testUUID(0x5f)} {
				k := base
				k.Action, k.Seq, k.EventID = n, seq, ev
				add(k)
			}
		}
	}
	// Random keys with short random names, seeded so a failure reproduces.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		k := RecordKey{KeyGroup: int32(rng.IntN(4)), Seq: uint64(rng.IntN(4))}
		k.KeyHash[rng.IntN(32)] = byte(rng.IntN(2))
		k.EventID[rng.IntN(16)] = byte(rng.IntN(2))
		name := make([]byte, rng.IntN(4))
		for i := range name {
			name[i] = []byte{0, '_', 'a', 0xff}[rng.IntN(4)]
		}
		k.Action = string(name)
		add(k)
	}
}

func TestCheckActionName(t *testing.T) {
	if err := CheckActionName(strings.Repeat("a", MaxActionNameLen)); err != nil {
		t.Fatal(err)
	}
	if err := CheckActionName(strings.Repeat("a", MaxActionNameLen+1)); err == nil {
		t.Fatal("a name longer than MaxActionNameLen must be refused")
	}
}

func TestPartitions(t *testing.T) {
	if p := Partition(130, 64); p != 2 {
		t.Fatalf("Partition(130, 64) = %d, want 2", p)
	}
	cases := []struct {
		r    snapshot.KeyGroupRange
		n    int32
		want []int32
	}{
		{snapshot.KeyGroupRange{Start: 0, End: 3}, 64, []int32{0, 1, 2, 3}},
		{snapshot.KeyGroupRange{Start: 62, End: 65}, 64, []int32{0, 1, 62, 63}},
		{snapshot.KeyGroupRange{Start: 5, End: 5}, 4, []int32{1}},
		{snapshot.KeyGroupRange{Start: 0, End: 127}, 4, []int32{0, 1, 2, 3}},
		{snapshot.KeyGroupRange{Start: 10, End: 13}, 4, []int32{0, 1, 2, 3}},
		{snapshot.KeyGroupRange{Start: 3, End: 2}, 4, nil},
	}
	for _, tc := range cases {
		got := PartitionsFor(tc.r, tc.n)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PartitionsFor(%v, %d) = %v, want %v", tc.r, tc.n, got, tc.want)
		}
		// Every key group of the range maps into the returned partitions.
		for kg := tc.r.Start; kg <= tc.r.End; kg++ {
			p := Partition(kg, tc.n)
			found := false
			for _, q := range got {
				found = found || q == p
			}
			if !found {
				t.Errorf("key group %d -> partition %d, not in %v", kg, p, got)
			}
		}
	}
}
