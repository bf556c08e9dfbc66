package statestore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// valueReader reads msgpack strictly: every read checks the next code first
// (the library's Decoder is lenient, e.g. it reads nil as false or 0), every
// length is checked against the bytes left before anything is allocated, and
// nesting is bounded. It never panics on any input.
type valueReader struct {
	b     []byte
	r     bytes.Reader
	dec   *msgpack.Decoder
	spans []span // scratch for duplicate map key checks, used as a stack
}

type span struct{ start, end int }

var readerPool = sync.Pool{New: func() any {
	r := &valueReader{}
	r.dec = msgpack.NewDecoder(&r.r)
	return r
}}

func getReader(b []byte) *valueReader {
	r := readerPool.Get().(*valueReader)
	r.b = b
	r.r.Reset(b)
	return r
}

func putReader(r *valueReader) {
	r.b = nil
	r.r.Reset(nil)
	r.spans = r.spans[:0]
	readerPool.Put(r)
}

// corruptErr is a reader error; the codec wraps it into a *RecordError.
type corruptErr struct{ msg string }

func (e *corruptErr) Error() string { return e.msg }

func (r *valueReader) corruptf(format string, args ...any) error {
	return &corruptErr{fmt.Sprintf("at byte %d: ", r.pos()) + fmt.Sprintf(format, args...)}
}

func (r *valueReader) pos() int       { return len(r.b) - r.r.Len() }
func (r *valueReader) remaining() int { return r.r.Len() }

func (r *valueReader) peek() (byte, error) {
	c, err := r.dec.PeekCode()
	if err != nil {
		return 0, r.corruptf("unexpected end of data")
	}
	return c, nil
}

// libErr turns an error of the msgpack library (short data) into ours.
func (r *valueReader) libErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.corruptf("unexpected end of data")
	}
	return r.corruptf("%v", err)
}

func isIntCode(c byte) bool {
	return msgpcode.IsFixedNum(c) || (c >= msgpcode.Uint8 && c <= msgpcode.Int64)
}

func isStrCode(c byte) bool {
	return msgpcode.IsFixedString(c) || c == msgpcode.Str8 || c == msgpcode.Str16 || c == msgpcode.Str32
}

func isBinCode(c byte) bool { return c == msgpcode.Bin8 || c == msgpcode.Bin16 || c == msgpcode.Bin32 }

func isArrayCode(c byte) bool {
	return msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32
}

func isMapCode(c byte) bool {
	return msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32
}

func (r *valueReader) readInt(what string) (int64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if !isIntCode(c) {
		return 0, r.corruptf("%s: msgpack code 0x%02x is not an integer", what, c)
	}
	if c == msgpcode.Uint64 {
		u, err := r.dec.DecodeUint64()
		if err != nil {
			return 0, r.libErr(err)
		}
		if u > math.MaxInt64 {
			return 0, r.corruptf("%s: integer %d is out of the int64 range", what, u)
		}
		return int64(u), nil
	}
	n, err := r.dec.DecodeInt64()
	if err != nil {
		return 0, r.libErr(err)
	}
	return n, nil
}

// readUint reads a non-negative integer no larger than max.
func (r *valueReader) readUint(what string, max uint64) (uint64, error) {
	n, err := r.readInt(what)
	if err != nil {
		return 0, err
	}
	if n < 0 || uint64(n) > max {
		return 0, r.corruptf("%s: %d is out of range [0, %d]", what, n, max)
	}
	return uint64(n), nil
}

func (r *valueReader) readBool(what string) (bool, error) {
	c, err := r.peek()
	if err != nil {
		return false, err
	}
	if c != msgpcode.True && c != msgpcode.False {
		return false, r.corruptf("%s: msgpack code 0x%02x is not a bool", what, c)
	}
	r.r.ReadByte()
	return c == msgpcode.True, nil
}

// readNil consumes a nil if one is next and reports whether it did.
func (r *valueReader) readNil() (bool, error) {
	c, err := r.peek()
	if err != nil {
		return false, err
	}
	if c == msgpcode.Nil {
		r.r.ReadByte()
		return true, nil
	}
	return false, nil
}

// rawLen reads the header of a str or bin of the kind that check accepts and
// returns the payload's span, already skipped.
func (r *valueReader) rawLen(what, kind string, check func(byte) bool) (span, error) {
	c, err := r.peek()
	if err != nil {
		return span{}, err
	}
	if !check(c) {
		return span{}, r.corruptf("%s: msgpack code 0x%02x is not a %s", what, c, kind)
	}
	n, err := r.dec.DecodeBytesLen()
	if err != nil {
		return span{}, r.libErr(err)
	}
	if n < 0 || n > r.remaining() {
		return span{}, r.corruptf("%s: %s of %d bytes but only %d left", what, kind, n, r.remaining())
	}
	p := r.pos()
	r.r.Seek(int64(n), io.SeekCurrent)
	return span{p, p + n}, nil
}

func (r *valueReader) readString(what string) (string, error) {
	s, err := r.rawLen(what, "str", isStrCode)
	if err != nil {
		return "", err
	}
	return string(r.b[s.start:s.end]), nil
}

func (r *valueReader) readBin(what string) ([]byte, error) {
	s, err := r.rawLen(what, "bin", isBinCode)
	if err != nil {
		return nil, err
	}
	return slices.Clone(r.b[s.start:s.end:s.end]), nil
}

// readFixedBin reads a bin of exactly len(dst) bytes into dst.
func (r *valueReader) readFixedBin(what string, dst []byte) error {
	s, err := r.rawLen(what, "bin", isBinCode)
	if err != nil {
		return err
	}
	if s.end-s.start != len(dst) {
		return r.corruptf("%s: %d bytes, want %d", what, s.end-s.start, len(dst))
	}
	copy(dst, r.b[s.start:s.end])
	return nil
}

// readArrayLen reads an array header; every element takes at least
// minElem bytes, which bounds what the caller allocates.
func (r *valueReader) readArrayLen(what string, minElem int) (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if !isArrayCode(c) {
		return 0, r.corruptf("%s: msgpack code 0x%02x is not an array", what, c)
	}
	n, err := r.dec.DecodeArrayLen()
	if err != nil {
		return 0, r.libErr(err)
	}
	if n < 0 || n > r.remaining()/minElem {
		return 0, r.corruptf("%s: array of %d elements cannot fit in the %d bytes left", what, n, r.remaining())
	}
	return n, nil
}

func (r *valueReader) readMapLen(what string) (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if !isMapCode(c) {
		return 0, r.corruptf("%s: msgpack code 0x%02x is not a map", what, c)
	}
	n, err := r.dec.DecodeMapLen()
	if err != nil {
		return 0, r.libErr(err)
	}
	if n < 0 || n > r.remaining()/2 {
		return 0, r.corruptf("%s: map of %d entries cannot fit in the %d bytes left", what, n, r.remaining())
	}
	return n, nil
}

// readValue reads one value of the value domain.
func (r *valueReader) readValue(depth int) (any, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case c == msgpcode.Nil:
		r.r.ReadByte()
		return nil, nil
	case c == msgpcode.True || c == msgpcode.False:
		return r.readBool("value")
	case isIntCode(c):
		return r.readInt("value")
	case c == msgpcode.Double:
		f, err := r.dec.DecodeFloat64()
		if err != nil {
			return nil, r.libErr(err)
		}
		return f, nil
	case c == msgpcode.Float:
		f, err := r.dec.DecodeFloat32()
		if err != nil {
			return nil, r.libErr(err)
		}
		return float64(f), nil
	case isStrCode(c):
		return r.readString("value")
	case isBinCode(c):
		return r.readBin("value")
	case isArrayCode(c):
		if depth >= valueMaxDepth {
			return nil, r.corruptf("value nested more than %d levels deep", valueMaxDepth)
		}
		n, err := r.readArrayLen("list", 1)
		if err != nil {
			return nil, err
		}
		l := make([]any, n)
		for i := range l {
			if l[i], err = r.readValue(depth + 1); err != nil {
				return nil, err
			}
		}
		return l, nil
	case isMapCode(c):
		if depth >= valueMaxDepth {
			return nil, r.corruptf("value nested more than %d levels deep", valueMaxDepth)
		}
		return r.readMap(depth)
	}
	return nil, r.corruptf("msgpack code 0x%02x is not in the value domain (ext types and reserved codes are not)", c)
}

func (r *valueReader) readMap(depth int) (map[string]any, error) {
	n, err := r.readMapLen("map")
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, n)
	for range n {
		k, err := r.readString("map key")
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, r.corruptf("map key %q appears twice", k)
		}
		if m[k], err = r.readValue(depth + 1); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// skipValue checks one value of the value domain, as readValue would, without
// building it, and returns its span.
func (r *valueReader) skipValue(depth int) (span, error) {
	start := r.pos()
	c, err := r.peek()
	if err != nil {
		return span{}, err
	}
	switch {
	case c == msgpcode.Nil || c == msgpcode.True || c == msgpcode.False:
		r.r.ReadByte()
	case isIntCode(c):
		_, err = r.readInt("value")
	case c == msgpcode.Double || c == msgpcode.Float:
		if err = r.dec.Skip(); err != nil {
			err = r.libErr(err)
		}
	case isStrCode(c):
		_, err = r.rawLen("value", "str", isStrCode)
	case isBinCode(c):
		_, err = r.rawLen("value", "bin", isBinCode)
	case isArrayCode(c) || isMapCode(c):
		if depth >= valueMaxDepth {
			return span{}, r.corruptf("value nested more than %d levels deep", valueMaxDepth)
		}
		if isArrayCode(c) {
			err = r.skipArray(depth)
		} else {
			err = r.skipMap(depth)
		}
	default:
		err = r.corruptf("msgpack code 0x%02x is not in the value domain (ext types and reserved codes are not)", c)
	}
	return span{start, r.pos()}, err
}

func (r *valueReader) skipArray(depth int) error {
	n, err := r.readArrayLen("list", 1)
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.skipValue(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

func (r *valueReader) skipMap(depth int) error {
	n, err := r.readMapLen("map")
	if err != nil {
		return err
	}
	base := len(r.spans)
	defer func() { r.spans = r.spans[:base] }()
	for range n {
		k, err := r.rawLen("map key", "str", isStrCode)
		if err != nil {
			return err
		}
		r.spans = append(r.spans, k)
		if _, err := r.skipValue(depth + 1); err != nil {
			return err
		}
	}
	keys := r.spans[base:]
	b := r.b
	slices.SortFunc(keys, func(x, y span) int { return bytes.Compare(b[x.start:x.end], b[y.start:y.end]) })
	for i := 1; i < len(keys); i++ {
		if bytes.Equal(b[keys[i-1].start:keys[i-1].end], b[keys[i].start:keys[i].end]) {
			return r.corruptf("map key %q appears twice", b[keys[i].start:keys[i].end])
		}
	}
	return nil
}
