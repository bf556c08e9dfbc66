package statestore

import (
	"iter"
)

// kIndex is the Kafka store's in-memory index: the newest version of every
// record it holds, grouped by input, and the pruning bookkeeping (inputs
// marked done, MarkDoneBelow marks). One map lookup by input serves a Put
// (an input has a handful of records: one per action), MarkInputDone finds
// the input once, and pruning walks the inputs it was handed without
// looking anything up. REQUIRES: the store's mutex held for every method.
type kIndex struct {
	ins   map[inputID]*kInput
	n     int                 // records held: the entries of every input
	done  map[int64][]*kInput // inputs marked done, by lastCut, not yet pruned
	below belowMarks
}

// kInput is one input's records: the newest version of each.
type kInput struct {
	id      inputID
	entries []*kEntry
	marked  bool // in done already
}

func newKIndex() kIndex {
	return kIndex{ins: make(map[inputID]*kInput), done: make(map[int64][]*kInput)}
}

// find returns the input of key and the position of key's newest version
// among its entries (-1 if it holds none), or nil.
func (x *kIndex) find(key *RecordKey) (*kInput, int) {
	in := x.ins[key.input()]
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
	if in, i := x.find(&key); i >= 0 {
		return in.entries[i]
	}
	return nil
}

// set makes e the newest version of its key and returns the version it
// replaces, or nil.
func (x *kIndex) set(e *kEntry) (old *kEntry) {
	in, i := x.find(&e.key)
	switch {
	case in == nil:
		in = &kInput{id: e.key.input(), entries: make([]*kEntry, 0, 2)}
		x.ins[in.id] = in
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
	in, i := x.find(&key)
	if i < 0 {
		return nil
	}
	e := in.entries[i]
	in.entries = append(in.entries[:i], in.entries[i+1:]...)
	x.n--
	if len(in.entries) == 0 && !in.marked {
		delete(x.ins, in.id)
	}
	return e
}

// markDone implements MarkInputDone; inputs without records are not
// remembered.
func (x *kIndex) markDone(id inputID, lastCut int64) {
	if in := x.ins[id]; in != nil && !in.marked {
		in.marked = true
		x.done[lastCut] = append(x.done[lastCut], in)
	}
}

// markBelow implements MarkDoneBelow.
func (x *kIndex) markBelow(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	x.below.mark(x.ids(), len(x.ins), kg, keyHash, seq, lastCut)
}

func (x *kIndex) ids() iter.Seq[inputID] {
	return func(yield func(inputID) bool) {
		for id := range x.ins {
			if !yield(id) {
				return
			}
		}
	}
}

// due detaches and returns the inputs marked done with lastCut <
// checkpointID (and those MarkDoneBelow marks cover); take then drops each
// one's records.
func (x *kIndex) due(checkpointID int64) []*kInput {
	var out []*kInput
	for cut, ins := range x.done {
		if cut >= checkpointID {
			continue
		}
		if out == nil {
			out = ins
		} else {
			out = append(out, ins...)
		}
		delete(x.done, cut)
	}
	for _, id := range x.below.due(x.ids(), checkpointID) {
		if in := x.ins[id]; in != nil && !in.marked {
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
	in.entries = nil
	if x.ins[in.id] == in {
		delete(x.ins, in.id)
	}
}

// all yields the newest version of every record held.
func (x *kIndex) all() iter.Seq[*kEntry] {
	return func(yield func(*kEntry) bool) {
		for _, in := range x.ins {
			for _, e := range in.entries {
				if !yield(e) {
					return
				}
			}
		}
	}
}
