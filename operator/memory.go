package operator

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// memItem is one node of a flat memory map: an object or a value.
type memItem struct {
	obj bool
	val any
}

// memMap is committed memory: path -> node. The root object is implicit.
// INVARIANT: every proper prefix of a stored path is stored as an object.
type memMap map[string]memItem

func (m memMap) apply(u *statestore.MemUpdate) memMap {
	if m == nil {
		m = make(memMap, 4)
	}
	switch {
	case u.Delete:
		m.removeSubtree(u.Path)
		delete(m, u.Path)
	case u.Object:
		if u.Overwrite {
			m.removeSubtree(u.Path)
		}
		m[u.Path] = memItem{obj: true}
	default:
		m[u.Path] = memItem{val: u.Value}
	}
	return m
}

func (m memMap) removeSubtree(path string) {
	prefix := path + "."
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			delete(m, k)
		}
	}
}

func (m memMap) items() []snapshot.MemItem { return m.appendItems(nil) }

// appendItems appends the entries of m to dst, sorted by path, and returns
// the extended slice; the appended part is capped so that later appends to
// dst cannot overwrite it.
func (m memMap) appendItems(dst []snapshot.MemItem) []snapshot.MemItem {
	if len(m) == 0 {
		return nil
	}
	start := len(dst)
	for p, it := range m {
		dst = append(dst, snapshot.MemItem{Path: p, Object: it.obj, Value: it.val})
	}
	out := dst[start:len(dst):len(dst)]
	slices.SortFunc(out, func(a, b snapshot.MemItem) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func memFromItems(items []snapshot.MemItem) memMap {
	if len(items) == 0 {
		return nil
	}
	m := make(memMap, len(items))
	for _, it := range items {
		m[it.Path] = memItem{obj: it.Object, val: it.Value}
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
	it, ok := m.base[path]
	return it, ok
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
	for p := range m.base {
		consider(p)
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
