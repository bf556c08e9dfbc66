package arrowio

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

const (
	minClassShift = 6  // 64 B
	maxClassShift = 26 // 64 MiB
	numClasses    = maxClassShift - minClassShift + 1

	// DefaultPoolRetain is the default bound on the bytes a PoolAllocator
	// keeps for reuse.
	DefaultPoolRetain = 64 << 20
)

// PoolAllocator is a memory.Allocator that recycles freed buffers by
// power-of-two size class, so that decoding and building batch after batch
// does not churn the Go heap. Buffers are 64-byte aligned and zeroed, as
// Arrow expects. It keeps at most a fixed number of bytes for reuse; beyond
// that, and for buffers over 64 MiB, it behaves like the Go allocator.
// Safe for concurrent use.
type PoolAllocator struct {
	mu       sync.Mutex
	free     [numClasses][][]byte
	retained int
	max      int
}

// NewPoolAllocator returns a pool that retains at most maxRetain bytes
// (DefaultPoolRetain if maxRetain <= 0).
func NewPoolAllocator(maxRetain int) *PoolAllocator {
	if maxRetain <= 0 {
		maxRetain = DefaultPoolRetain
	}
	return &PoolAllocator{max: maxRetain}
}

var _ memory.Allocator = (*PoolAllocator)(nil)

// sizeClass returns the class of a request of size bytes, -1 if too large.
func sizeClass(size int) int {
	if size <= 1<<minClassShift {
		return 0
	}
	shift := bits.Len(uint(size - 1))
	if shift > maxClassShift {
		return -1
	}
	return shift - minClassShift
}

// alignedMake returns a zeroed, 64-byte aligned slice of length size and
// capacity capacity.
func alignedMake(size, capacity int) []byte {
	buf := make([]byte, capacity+64)
	shift := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & 63)
	return buf[shift : shift+size : shift+capacity]
}

// Allocate implements memory.Allocator.
func (p *PoolAllocator) Allocate(size int) []byte { return p.get(size, 0) }

// get returns a zeroed buffer of length size, except that its first keep
// bytes may hold garbage (the caller overwrites them).
func (p *PoolAllocator) get(size, keep int) []byte {
	c := sizeClass(size)
	if c < 0 {
		return alignedMake(size, size)
	}
	p.mu.Lock()
	if n := len(p.free[c]); n > 0 {
		b := p.free[c][n-1]
		p.free[c][n-1] = nil
		p.free[c] = p.free[c][:n-1]
		p.retained -= cap(b)
		p.mu.Unlock()
		clear(b[keep:cap(b)])
		return b[:size]
	}
	p.mu.Unlock()
	return alignedMake(size, 1<<(c+minClassShift))
}

// Reallocate implements memory.Allocator.
func (p *PoolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.get(size, len(b)) // the copy overwrites the first len(b) bytes
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (p *PoolAllocator) Free(b []byte) {
	c := sizeClass(cap(b))
	if c < 0 || cap(b) != 1<<(c+minClassShift) {
		return // not one of ours: leave it to the GC
	}
	p.mu.Lock()
	if p.retained+cap(b) <= p.max {
		p.free[c] = append(p.free[c], b[:0])
		p.retained += cap(b)
	}
	p.mu.Unlock()
}

// Retained returns the number of bytes held for reuse.
func (p *PoolAllocator) Retained() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.retained
}
