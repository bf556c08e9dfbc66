package snapshot

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/internal/msgp"
)

// maxDepth bounds the nesting of lists and maps inside a value. The encoder
// refuses deeper values so that everything it writes can be decoded, and the
// decoder refuses them so that no input can exhaust the stack.
const maxDepth = 100

// maxPooledBuf: encode buffers that grew beyond this are dropped, not pooled.
const maxPooledBuf = 64 << 20

// encState is the reusable state of one encode call: the output buffer,
// which the encoder appends canonical msgpack to (internal/msgp).
type encState struct {
	b    []byte
	keys [][]string // scratch for sorting map keys, one per nesting depth
}

var encPool = sync.Pool{New: func() any { return new(encState) }}

func getEncState() *encState {
	st := encPool.Get().(*encState)
	st.b = st.b[:0]
	return st
}

func putEncState(st *encState) {
	if cap(st.b) > maxPooledBuf {
		return
	}
	encPool.Put(st)
}

func (st *encState) arr(n int)       { st.b = msgp.AppendArrayLen(st.b, n) }
func (st *encState) str(s string)    { st.b = msgp.AppendStr(st.b, s) }
func (st *encState) uint(n uint64)   { st.b = msgp.AppendUint(st.b, n) }
func (st *encState) int(n int64)     { st.b = msgp.AppendInt(st.b, n) }
func (st *encState) bool(b bool)     { st.b = msgp.AppendBool(st.b, b) }
func (st *encState) null()           { st.b = msgp.AppendNil(st.b) }
func (st *encState) uuid(u UUID)     { st.bin(u[:]) }
func (st *encState) float(f float64) { st.b = msgp.AppendFloat64(st.b, f) }

// bin writes b as msgpack bin, also when b is nil.
func (st *encState) bin(b []byte) { st.b = msgp.AppendBin(st.b, b) }

// encErr is an encode failure on its way up; each level adds where it was.
type encErr struct {
	vpath []string // positions inside a value, innermost first: [2] ["x"]
	where []string // enclosing fields, innermost first
	msg   string
}

func (e *encErr) in(format string, args ...any) *encErr {
	s := fmt.Sprintf(format, args...)
	if len(e.vpath) > 0 {
		slices.Reverse(e.vpath)
		s += " at " + strings.Join(e.vpath, "")
		e.vpath = nil
	}
	e.where = append(e.where, s)
	return e
}

func (e *encErr) detail() string {
	slices.Reverse(e.where)
	return strings.Join(e.where, ", ") + ": " + e.msg
}

func keyLabel(i int, key []byte) string {
	const show = 32
	if len(key) > show {
		return fmt.Sprintf("key #%d (0x%x…, %d bytes)", i, key[:show], len(key))
	}
	return fmt.Sprintf("key #%d (0x%x)", i, key)
}

// encodeBody writes the msgpack body of s into st.b and returns it. The
// returned slice is valid until st is reused.
func (st *encState) encodeBody(s *Section) ([]byte, error) {
	st.arr(len(s.Keys))
	for i := range s.Keys {
		k := &s.Keys[i]
		if i > 0 {
			if c := bytes.Compare(s.Keys[i-1].Key, k.Key); c >= 0 {
				what := "keys are not sorted (bytes.Compare)"
				if c == 0 {
					what = "duplicate key"
				}
				return nil, newErr(s.KeyGroup, ErrInvalid, "%s: %s after %s", what, keyLabel(i, k.Key), keyLabel(i-1, s.Keys[i-1].Key))
			}
		}
		if e := st.keyState(k); e != nil {
			return nil, newErr(s.KeyGroup, ErrInvalid, "%s, %s", keyLabel(i, k.Key), e.detail())
		}
	}
	return st.b, nil
}

// keyState: [key bin, next seq, short-term memory, in-flight | nil, queued].
func (st *encState) keyState(k *KeyState) *encErr {
	st.arr(5)
	st.bin(k.Key)
	st.uint(k.NextSeq)
	if e := st.mem(k.ShortTerm); e != nil {
		return e.in("short-term memory")
	}
	if f := k.InFlight; f == nil {
		st.null()
	} else if e := st.inFlight(f); e != nil {
		return e.in("in-flight input")
	}
	st.arr(len(k.Queued))
	for i := range k.Queued {
		if e := st.input(&k.Queued[i]); e != nil {
			return e.in("queued input #%d (seq %d)", i, k.Queued[i].Seq)
		}
	}
	return nil
}

// inFlight: [input, sensory memory, tasks, emitted].
func (st *encState) inFlight(f *InFlight) *encErr {
	st.arr(4)
	if e := st.input(&f.Input); e != nil {
		return e.in("input (seq %d)", f.Input.Seq)
	}
	if e := st.mem(f.Sensory); e != nil {
		return e.in("sensory memory")
	}
	st.arr(len(f.Tasks))
	for i := range f.Tasks {
		t := &f.Tasks[i]
		st.arr(2)
		st.str(t.Action)
		if e := st.event(&t.Event); e != nil {
			return e.in("task #%d (action %q)", i, t.Action)
		}
	}
	st.uint(uint64(f.Emitted))
	return nil
}

// input: [seq, timestamp, has timestamp, event id, row as name, value, ...].
func (st *encState) input(in *Input) *encErr {
	st.arr(5)
	st.uint(in.Seq)
	st.int(in.Timestamp)
	st.bool(in.HasTS)
	st.uuid(in.EventID)
	st.arr(2 * len(in.Row))
	for i := range in.Row {
		f := &in.Row[i]
		st.str(f.Name)
		if e := st.value(f.Value, 0, true); e != nil {
			return e.in("row field #%d %q", i, f.Name)
		}
	}
	return nil
}

// event: [id, type, attrs map | nil, upstream id, upstream action].
func (st *encState) event(ev *Event) *encErr {
	st.arr(5)
	st.uuid(ev.ID)
	st.str(ev.Type)
	if ev.Attrs == nil {
		st.null()
	} else if e := st.mapValue(ev.Attrs, 0, false); e != nil {
		return e.in("event %q attrs", ev.Type)
	}
	st.uuid(ev.UpstreamID)
	st.str(ev.UpstreamAction)
	return nil
}

// mem: a list of [path] (object node) or [path, value] items.
// REQUIRES (checked): paths strictly increasing.
func (st *encState) mem(items []MemItem) *encErr {
	st.arr(len(items))
	for i := range items {
		it := &items[i]
		if i > 0 && items[i-1].Path >= it.Path {
			what := "paths are not sorted"
			if items[i-1].Path == it.Path {
				what = "duplicate path"
			}
			return &encErr{msg: fmt.Sprintf("%s: %q after %q", what, it.Path, items[i-1].Path)}
		}
		if it.Object {
			if it.Value != nil {
				return &encErr{msg: fmt.Sprintf("object node %q has a value of Go type %T; an object node's Value must be nil", it.Path, it.Value)}
			}
			st.arr(1)
			st.str(it.Path)
			continue
		}
		st.arr(2)
		st.str(it.Path)
		if e := st.value(it.Value, 0, false); e != nil {
			return e.in("path %q", it.Path)
		}
	}
	return nil
}

// value writes a value of the value domain; with withTime (row fields),
// time.Time too. depth is the number of enclosing lists and maps.
func (st *encState) value(v any, depth int, withTime bool) *encErr {
	switch x := v.(type) {
	case nil:
		st.null()
	case bool:
		st.bool(x)
	case int64:
		st.int(x)
	case float64:
		st.float(x)
	case string:
		st.str(x)
	case []byte:
		st.bin(x)
	case []any:
		if depth >= maxDepth {
			return &encErr{msg: fmt.Sprintf("lists and maps nested more than %d deep", maxDepth)}
		}
		st.arr(len(x))
		for i, el := range x {
			if e := st.value(el, depth+1, withTime); e != nil {
				e.vpath = append(e.vpath, fmt.Sprintf("[%d]", i))
				return e
			}
		}
	case map[string]any:
		return st.mapValue(x, depth, withTime)
	case time.Time:
		if !withTime {
			return &encErr{msg: "Go type time.Time is allowed only in input row fields; store it as an int64 (ms) or a string"}
		}
		st.b = msgp.AppendTime(st.b, x)
	default:
		return &encErr{msg: fmt.Sprintf("unsupported Go type %T (the value domain is nil, bool, int64, float64, string, []byte, []any, map[string]any); normalise it first", v)}
	}
	return nil
}

// mapValue writes m with its keys in increasing order.
func (st *encState) mapValue(m map[string]any, depth int, withTime bool) *encErr {
	if depth >= maxDepth {
		return &encErr{msg: fmt.Sprintf("lists and maps nested more than %d deep", maxDepth)}
	}
	for len(st.keys) <= depth {
		st.keys = append(st.keys, nil)
	}
	ks := st.keys[depth][:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	st.keys[depth] = ks
	st.b = msgp.AppendMapLen(st.b, len(ks))
	for _, k := range ks {
		st.str(k)
		if e := st.value(m[k], depth+1, withTime); e != nil {
			e.vpath = append(e.vpath, fmt.Sprintf("[%q]", k))
			clear(ks)
			return e
		}
	}
	clear(ks) // do not pin the caller's strings in the pool
	return nil
}
