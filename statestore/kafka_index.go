package statestore

import (
	"encoding/binary"
	"iter"
)

// kIndex is the Kafka store's in-memory index: the newest version of every
// record it holds, grouped by input, and the pruning bookkeeping (inputs
// marked done, MarkDoneBelow marks). One map lookup by input serves a Put
// (an input has a handful of records: one per action), MarkInputDone finds
// the input once, and pruning walks the inputs it was handed without
// looking anything up. REQUIRES: the store's mutex held for every method.
type kIndex struct {
	ins   map[uint64]*kInput // by inputHash; inputs of one hash chained through next
	n     int                // records held: the entries of every input
	done  doneByCut[*kInput] // inputs marked done, by lastCut, not yet pruned
	below belowMarks
}

// kInput is one input's records: the newest version of each.
type kInput struct {
	id      inputID
	entries []*kEntry  // in inline while they fit (an input has one record per action it ran)
	inline  [2]*kEntry // so that most inputs take one allocation, not two
	next    *kInput    // the next input of the same inputHash
	marked  bool       // in done already
	linked  bool       // in ins (an InputSlot may point to an input unlinked since)
}

// inputHash keys kIndex.ins: a map keyed by a uint64 hashes much faster
// than one keyed by the 48-byte inputID. The key hash is a SHA-256, so its
// first 8 bytes are uniformly spread; inputs that collide are chained.
func inputHash(id *inputID) uint64 {
	h := binary.LittleEndian.Uint64(id.hash[:8])
	return h ^ (id.seq * 0x9e3779b97f4a7c15) ^ uint64(uint32(id.kg))<<32
}

// lookup returns the input id, or nil.
func (x *kIndex) lookup(id inputID) *kInput {
	for in := x.ins[inputHash(&id)]; in != nil; in = in.next {
		if in.id == id {
			return in
		}
	}
	return nil
}

// insert adds in, which is not in x.
func (x *kIndex) insert(in *kInput) {
	h := inputHash(&in.id)
	in.next = x.ins[h]
	x.ins[h] = in
	in.linked = true
}

// unlink removes in from x, if it is there.
func (x *kIndex) unlink(in *kInput) {
	h := inputHash(&in.id)
	if first := x.ins[h]; first == in {
		if in.next == nil {
			delete(x.ins, h)
		} else {
			x.ins[h] = in.next
		}
	} else {
		for p := first; p != nil; p = p.next {
			if p.next == in {
				p.next = in.next
				break
			}
		}
	}
	in.next, in.linked = nil, false
}

// inputOf returns input id, or nil, through slot when slot holds it, and
// leaves it in slot (nil: no slot).
func (x *kIndex) inputOf(id inputID, slot *InputSlot) *kInput {
	if slot == nil {
		return x.lookup(id)
	}
	if in := slot.in; in != nil && in.linked && in.id == id {
		return in
	}
	in := x.lookup(id)
	slot.in = in
	return in
}

func newKIndex() kIndex {
	return kIndex{ins: make(map[uint64]*kInput), done: make(doneByCut[*kInput])}
}

// find returns the input of key and the position of key's newest version
// among its entries (-1 if it holds none), or nil. slot may be nil.
func (x *kIndex) find(key *RecordKey, slot *InputSlot) (*kInput, int) {
	in := x.inputOf(key.input(), slot)
	if in == nil {
		return nil, -1
	}
	for i, e := range in.entries {
		if e.key.EventID == key.EventID && e.key.Action == key.Action {
			return in, i
		}
	}
	return in, -1
}

// newest returns the newest version of key, or nil.
func (x *kIndex) newest(key RecordKey) *kEntry {
	if in, i := x.find(&key, nil); i >= 0 {
		return in.entries[i]
	}
	return nil
}

// set makes e the newest version of its key and returns the version it
// replaces, or nil. slot (may be nil) is the input's InputSlot.
func (x *kIndex) set(e *kEntry, slot *InputSlot) (old *kEntry) {
	in, i := x.find(&e.key, slot)
	return x.setAt(in, i, e, slot, nil)
}

// setAt is set with in and i as find returned them for e's key; spare (may
// be nil) is a zero kInput to use if e's input has none.
func (x *kIndex) setAt(in *kInput, i int, e *kEntry, slot *InputSlot, spare *kInput) (old *kEntry) {
	switch {
	case in == nil:
		if in = spare; in == nil {
			in = new(kInput)
		}
		in.id = e.key.input()
		in.entries = in.inline[:0]
		x.insert(in)
		if slot != nil {
			slot.in = in
		}
	case i >= 0:
		old, in.entries[i] = in.entries[i], e
		return old
	}
	in.entries = append(in.entries, e)
	x.n++
	return nil
}

// remove forgets key's newest version (a replayed tombstone) and returns it,
// or nil.
func (x *kIndex) remove(key RecordKey) *kEntry {
	in, i := x.find(&key, nil)
	if i < 0 {
		return nil
	}
	e := in.entries[i]
	last := len(in.entries) - 1
	copy(in.entries[i:], in.entries[i+1:])
	in.entries[last] = nil // do not keep the removed version alive
	in.entries = in.entries[:last]
	x.n--
	if len(in.entries) == 0 && !in.marked {
		x.unlink(in)
	}
	return e
}

// markDone implements MarkInputDone; inputs without records are not
// remembered.
func (x *kIndex) markDone(id inputID, lastCut int64, slot *InputSlot) {
	if in := x.inputOf(id, slot); in != nil && !in.marked {
		in.marked = true
		x.done.add(lastCut, in)
	}
}

// markBelow implements MarkDoneBelow.
func (x *kIndex) markBelow(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	x.below.mark(x.ids(), len(x.ins), kg, keyHash, seq, lastCut)
}

func (x *kIndex) ids() iter.Seq[inputID] {
	return func(yield func(inputID) bool) {
		for _, in := range x.ins {
			for ; in != nil; in = in.next {
				if !yield(in.id) {
					return
				}
			}
		}
	}
}

// due detaches and returns the inputs marked done with lastCut <
// checkpointID (and those MarkDoneBelow marks cover); take then drops each
// one's records.
func (x *kIndex) due(checkpointID int64) []*kInput {
	out := x.done.detach(checkpointID)
	for _, id := range x.below.due(x.ids(), checkpointID) {
		if in := x.lookup(id); in != nil && !in.marked {
			in.marked = true
			out = append(out, in)
		}
	}
	return out
}

// take calls drop for the newest version of every record of in and
// forgets the input.
func (x *kIndex) take(in *kInput, drop func(*kEntry)) {
	for _, e := range in.entries {
		drop(e)
	}
	x.n -= len(in.entries)
	clear(in.inline[:])
	in.entries = nil
	x.unlink(in)
}

// all yields the newest version of every record held.
func (x *kIndex) all() iter.Seq[*kEntry] {
	return func(yield func(*kEntry) bool) {
		for _, in := range x.ins {
			for ; in != nil; in = in.next {
				for _, e := range in.entries {
					if !yield(e) {
						return
					}
				}
			}
		}
	}
}
