package arrowio

import (
	"sync"
	"testing"
	"unsafe"
)

func TestPoolAllocator(t *testing.T) {
	p := NewPoolAllocator(1 << 16)
	for _, size := range []int{0, 1, 63, 64, 65, 1000, 4096, 70000} {
		b := p.Allocate(size)
		if len(b) != size || uintptr(unsafe.Pointer(unsafe.SliceData(b[:cap(b)])))%64 != 0 {
			t.Fatalf("size %d: len %d cap %d misaligned or wrong", size, len(b), cap(b))
		}
		for i := range b[:cap(b)] {
			b[:cap(b)][i] = 0xAB
		}
		p.Free(b)
		c := p.Allocate(size)
		for i, x := range c[:cap(c)] {
			if x != 0 {
				t.Fatalf("size %d: reused buffer not zeroed at %d", size, i)
			}
		}
		p.Free(c)
	}
	if r := p.Retained(); r > 1<<16 {
		t.Fatalf("retained %d over the bound", r)
	}
	// Reallocate keeps content; foreign slices are not pooled.
	b := p.Allocate(10)
	copy(b, "0123456789")
	b = p.Reallocate(1000, b)
	if string(b[:10]) != "0123456789" || len(b) != 1000 {
		t.Fatal("reallocate lost data")
	}
	// Growing into a reused, dirty buffer: the old content, then zeros.
	d := p.Allocate(1000)
	for i := range d[:cap(d)] {
		d[:cap(d)][i] = 0xCD
	}
	p.Free(d)
	g := p.Allocate(10)
	copy(g, "abcdefghij")
	g = p.Reallocate(900, g)
	if string(g[:10]) != "abcdefghij" {
		t.Fatalf("reallocate into a reused buffer lost data: %q", g[:10])
	}
	for i, x := range g[10:cap(g)] {
		if x != 0 {
			t.Fatalf("reallocate into a reused buffer: byte %d is %#x, not zero", 10+i, x)
		}
	}
	before := p.Retained()
	p.Free(make([]byte, 100))
	if p.Retained() != before {
		t.Fatal("pooled a foreign slice")
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				p.Free(p.Allocate(i * 7))
			}
		}()
	}
	wg.Wait()
}
