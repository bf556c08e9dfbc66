package msgp

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// ref encodes with msgpack/v5's Encoder, default settings: the encodings the
// project wrote before this package, and that the golden files hold.
func ref(t *testing.T, f func(e *msgpack.Encoder) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(msgpack.NewEncoder(&buf)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func same(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: % x, msgpack/v5 writes % x", what, got, want)
	}
}

func TestIntegersMatchMsgpack(t *testing.T) {
	var ints []int64
	for _, b := range []int64{0, 0x7f, math.MaxUint8, math.MaxUint16, math.MaxUint32, math.MaxInt64,
		-32, math.MinInt8, math.MinInt16, math.MinInt32, math.MinInt64} {
		ints = append(ints, b-1, b, b+1) // the boundaries wrap at the extremes: still integers to check
	}
	for _, v := range ints {
		same(t, "int", AppendInt(nil, v), ref(t, func(e *msgpack.Encoder) error { return e.EncodeInt(v) }))
		if v >= 0 {
			u := uint64(v)
			same(t, "uint", AppendUint(nil, u), ref(t, func(e *msgpack.Encoder) error { return e.EncodeUint(u) }))
		}
	}
	for _, u := range []uint64{math.MaxInt64 + 1, math.MaxUint64} {
		same(t, "uint", AppendUint(nil, u), ref(t, func(e *msgpack.Encoder) error { return e.EncodeUint(u) }))
	}
}

func TestLengthsMatchMsgpack(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536, 70000} {
		s := strings.Repeat("x", n)
		same(t, "str", AppendStr(nil, s), ref(t, func(e *msgpack.Encoder) error { return e.EncodeString(s) }))
		b := []byte(s)
		same(t, "bin", AppendBin(nil, b), ref(t, func(e *msgpack.Encoder) error { return e.EncodeBytes(b) }))
		same(t, "array", AppendArrayLen(nil, n), ref(t, func(e *msgpack.Encoder) error { return e.EncodeArrayLen(n) }))
		same(t, "map", AppendMapLen(nil, n), ref(t, func(e *msgpack.Encoder) error { return e.EncodeMapLen(n) }))
	}
	// An empty or nil []byte is bin 0, as the value domain wants (msgpack/v5
	// writes nil for a nil slice through EncodeBytes; the header is the same).
	same(t, "nil bin", AppendBin(nil, nil), []byte{0xc4, 0})
}

func TestScalarsMatchMsgpack(t *testing.T) {
	for _, f := range []float64{0, 1, -1.5, math.Inf(1), math.SmallestNonzeroFloat64, 3} {
		same(t, "float64", AppendFloat64(nil, f), ref(t, func(e *msgpack.Encoder) error { return e.EncodeFloat64(f) }))
	}
	for _, b := range []bool{false, true} {
		same(t, "bool", AppendBool(nil, b), ref(t, func(e *msgpack.Encoder) error { return e.EncodeBool(b) }))
	}
	same(t, "nil", AppendNil(nil), ref(t, func(e *msgpack.Encoder) error { return e.EncodeNil() }))
}

func TestTimesMatchMsgpack(t *testing.T) {
	for _, tm := range []time.Time{
		time.Unix(0, 0), time.Unix(1<<32-1, 0), time.Unix(1<<32, 0), // 32-bit, then 64-bit
		time.Unix(1700000000, 123456789), time.Unix(1<<34-1, 999999999), // 64-bit
		time.Unix(1<<34, 0), time.Unix(-1, 0), time.Date(1900, 1, 2, 3, 4, 5, 6, time.UTC), // 96-bit
		time.Date(2026, 11, 30, 5, 0, 0, 1, time.FixedZone("X", 3600)),
	} {
		same(t, "time "+tm.String(), AppendTime(nil, tm), ref(t, func(e *msgpack.Encoder) error { return e.EncodeTime(tm) }))
	}
}

func TestAppendKeepsWhatIsThere(t *testing.T) {
	b := AppendStr([]byte{1, 2}, "ab")
	same(t, "append", b, []byte{1, 2, 0xa2, 'a', 'b'})
}
