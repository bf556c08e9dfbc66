package statestore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The write path of the Kafka store: Put and PutDurable, the running
// records held back for their action's completion (KafkaRunningLinger),
// and the acknowledgements.

// Put implements ActionStore. An invalid record, or one of a key group this
// subtask does not own, is a *RecordError and does not make the store fail.
func (k *Kafka) Put(r *Record) error { return k.put(r, false) }

// PutDurable implements ActionStore: it returns once Kafka acknowledged r
// (with acks=all), or with the store's failure.
func (k *Kafka) PutDurable(r *Record) error { return k.put(r, true) }

func (k *Kafka) put(r *Record, durable bool) error {
	// A running record with calls only (as the core writes them) may be
	// held; it is encoded when it is written, which most never are (a newer
	// version replaces them).
	hold := !durable && !k.cfg.flushPerRecord && k.cfg.runningLinger > 0 && r.Status == StatusRunning &&
		len(r.Updates) == 0 && len(r.Events) == 0
	var key, plain, val []byte
	var buf *[]byte // the buffer key and plain share, reused once the record is acknowledged
	if hold {
		if err := checkHeld(r); err != nil {
			return err
		}
	} else {
		buf = recBufs.Get().(*[]byte)
		var err error
		if key, plain, val, err = k.encodeIn(buf, r); err != nil {
			recBufs.Put(buf)
			return err
		}
	}
	if !k.cfg.owned.Contains(r.Key.KeyGroup) {
		if buf != nil {
			recBufs.Put(buf)
		}
		return keyErr(r.Key.Bytes(), ErrRecordKeyGroup, fmt.Sprintf("this subtask owns key groups [%d, %d] and writes no other",
			k.cfg.owned.Start, k.cfg.owned.End))
	}
	// The written version's entry, and its input's when the input has none
	// yet, are allocated before k.mu is taken: an allocation can assist the
	// garbage collector, and Puts of the other workers would wait for it.
	var ne *kEntry
	var nin *kInput
	if !hold {
		ne = &kEntry{key: r.Key, size: len(key) + len(plain), part: Partition(r.Key.KeyGroup, k.topic.partitions), off: -1}
		if r.Slot == nil || r.Slot.in == nil {
			nin = &kInput{}
		}
	}
	k.mu.Lock()
	if !hold {
		for k.flying >= k.cfg.maxBuffered && k.usable() == nil {
			k.waiters++
			k.space.Wait()
			k.waiters--
		}
	}
	if err := k.usable(); err != nil {
		k.mu.Unlock()
		if buf != nil {
			recBufs.Put(buf)
		}
		return err
	}
	var e *kEntry
	if hold {
		e = &kEntry{key: r.Key, rec: r, part: Partition(r.Key.KeyGroup, k.topic.partitions), off: -1}
		k.linkLocked(e, r.Slot)
	} else {
		e = k.writtenLocked(r, plain, ne, nin)
	}
	k.puts++
	if hold {
		e.heldAt = max(time.Since(k.epoch), 1)
		k.held = append(k.held, e)
		if !k.armed {
			k.armed = true
			time.AfterFunc(k.cfg.runningLinger, k.lingerFire)
		}
		k.mu.Unlock()
		return nil
	}
	w := k.startLocked(e)
	k.mu.Unlock()
	w.set(k.cfg.topic, e, key, val, buf) // outside k.mu: a kWrite's fields are a cache miss; nothing else sees it before Produce
	kr := &w.kr
	// Outside k.mu, so that Puts on other goroutines go on meanwhile. The
	// order of a key's versions holds: Puts of one key are not concurrent,
	// and a held version is produced (under k.mu) before the Put that
	// replaces it takes k.mu, or never.
	switch {
	case !durable && !k.cfg.flushPerRecord:
		k.cl.Produce(k.ctx, kr, k.promiseFn)
		return nil
	case durable && !k.cfg.flushPerRecord:
		// ProduceSync sends the record's partition at once instead of after
		// the producer linger (kafka.producer.linger.ms), so a reconciled
		// call waits one round trip, not the linger. The deadline fails a
		// record that nothing answers.
		ctx, cancel := context.WithTimeout(k.ctx, k.cfg.delivery+5*time.Second)
		res := k.cl.ProduceSync(ctx, kr)
		cancel()
		k.acked(e, kr, res[0].Err)
	default: // as upstream: one flush per record
		ack := make(chan error, 1)
		k.cl.Produce(k.ctx, kr, func(kr *kgo.Record, err error) {
			k.acked(e, kr, err)
			ack <- err
		})
		k.flushClient()
		select {
		case <-ack:
		case <-time.After(k.cfg.delivery + 5*time.Second):
			k.fail(&KafkaWriteError{Topic: k.cfg.topic, Partition: e.part, Key: key,
				Err: fmt.Errorf("no acknowledgement within %v", k.cfg.delivery+5*time.Second)})
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.usable(); err != nil {
		return err
	}
	if durable {
		k.stats.DurableWrites++
	}
	return nil
}

// recBufs holds the buffers of acknowledged records whose values the store
// did not keep (see promise), for the next records' encoding: an encoded
// record is a few hundred bytes, two per input for the example agent, and
// allocating them afresh was a tenth of what the store made the garbage
// collector handle.
var recBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxRecBuf bounds the buffers kept in recBufs.
const maxRecBuf = 16 << 10

// encode returns r's Kafka key, its plain value and the value written (plain
// sealed if values are encrypted).
func (k *Kafka) encode(r *Record) (key, plain, val []byte, err error) {
	return k.encodeIn(nil, r)
}

// encodeIn is encode; key and plain share one buffer, *buf if it is large
// enough (buf may be nil: a new one), and *buf is set to the buffer used.
func (k *Kafka) encodeIn(buf *[]byte, r *Record) (key, plain, val []byte, err error) {
	var in []byte
	if buf != nil {
		in = *buf
	}
	b, key, plain, err := encodeKeyValueIn(in, r)
	if buf != nil {
		*buf = b
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if val, err = k.ciph.seal(key, plain); err != nil {
		return nil, nil, nil, err
	}
	return key, plain, val, nil
}

// encodeHeld encodes held record e for writing: it keeps the plain value
// and drops the record.
func (k *Kafka) encodeHeld(e *kEntry) (key, val []byte, err error) {
	key, plain, val, err := k.encode(e.rec)
	if err != nil {
		return nil, nil, err
	}
	e.size = len(key) + len(plain)
	e.rec, e.plain = nil, plain
	return key, val, nil
}

// writtenLocked makes a written version of r's key (plain, its encoded
// value) the newest and returns its entry: e, a new entry for it with its
// key, size, partition and offset -1 set, or a held version's entry. A
// held version it replaces is never written: the new one holds all of it,
// and takes over its entry. spare (may be nil) is a zero kInput for the
// index to use if r's input has none. REQUIRES: k.mu held.
func (k *Kafka) writtenLocked(r *Record, plain []byte, e *kEntry, spare *kInput) *kEntry {
	in, i := k.idx.find(&r.Key, r.Slot)
	if i >= 0 {
		if old := in.entries[i]; old.heldAt > 0 {
			old.heldAt, old.rec, old.plain, old.size = 0, nil, plain, e.size // its place in k.held is skipped now
			k.stats.RunningCoalesced++
			return old
		}
	}
	e.plain = plain
	k.chainLocked(e, k.idx.setAt(in, i, e, r.Slot, spare))
	return e
}

// checkHeld checks a running record to be held as EncodeRecord would, so
// that its later encoding cannot fail: its key and its calls (it has no
// updates or events).
func checkHeld(r *Record) error {
	if err := r.Key.validate(); err != nil {
		return &RecordError{Kind: ErrRecordInvalid, Detail: "key", Err: err}
	}
	for i := range r.Calls {
		if err := checkCallOut(&r.Calls[i]); err != nil {
			return &RecordError{Key: r.Key.Bytes(), Kind: ErrRecordInvalid, Detail: fmt.Sprintf("calls[%d]", i), Err: err}
		}
	}
	return nil
}

// linkLocked makes e the newest version of its key; slot (may be nil) is
// its input's InputSlot. A held version it replaces is never written: e
// holds all of it. REQUIRES: k.mu held.
func (k *Kafka) linkLocked(e *kEntry, slot *InputSlot) {
	k.chainLocked(e, k.idx.set(e, slot))
}

// chainLocked links e, now the newest version of its key, to old, the
// version it replaced (nil: none). REQUIRES: k.mu held.
func (k *Kafka) chainLocked(e, old *kEntry) {
	switch {
	case old == nil:
	case old.heldAt > 0:
		old.heldAt, old.rec, old.plain = 0, nil, nil
		if e.prev = old.prev; e.prev != nil {
			e.prev.next = e
		}
		k.stats.RunningCoalesced++
	default:
		old.next, e.prev = e, old
	}
}

// kWrite is a record on its way to Kafka. Its kgo record's Context (the
// field franz-go keeps for enriching a record) is the kWrite itself, whose
// Done is Background's: the store's one promise (promise) finds the entry
// through it, without a closure per record. The kWrites of acknowledged
// records are reused (Kafka.free): franz-go is done with a record once its
// promise returns, and a kWrite with its kgo record is a few hundred bytes
// of pointers that would otherwise be garbage after every record.
type kWrite struct {
	context.Context
	kr  kgo.Record
	e   *kEntry
	buf *[]byte // from recBufs, or nil
}

// maxFreeWrites bounds Kafka.free: about the records in flight between two
// barriers at the producer's linger.
const maxFreeWrites = 16384

// startLocked counts e as produced in the current flush generation and
// returns a kWrite for it, to be set before it is produced. REQUIRES: k.mu
// held.
func (k *Kafka) startLocked(e *kEntry) *kWrite {
	e.gen = k.sentLocked(e.part)
	if n := len(k.free); n > 0 {
		w := k.free[n-1]
		k.free[n-1] = nil
		k.free = k.free[:n-1]
		return w
	}
	return &kWrite{Context: context.Background()}
}

// set makes w the write of entry e: its Kafka record of topic, with key
// and val, encoded in buf (may be nil).
func (w *kWrite) set(topic string, e *kEntry, key, val []byte, buf *[]byte) {
	w.e, w.buf = e, buf
	// A zero Timestamp: franz-go sets it to the time of Produce, which
	// acked measures the write's latency from.
	w.kr = kgo.Record{Topic: topic, Partition: e.part, Key: key, Value: val, Context: w}
}

// promise is the promise of the records produced by startLocked's kWrite;
// it recycles the kWrite.
func (k *Kafka) promise(kr *kgo.Record, err error) {
	w := kr.Context.(*kWrite)
	lat := time.Since(kr.Timestamp) // before k.mu: reading the clock is most of an acknowledgement's work
	k.mu.Lock()
	k.ackedLocked(w.e, kr, err, lat)
	// The buffer is free once franz-go is done with the record (now) and
	// the entry did not keep the value (ackedLocked drops it unless the
	// core may still ask for it). A failed record's key is in the error.
	b := w.buf
	if b != nil && (err != nil || w.e.plain != nil || cap(*b) > maxRecBuf) {
		b = nil
	}
	w.e, w.kr, w.buf = nil, kgo.Record{}, nil
	if len(k.free) < maxFreeWrites {
		k.free = append(k.free, w)
	}
	k.mu.Unlock()
	if b != nil {
		recBufs.Put(b) // outside k.mu, which the workers' Puts wait for
	}
}

// sentLocked counts one record produced to partition part in the current
// flush generation, which it returns; doneLocked counts its answer.
// REQUIRES: k.mu held.
func (k *Kafka) sentLocked(part int32) uint64 {
	k.pending[part]++
	k.flying++
	k.genCur++
	return k.gen
}

// releaseLocked produces the held records put at or before cutoff (since
// k.epoch), or all of them. Produce does not block here (the client's own buffer limit is out of
// reach), so it runs under k.mu, which orders it before any later version
// of the same key. REQUIRES: k.mu held.
func (k *Kafka) releaseLocked(all bool, cutoff time.Duration) {
	for k.heldHead < len(k.held) {
		e := k.held[k.heldHead]
		if e.heldAt > 0 && !all && e.heldAt > cutoff {
			break
		}
		k.held[k.heldHead] = nil
		k.heldHead++
		if e.heldAt == 0 {
			continue // replaced, or pruned
		}
		e.heldAt = 0
		key, val, err := k.encodeHeld(e)
		if err != nil { // checkHeld let it through: a bug, but never lose it silently
			k.failLocked(&KafkaWriteError{Topic: k.cfg.topic, Partition: e.part, Key: e.key.Bytes(), Err: err})
			return
		}
		w := k.startLocked(e)
		w.set(k.cfg.topic, e, key, val, nil)
		k.cl.Produce(k.ctx, &w.kr, k.promiseFn)
	}
	if k.heldHead == len(k.held) {
		clear(k.held)
		k.held, k.heldHead = k.held[:0], 0
	} else if k.heldHead > 1024 && 2*k.heldHead > len(k.held) {
		n := copy(k.held, k.held[k.heldHead:])
		clear(k.held[n:])
		k.held, k.heldHead = k.held[:n], 0
	}
}

// lingerFire writes the held records whose linger is over, and sets the
// timer for the next one.
func (k *Kafka) lingerFire() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.armed = false
	if k.usable() != nil {
		return
	}
	now := time.Since(k.epoch)
	k.releaseLocked(false, now-k.cfg.runningLinger) // leaves a held record, still lingering, at the head
	if k.heldHead < len(k.held) {
		k.armed = true
		time.AfterFunc(k.held[k.heldHead].heldAt+k.cfg.runningLinger-now, k.lingerFire)
	}
}

// acked records the offset of a record, or its failure.
func (k *Kafka) acked(e *kEntry, kr *kgo.Record, err error) {
	lat := time.Since(kr.Timestamp)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ackedLocked(e, kr, err, lat)
}

// ackedLocked is acked; lat is the record's write latency. REQUIRES: k.mu
// held.
func (k *Kafka) ackedLocked(e *kEntry, kr *kgo.Record, err error, lat time.Duration) {
	k.doneLocked(e.part, e.gen)
	if err != nil {
		k.failLocked(&KafkaWriteError{Topic: kr.Topic, Partition: kr.Partition, Key: kr.Key, Err: err})
		return
	}
	e.off = kr.Offset
	if e.prev != nil { // superseded in the log now: the older version is not needed
		e.prev.rec, e.prev.plain, e.prev = nil, nil, nil
	}
	if !k.MayHold(e.key.KeyGroup, e.key.KeyHash, e.key.Seq) {
		// The core never asks for it (HoldHinter): keep the offset and the
		// key, which markers, pruning and tombstones need, not the value.
		// Between two completed checkpoints the values would otherwise
		// pile up: hundreds of MiB at a few seconds' worth of inputs.
		e.plain = nil
	}
	if q := k.queueOf(e.part); q != nil { // nil: not one of writeParts (not expected)
		q.push(e)
		q.front() // sweeps what is no longer needed now, not only at the next Flush
	}
	if kr.Offset+1 > k.end[e.part] {
		k.end[e.part] = kr.Offset + 1
	}
	k.lat.add(lat)
	k.stats.RecordsWritten++
	k.stats.BytesWritten += int64(e.size)
}

// doneLocked counts one record of partition part and generation gen as
// answered (acknowledged or failed). REQUIRES: k.mu held.
func (k *Kafka) doneLocked(part int32, gen uint64) {
	k.pending[part]--
	if gen == k.gen {
		k.genCur-- // nothing waits for the open generation
	} else if k.genWait[gen]--; k.genWait[gen] == 0 {
		delete(k.genWait, gen)
		k.acks.Broadcast()
	}
	if k.flying--; k.waiters > 0 && k.flying < k.cfg.maxBuffered {
		k.space.Broadcast()
	}
}
