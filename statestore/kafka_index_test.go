package statestore

import (
	"encoding/binary"
	"testing"
)

// collidingInputs returns two inputs of one key group whose inputHash is the
// same.
func collidingInputs() (a, b inputID) {
	a = inputID{kg: 7, seq: 1}
	b = inputID{kg: 7, seq: 2}
	binary.LittleEndian.PutUint64(a.hash[:8], 0x1234)
	mix := func(seq uint64) uint64 { return seq * 0x9e3779b97f4a7c15 } // as inputHash does
	binary.LittleEndian.PutUint64(b.hash[:8], 0x1234^mix(a.seq)^mix(b.seq))
	a.hash[9], b.hash[9] = 1, 2 // the rest of the hashes differ too
	return a, b
}

func indexKey(in inputID, action string) RecordKey {
	return RecordKey{KeyGroup: in.kg, KeyHash: in.hash, Seq: in.seq, Action: action}
}

func TestKIndexCollidingInputs(t *testing.T) {
	a, b := collidingInputs()
	if inputHash(&a) != inputHash(&b) {
		t.Fatalf("inputHash %x and %x: the test needs a collision", inputHash(&a), inputHash(&b))
	}
	x := newKIndex()
	ea, eb := &kEntry{key: indexKey(a, "act")}, &kEntry{key: indexKey(b, "act")}
	eb2 := &kEntry{key: indexKey(b, "other")}
	for _, e := range []*kEntry{ea, eb, eb2} {
		if old := x.set(e, nil); old != nil {
			t.Fatalf("set(%v) replaced %v", e.key, old.key)
		}
	}
	if x.n != 3 || len(x.ins) != 1 {
		t.Fatalf("n %d, %d map slots: want 3 records in 1 slot", x.n, len(x.ins))
	}
	if x.newest(ea.key) != ea || x.newest(eb.key) != eb || x.newest(eb2.key) != eb2 {
		t.Fatal("newest does not find each input's own record")
	}
	ea2 := &kEntry{key: indexKey(a, "act")}
	if old := x.set(ea2, nil); old != ea {
		t.Fatalf("a newer version replaced %v, want a's first", old)
	}
	// b is done before cut 1; pruning takes b only.
	x.markDone(b, 1, nil)
	x.markDone(b, 1, nil) // marking twice lists it once
	due := x.due(2)
	if len(due) != 1 || due[0].id != b {
		t.Fatalf("due(2) = %d inputs, want b only", len(due))
	}
	var dropped []*kEntry
	x.take(due[0], func(e *kEntry) { dropped = append(dropped, e) })
	if len(dropped) != 2 || x.n != 1 {
		t.Fatalf("dropped %d records, %d held: want 2 and 1", len(dropped), x.n)
	}
	if x.newest(eb.key) != nil || x.newest(ea.key) != ea2 {
		t.Fatal("after pruning b, b is still found or a is lost")
	}
	// A replayed tombstone removes a's record, and with it the input.
	if x.remove(ea.key) != ea2 || x.n != 0 || len(x.ins) != 0 {
		t.Fatalf("remove: %d held, %d map slots: want none", x.n, len(x.ins))
	}
}

// TestKIndexUnlinkMiddle removes an input from the middle of a chain.
func TestKIndexUnlinkMiddle(t *testing.T) {
	a, b := collidingInputs()
	c := b
	c.hash[10] = 3 // same first 8 bytes and seq as b: collides with both
	x := newKIndex()
	for _, in := range []inputID{a, b, c} {
		x.set(&kEntry{key: indexKey(in, "act")}, nil)
	}
	mid := x.lookup(b)
	if mid == nil || x.ins[inputHash(&b)] == mid {
		t.Fatal("b should be in the middle of the chain")
	}
	x.take(mid, func(*kEntry) {})
	if x.lookup(b) != nil || x.lookup(a) == nil || x.lookup(c) == nil {
		t.Fatal("unlinking b lost a or c, or kept b")
	}
	n := 0
	for range x.all() {
		n++
	}
	if n != 2 || x.n != 2 {
		t.Fatalf("all yields %d, n %d: want 2", n, x.n)
	}
}

// TestKIndexSlot: an InputSlot finds its input without a lookup once the
// first record set it; a slot left pointing at another input, or at one
// pruned since, is not trusted.
func TestKIndexSlot(t *testing.T) {
	a, b := collidingInputs()
	x := newKIndex()
	var slot InputSlot
	ea := &kEntry{key: indexKey(a, "first")}
	x.set(ea, &slot)
	if slot.in == nil || slot.in.id != a {
		t.Fatal("the first record of an input did not fill its slot")
	}
	// The same input's next record goes through the slot, even with the map
	// entry gone (a lookup would miss it).
	in := slot.in
	delete(x.ins, inputHash(&a))
	ea2 := &kEntry{key: indexKey(a, "second")}
	if old := x.set(ea2, &slot); old != nil || len(in.entries) != 2 {
		t.Fatalf("set through the slot: replaced %v, %d entries; want none and 2", old, len(in.entries))
	}
	x.insert(in)
	x.markDone(a, 1, &slot)
	if !in.marked {
		t.Fatal("markDone through the slot did not mark the input")
	}
	// Reused for input b (as the core does once a is done): the slot names
	// a, so b is looked up, created, and the slot follows it.
	eb := &kEntry{key: indexKey(b, "first")}
	x.set(eb, &slot)
	if slot.in == nil || slot.in.id != b || x.lookup(b) != slot.in || len(in.entries) != 2 {
		t.Fatal("a slot naming another input was trusted")
	}
	// b pruned: the slot's input is unlinked; a new record of b (a replay
	// after a restore) makes a new input instead of reviving the pruned one.
	pruned := slot.in
	x.take(pruned, func(*kEntry) {})
	x.set(&kEntry{key: indexKey(b, "again")}, &slot)
	if slot.in == pruned || x.lookup(b) != slot.in {
		t.Fatal("a slot naming a pruned input was trusted")
	}
}
