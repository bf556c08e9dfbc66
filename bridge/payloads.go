package bridge

import "sync"

// payloadPool keeps the buffers of DATA payloads for reuse. A decoded
// batch is zero-copy: it reads its payload in place, so a buffer comes back
// only when the batch is released and lent nothing (arrowio.Batch.Lent: no
// string of it may live on). Any goroutine may put; the reader gets.
//
// Design note: a fresh buffer per DATA frame (about 230 KiB for 1024
// 200-byte rows) was nine tenths of the bytes the Go process allocated: the
// runtime cleared each one, and the garbage collector ran for them, with
// its write barriers on, most of the time. Buffers are reused up to
// payloadPoolMax of them, each at most payloadPoolBytes, so that the pool
// holds no more than what a few batches in flight need.
type payloadPool struct {
	mu   sync.Mutex
	free [][]byte
}

const (
	payloadPoolMax   = 16
	payloadPoolBytes = 4 << 20
)

// get returns a buffer of length size: a kept one if one is big enough,
// else a new one.
func (p *payloadPool) get(size int) []byte {
	p.mu.Lock()
	for i := len(p.free) - 1; i >= 0; i-- {
		if b := p.free[i]; cap(b) >= size {
			last := len(p.free) - 1
			p.free[i] = p.free[last]
			p.free[last] = nil
			p.free = p.free[:last]
			p.mu.Unlock()
			return b[:size]
		}
	}
	p.mu.Unlock()
	return make([]byte, size)
}

// put keeps b for a later get. The caller must not use b afterwards.
func (p *payloadPool) put(b []byte) {
	if cap(b) > payloadPoolBytes {
		return
	}
	p.mu.Lock()
	if len(p.free) < payloadPoolMax {
		p.free = append(p.free, b[:0])
	} else {
		// Full: b replaces the smallest kept buffer if it is bigger, so
		// that buffers too small for the batches now coming do not stay.
		small := 0
		for i, f := range p.free {
			if cap(f) < cap(p.free[small]) {
				small = i
			}
		}
		if cap(b) > cap(p.free[small]) {
			p.free[small] = b[:0]
		}
	}
	p.mu.Unlock()
}

// kept returns the number of buffers held for reuse.
func (p *payloadPool) kept() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}
