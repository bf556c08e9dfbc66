package statestore

import (
	"iter"
	"maps"
)

// keyID names one key: its key group and the SHA-256 of its bytes.
type keyID struct {
	kg   int32
	hash [32]byte
}

// belowMark is one MarkDoneBelow call: inputs below seq are done, with
// lastCut.
type belowMark struct {
	seq     uint64
	lastCut int64
}

// belowMarks implements RestoredInputTracker for a store that indexes its
// records by input (the inputs it passes). REQUIRES: the store's mutex held for every
// method.
//
// mark is O(1): it only remembers the mark, and only for keys that hold
// records (held, built from the inputs at the first mark after the set was
// last emptied). due, called by CheckpointComplete, turns the marks whose
// lastCut is below the checkpoint into the inputs to prune, with one pass
// over the inputs; a restore marks its keys once, so this pass happens about
// once per restore.
type belowMarks struct {
	held  map[keyID]struct{}
	marks map[keyID]belowMark
}

func (b *belowMarks) mark(inputs iter.Seq[inputID], n int, kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	if seq == 0 {
		return // no input below 0
	}
	if b.held == nil {
		b.held = make(map[keyID]struct{}, n)
		for in := range inputs {
			b.held[keyID{in.kg, in.hash}] = struct{}{}
		}
		b.marks = make(map[keyID]belowMark)
	}
	id := keyID{kg, keyHash}
	if _, ok := b.held[id]; !ok {
		return
	}
	if cur, ok := b.marks[id]; ok && cur.seq >= seq && cur.lastCut <= lastCut {
		return // an earlier mark already covers this one
	}
	b.marks[id] = belowMark{seq: seq, lastCut: lastCut}
}

// due returns the inputs covered by a mark with lastCut <
// checkpointID and forgets those marks.
func (b *belowMarks) due(inputs iter.Seq[inputID], checkpointID int64) []inputID {
	if len(b.marks) == 0 {
		return nil
	}
	var out []inputID
	for in := range inputs {
		if m, ok := b.marks[keyID{in.kg, in.hash}]; ok && in.seq < m.seq && m.lastCut < checkpointID {
			out = append(out, in)
		}
	}
	for id, m := range b.marks {
		if m.lastCut < checkpointID {
			delete(b.marks, id)
		}
	}
	if len(b.marks) == 0 {
		b.held, b.marks = nil, nil // rebuilt at the next mark
	}
	return out
}

// reset forgets every mark (a simulated crash).
func (b *belowMarks) reset() { b.held, b.marks = nil, nil }

// doneByCut holds the inputs marked done (InputTracker) by the lastCut they
// were marked with, until a checkpoint above it completes.
type doneByCut[T any] map[int64][]T

func (d doneByCut[T]) add(lastCut int64, in T) { d[lastCut] = append(d[lastCut], in) }

// detach removes and returns the inputs marked with lastCut < checkpointID.
func (d doneByCut[T]) detach(checkpointID int64) []T {
	var out []T
	for cut, ins := range d {
		if cut >= checkpointID {
			continue
		}
		if out == nil {
			out = ins
		} else {
			out = append(out, ins...)
		}
		delete(d, cut)
	}
	return out
}

// inputIndex is the pruning bookkeeping the Memory and Kafka stores share:
// their records indexed by input, the inputs marked done (InputTracker) and
// the MarkDoneBelow marks (RestoredInputTracker). REQUIRES: the store's
// mutex held for every method.
type inputIndex struct {
	byInput map[inputID][]RecordKey // keys of the records of each input
	done    doneByCut[inputID]      // finished inputs by lastCut, not yet pruned
	below   belowMarks              // MarkDoneBelow marks, not yet pruned
}

func newInputIndex() inputIndex {
	return inputIndex{byInput: make(map[inputID][]RecordKey), done: make(doneByCut[inputID])}
}

// add indexes the key of a record the store did not hold before.
func (x *inputIndex) add(k RecordKey) {
	in := k.input()
	x.byInput[in] = append(x.byInput[in], k)
}

// markDone implements MarkInputDone; inputs without records are not remembered.
func (x *inputIndex) markDone(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	in := inputID{kg, keyHash, seq}
	if _, ok := x.byInput[in]; ok {
		x.done.add(lastCut, in)
	}
}

// markBelow implements MarkDoneBelow.
func (x *inputIndex) markBelow(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	x.below.mark(maps.Keys(x.byInput), len(x.byInput), kg, keyHash, seq, lastCut)
}

// prune calls drop for every record key of every input marked done with
// lastCut < checkpointID, and forgets those inputs.
func (x *inputIndex) prune(checkpointID int64, drop func(RecordKey)) {
	for _, in := range x.due(checkpointID) {
		x.take(in, drop)
	}
}

// due detaches and returns the inputs marked done with lastCut <
// checkpointID; take then drops each one's records.
func (x *inputIndex) due(checkpointID int64) []inputID {
	return append(x.done.detach(checkpointID), x.below.due(maps.Keys(x.byInput), checkpointID)...)
}

// take calls drop for every record key of input in and forgets the input.
func (x *inputIndex) take(in inputID, drop func(RecordKey)) {
	for _, k := range x.byInput[in] {
		drop(k)
	}
	delete(x.byInput, in)
}

// rebuild re-indexes keys and forgets every mark (after a simulated crash).
func (x *inputIndex) rebuild(keys func(yield func(RecordKey) bool)) {
	clear(x.byInput)
	for k := range keys {
		x.add(k)
	}
	clear(x.done)
	x.below.reset()
}
