package statestore

import (
	"slices"
	"time"
)

// KafkaStats are the metrics of a Kafka store (KafkaStats()). Counters grow
// for the life of the store; latencies cover the last LatencyWindow acks.
type KafkaStats struct {
	RecordsWritten     int64         // records acknowledged by Kafka (tombstones excluded)
	BytesWritten       int64         // key + value bytes of those records
	DurableWrites      int64         // PutDurable calls that returned
	Tombstones         int64         // tombstones acknowledged
	WriteLatencyP50    time.Duration // Put to acknowledgement, median over the window
	WriteLatencyP99    time.Duration // Put to acknowledgement, 99th percentile over the window
	LatencySamples     int           // acks in the window (at most LatencyWindow)
	Flushes            int64         // successful Flush calls
	LastFlush          time.Duration // duration of the last successful Flush
	RecordsReplayed    int64         // records kept by Recover (owned key groups, tombstones applied)
	RecordsSkipped     int64         // records Recover read and dropped: key groups owned by another subtask
	BytesReplayed      int64         // key + value bytes Recover read
	RebuildTime        time.Duration // wall time of the last Recover
	ReplayedPartitions []int32       // partitions the last Recover read, in order
	Records            int           // records held in memory now (one per key)
	Pruned             int64         // records dropped by CheckpointComplete
	RunningCoalesced   int64         // running records never written: a newer version replaced them within the linger (0 once TakeRunningLinger handed the linger over)
}

// LatencyWindow is the number of acks the latency percentiles cover.
const LatencyWindow = 4096

// latencyWindow keeps the last LatencyWindow samples. REQUIRES: the
// store's mutex held.
type latencyWindow struct {
	buf  [LatencyWindow]time.Duration
	n    int // samples stored, at most LatencyWindow
	next int
}

func (w *latencyWindow) add(d time.Duration) {
	w.buf[w.next] = d
	w.next = (w.next + 1) % LatencyWindow
	if w.n < LatencyWindow {
		w.n++
	}
}

// samples returns a copy of the window's samples (to sort outside the
// store's lock).
func (w *latencyWindow) samples() []time.Duration { return slices.Clone(w.buf[:w.n]) }

// percentiles returns the p50 and p99 of samples (0 when empty); it sorts
// them in place.
func percentiles(s []time.Duration) (p50, p99 time.Duration) {
	if len(s) == 0 {
		return 0, 0
	}
	slices.Sort(s)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.5) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return at(0.50), at(0.99)
}
