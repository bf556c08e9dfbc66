package statestore

import (
	"bytes"

	"github.com/cespare/xxhash/v2"
)

// Table holds per-key state of one operator subtask. Keys are opaque bytes
// with their Flink key group; entries are found by the xxhash64 of the key
// bytes and confirmed by comparing the full bytes, so hash collisions are
// harmless. Entries are grouped by key group so that a snapshot can be cut
// one key group at a time.
//
// Not safe for concurrent use: one goroutine owns a Table.
//
// INVARIANT: every entry of groups[kg] has key group kg; n is the total
// number of entries.
type Table[V any] struct {
	groups []*tableGroup[V] // indexed by key group
	n      int
}

type tableGroup[V any] struct {
	m map[uint64]*tableEntry[V]
	n int
}

type tableEntry[V any] struct {
	key  []byte
	val  V
	next *tableEntry[V] // entries whose key hashes to the same value
}

// NewTable returns an empty table.
func NewTable[V any]() *Table[V] { return &Table[V]{} }

// HashKey64 is the hash the table uses to find a key.
func HashKey64(key []byte) uint64 { return xxhash.Sum64(key) }

// Len returns the number of keys.
func (t *Table[V]) Len() int { return t.n }

func (t *Table[V]) group(kg int32, create bool) *tableGroup[V] {
	if kg < 0 {
		return nil
	}
	if int(kg) >= len(t.groups) {
		if !create {
			return nil
		}
		t.groups = append(t.groups, make([]*tableGroup[V], int(kg)+1-len(t.groups))...)
	}
	g := t.groups[kg]
	if g == nil && create {
		g = &tableGroup[V]{m: make(map[uint64]*tableEntry[V])}
		t.groups[kg] = g
	}
	return g
}

// Get returns the state of key in key group kg.
func (t *Table[V]) Get(kg int32, key []byte) (*V, bool) {
	return t.GetHashed(kg, key, HashKey64(key))
}

// GetHashed is Get with the key's HashKey64 already computed.
func (t *Table[V]) GetHashed(kg int32, key []byte, h uint64) (*V, bool) {
	g := t.group(kg, false)
	if g == nil {
		return nil, false
	}
	for e := g.m[h]; e != nil; e = e.next {
		if bytes.Equal(e.key, key) {
			return &e.val, true
		}
	}
	return nil, false
}

// GetOrCreate returns the state of key, creating a zero value if absent. The
// key bytes are copied; the caller may reuse key afterwards.
func (t *Table[V]) GetOrCreate(kg int32, key []byte) (v *V, created bool) {
	return t.GetOrCreateHashed(kg, key, HashKey64(key))
}

// GetOrCreateHashed is GetOrCreate with the key's HashKey64 already computed.
func (t *Table[V]) GetOrCreateHashed(kg int32, key []byte, h uint64) (v *V, created bool) {
	v, _, created = t.GetOrCreateKey(kg, key, h)
	return v, created
}

// GetOrCreateKey is GetOrCreateHashed that also returns the table's own copy
// of the key bytes, valid for as long as the key is in the table.
func (t *Table[V]) GetOrCreateKey(kg int32, key []byte, h uint64) (v *V, stored []byte, created bool) {
	g := t.group(kg, true)
	head := g.m[h]
	for e := head; e != nil; e = e.next {
		if bytes.Equal(e.key, key) {
			return &e.val, e.key, false
		}
	}
	e := &tableEntry[V]{key: bytes.Clone(key), next: head}
	g.m[h] = e
	g.n++
	t.n++
	return &e.val, e.key, true
}

// Delete removes key from key group kg, if present.
func (t *Table[V]) Delete(kg int32, key []byte) {
	g := t.group(kg, false)
	if g == nil {
		return
	}
	h := HashKey64(key)
	var prev *tableEntry[V]
	for e := g.m[h]; e != nil; prev, e = e, e.next {
		if !bytes.Equal(e.key, key) {
			continue
		}
		switch {
		case prev != nil:
			prev.next = e.next
		case e.next != nil:
			g.m[h] = e.next
		default:
			delete(g.m, h)
		}
		g.n--
		t.n--
		return
	}
}

// KeyGroups returns the key groups that hold at least one key, ascending.
func (t *Table[V]) KeyGroups() []int32 {
	var out []int32
	for kg, g := range t.groups {
		if g != nil && g.n > 0 {
			out = append(out, int32(kg))
		}
	}
	return out
}

// GroupLen returns the number of keys in key group kg.
func (t *Table[V]) GroupLen(kg int32) int {
	if g := t.group(kg, false); g != nil {
		return g.n
	}
	return 0
}

// Range calls fn for every key in unspecified order until fn returns false.
// fn must not add or delete keys.
func (t *Table[V]) Range(fn func(kg int32, key []byte, v *V) bool) {
	for kg, g := range t.groups {
		if g == nil {
			continue
		}
		for _, e := range g.m {
			for ; e != nil; e = e.next {
				if !fn(int32(kg), e.key, &e.val) {
					return
				}
			}
		}
	}
}

// RangeGroup calls fn for every key of key group kg in unspecified order,
// until fn returns false. fn must not add or delete keys.
func (t *Table[V]) RangeGroup(kg int32, fn func(key []byte, v *V) bool) {
	g := t.group(kg, false)
	if g == nil {
		return
	}
	for _, e := range g.m {
		for ; e != nil; e = e.next {
			if !fn(e.key, &e.val) {
				return
			}
		}
	}
}
