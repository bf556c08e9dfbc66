package snapshot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	mc "github.com/vmihailenco/msgpack/v5/msgpcode"
)

// minKeyLen is the smallest encoding of a KeyState: fixarray(5), bin8 of
// length 0, fixint, fixarray(0), nil, fixarray(0).
const minKeyLen = 7

// Interning of names (paths, event types, action names, field and map keys):
// they repeat across keys, so one copy serves them all.
const (
	maxInternLen   = 64
	maxInternCount = 4096
)

// timeExtType is the msgpack timestamp extension type (-1) as a byte.
const timeExtType = 0xff

// decoder reads one body. Errors are sticky: after the first failure every
// read returns a zero value and err keeps the first message.
//
// INVARIANT: dec reads from r, and r is a reader over body with no buffering
// in between (bytes.Reader is an io.ByteScanner, so msgpack uses it
// directly): pos() is the decoder's position and raw reads may advance r.
type decoder struct {
	body   []byte
	r      bytes.Reader
	dec    *msgpack.Decoder
	err    error
	intern map[string]string

	// Slabs handed out in pieces (capacity-limited sub-slices, so an append
	// by the caller reallocates instead of overwriting a neighbour). They are
	// never pooled: the decoded section owns them.
	keySlab  []byte
	itemSlab []MemItem
	anySlab  []any
}

var decPool = sync.Pool{New: func() any {
	d := &decoder{intern: make(map[string]string)}
	d.dec = msgpack.NewDecoder(&d.r)
	return d
}}

func getDecoder(body []byte) *decoder {
	d := decPool.Get().(*decoder)
	d.body, d.err = body, nil
	d.r.Reset(body)
	return d
}

func putDecoder(d *decoder) {
	d.body, d.err = nil, nil
	d.r.Reset(nil)
	d.keySlab, d.itemSlab, d.anySlab = nil, nil, nil
	clear(d.intern)
	decPool.Put(d)
}

func (d *decoder) pos() int { return len(d.body) - d.r.Len() }

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at body offset %d: "+format, append([]any{d.pos()}, args...)...)
	}
}

// libErr records an error of the msgpack library.
func (d *decoder) libErr(err error) bool {
	if err == nil {
		return false
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		d.fail("the body ends inside a value")
	} else {
		d.fail("%v", err)
	}
	return true
}

// peek returns the next msgpack code without consuming it (0 after an error).
func (d *decoder) peek() byte {
	if d.err != nil {
		return 0
	}
	if d.r.Len() == 0 {
		d.fail("the body ends where a value was expected")
		return 0
	}
	return d.body[d.pos()]
}

func (d *decoder) skip(n int) { _, _ = d.r.Seek(int64(n), io.SeekCurrent) }

func isArray(c byte) bool { return mc.IsFixedArray(c) || c == mc.Array16 || c == mc.Array32 }
func isMap(c byte) bool   { return mc.IsFixedMap(c) || c == mc.Map16 || c == mc.Map32 }
func isInt(c byte) bool   { return mc.IsFixedNum(c) || c >= mc.Uint8 && c <= mc.Int64 }
func isUint(c byte) bool  { return c <= mc.PosFixedNumHigh || c >= mc.Uint8 && c <= mc.Uint64 }

// arrayLen reads an array header. Each element takes at least one byte, so
// a length beyond the remaining bytes is rejected before anything is sized
// by it.
func (d *decoder) arrayLen(what string) int { return d.arrayLenMin(what, 1) }

// arrayLenMin is arrayLen for elements that take at least minLen bytes.
func (d *decoder) arrayLenMin(what string, minLen int) int {
	if c := d.peek(); d.err == nil && !isArray(c) {
		d.fail("%s: expected an array, found msgpack code %#02x", what, c)
	}
	if d.err != nil {
		return 0
	}
	var n int
	if c := d.body[d.pos()]; mc.IsFixedArray(c) { // fast path
		d.skip(1)
		n = int(c & mc.FixedArrayMask)
	} else {
		var err error
		if n, err = d.dec.DecodeArrayLen(); d.libErr(err) {
			return 0
		}
	}
	if n > d.r.Len()/minLen {
		d.fail("%s: array of %d elements but only %d bytes remain", what, n, d.r.Len())
		return 0
	}
	return n
}

// fixedArray reads an array header that must announce exactly n elements.
func (d *decoder) fixedArray(what string, n int) {
	if m := d.arrayLen(what); d.err == nil && m != n {
		d.fail("%s: array of %d elements, want %d", what, m, n)
	}
}

// raw reads a str (str=true) or bin header and returns the bytes that
// follow, aliasing the body (callers copy what they keep).
func (d *decoder) raw(what string, str bool) []byte {
	c := d.peek()
	if d.err != nil {
		return nil
	}
	if str && !mc.IsString(c) || !str && !mc.IsBin(c) {
		kind := "a bin"
		if str {
			kind = "a string"
		}
		d.fail("%s: expected %s, found msgpack code %#02x", what, kind, c)
		return nil
	}
	var n int
	if mc.IsFixedString(c) { // fast path
		d.skip(1)
		n = int(c & mc.FixedStrMask)
	} else {
		var err error
		if n, err = d.dec.DecodeBytesLen(); d.libErr(err) {
			return nil
		}
	}
	if n > d.r.Len() {
		d.fail("%s: %d bytes announced but only %d remain", what, n, d.r.Len())
		return nil
	}
	p := d.pos()
	d.skip(n)
	return d.body[p : p+n : p+n]
}

func (d *decoder) str(what string) string { return string(d.raw(what, true)) }

// name is str for strings that repeat across keys; it interns them.
func (d *decoder) name(what string) string {
	b := d.raw(what, true)
	if len(b) > maxInternLen {
		return string(b)
	}
	if s, ok := d.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.intern) < maxInternCount {
		d.intern[s] = s
	}
	return s
}

// key copies a key into the key slab.
func (d *decoder) key() []byte {
	b := d.raw("key", false)
	if d.err != nil {
		return nil
	}
	if len(b) == 0 || len(b) > 1024 {
		return append([]byte{}, b...)
	}
	if len(b) > cap(d.keySlab)-len(d.keySlab) {
		d.keySlab = make([]byte, 0, max(len(b), min(2*cap(d.keySlab), 64<<10), 256))
	}
	p := len(d.keySlab)
	d.keySlab = append(d.keySlab, b...)
	return d.keySlab[p : p+len(b) : p+len(b)]
}

func (d *decoder) uuid(what string) (u UUID) {
	b := d.raw(what, false)
	if d.err == nil && len(b) != len(u) {
		d.fail("%s: %d bytes, a UUID has 16", what, len(b))
	}
	copy(u[:], b)
	return u
}

func (d *decoder) uint(what string) uint64 {
	if c := d.peek(); d.err == nil && !isUint(c) {
		d.fail("%s: expected an unsigned integer, found msgpack code %#02x", what, c)
	}
	if d.err != nil {
		return 0
	}
	n, err := d.dec.DecodeUint64()
	d.libErr(err)
	return n
}

func (d *decoder) int(what string) int64 {
	c := d.peek()
	if d.err == nil && !isInt(c) {
		d.fail("%s: expected an integer, found msgpack code %#02x", what, c)
	}
	if d.err != nil {
		return 0
	}
	if c == mc.Uint64 {
		n, err := d.dec.DecodeUint64()
		if !d.libErr(err) && n > math.MaxInt64 {
			d.fail("%s: integer %d overflows int64", what, n)
		}
		return int64(n)
	}
	n, err := d.dec.DecodeInt64()
	d.libErr(err)
	return n
}

func (d *decoder) bool(what string) bool {
	if c := d.peek(); d.err == nil && c != mc.True && c != mc.False {
		d.fail("%s: expected a bool, found msgpack code %#02x", what, c)
	}
	if d.err != nil {
		return false
	}
	b, err := d.dec.DecodeBool()
	d.libErr(err)
	return b
}

// isNil consumes a nil if one is next.
func (d *decoder) isNil() bool {
	if d.peek() == mc.Nil && d.err == nil {
		d.skip(1)
		return true
	}
	return false
}

func (d *decoder) items(n int) []MemItem {
	if n > cap(d.itemSlab)-len(d.itemSlab) {
		d.itemSlab = make([]MemItem, 0, max(n, min(max(2*cap(d.itemSlab), 16), 4096)))
	}
	p := len(d.itemSlab)
	d.itemSlab = d.itemSlab[:p+n]
	return d.itemSlab[p : p+n : p+n]
}

func (d *decoder) anys(n int) []any {
	if n == 0 {
		return []any{}
	}
	if n > cap(d.anySlab)-len(d.anySlab) {
		d.anySlab = make([]any, 0, max(n, min(max(2*cap(d.anySlab), 16), 4096)))
	}
	p := len(d.anySlab)
	d.anySlab = d.anySlab[:p+n]
	return d.anySlab[p : p+n : p+n]
}

// isTime reports whether a msgpack timestamp (ext type -1, 4, 8 or 12
// bytes) is next.
func (d *decoder) isTime(c byte) bool {
	p := d.pos()
	switch {
	case c == mc.FixExt4 || c == mc.FixExt8:
		return p+1 < len(d.body) && d.body[p+1] == timeExtType
	case c == mc.Ext8:
		return p+2 < len(d.body) && d.body[p+1] == 12 && d.body[p+2] == timeExtType
	}
	return false
}

// value reads a value of the value domain (time.Time too if withTime).
// depth is the number of enclosing lists and maps.
func (d *decoder) value(depth int, withTime bool) any {
	c := d.peek()
	if d.err != nil {
		return nil
	}
	switch {
	case c == mc.Nil:
		d.skip(1)
		return nil
	case c == mc.True || c == mc.False:
		return d.bool("value")
	case c <= mc.PosFixedNumHigh: // fast paths: the library's fixed-width reads are slow
		d.skip(1)
		return int64(c)
	case c == mc.Double && d.r.Len() >= 9:
		p := d.pos()
		d.skip(9)
		return math.Float64frombits(binary.BigEndian.Uint64(d.body[p+1:]))
	case isInt(c):
		return d.int("value")
	case c == mc.Double || c == mc.Float:
		f, err := d.dec.DecodeFloat64()
		d.libErr(err)
		return f
	case mc.IsString(c):
		return string(d.raw("value", true))
	case mc.IsBin(c):
		return bytes.Clone(d.raw("value", false))
	case isArray(c):
		if depth >= maxDepth {
			d.fail("lists and maps nested more than %d deep", maxDepth)
			return nil
		}
		n := d.arrayLen("list")
		if d.err != nil {
			return nil
		}
		l := d.anys(n)
		for i := range l {
			if l[i] = d.value(depth+1, withTime); d.err != nil {
				return nil
			}
		}
		return l
	case isMap(c):
		return d.mapValue(depth, withTime)
	case withTime && d.isTime(c):
		t, err := d.dec.DecodeTime()
		d.libErr(err)
		return t.UTC()
	}
	d.fail("msgpack code %#02x is not a value of the value domain", c)
	return nil
}

// mapValue reads a map with string keys; duplicate keys are corrupt.
func (d *decoder) mapValue(depth int, withTime bool) map[string]any {
	c := d.peek()
	if d.err == nil && !isMap(c) {
		d.fail("expected a map, found msgpack code %#02x", c)
	}
	if d.err == nil && depth >= maxDepth {
		d.fail("lists and maps nested more than %d deep", maxDepth)
	}
	if d.err != nil {
		return nil
	}
	n, err := d.dec.DecodeMapLen()
	if d.libErr(err) {
		return nil
	}
	if 2*n > d.r.Len() {
		d.fail("map of %d entries but only %d bytes remain", n, d.r.Len())
		return nil
	}
	m := make(map[string]any, min(n, 64))
	for i := 0; i < n; i++ {
		k := d.name("map key")
		v := d.value(depth+1, withTime)
		if d.err != nil {
			return nil
		}
		m[k] = v
		if len(m) != i+1 {
			d.fail("duplicate map key %q", k)
			return nil
		}
	}
	return m
}
