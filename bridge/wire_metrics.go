package bridge

import (
	"math"
	"sort"

	"github.com/flinkgo/flinkgo/internal/msgp"
)

// Metric names of METRICS (docs/protocol.md, "METRICS"). The core's are
// always sent; the store's only with a store that keeps them (kafka).
const (
	MetricEventsProcessed = "events_processed" // events dispatched to actions
	MetricActionsExecuted = "actions_executed" // action bodies that ran to completion (new inputs and re-runs)
	MetricActionsReplayed = "actions_replayed" // completed executions taken from the action-state log, body not run
	MetricCallsReplayed   = "calls_replayed"   // durable calls answered from the action-state log
	MetricActionsRerun    = "actions_rerun"    // unfinished executions from the action-state log whose body ran again

	MetricStoreRecordsWritten  = "store_records_written"      // action-state records acknowledged by Kafka
	MetricStoreBytesWritten    = "store_bytes_written"        // their key + value bytes
	MetricStoreWriteLatencyP50 = "store_write_latency_p50_us" // put to acknowledgement, median of the last 4096 acks, µs
	MetricStoreWriteLatencyP99 = "store_write_latency_p99_us" // the same, 99th percentile, µs
	MetricStoreRecordsReplayed = "store_records_replayed"     // records the recovery kept (owned key groups)
	MetricStoreBytesReplayed   = "store_bytes_replayed"       // key + value bytes the recovery read
	MetricStoreRebuildTime     = "store_rebuild_ms"           // wall time of the recovery (rebuild from the log), ms
)

// Metrics is METRICS (Go→JVM): the Go process's metrics by name, each an
// integer (a cumulative counter or a gauge; protocol.md lists them). The
// payload is the map of names to values itself; it is encoded with the
// names sorted by their UTF-8 bytes. A reader ignores names it does not
// know; a value that is not an integer, or a name twice, is
// malformed_frame.
type Metrics struct {
	Values map[string]int64
}

func (m *Metrics) FrameType() FrameType { return FrameMetrics }
func (m *Metrics) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *Metrics) AppendMsgpack(b []byte) []byte {
	names := make([]string, 0, len(m.Values))
	for k := range m.Values {
		names = append(names, k)
	}
	sort.Strings(names) // byte order of the UTF-8 names
	b = msgp.AppendMapLen(b, len(names))
	for _, k := range names {
		b = msgp.AppendInt(msgp.AppendStr(b, k), m.Values[k])
	}
	return b
}

func (m *Metrics) Unmarshal(p []byte) error {
	r := &mpReader{b: p, frame: FrameMetrics}
	n, err := r.length("map")
	if err != nil {
		return err
	}
	m.Values = make(map[string]int64, n)
	for i := 0; i < n; i++ {
		r.key = ""
		k, err := r.str()
		if err != nil {
			return err
		}
		r.key = k
		if _, dup := m.Values[k]; dup {
			return r.fail("duplicate metric")
		}
		if m.Values[k], err = r.int(math.MinInt64, math.MaxInt64); err != nil {
			return err
		}
	}
	r.key = ""
	if r.p != len(p) {
		return r.fail("%d bytes after the map", len(p)-r.p)
	}
	return nil
}
