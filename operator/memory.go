package operator

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// memItem is one node of memory: an object or a value.
type memItem struct {
	obj bool
	val any
}

// memMap is committed memory: the nodes sorted by path, the root object
// implicit. A sorted slice rather than a map: per-key memories are small, a
// binary search beats hashing there, a snapshot is a copy, and a million keys
// do not mean a million maps for the garbage collector to scan.
//
// INVARIANT: paths are sorted and unique, and every proper prefix of a
// stored path is stored as an object. All paths below an object are
// contiguous (they share the prefix "path.").
type memMap []snapshot.MemItem

func (m memMap) find(path string) (int, bool) {
	lo, hi := 0, len(m)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if m[h].Path < path {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < len(m) && m[lo].Path == path
}

func (m memMap) get(path string) (memItem, bool) {
	if i, ok := m.find(path); ok {
		return memItem{obj: m[i].Object, val: m[i].Value}, true
	}
	return memItem{}, false
}

func (m memMap) set(it snapshot.MemItem) memMap {
	i, ok := m.find(it.Path)
	if ok {
		m[i] = it
		return m
	}
	m = append(m, snapshot.MemItem{})
	copy(m[i+1:], m[i:])
	m[i] = it
	return m
}

// removeSubtree removes everything below path (not path itself).
func (m memMap) removeSubtree(path string) memMap {
	prefix := path + "."
	i, _ := m.find(prefix)
	j := i
	for j < len(m) && strings.HasPrefix(m[j].Path, prefix) {
		j++
	}
	if j == i {
		return m
	}
	n := copy(m[i:], m[j:])
	clear(m[i+n:])
	return m[:i+n]
}

func (m memMap) apply(u *statestore.MemUpdate) memMap {
	switch {
	case u.Delete:
		m = m.removeSubtree(u.Path)
		if i, ok := m.find(u.Path); ok {
			copy(m[i:], m[i+1:])
			m[len(m)-1] = snapshot.MemItem{}
			m = m[:len(m)-1]
		}
	case u.Object:
		if u.Overwrite {
			m = m.removeSubtree(u.Path)
		}
		m = m.set(snapshot.MemItem{Path: u.Path, Object: true})
	default:
		m = m.set(snapshot.MemItem{Path: u.Path, Value: u.Value})
	}
	return m
}

// items returns a copy of the entries (sorted by path), nil if none.
func (m memMap) items() []snapshot.MemItem {
	if len(m) == 0 {
		return nil
	}
	return slices.Clone([]snapshot.MemItem(m))
}

// memFromItems adopts items (sorted by path, as snapshots store them).
func memFromItems(items []snapshot.MemItem) memMap {
	m := memMap(items)
	if !slices.IsSortedFunc(m, func(a, b snapshot.MemItem) int { return strings.Compare(a.Path, b.Path) }) {
		m = slices.Clone(m)
		slices.SortFunc(m, func(a, b snapshot.MemItem) int { return strings.Compare(a.Path, b.Path) })
	}
	return m
}

// Memory is an action's view of short-term or sensory memory: committed
// state plus the action's own writes, which become part of the key's state
// when the action completes (and are dropped if it fails).
//
// Paths are "."-separated; the root is an object. Values are in the value
// domain (see Normalize). REQUIRES: do not modify a []byte, []any or map
// returned by Get or passed to Set; memory keeps them as they are.
type Memory struct {
	ctx   *Context
	scope statestore.Scope
	base  memMap
}

func (m *Memory) lookup(path string) (memItem, bool) {
	ups := m.ctx.updates
	for i := len(ups) - 1; i >= 0; i-- {
		u := &ups[i]
		if u.Scope != m.scope {
			continue
		}
		if u.Path == path {
			if u.Delete {
				return memItem{}, false
			}
			return memItem{obj: u.Object, val: u.Value}, true
		}
		if (u.Delete || (u.Object && u.Overwrite)) && len(path) > len(u.Path) && path[len(u.Path)] == '.' && strings.HasPrefix(path, u.Path) {
			return memItem{}, false
		}
	}
	return m.base.get(path)
}

func checkPath(path string) error {
	if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
		return fmt.Errorf("%w: path %q is not a \".\"-separated list of non-empty names", ErrMemory, path)
	}
	return nil
}

// Get returns the value at path. ok is false if nothing is there; an object
// node returns (nil, true): use IsObject to tell it from a null value.
func (m *Memory) Get(path string) (v any, ok bool) {
	if m.ctx.inDurable {
		m.ctx.misuse("memory read of " + path)
		return nil, false
	}
	it, ok := m.lookup(path)
	return it.val, ok
}

// Int64 returns the integer at path; ok is false if absent or not an integer.
func (m *Memory) Int64(path string) (n int64, ok bool) {
	v, _ := m.Get(path)
	n, ok = v.(int64)
	return n, ok
}

// IsObject reports whether path is an object node.
func (m *Memory) IsObject(path string) bool {
	it, ok := m.lookup(path)
	return ok && it.obj
}

// Fields returns the names of the direct children of the object at path
// ("" for the root), sorted.
func (m *Memory) Fields(path string) []string {
	prefix := ""
	if path != "" {
		prefix = path + "."
	}
	cand := map[string]bool{}
	consider := func(p string) {
		if strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], ".") && p != path {
			cand[p] = true
		}
	}
	for i := range m.base {
		consider(m.base[i].Path)
	}
	for i := range m.ctx.updates {
		if u := &m.ctx.updates[i]; u.Scope == m.scope {
			consider(u.Path)
		}
	}
	var out []string
	for p := range cand {
		if _, ok := m.lookup(p); ok {
			out = append(out, p[len(prefix):])
		}
	}
	sort.Strings(out)
	return out
}

// Set stores v at path, creating missing parent objects. It refuses to
// replace an object with a value and to pass through a value.
func (m *Memory) Set(path string, v any) error {
	if m.ctx.inDurable {
		return m.ctx.misuse("memory write of " + path)
	}
	if err := checkPath(path); err != nil {
		return err
	}
	nv, err := Normalize(path, v)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMemory, err)
	}
	if s, ok := nv.(string); ok {
		// It may share an input batch's memory (GetView); kept in memory, it
		// would keep the whole batch alive.
		nv = strings.Clone(s)
	}
	if it, ok := m.lookup(path); ok && it.obj {
		return fmt.Errorf("%w: %q is an object; use NewObject(%q, true) to replace it, or set a field below it", ErrMemory, path, path)
	}
	if err := m.ensureParents(path); err != nil {
		return err
	}
	m.ctx.updates = append(m.ctx.updates, statestore.MemUpdate{Scope: m.scope, Path: path, Value: nv})
	return nil
}

func (m *Memory) ensureParents(path string) error {
	for i := 0; i < len(path); i++ {
		if path[i] != '.' {
			continue
		}
		parent := path[:i]
		it, ok := m.lookup(parent)
		switch {
		case ok && !it.obj:
			return fmt.Errorf("%w: cannot write %q: %q holds a value, not an object", ErrMemory, path, parent)
		case !ok:
			m.ctx.updates = append(m.ctx.updates, statestore.MemUpdate{Scope: m.scope, Path: parent, Object: true})
		}
	}
	return nil
}

// NewObject creates an object at path. If something is there already it is
// an error unless overwrite is true, which replaces it (and everything below).
func (m *Memory) NewObject(path string, overwrite bool) error {
	if m.ctx.inDurable {
		return m.ctx.misuse("memory write of " + path)
	}
	if err := checkPath(path); err != nil {
		return err
	}
	if _, ok := m.lookup(path); ok && !overwrite {
		return fmt.Errorf("%w: %q already exists; pass overwrite=true to replace it", ErrMemory, path)
	}
	if err := m.ensureParents(path); err != nil {
		return err
	}
	m.ctx.updates = append(m.ctx.updates, statestore.MemUpdate{Scope: m.scope, Path: path, Object: true, Overwrite: overwrite})
	return nil
}

// Delete removes path and everything below it; absent paths are fine.
func (m *Memory) Delete(path string) error {
	if m.ctx.inDurable {
		return m.ctx.misuse("memory write of " + path)
	}
	if err := checkPath(path); err != nil {
		return err
	}
	m.ctx.updates = append(m.ctx.updates, statestore.MemUpdate{Scope: m.scope, Path: path, Delete: true})
	return nil
}
