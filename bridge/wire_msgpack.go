package bridge

import (
	"math"
)

// The msgpack decoder of control frames; internal/msgp encodes them.
// Encoding is canonical, so
// that the Go and Java encoders produce identical bytes for identical
// frames: keys in the order docs/protocol.md lists them, each integer in its
// smallest encoding (positive fixint, uint8/16/32/64 for non-negative
// values; negative fixint, int8/16/32/64 for negative ones), strings as
// fixstr/str8/str16/str32, binary as bin8/bin16/bin32, arrays and maps as
// fix/16/32 forms, by length. Decoding accepts every msgpack encoding of a
// value of the expected type.

// mpReader decodes msgpack from a byte slice. Errors are *ProtocolError
// (malformed_frame) naming the frame and, once known, the key.
type mpReader struct {
	b     []byte
	p     int
	frame FrameType
	key   string // key whose value is being read, for messages
}

func (r *mpReader) fail(format string, args ...any) *ProtocolError {
	e := protoErrorf(CodeMalformedFrame, format, args...)
	if r.key != "" {
		e.Message = "key \"" + r.key + "\": " + e.Message
	}
	e.Message = r.frame.String() + ": " + e.Message
	return e
}

func (r *mpReader) need(n int) error {
	if n < 0 || n > len(r.b)-r.p {
		return r.fail("truncated msgpack at byte %d", r.p)
	}
	return nil
}

func (r *mpReader) byte1() (byte, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	c := r.b[r.p]
	r.p++
	return c, nil
}

func (r *mpReader) uint(n int) (uint64, error) {
	if err := r.need(n); err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range r.b[r.p : r.p+n] {
		v = v<<8 | uint64(c)
	}
	r.p += n
	return v, nil
}

var mpTypeNames = []struct {
	lo, hi byte
	name   string
}{
	{0x00, 0x7f, "int"}, {0x80, 0x8f, "map"}, {0x90, 0x9f, "array"}, {0xa0, 0xbf, "str"},
	{0xc0, 0xc0, "nil"}, {0xc1, 0xc1, "reserved byte 0xc1"}, {0xc2, 0xc3, "bool"},
	{0xc4, 0xc6, "bin"}, {0xc7, 0xc9, "ext"}, {0xca, 0xcb, "float"}, {0xcc, 0xd3, "int"},
	{0xd4, 0xd8, "ext"}, {0xd9, 0xdb, "str"}, {0xdc, 0xdd, "array"}, {0xde, 0xdf, "map"},
	{0xe0, 0xff, "int"},
}

func mpTypeName(c byte) string {
	for _, t := range mpTypeNames {
		if c >= t.lo && c <= t.hi {
			return t.name
		}
	}
	return "?"
}

func (r *mpReader) wrongType(want string) error {
	return r.fail("expected %s, got msgpack %s", want, mpTypeName(r.b[r.p-1]))
}

// length reads the length of a map (want "map"), array, str or bin.
func (r *mpReader) length(want string) (int, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case want == "map" && c&0xf0 == 0x80, want == "array" && c&0xf0 == 0x90:
		n = uint64(c & 0x0f)
	case want == "str" && c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case want == "map" && c == 0xde, want == "array" && c == 0xdc, want == "str" && c == 0xda, want == "bin" && c == 0xc5:
		n, err = r.uint(2)
	case want == "map" && c == 0xdf, want == "array" && c == 0xdd, want == "str" && c == 0xdb, want == "bin" && c == 0xc6:
		n, err = r.uint(4)
	case want == "str" && c == 0xd9, want == "bin" && c == 0xc4:
		n, err = r.uint(1)
	default:
		return 0, r.wrongType(want)
	}
	if err != nil {
		return 0, err
	}
	// Every element takes at least one byte: a length beyond the rest of
	// the payload is malformed, and nothing is allocated for it.
	if n > uint64(len(r.b)-r.p) {
		return 0, r.fail("%s of %d elements exceeds the %d bytes left", want, n, len(r.b)-r.p)
	}
	return int(n), nil
}

func (r *mpReader) raw(want string) ([]byte, error) {
	n, err := r.length(want)
	if err != nil {
		return nil, err
	}
	v := r.b[r.p : r.p+n]
	r.p += n
	return v, nil
}

// str reads a msgpack str.
func (r *mpReader) str() (string, error) {
	v, err := r.raw("str")
	return string(v), err
}

// bin reads a msgpack bin (a str is accepted too) as a copy.
func (r *mpReader) bin() ([]byte, error) {
	if err := r.need(1); err != nil {
		return nil, err
	}
	want := "bin"
	if c := r.b[r.p]; c&0xe0 == 0xa0 || c >= 0xd9 && c <= 0xdb {
		want = "str"
	}
	v, err := r.raw(want)
	if err != nil {
		return nil, err
	}
	return append(make([]byte, 0, len(v)), v...), nil
}

// int reads any msgpack integer into the range [lo, hi].
func (r *mpReader) int(lo, hi int64) (int64, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, err
	}
	var v int64
	var u uint64
	unsigned := false
	switch {
	case c <= 0x7f:
		v = int64(c)
	case c >= 0xe0:
		v = int64(int8(c))
	case c >= 0xcc && c <= 0xcf:
		u, err = r.uint(1 << (c - 0xcc))
		unsigned = true
	case c >= 0xd0 && c <= 0xd3:
		u, err = r.uint(1 << (c - 0xd0))
		switch c {
		case 0xd0:
			v = int64(int8(u))
		case 0xd1:
			v = int64(int16(u))
		case 0xd2:
			v = int64(int32(u))
		default:
			v = int64(u)
		}
	default:
		return 0, r.wrongType("int")
	}
	if err != nil {
		return 0, err
	}
	if unsigned {
		if u > math.MaxInt64 {
			return 0, r.fail("integer %d out of range [%d, %d]", u, lo, hi)
		}
		v = int64(u)
	}
	if v < lo || v > hi {
		return 0, r.fail("integer %d out of range [%d, %d]", v, lo, hi)
	}
	return v, nil
}

func (r *mpReader) boolean() (bool, error) {
	c, err := r.byte1()
	if err != nil {
		return false, err
	}
	switch c {
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	}
	return false, r.wrongType("bool")
}

const maxSkipDepth = 64

// skip skips one value of any type (the value of an unknown key).
func (r *mpReader) skip(depth int) error {
	if depth > maxSkipDepth {
		return r.fail("value nested deeper than %d levels", maxSkipDepth)
	}
	c, err := r.byte1()
	if err != nil {
		return err
	}
	var n uint64 // bytes to skip, or elements for arrays and maps
	elems := 0   // 1: array, 2: map
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
	case c&0xf0 == 0x80:
		n, elems = uint64(c&0x0f), 2
	case c&0xf0 == 0x90:
		n, elems = uint64(c&0x0f), 1
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xc4 || c == 0xd9:
		n, err = r.uint(1)
	case c == 0xc5 || c == 0xda:
		n, err = r.uint(2)
	case c == 0xc6 || c == 0xdb:
		n, err = r.uint(4)
	case c == 0xc7 || c == 0xc8 || c == 0xc9: // ext 8/16/32: length, type, data
		n, err = r.uint(1 << (c - 0xc7))
		n++
	case c == 0xca:
		n = 4
	case c == 0xcb:
		n = 8
	case c >= 0xcc && c <= 0xcf:
		n = 1 << (c - 0xcc)
	case c >= 0xd0 && c <= 0xd3:
		n = 1 << (c - 0xd0)
	case c >= 0xd4 && c <= 0xd8: // fixext 1..16: type, data
		n = 1 + 1<<(c-0xd4)
	case c == 0xdc:
		n, err = r.uint(2)
		elems = 1
	case c == 0xdd:
		n, err = r.uint(4)
		elems = 1
	case c == 0xde:
		n, err = r.uint(2)
		elems = 2
	case c == 0xdf:
		n, err = r.uint(4)
		elems = 2
	default:
		return r.fail("invalid msgpack byte 0x%02x", c)
	}
	if err != nil {
		return err
	}
	if n > uint64(len(r.b)-r.p) {
		return r.fail("truncated msgpack value at byte %d", r.p)
	}
	if elems == 0 {
		r.p += int(n)
		return nil
	}
	for i := uint64(0); i < n*uint64(elems); i++ {
		if err := r.skip(depth + 1); err != nil {
			return err
		}
	}
	return nil
}
