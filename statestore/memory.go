package statestore

import (
	"bytes"
	"maps"
	"slices"
	"sync"

	"github.com/flinkgo/flinkgo/snapshot"
)

// MemoryOpt configures NewMemory.
type MemoryOpt func(*memoryCfg)

type memoryCfg struct {
	keepEncoded bool
}

func defaultMemoryCfg() memoryCfg { return memoryCfg{} }

// KeepEncoded makes the store keep only the encoded bytes of each record and
// decode them on every Get, as a backend restored from Kafka would: a test
// then sees exactly what survives the codec, and no caller can alias a stored
// record. Get costs a decode. Default: false (Get returns the *Record Put).
func KeepEncoded(on bool) MemoryOpt { return func(c *memoryCfg) { c.keepEncoded = on } }

// Memory is the in-memory ActionStore, the reference backend for tests and
// for running without Kafka. It models a compacted log with one partition:
// every Put is appended at the next log position (positions only grow, with
// gaps where records were lost, as offsets in a compacted topic do) and
// replaces the record of the same key.
//
// Durability model, for crash tests (SimulateCrash): a record is durable once
// a Flush followed its Put, or if it was written with PutDurable. PutDurable
// makes only its own record durable, not earlier Puts (the adversarial choice:
// a Kafka producer gives that guarantee per partition only).
//
// Memory is safe for concurrent use. It implements ActionStore and
// InputTracker.
type Memory struct {
	cfg memoryCfg

	mu         sync.RWMutex
	recs       map[RecordKey]*memEntry
	inputs     inputIndex // records by input, done marks (pruning)
	nextPos    int64      // log position of the next Put
	flushedPos int64      // records with pos < flushedPos are durable
	err        error      // sticky failure (Fail)
	closed     bool
	stats      Stats
}

// memEntry is what the store holds for one record key.
// INVARIANT: prev is nil or durable, and older than cur.
type memEntry struct {
	cur  *memVersion
	prev *memVersion // last durable version cur replaced, the crash fallback
}

type memVersion struct {
	rec     *Record // nil when keepEncoded
	enc     []byte  // the encoded value (kept only when keepEncoded)
	size    int     // encoded key + value bytes
	pos     int64
	durable bool // written with PutDurable
}

// Stats are the counters of a Memory store.
type Stats struct {
	Puts        int64 // Put calls that stored a record
	DurablePuts int64 // PutDurable calls that stored a record
	Flushes     int64 // successful Flush calls
	Records     int   // records held now (one per key)
	Bytes       int64 // encoded key + value bytes of the records held now
	Pruned      int64 // records dropped by CheckpointComplete
	Lost        int64 // records lost by SimulateCrash(true)
}

var (
	_ ActionStore          = (*Memory)(nil)
	_ InputTracker         = (*Memory)(nil)
	_ RestoredInputTracker = (*Memory)(nil)
)

// NewMemory returns an empty in-memory store.
func NewMemory(opts ...MemoryOpt) *Memory {
	cfg := defaultMemoryCfg()
	for _, o := range opts {
		o(&cfg)
	}
	return &Memory{
		cfg:    cfg,
		recs:   make(map[RecordKey]*memEntry),
		inputs: newInputIndex(),
	}
}

// Get implements ActionStore.
func (m *Memory) Get(k RecordKey) (*Record, bool) {
	m.mu.RLock()
	e, ok := m.recs[k]
	var v *memVersion
	if ok {
		v = e.cur
	}
	m.mu.RUnlock()
	if !ok {
		return nil, false
	}
	if !m.cfg.keepEncoded {
		return v.rec, true
	}
	r, err := decodeValueFor(k, nil, v.enc)
	if err != nil { // cannot happen: the bytes came from EncodeRecord
		return nil, false
	}
	return r, true
}

// Put implements ActionStore. An invalid record is an error of kind
// ErrRecordInvalid and is not stored; it does not make the store fail.
func (m *Memory) Put(r *Record) error { return m.put(r, false) }

// PutDurable implements ActionStore.
func (m *Memory) PutDurable(r *Record) error { return m.put(r, true) }

func (m *Memory) put(r *Record, durable bool) error {
	v := &memVersion{durable: durable}
	var n int
	var err error
	if m.cfg.keepEncoded {
		v.enc, err = EncodeRecord(r)
		n = len(v.enc)
	} else {
		v.rec = r
		n, err = encodedLen(r) // validates r as a Kafka backend would
	}
	if err != nil {
		return err
	}
	v.size = r.Key.EncodedLen() + n
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return err
	}
	v.pos = m.nextPos
	m.nextPos++
	e, ok := m.recs[r.Key]
	if !ok {
		e = &memEntry{}
		m.recs[r.Key] = e
		m.inputs.add(r.Key)
		m.stats.Records++
	} else {
		if m.isDurable(e.cur) {
			e.prev = e.cur
		}
		m.stats.Bytes -= int64(e.cur.size)
	}
	e.cur = v
	m.stats.Bytes += int64(v.size)
	if durable {
		m.stats.DurablePuts++
	} else {
		m.stats.Puts++
	}
	return nil
}

func (m *Memory) isDurable(v *memVersion) bool { return v.durable || v.pos < m.flushedPos }

// usable returns the error every write returns now. REQUIRES: m.mu held.
func (m *Memory) usable() error {
	if m.closed {
		return ErrClosed
	}
	return m.err
}

// Flush implements ActionStore: every record Put so far becomes durable. The
// marker has Backend "memory", CheckpointID 0 (the store does not know it;
// the caller sets it) and Offsets {0: the next log position}, which never
// decreases.
func (m *Memory) Flush() (snapshot.Marker, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return snapshot.Marker{}, err
	}
	m.flushedPos = m.nextPos
	m.stats.Flushes++
	return snapshot.Marker{
		Version: snapshot.MarkerVersion,
		Backend: "memory",
		Offsets: map[int32]int64{0: m.nextPos},
	}, nil
}

// MarkInputDone implements InputTracker. Inputs without records are not
// remembered.
func (m *Memory) MarkInputDone(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inputs.markDone(kg, keyHash, seq, lastCut)
}

// MarkDoneBelow implements RestoredInputTracker.
func (m *Memory) MarkDoneBelow(kg int32, keyHash [32]byte, seq uint64, lastCut int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inputs.markBelow(kg, keyHash, seq, lastCut)
}

// CheckpointComplete implements ActionStore: it drops every record of every
// input marked done (MarkInputDone, MarkDoneBelow) with lastCut <
// checkpointID (see InputTracker for why that is safe). Records of inputs
// not marked done are kept.
func (m *Memory) CheckpointComplete(checkpointID int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(); err != nil {
		return err
	}
	m.inputs.prune(checkpointID, func(k RecordKey) {
		if e, ok := m.recs[k]; ok {
			m.stats.Bytes -= int64(e.cur.size)
			m.stats.Records--
			m.stats.Pruned++
			delete(m.recs, k)
		}
	})
	return nil
}

// Close implements ActionStore. Later writes return ErrClosed; Get keeps
// working.
func (m *Memory) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}

// Fail makes the store fail as a Kafka producer does after a failed send:
// from now on Put, PutDurable, Flush and CheckpointComplete return err
// (sticky) and store nothing. SimulateCrash clears it.
func (m *Memory) Fail(err error) {
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
}

// SimulateCrash models the process dying and a new one opening the same log.
// With loseUnflushed, every record that is not durable is lost (a key whose
// last durable version was replaced falls back to that version); this models
// a Kafka producer losing the sends it had not flushed. Without it, every
// record survives. Either way what survives is durable afterwards, and the
// process-local state is reset: inputs marked done, the sticky error and the
// closed flag. Counters keep counting.
func (m *Memory) SimulateCrash(loseUnflushed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, e := range m.recs {
		if loseUnflushed && !m.isDurable(e.cur) {
			m.stats.Lost++
			m.stats.Bytes -= int64(e.cur.size)
			if e.prev == nil {
				m.stats.Records--
				delete(m.recs, k)
				continue
			}
			e.cur = e.prev
			m.stats.Bytes += int64(e.cur.size)
		}
		e.prev = nil
	}
	m.flushedPos = m.nextPos
	m.inputs.rebuild(maps.Keys(m.recs))
	m.err = nil
	m.closed = false
}

// Stats returns the current counters.
func (m *Memory) Stats() Stats {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.stats
}

// Keys returns the keys of the records held, ordered by their encoding
// (key group, key hash, seq, event id, action name), for tests and tools.
func (m *Memory) Keys() []RecordKey {
	m.mu.RLock()
	keys := make([]RecordKey, 0, len(m.recs))
	for k := range m.recs {
		keys = append(keys, k)
	}
	m.mu.RUnlock()
	slices.SortFunc(keys, func(a, b RecordKey) int { return bytes.Compare(a.Bytes(), b.Bytes()) })
	return keys
}
