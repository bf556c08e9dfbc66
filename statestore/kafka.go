package statestore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka is the ActionStore on a compacted Kafka topic (docs/kafka-store.md).
// The record of key group kg goes to partition Partition(kg, n) of the
// topic; the store keeps every record it holds in memory too, so Get never
// does I/O.
//
// Writes: an idempotent producer with acks=all; every result is checked, and
// the first failure makes the store fail (a *KafkaWriteError that every
// later write returns). Put is asynchronous (group commit), PutDurable waits
// for its record's acknowledgement, Flush for all of them.
//
// The marker Flush returns holds, for every partition this subtask writes
// to, the first offset still needed: the smallest offset of a record the
// store still holds (records are dropped only by CheckpointComplete, after
// their input finished before a completed checkpoint's cut), or the end of
// the subtask's writes when it holds none there. Records of actions still
// running at the cut, with their durable calls, are therefore read again
// after a restore.
//
// REQUIRES: Recover, if called, is called before the first Put or Flush.
// Puts of the same record key are not concurrent (one action execution
// writes its record in sequence). Kafka is safe for concurrent use and
// implements ActionStore and InputTracker.
type Kafka struct {
	cfg        kafkaCfg
	log        *slog.Logger
	cl         *kgo.Client
	adm        *kadm.Client
	ciph       *valueCipher
	topic      topicInfo
	writeParts []int32 // PartitionsFor(owned, partitions): the marker's partitions
	warnings   []string
	// ctx of every produce; canceled when the store fails or closes, so
	// that a Put blocked on a full buffer returns.
	ctx    context.Context
	cancel context.CancelFunc

	mu  sync.RWMutex
	idx kIndex // newest versions by input, done marks (pruning)
	// By partition, with room for every partition of the topic; queues and
	// end are set for writeParts only.
	queues   []*offsetQueue // acknowledged versions per partition, by offset
	end      []int64        // offset after the subtask's last acknowledged write, or the end offset known at start
	pending  []int          // records produced and not yet acknowledged, per partition
	gen      uint64         // flush generation of new writes; each Flush closes one
	genCur   int            // records of generation gen produced and not yet acknowledged
	genWait  map[uint64]int // the same for the closed generations still waited for
	acks     *sync.Cond     // on k.mu: a generation was acknowledged, or the store failed
	space    *sync.Cond     // on k.mu: records in flight fell below maxBuffered, or the store failed
	flying   int            // records produced and not yet acknowledged (tombstones included)
	waiters  int            // Puts waiting on space
	held     []*kEntry      // running records held back (KafkaRunningLinger), oldest first, from heldHead
	heldHead int
	free     []*kWrite // kWrites to reuse (startLocked), at most maxFreeWrites
	armed    bool      // a linger timer is set for held[heldHead]
	epoch    time.Time // the origin of kEntry.heldAt
	puts     int64
	rebuilt  bool // Recover ran
	// cutFlushed is the latest cut FlushCut took a marker after, or the cut
	// Recover restored (0 before either: no marker exists yet). No later
	// marker needs an input done after it, so with tombstones off such
	// inputs leave memory as soon as they are done.
	cutFlushed int64
	// recSeq is, after Recover, the highest input of each key it recovered
	// a record of; written by Recover only, read by MayHold without k.mu.
	recSeq map[keyID]uint64
	err    error         // sticky write failure
	failed chan struct{} // closed with err set
	closed bool
	lat    latencyWindow
	stats  KafkaStats
	// promiseFn is k.promise, evaluated once: a method value made at every
	// Produce would allocate.
	promiseFn func(*kgo.Record, error)
}

var (
	_ ActionStore          = (*Kafka)(nil)
	_ InputTracker         = (*Kafka)(nil)
	_ RestoredInputTracker = (*Kafka)(nil)
	_ HoldHinter           = (*Kafka)(nil)
	_ SlotTracker          = (*Kafka)(nil)
	_ Lender               = (*Kafka)(nil)
	_ CutFlusher           = (*Kafka)(nil)
	_ RunningLingerer      = (*Kafka)(nil)
)

// kEntry is one version of a record: what Put (or Recover) stored for a key.
// INVARIANT: idx holds the newest version; an older one is reachable only
// from a partition queue, through which next leads to newer versions.
type kEntry struct {
	key RecordKey
	// rec until it is encoded (a held record) or when Recover decoded it;
	// plain, its encoded value, once Put wrote it: the store keeps bytes, not
	// the record's object graph, which the garbage collector would walk at
	// every cycle. Both nil once superseded by an acknowledged version, or
	// dropped.
	rec     *Record
	plain   []byte
	size    int // encoded key + plain value bytes
	part    int32
	gen     uint64        // the flush generation it was produced in
	off     int64         // -1 until acknowledged
	heldAt  time.Duration // > 0 while it is a running record not written yet (KafkaRunningLinger): when it was put, since Kafka.epoch
	next    *kEntry       // the version that replaced this one
	prev    *kEntry       // the version this one replaced, until this one is acknowledged
	dropped bool          // pruned by CheckpointComplete or deleted by a replayed tombstone
}

// needed reports whether a restore may need to read e: it is neither dropped
// nor superseded by an acknowledged newer version. (A newer version not yet
// acknowledged may still be lost, so e stays needed until it is.)
func (e *kEntry) needed() bool {
	for x := e; x != nil; x = x.next {
		if x.dropped || (x != e && x.off >= 0) {
			return false
		}
	}
	return true
}

// NewKafka connects to the brokers, creates the action-state topic if it is
// missing (see createdTopicConfigs) or reuses it unchanged, and returns the
// store. ctx bounds the setup only. Settings of an existing topic that can
// lose records are logged as warnings and returned by Warnings.
func NewKafka(ctx context.Context, opts ...KafkaOpt) (*Kafka, error) {
	cfg := defaultKafkaCfg()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	ciph, err := newValueCipher(cfg.encKey)
	if err != nil {
		return nil, err
	}
	co, err := cfg.connOpts(
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence is kgo's default and needs acks=all
		kgo.DefaultProduceTopic(cfg.topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		// Each partition's batch waits up to the linger for more records: the
		// broker's work per record falls several-fold when a request carries
		// tens of records per partition instead of one or two
		// (benchmarks/kafka). A Flush and a PutDurable do not wait for it
		// (see Flush and put).
		kgo.ProducerLinger(cfg.producerLinger),
		kgo.ProducerBatchCompression(compressionCodec(cfg.compression)),
		// The store bounds the records in flight itself (maxBuffered), so that
		// Produce never blocks: held records are produced under k.mu.
		kgo.MaxBufferedRecords(math.MaxInt32),
		kgo.RecordDeliveryTimeout(cfg.delivery),
		kgo.MetadataMinAge(500*time.Millisecond), // a topic just created shows up within 0.5 s, not 5 s
	)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(co...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKafkaConfig, err)
	}
	k := &Kafka{
		cfg: cfg, log: cfg.logger.With("topic", cfg.topic), cl: cl, adm: kadm.NewClient(cl), ciph: ciph,
		idx:     newKIndex(),
		genWait: make(map[uint64]int),
		epoch:   time.Now(),
		failed:  make(chan struct{}),
	}
	k.promiseFn = k.promise // one func value for every record
	k.acks = sync.NewCond(&k.mu)
	k.space = sync.NewCond(&k.mu)
	if err := k.setup(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	return k, nil
}

func (k *Kafka) setup(ctx context.Context) error {
	info, warnings, err := ensureTopic(ctx, k.adm, &k.cfg)
	if err != nil {
		return err
	}
	k.topic, k.warnings = info, warnings
	for _, w := range warnings {
		k.log.Warn("statestore: unsafe action-state topic setting", "warning", w)
	}
	k.writeParts = PartitionsFor(k.cfg.owned, info.partitions)
	k.queues = make([]*offsetQueue, info.partitions)
	k.end = make([]int64, info.partitions)
	k.pending = make([]int, info.partitions)
	ends, err := k.adm.ListEndOffsets(ctx, k.cfg.topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("%w %q: listing end offsets: %w", ErrKafkaTopic, k.cfg.topic, err)
	}
	for _, p := range k.writeParts {
		lo, ok := ends.Lookup(k.cfg.topic, p)
		if !ok {
			return fmt.Errorf("%w %q: no end offset for partition %d", ErrKafkaTopic, k.cfg.topic, p)
		}
		k.end[p] = lo.Offset
		k.queues[p] = &offsetQueue{}
	}
	return nil
}

// Get implements ActionStore. Of a record this process wrote for an input
// MayHold rejects, only the key and offset are kept once Kafka acknowledged
// it: Get does not find it then (the core never asks; see HoldHinter).
func (k *Kafka) Get(key RecordKey) (*Record, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	e := k.idx.newest(key)
	if e == nil || (e.rec == nil && e.plain == nil) { // the value of an acknowledged record MayHold rejects is not kept
		return nil, false
	}
	if e.rec == nil && e.plain != nil {
		// Records this process wrote are read back rarely (the core asks
		// only for inputs MayHold admits): decode them then.
		r, err := DecodeRecord(key.Bytes(), e.plain)
		if err != nil { // Put encoded it: not expected
			k.log.Error("statestore: decoding a record the store encoded", "key", key.String(), "err", err)
			return nil, false
		}
		return r, true
	}
	return e.rec, true
}

// MayHold implements HoldHinter: only keys Recover found records of, up to
// the highest input it found, may have records the core does not know of.
// REQUIRES: Recover, if called, returned before the first MayHold.
func (k *Kafka) MayHold(kg int32, keyHash [32]byte, seq uint64) bool {
	top, ok := k.recSeq[keyID{kg, keyHash}]
	return ok && seq <= top
}

// fail makes err the store's sticky failure unless it already has one or is
// closed (closing fails the records still buffered).
func (k *Kafka) fail(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failLocked(err)
}

// failLocked is fail. REQUIRES: k.mu held.
func (k *Kafka) failLocked(err error) {
	if k.err == nil && !k.closed {
		k.err = err
		close(k.failed)
		k.cancel() // fail what is still buffered, wake Puts waiting for buffer space
		k.acks.Broadcast()
		k.space.Broadcast()
		k.log.Error("statestore: Kafka action-state store failed", "err", err)
	}
}

// usable returns the error every write returns now. REQUIRES: k.mu held.
func (k *Kafka) usable() error {
	if k.closed {
		return ErrClosed
	}
	return k.err
}

// flushClient waits for every buffered record. franz-go fails a record after
// the delivery timeout only when that cannot break the idempotent sequence
// (a request sent without a response may still land), so the wait is also
// bounded here: a flush that does not finish fails the store, naming the
// partitions still waiting.
func (k *Kafka) flushClient() {
	limit := k.cfg.delivery + 5*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := k.cl.Flush(ctx); err != nil {
		k.mu.Lock()
		defer k.mu.Unlock()
		first, list := k.pendingLocked()
		k.failLocked(&KafkaWriteError{Topic: k.cfg.topic, Partition: first,
			Err: fmt.Errorf("records not acknowledged within %v (%s): %w", limit, list, err)})
	}
}

// pendingLocked lists the partitions with records not yet acknowledged, and
// how many; first is the first of them, or -1. REQUIRES: k.mu held.
func (k *Kafka) pendingLocked() (first int32, list string) {
	first = -1
	waiting := []string{}
	for p, n := range k.pending {
		if n == 0 {
			continue
		}
		if first < 0 {
			first = int32(p)
		}
		waiting = append(waiting, fmt.Sprintf("partition %d: %d", p, n))
	}
	return first, strings.Join(waiting, ", ")
}

// awaitLocked waits until every record of flush generation g and before is
// acknowledged, the store fails, or the bound of flushClient passes since
// start, which fails the store naming the partitions still waiting.
// REQUIRES: k.mu held (write).
func (k *Kafka) awaitLocked(g uint64, start time.Time) {
	limit := k.cfg.delivery + 5*time.Second
	wake := time.AfterFunc(limit-time.Since(start), func() {
		k.mu.Lock()
		k.acks.Broadcast()
		k.mu.Unlock()
	})
	defer wake.Stop()
	for k.usable() == nil {
		waiting := false
		for gen, n := range k.genWait {
			if gen <= g && n > 0 {
				waiting = true
				break
			}
		}
		if !waiting {
			return
		}
		if time.Since(start) >= limit {
			first, list := k.pendingLocked()
			k.failLocked(&KafkaWriteError{Topic: k.cfg.topic, Partition: first,
				Err: fmt.Errorf("records not acknowledged within %v (%s)", limit, list)})
			return
		}
		k.acks.Wait()
	}
}

// Flush implements ActionStore: once every record Put before it is
// acknowledged, it returns the marker (Backend "kafka", the topic and its
// id, CheckpointID 0 for the caller to set, and the first offset still
// needed for every partition this subtask writes to). Offsets never
// decrease from one Flush to the next.
//
// Flush waits for the records Put before it only: Puts that run meanwhile
// (actions after the barrier) go on and are not waited for, so the pipeline
// does not drain at every checkpoint. Such a record may already be
// acknowledged when the marker is taken; a restore reads it then, which is
// harmless (it holds later progress of an input the snapshot has in flight).
func (k *Kafka) Flush() (snapshot.Marker, error) {
	start := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.usable(); err != nil {
		return snapshot.Marker{}, err
	}
	k.releaseLocked(true, 0) // the held records of running actions belong to the cut
	g := k.gen
	if k.genCur > 0 {
		k.genWait[g] = k.genCur
	}
	k.gen, k.genCur = k.gen+1, 0
	if k.genWait[g] > 0 && k.cfg.producerLinger > 0 {
		// kgo's Flush stops every linger while it runs: this barrier's
		// records go out now, not after kafka.producer.linger.ms. It would
		// also wait for every record Put after the barrier; it is cancelled
		// once this generation is acknowledged instead.
		ctx, cancel := context.WithCancel(k.ctx)
		go func() { _ = k.cl.Flush(ctx) }()
		defer cancel()
	}
	k.awaitLocked(g, start)
	if err := k.usable(); err != nil {
		return snapshot.Marker{}, err
	}
	m := snapshot.Marker{
		Version: snapshot.MarkerVersion,
		Backend: "kafka",
		Topic:   k.cfg.topic,
		TopicID: k.topic.id,
		Offsets: make(map[int32]int64, len(k.writeParts)),
	}
	for _, p := range k.writeParts {
		m.Offsets[p] = k.end[p]
		if e := k.queues[p].front(); e != nil {
			m.Offsets[p] = e.off
		}
	}
	k.stats.Flushes++
	k.stats.LastFlush = time.Since(start)
	return m, nil
}

// MarkInputDone implements InputTracker. Inputs without records are not
// remembered.
func (k *Kafka) MarkInputDone(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	k.MarkInputDoneIn(nil, kg, keyHash, seq, lastCut)
}

// MarkInputDoneIn implements SlotTracker: MarkInputDone, finding the input
// through slot (the one its records were Put with) instead of a lookup.
// An input done after the cut of the latest FlushCut's checkpoint is
// needed by no later marker: with tombstones off, its records leave memory
// at once (see FlushCut).
func (k *Kafka) MarkInputDoneIn(slot *InputSlot, kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	id := inputID{kg, keyHash, seq}
	if lastCut <= k.cutFlushed && !k.cfg.tombstones {
		if in := k.idx.inputOf(id, slot); in != nil && !in.marked {
			k.idx.take(in, k.dropLocked)
		}
		return
	}
	k.idx.markDone(id, lastCut, slot)
}

// FlushCut implements CutFlusher: Flush, for the checkpoint whose barrier the
// core cut as checkpointID. No marker after this one needs a record of an
// input done before that cut (a restore from this checkpoint or a later one
// never replays it), so with tombstones off those records leave memory now,
// and those of inputs done from now on when they are marked done, instead of
// when a checkpoint completes: the store then holds the records of inputs in
// flight, not those of every input since the last completed checkpoint.
// With tombstones on, they stay until CheckpointComplete writes the
// tombstones.
func (k *Kafka) FlushCut(checkpointID int64) (snapshot.Marker, error) {
	m, err := k.Flush()
	if err != nil || k.cfg.tombstones {
		return m, err
	}
	k.mu.Lock()
	k.cutFlushed = max(k.cutFlushed, checkpointID)
	ins := k.idx.due(checkpointID + 1)
	k.mu.Unlock()
	go k.takeChunked(ins, nil) // off the snapshot's path; a failure shows at the next write
	return m, nil
}

// TakeRunningLinger implements RunningLingerer. Call it before the first
// Put (Put reads the linger without the store's lock).
func (k *Kafka) TakeRunningLinger() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cfg.flushPerRecord { // every record is written at once anyway
		return 0
	}
	d := k.cfg.runningLinger
	k.cfg.runningLinger = 0
	return d
}

// LendsRecords implements Lender: put encodes every record before it
// returns but a held running one (whose Record it keeps until it is written).
func (k *Kafka) LendsRecords() {}

// dropLocked forgets e, a record no restore can need any more.
// REQUIRES: k.mu held.
func (k *Kafka) dropLocked(e *kEntry) {
	e.dropped, e.rec, e.plain, e.heldAt = true, nil, nil, 0
	k.stats.Pruned++
}

// takeChunked drops the records of ins in chunks of pruneChunk inputs, so
// that Puts and the core are not held up by a long prune; tombs, if not nil,
// collects the dropped records. A Flush in between sees some records still
// held: its marker is older than it could be, never newer.
func (k *Kafka) takeChunked(ins []*kInput, tombs *[]*kEntry) {
	drop := k.dropLocked
	if tombs != nil {
		drop = func(e *kEntry) {
			k.dropLocked(e)
			*tombs = append(*tombs, e)
		}
	}
	for len(ins) > 0 {
		n := min(len(ins), pruneChunk)
		k.mu.Lock()
		for _, in := range ins[:n] {
			k.idx.take(in, drop)
		}
		k.mu.Unlock()
		ins = ins[n:]
	}
}

// MarkDoneBelow implements RestoredInputTracker: after a Recover, the
// recovered records of the key's inputs below seq are pruned by the first
// CheckpointComplete with an id above lastCut.
func (k *Kafka) MarkDoneBelow(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.idx.markBelow(kg, keyHash, seq, lastCut)
}

// pruneChunk is the number of inputs CheckpointComplete prunes per hold of
// the store's lock.
const pruneChunk = 512

// CheckpointComplete implements ActionStore: it drops every record of every
// input marked done (MarkInputDone, MarkDoneBelow) with lastCut <
// checkpointID from memory, so later markers no longer point at them, and
// with tombstones enabled writes a tombstone for each (asynchronously;
// results are checked like any write). Records of inputs not marked done, in
// flight at a cut, are kept.
func (k *Kafka) CheckpointComplete(checkpointID int64) error {
	k.mu.Lock()
	if err := k.usable(); err != nil {
		k.mu.Unlock()
		return err
	}
	ins := k.idx.due(checkpointID)
	k.mu.Unlock()
	var tombs []*kEntry
	if k.cfg.tombstones {
		k.takeChunked(ins, &tombs)
	} else {
		k.takeChunked(ins, nil)
	}
	k.mu.Lock()
	gen := k.gen // the next Flush waits for the tombstones too
	for _, e := range tombs {
		k.sentLocked(e.part)
	}
	k.mu.Unlock()
	for _, e := range tombs {
		kr := &kgo.Record{Topic: k.cfg.topic, Partition: e.part, Key: e.key.Bytes()} // nil value: a tombstone
		k.cl.Produce(k.ctx, kr, func(kr *kgo.Record, err error) {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.doneLocked(kr.Partition, gen)
			if err != nil {
				k.failLocked(&KafkaWriteError{Topic: kr.Topic, Partition: kr.Partition, Key: kr.Key, Err: fmt.Errorf("tombstone: %w", err)})
				return
			}
			k.stats.Tombstones++
		})
	}
	return nil
}

// Close implements ActionStore: records not yet acknowledged are abandoned
// (they were not promised durable). Later writes return ErrClosed; Get keeps
// working. Idempotent.
func (k *Kafka) Close() error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	k.mu.Unlock()
	k.cancel()
	k.cl.Close()
	return nil
}

// Failed returns a channel that is closed when the store fails: a write
// was lost, whether or not anything waits for it. Err then says why. The
// caller should fail the task at once rather than at its next write.
func (k *Kafka) Failed() <-chan struct{} { return k.failed }

// Err returns the store's failure, or nil.
func (k *Kafka) Err() error {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.err
}

// Warnings returns the unsafe settings found on an existing topic.
func (k *Kafka) Warnings() []string { return slices.Clone(k.warnings) }

// TopicID returns the id of the live action-state topic and its partition
// count.
func (k *Kafka) TopicID() (snapshot.UUID, int32) { return k.topic.id, k.topic.partitions }

// KafkaStats returns the current metrics.
func (k *Kafka) KafkaStats() KafkaStats {
	k.mu.RLock()
	s := k.stats
	s.ReplayedPartitions = slices.Clone(s.ReplayedPartitions)
	s.Records = k.idx.n
	lat := k.lat.samples()
	k.mu.RUnlock()
	s.WriteLatencyP50, s.WriteLatencyP99 = percentiles(lat) // the sort outside the lock
	s.LatencySamples = len(lat)
	return s
}

// Keys returns the keys of the records held, ordered by their encoding. After
// a Recover the core can mark the inputs among them that finished before the
// restored cut as done, so that they are pruned.
func (k *Kafka) Keys() []RecordKey {
	k.mu.RLock()
	keys := make([]RecordKey, 0, k.idx.n)
	for e := range k.idx.all() {
		keys = append(keys, e.key)
	}
	k.mu.RUnlock()
	slices.SortFunc(keys, func(a, b RecordKey) int { return bytes.Compare(a.Bytes(), b.Bytes()) })
	return keys
}

// queueOf returns the queue of partition p, or nil if the subtask does not
// write to p (or p is beyond the partitions the topic had at setup).
func (k *Kafka) queueOf(p int32) *offsetQueue {
	if p < 0 || int(p) >= len(k.queues) {
		return nil
	}
	return k.queues[p]
}

// offsetQueue holds the acknowledged versions of one partition in offset
// order; versions no longer needed are removed lazily.
type offsetQueue struct {
	q     []*kEntry
	head  int
	limit int // live entries beyond which front sweeps the middle too: twice the needed ones at the last sweep, plus 1024
}

func (q *offsetQueue) push(e *kEntry) {
	n := len(q.q)
	if n == q.head || q.q[n-1].off <= e.off {
		q.q = append(q.q, e)
		return
	}
	// Out of order (not expected: acks of a partition arrive in order).
	i, _ := slices.BinarySearchFunc(q.q[q.head:], e.off, func(x *kEntry, off int64) int { return cmpInt64(x.off, off) })
	q.q = slices.Insert(q.q, q.head+i, e)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// front returns the needed version of smallest offset, or nil. A version
// that is no longer needed is dropped from the head at once; one behind a
// needed version (an input still in flight) once the queue has grown to
// twice what was needed at the last sweep, plus 1024. The queue, and the
// entries it keeps alive, so stay proportional to what is needed, at
// amortised O(1) per version.
func (q *offsetQueue) front() *kEntry {
	for q.head < len(q.q) && !q.q[q.head].needed() {
		q.q[q.head] = nil
		q.head++
	}
	if live := len(q.q) - q.head; live > max(q.limit, 1024) {
		kept := q.q[:0]
		for _, e := range q.q[q.head:] {
			if e.needed() {
				kept = append(kept, e)
			}
		}
		clear(q.q[len(kept):])
		q.q, q.head = kept, 0
		q.limit = 2*len(kept) + 1024
	} else if q.head > 1024 && q.head*2 > len(q.q) {
		n := copy(q.q, q.q[q.head:])
		clear(q.q[n:])
		q.q, q.head = q.q[:n], 0
	}
	if q.head == len(q.q) {
		return nil
	}
	return q.q[q.head]
}
