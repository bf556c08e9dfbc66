package snapshot

import (
	"bytes"
	"math"
)

// Smallest encodings, to bound preallocations by the bytes that remain.
const (
	minInputLen = 1 + 3 + 18 + 1   // fixarray, 3 fixints/bool, bin8 UUID, fixarray
	minTaskLen  = 2 + 1 + 2*18 + 3 // fixarrays, fixstrs and nil, 2 UUIDs
	minItemLen  = 2                // fixarray, fixstr
)

// decodeBody decodes the msgpack body of a section whose header announced
// count keys. REQUIRES: count*minKeyLen <= len(body) (bounds the
// preallocation). The result shares no memory with body.
func decodeBody(kg int32, body []byte, count int) (*Section, error) {
	d := getDecoder(body)
	defer putDecoder(d)
	s := &Section{KeyGroup: kg}
	n := d.arrayLen("section")
	if d.err == nil && n != count {
		d.fail("the body holds %d keys, the header announces %d", n, count)
	}
	if d.err != nil {
		return nil, newErr(kg, ErrCorrupt, "%v", d.err)
	}
	if n > 0 {
		s.Keys = make([]KeyState, n)
	}
	for i := range s.Keys {
		k := &s.Keys[i]
		d.keyState(k)
		if d.err == nil && i > 0 {
			if c := bytes.Compare(s.Keys[i-1].Key, k.Key); c >= 0 {
				d.fail("keys are not strictly increasing")
			}
		}
		if d.err != nil {
			return nil, newErr(kg, ErrCorrupt, "key #%d: %v", i, d.err)
		}
	}
	if d.r.Len() != 0 {
		return nil, newErr(kg, ErrCorrupt, "%d bytes follow the last key", d.r.Len())
	}
	return s, nil
}

func (d *decoder) keyState(k *KeyState) {
	d.fixedArray("key state", 5)
	k.Key = d.key()
	k.NextSeq = d.uint("next seq")
	k.ShortTerm = d.mem("short-term memory")
	if !d.isNil() && d.err == nil {
		k.InFlight = d.inFlight()
	}
	if n := d.arrayLenMin("queued inputs", minInputLen); n > 0 {
		k.Queued = make([]Input, n)
		for i := range k.Queued {
			d.input(&k.Queued[i])
		}
	}
}

func (d *decoder) inFlight() *InFlight {
	f := new(InFlight)
	d.fixedArray("in-flight input", 4)
	d.input(&f.Input)
	f.Sensory = d.mem("sensory memory")
	if n := d.arrayLenMin("tasks", minTaskLen); n > 0 {
		f.Tasks = make([]Task, n)
		for i := range f.Tasks {
			t := &f.Tasks[i]
			d.fixedArray("task", 2)
			t.Action = d.name("task action")
			d.event(&t.Event)
		}
	}
	if e := d.uint("emitted"); e > math.MaxUint32 {
		d.fail("emitted count %d overflows uint32", e)
	} else {
		f.Emitted = uint32(e)
	}
	return f
}

func (d *decoder) input(in *Input) {
	d.fixedArray("input", 5)
	in.Seq = d.uint("input seq")
	in.Timestamp = d.int("input timestamp")
	in.HasTS = d.bool("input has timestamp")
	in.EventID = d.uuid("input event id")
	n := d.arrayLen("input row")
	if d.err == nil && n%2 != 0 {
		d.fail("input row: %d elements, want name, value pairs", n)
	}
	if d.err != nil || n == 0 {
		return
	}
	in.Row = make([]Field, n/2)
	for i := range in.Row {
		in.Row[i].Name = d.name("row field name")
		in.Row[i].Value = d.value(0, true)
	}
}

func (d *decoder) event(ev *Event) {
	d.fixedArray("event", 5)
	ev.ID = d.uuid("event id")
	ev.Type = d.name("event type")
	if !d.isNil() && d.err == nil {
		ev.Attrs = d.mapValue(0, false)
	}
	ev.UpstreamID = d.uuid("upstream event id")
	ev.UpstreamAction = d.name("upstream action")
}

// mem reads memory items; paths must be strictly increasing.
func (d *decoder) mem(what string) []MemItem {
	n := d.arrayLenMin(what, minItemLen)
	if d.err != nil || n == 0 {
		return nil
	}
	items := d.items(n)
	for i := range items {
		it := &items[i]
		switch m := d.arrayLen("memory item"); {
		case d.err != nil:
		case m == 1:
			it.Path, it.Object = d.name("memory path"), true
		case m == 2:
			it.Path = d.name("memory path")
			it.Value = d.value(0, false)
		default:
			d.fail("%s item: array of %d elements, want 1 (object) or 2 (path, value)", what, m)
		}
		if d.err != nil {
			return nil
		}
		if i > 0 && items[i-1].Path >= it.Path {
			d.fail("%s: paths are not strictly increasing (%q after %q)", what, it.Path, items[i-1].Path)
			return nil
		}
	}
	return items
}
