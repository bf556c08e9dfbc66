package operator

// watermarks holds watermarks until the inputs that arrived before them have
// finished. Inputs are counted per segment: segment k holds the inputs that
// arrived between watermark k-1 and watermark k. Watermark k may go once the
// segments up to k are empty.
//
// INVARIANT: counts[i] is the number of unfinished inputs of segment base+i;
// held[i] is the watermark closing segment base+i.
type watermarks struct {
	base   uint64
	counts fifo[int]
	held   fifo[int64]
	init   bool
}

func (w *watermarks) ensure() {
	if !w.init {
		w.counts.push(0)
		w.init = true
	}
}

// segment returns the segment that inputs arriving now belong to.
func (w *watermarks) segment() uint64 {
	w.ensure()
	return w.base + uint64(w.counts.len()) - 1
}

func (w *watermarks) add(seg uint64) { w.ensure(); w.counts.items()[seg-w.base]++ }

func (w *watermarks) done(seg uint64) { w.counts.items()[seg-w.base]-- }

// watermark closes the current segment with ts.
func (w *watermarks) watermark(ts int64) {
	w.ensure()
	w.held.push(ts)
	w.counts.push(0)
}

// pop returns the next watermark that may go downstream.
func (w *watermarks) pop() (int64, bool) {
	if w.held.len() == 0 || w.counts.peek() != 0 {
		return 0, false
	}
	w.counts.pop()
	w.base++
	return w.held.pop(), true
}

func (w *watermarks) pending() int { return w.held.len() }
