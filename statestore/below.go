package statestore

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
// records by input (byInput). REQUIRES: the store's mutex held for every
// method.
//
// mark is O(1): it only remembers the mark, and only for keys that hold
// records (held, built from byInput at the first mark after the set was
// last emptied). due, called by CheckpointComplete, turns the marks whose
// lastCut is below the checkpoint into the inputs to prune, with one pass
// over byInput; a restore marks its keys once, so this pass happens about
// once per restore.
type belowMarks struct {
	held  map[keyID]struct{}
	marks map[keyID]belowMark
}

func (b *belowMarks) mark(byInput map[inputID][]RecordKey, kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	if seq == 0 {
		return // no input below 0
	}
	if b.held == nil {
		b.held = make(map[keyID]struct{}, len(byInput))
		for in := range byInput {
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

// due returns the inputs of byInput covered by a mark with lastCut <
// checkpointID and forgets those marks.
func (b *belowMarks) due(byInput map[inputID][]RecordKey, checkpointID int64) []inputID {
	if len(b.marks) == 0 {
		return nil
	}
	var out []inputID
	for in := range byInput {
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
