package bridge

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/cespare/xxhash/v2"

	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/statestore"
)

// Option names the Go process reads from OPEN, besides the core's
// (operator.Config.ApplyOptions). Every other go.* option belongs to the
// JVM operator and is ignored here.
const (
	OptStoreBackend   = "actionStateStoreBackend"
	OptCreditRows     = "go.credit.rows"
	OptCreditBytes    = "go.credit.bytes"
	OptMemoryLimit    = "go.memory.limit"
	OptOutputRows     = "go.output.rows"
	OptOutputBytes    = "go.output.bytes"
	OptOutputLinger   = "go.output.linger.ms"
	OptMetrics        = "go.metrics.interval.ms"
	OptTasksPerThread = "go.tasks.per.thread"
	OptCPUProfile     = "go.cpuprofile"
	OptGCMinHeap      = "go.gc.min.heap"
	OptMaxProcs       = "go.maxprocs"

	defaultCreditRows  = 65536
	defaultCreditBytes = 32 << 20
	// initialCreditRows caps READY's credit: before the first DATA, Go
	// does not know how big a row is (see creditWindow).
	initialCreditRows     = 1024
	defaultOutputRows     = 4096
	defaultOutputBytes    = 1 << 20
	defaultOutputLinger   = 1    // ms
	defaultMetrics        = 1000 // ms
	defaultTasksPerThread = 16
	defaultGCMinHeap      = 32 << 20
	gcPaceInterval        = 100 * time.Millisecond
	maxTasksPerThread     = 1024
	maxMetrics            = 3_600_000
)

// OptionDoc is one option of the describe manifest.
type OptionDoc struct {
	Name    string `json:"name"`
	Default string `json:"default,omitempty"`
	Doc     string `json:"doc"`
}

// Options lists the options the Go process understands, with their
// defaults (empty: unset) and docs, as the describe manifest shows them.
func Options() []OptionDoc {
	return append([]OptionDoc{
		{operator.OptErrorStrategy, "fail", "What a failed action does: fail (the Flink task fails and restarts from the last checkpoint), retry (retryable errors, up to max-retries, then fail) or ignore (drop the action's effects). Default: fail."},
		{operator.OptMaxRetries, "3", "Retries of a failed action with error-handling-strategy=retry. Default: 3."},
		{operator.OptRetryWait, "1 s", "Wait before the first retry; it doubles with every attempt. Default: 1 s."},
		{operator.OptNumAsync, "", "Actions running at once per subtask (of different keys); the size of the worker pool. Unset (default): 2 x the cores Go sees."},
		{OptTasksPerThread, strconv.Itoa(defaultTasksPerThread), "Action executions (of different keys) handed to the worker pool at once, per worker: a worker takes the next one without waiting for the runtime to hand it out, and waiting ones run in order as workers free up; 1 hands out only as many as there are workers. At most 1024. Default: 16."},
		{operator.OptJobIdentifier, "", "Stable identity of the job: seeds the event ids that key action-state records. Unset (default): the operator id. Keep it across restarts and savepoints."},
		{OptStoreBackend, "none", "Action-state store: none (Flink checkpoints only), memory (tests) or kafka (the kafka* options; docs/kafka-store.md). Default: none."},
		{OptCreditRows, strconv.Itoa(defaultCreditRows), "Credit window in rows: input rows the operator may have sent, or may send, that Go has not finished. READY grants at most 1024 of them; the window opens once Go has seen the size of the rows (go.credit.bytes). Default: 65536."},
		{OptCreditBytes, "32m", "Credit window in bytes: Go keeps the rows it may receive but has not finished under about this many bytes of DATA (bytes or with a unit: 32m), by the average row of the latest DATA frame, at least one row. The smaller of this and go.credit.rows applies. Default: 32m."},
		{OptMemoryLimit, "", "Soft memory limit of the Go process (GOMEMLIMIT), in bytes or with a unit: 512m, 2g, 1gb. Unset (default): none (the GOMEMLIMIT environment variable, if any)."},
		{OptOutputRows, strconv.Itoa(defaultOutputRows), "Rows per OUTPUT batch at most. Default: 4096."},
		{OptOutputBytes, strconv.Itoa(defaultOutputBytes), "Approximate bytes per OUTPUT batch at most. Default: 1048576 (1 MiB)."},
		{OptOutputLinger, strconv.Itoa(defaultOutputLinger), "Milliseconds an output row may wait for more rows to share its OUTPUT batch; 0 sends as soon as Go is idle. Default: 1."},
		{OptMetrics, strconv.Itoa(defaultMetrics), "Milliseconds between two METRICS frames, which carry the runtime's and the action-state store's metrics to the Flink operator (one also follows every snapshot); 0 sends none (for an operator older than METRICS). At most 3600000. Default: 1000."},
		{OptGCMinHeap, "32m", "Heap growth the Go garbage collector allows before it collects while the live heap is smaller than this (bytes or with a unit: 32m): it collects at the live heap plus this much instead of at twice the live heap, so a process with little state collects several times less often. Above it, plain GOGC=100. 0: plain GOGC=100 always. Not applied when GOGC is set in the environment. Default: 32m."},
		{OptMaxProcs, "", "GOMAXPROCS of the Go process: how many cores its goroutines use at once. Unset (default): Go's own (the cores it may use). 1 can suit an agent whose actions are cheap and Inline on a machine the JVM shares: less scheduling between the reader, the run loop and the writer (about 7 % less Go CPU for the pass-through agent on 2 cores, with no measurable change in rows/s; benchmarks/bridge)."},
		{OptCPUProfile, "", "Diagnostics: an absolute path; each Go process writes a CPU profile (pprof) of its run, from READY to exit, to <path>.<subtask> (a restarted subtask overwrites it). Unset (default): no profile."},
	}, kafkaOptionDocs()...)
}

// settings is what the server takes from OPEN's options.
type settings struct {
	core        operator.Config
	store       statestore.ActionStore // nil: none; the Kafka store is opened by openStore
	kafka       []statestore.KafkaOpt  // backend kafka: the store's options
	backend     string
	creditRows  int
	creditBytes int64
	memoryLimit int64 // 0: unset
	outRows     int
	outBytes    int
	lingerMs    int
	metricsMs   int    // 0: no METRICS
	workers     int    // the worker pool's size (num-async-threads); core.MaxConcurrency is workers x go.tasks.per.thread
	cpuProfile  string // "": none
	gcMinHeap   int64  // go.gc.min.heap; 0: off
	maxProcs    int    // go.maxprocs; 0: unset
}

// creditWindow is the credit window for rows of rowBytes bytes each: as
// many as fit in go.credit.bytes, at least one, at most go.credit.rows.
//
// Design note: a window in rows alone let Go hold go.credit.rows times the
// row size, 256 MiB of DATA for 16 KiB rows at the default then (16384
// rows), waiting for a slow action; HopBench moved 16 KiB rows as fast with 1024 rows of credit
// as with 16384 (docs/design-decisions.md, "The credit window is bounded in
// bytes too").
func (s *settings) creditWindow(rowBytes int64) int64 {
	w := s.creditBytes / max(rowBytes, 1)
	return min(max(w, 1), int64(s.creditRows))
}

// initialCredit is READY's credit: the window before Go has seen a row.
func (s *settings) initialCredit() int64 {
	return min(int64(s.creditRows), initialCreditRows)
}

// parseSettings builds the core config and the server settings from OPEN.
// The error names the option and what is accepted; the caller sends it as
// ERROR.
func parseSettings(open *Open) (*settings, error) {
	s := &settings{core: operator.DefaultConfig(), creditRows: defaultCreditRows, creditBytes: defaultCreditBytes, gcMinHeap: defaultGCMinHeap,
		outRows: defaultOutputRows, outBytes: defaultOutputBytes, lingerMs: defaultOutputLinger, metricsMs: defaultMetrics}
	// The loop runs Inline tasks itself anyway; letting the core run them
	// inside Input saves their trip through Ready (operator.Config.RunInline).
	s.core.RunInline = true
	perThread := defaultTasksPerThread
	rest, err := s.core.ApplyOptions(open.Options)
	if err != nil {
		return nil, fmt.Errorf("bridge: option: %w", err)
	}
	names := make([]string, 0, len(rest))
	for k := range rest {
		names = append(names, k)
	}
	sort.Strings(names) // the first unknown option is reported deterministically
	for _, k := range names {
		v := strings.TrimSpace(rest[k])
		switch {
		case k == operator.OptJobIdentifier:
			// Read below, for the seed.
		case k == OptStoreBackend:
			s.backend = strings.ToLower(v)
		case k == OptCreditRows:
			s.creditRows, err = positiveInt(k, v)
		case k == OptCreditBytes:
			s.creditBytes, err = ParseBytes(v)
			if err == nil && s.creditBytes < 1 {
				err = fmt.Errorf("must be at least 1 byte")
			}
			if err != nil {
				err = fmt.Errorf("bridge: option %s=%q: %w", k, v, err)
			}
		case k == OptOutputRows:
			s.outRows, err = positiveInt(k, v)
		case k == OptOutputBytes:
			var n int64
			n, err = ParseBytes(v)
			if err == nil && (n < 1 || n > 1<<31) {
				err = fmt.Errorf("must be between 1 and 2147483648")
			}
			s.outBytes = int(n)
			if err != nil {
				err = fmt.Errorf("bridge: option %s=%q: %w", k, v, err)
			}
		case k == OptOutputLinger:
			s.lingerMs, err = strconv.Atoi(v)
			if err != nil || s.lingerMs < 0 {
				err = fmt.Errorf("bridge: option %s=%q: use a whole number of milliseconds >= 0", k, v)
			}
		case k == OptTasksPerThread:
			perThread, err = strconv.Atoi(v)
			if err != nil || perThread < 1 || perThread > maxTasksPerThread {
				err = fmt.Errorf("bridge: option %s=%q: use a whole number from 1 to %d", k, v, maxTasksPerThread)
			}
		case k == OptMetrics:
			s.metricsMs, err = strconv.Atoi(v)
			if err != nil || s.metricsMs < 0 || s.metricsMs > maxMetrics {
				err = fmt.Errorf("bridge: option %s=%q: use a whole number of milliseconds from 0 (no METRICS frames) to %d", k, v, maxMetrics)
			}
		case k == OptMemoryLimit:
			if v != "" {
				s.memoryLimit, err = ParseBytes(v)
				if err == nil && s.memoryLimit < 1<<20 {
					err = fmt.Errorf("%d bytes is below the minimum of 1 MiB", s.memoryLimit)
				}
				if err != nil {
					err = fmt.Errorf("bridge: option %s=%q: %w", k, v, err)
				}
			}
		case k == OptMaxProcs:
			if v != "" {
				s.maxProcs, err = strconv.Atoi(v)
				if err != nil || s.maxProcs < 1 || s.maxProcs > 4096 {
					err = fmt.Errorf("bridge: option %s=%q: use a whole number of cores from 1 to 4096, or leave it unset", k, v)
				}
			}
		case k == OptGCMinHeap:
			if s.gcMinHeap, err = ParseBytes(v); err != nil {
				err = fmt.Errorf("bridge: option %s=%q: %w", k, v, err)
			}
		case k == OptCPUProfile:
			if v != "" && !filepath.IsAbs(v) {
				err = fmt.Errorf("bridge: option %s=%q: use an absolute path (the process runs in the operator's socket directory)", k, v)
			}
			s.cpuProfile = v
		case strings.HasPrefix(k, "go."), strings.HasPrefix(k, "kafka"):
			// The JVM operator's options, and the Kafka store's (read
			// below with statestore.KafkaOptionsFrom when it is used).
		default:
			return nil, fmt.Errorf("bridge: unknown option %q (value %q): it is neither a Flink Agents option this runtime knows (%s), nor a go.* option, nor an action-state store option (%s, kafka*); remove it or fix its spelling",
				k, v, strings.Join(coreOptionNames(), ", "), OptStoreBackend)
		}
		if err != nil {
			return nil, err
		}
	}
	switch s.backend {
	case "", "none":
		s.backend = "none"
	case "memory":
		s.store = statestore.NewMemory()
	case "kafka":
		if s.kafka, err = kafkaOptions(open); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("bridge: option %s=%q: use none, memory or kafka", OptStoreBackend, s.backend)
	}
	s.core.Owned.Start, s.core.Owned.End = open.KeyGroupStart, open.KeyGroupEnd
	ident := open.Options[operator.OptJobIdentifier]
	if strings.TrimSpace(ident) == "" {
		ident = open.OperatorID
	}
	s.core.Seed = Seed(ident, open.Agent)
	// The pool runs num-async-threads bodies at once; the core hands out
	// go.tasks.per.thread times as many, so that a worker that finishes
	// takes the next one at once instead of waiting for the run loop to
	// apply the result and hand out more (which, with actions of a few
	// microseconds, left workers idle about half the time).
	s.workers = s.core.MaxConcurrency
	s.core.MaxConcurrency = s.workers * perThread
	return s, nil
}

// Seed derives the core's event-id seed from the job identity (the
// job-identifier option, else the operator id) and the agent name. It never
// depends on the attempt: a restarted job must find its action-state
// records again.
func Seed(jobIdentity, agent string) uint64 {
	d := xxhash.New()
	_, _ = d.WriteString("flinkgo/seed/v1\x00")
	_, _ = d.WriteString(jobIdentity)
	_, _ = d.WriteString("\x00")
	_, _ = d.WriteString(agent)
	return d.Sum64()
}

func coreOptionNames() []string {
	return []string{operator.OptErrorStrategy, operator.OptMaxRetries, operator.OptRetryWait, operator.OptNumAsync, operator.OptJobIdentifier}
}

func positiveInt(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("bridge: option %s=%q: use a whole number >= 1", name, v)
	}
	return n, nil
}

// ParseBytes parses a size: a number of bytes ("536870912") or a number
// with a unit, as Flink's MemorySize does: b, k/kb/kib, m/mb/mib, g/gb/gib,
// t/tb/tib (binary multiples, case-insensitive, spaces allowed).
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size; use bytes (536870912) or a number with a unit (512m, 2g)")
	}
	shift := map[string]uint{"": 0, "b": 0, "bytes": 0,
		"k": 10, "kb": 10, "kib": 10, "kibibytes": 10,
		"m": 20, "mb": 20, "mib": 20, "mebibytes": 20,
		"g": 30, "gb": 30, "gib": 30, "gibibytes": 30,
		"t": 40, "tb": 40, "tib": 40, "tebibytes": 40}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("unknown size unit %q; use b, k, m, g or t (optionally with b or ib)", unit)
	}
	if n > (1<<63-1)>>sh {
		return 0, fmt.Errorf("size %s overflows 64 bits", s)
	}
	return n << sh, nil
}
