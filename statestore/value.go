package statestore

import (
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flinkgo/flinkgo/internal/msgp"
)

// valueMaxDepth bounds the nesting of lists and maps, on encode (which also
// catches cycles) and on decode (which bounds recursion on hostile bytes).
const valueMaxDepth = 100

// valueWriter writes the value domain, and records, as canonical msgpack
// (internal/msgp): smallest integer encodings, float64 always as 9-byte
// float 64, strings as str, []byte as bin (also when empty or nil), maps with
// keys in increasing byte order.
type valueWriter struct {
	b         []byte
	pairs     []pair // scratch for sorting map entries, used as a stack
	normalize bool   // widen int, int32, float32, ... instead of failing
}

// pair is a map entry being written.
type pair struct {
	k string
	v any
}

var writerPool = sync.Pool{New: func() any { return &valueWriter{} }}

func getWriter(normalize bool) *valueWriter {
	w := writerPool.Get().(*valueWriter)
	w.b = w.b[:0]
	w.normalize = normalize
	return w
}

// putWriter returns w to the pool, keeping its buffer unless it grew large.
// The caller must not keep w.b.
func putWriter(w *valueWriter) {
	if cap(w.b) > 64<<10 {
		w.b = nil
	}
	clear(w.pairs[:cap(w.pairs)]) // drop the references to the values written
	w.pairs = w.pairs[:0]
	writerPool.Put(w)
}

func (w *valueWriter) writeUint(n uint64)   { w.b = msgp.AppendUint(w.b, n) }
func (w *valueWriter) writeString(s string) { w.b = msgp.AppendStr(w.b, s) }
func (w *valueWriter) writeArrayLen(n int)  { w.b = msgp.AppendArrayLen(w.b, n) }
func (w *valueWriter) writeNil()            { w.b = msgp.AppendNil(w.b) }
func (w *valueWriter) writeBin(b []byte)    { w.b = msgp.AppendBin(w.b, b) }

// writeValue writes v, which must be in the value domain (or normalisable to
// it when w.normalize is set).
func (w *valueWriter) writeValue(v any, depth int) error {
	switch v := v.(type) {
	case nil:
		w.writeNil()
	case bool:
		w.b = msgp.AppendBool(w.b, v)
	case int64:
		w.b = msgp.AppendInt(w.b, v)
	case float64:
		w.b = msgp.AppendFloat64(w.b, v)
	case string:
		if uint64(len(v)) > math.MaxUint32 {
			return &ValueError{GoType: "string", Reason: "string longer than 4 GiB"}
		}
		w.writeString(v)
	case []byte:
		if uint64(len(v)) > math.MaxUint32 {
			return &ValueError{GoType: "[]byte", Reason: "bytes longer than 4 GiB"}
		}
		w.writeBin(v)
	case []any:
		if depth >= valueMaxDepth {
			return &ValueError{GoType: "[]any", Reason: "nested more than " + strconv.Itoa(valueMaxDepth) + " levels deep (or a cycle)"}
		}
		w.writeArrayLen(len(v))
		for i, e := range v {
			if err := w.writeValue(e, depth+1); err != nil {
				return prefixPath(err, "["+strconv.Itoa(i)+"]")
			}
		}
	case map[string]any:
		if depth >= valueMaxDepth {
			return &ValueError{GoType: "map[string]any", Reason: "nested more than " + strconv.Itoa(valueMaxDepth) + " levels deep (or a cycle)"}
		}
		return w.writeMap(v, depth)
	default:
		if w.normalize {
			if n, ok := normalizeNumber(v); ok {
				return w.writeValue(n, depth)
			}
		}
		return &ValueError{GoType: fmt.Sprintf("%T", v)}
	}
	return nil
}

func (w *valueWriter) writeMap(m map[string]any, depth int) error {
	w.b = msgp.AppendMapLen(w.b, len(m))
	// One pass over the map collects its entries, which are then sorted by
	// key: no lookup per key afterwards. Maps of events and memory values
	// are small, and insertion sort is the fastest there.
	start := len(w.pairs)
	for k, v := range m {
		w.pairs = append(w.pairs, pair{k, v})
	}
	ps := w.pairs[start:]
	if len(ps) <= 12 {
		for i := 1; i < len(ps); i++ {
			for j := i; j > 0 && ps[j].k < ps[j-1].k; j-- {
				ps[j], ps[j-1] = ps[j-1], ps[j]
			}
		}
	} else {
		slices.SortFunc(ps, func(a, b pair) int { return strings.Compare(a.k, b.k) })
	}
	for i := range ps {
		// ps stays valid: nested maps append to w.pairs past it, and when
		// that reallocates, ps still holds this map's entries.
		w.writeString(ps[i].k)
		if err := w.writeValue(ps[i].v, depth+1); err != nil {
			w.pairs = w.pairs[:start]
			return prefixPath(err, "."+ps[i].k)
		}
	}
	w.pairs = w.pairs[:start]
	return nil
}

// normalizeNumber widens Go's other integer and float types into the value
// domain's int64 and float64.
func normalizeNumber(v any) (any, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case uint:
		if uint64(n) <= math.MaxInt64 {
			return int64(n), true
		}
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case float32:
		return float64(n), true
	}
	return nil, false
}

func prefixPath(err error, seg string) error {
	if ve, ok := err.(*ValueError); ok {
		ve.Path = seg + ve.Path
	}
	return err
}

// CheckValue reports whether v is in the value domain exactly (no widening),
// as the record codec requires of memory values and event attributes.
func CheckValue(v any) error {
	w := getWriter(false)
	err := w.writeValue(v, 0)
	putWriter(w)
	return err
}

// EncodeValue returns the canonical msgpack of v, after widening integers to
// int64 and floats to float64. It is how a durable call's result becomes
// CallRecord.Result: EncodeValue(nil) is the one byte 0xc0 (msgpack nil).
func EncodeValue(v any) ([]byte, error) {
	w := getWriter(true)
	err := w.writeValue(v, 0)
	b := slices.Clone(w.b)
	putWriter(w)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// DecodeValue decodes one msgpack value (e.g. a CallRecord.Result) into the
// value domain: nil, bool, int64, float64, string, []byte, []any,
// map[string]any. It never panics; bad bytes give an error wrapping
// ErrRecordCorrupt.
func DecodeValue(b []byte) (any, error) {
	r := getReader(b)
	defer putReader(r)
	v, err := r.readValue(0)
	if err == nil && r.remaining() != 0 {
		err = r.corruptf("%d bytes after the value", r.remaining())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRecordCorrupt, err)
	}
	return v, nil
}

// ArgsDigest is the SHA-256 of the canonical msgpack of a durable call's
// arguments (see docs/action-state.md, "Canonical msgpack"). Integers are
// widened to int64 and floats to float64 first, so int(1) and int64(1) give
// the same digest; a value outside the value domain is a *ValueError naming
// its Go type and where it is.
func ArgsDigest(args any) ([32]byte, error) {
	w := getWriter(true)
	err := w.writeValue(args, 0)
	var d [32]byte
	if err == nil {
		d = sha256.Sum256(w.b)
	}
	putWriter(w)
	return d, err
}
