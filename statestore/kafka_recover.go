package statestore

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Recover rebuilds the store's memory from the log after a restore. markers
// are the markers of every subtask of the restored checkpoint (union state),
// possibly written under another key-group split (rescaling).
//
// Only markers of Backend "kafka" count (a job that ran without the Kafka
// store has nothing in Kafka). For every partition that can hold an owned
// key group, the read starts at the smallest offset any marker gives for it
// and stops at the end offset listed before reading starts, so records
// written meanwhile (by other subtasks already running) do not prolong it.
// Only records of owned key groups are kept, a later record of a key
// replacing an earlier one and a tombstone deleting it.
//
// It refuses, with an error of kind ErrKafkaRecover naming the partition and
// offsets: a marker of another topic or another topic id (the topic was
// recreated: the records are gone); an offset below the partition's log
// start (records were deleted) or beyond its end; and, with a cleanup control
// topic, a marker without a topic id or below the committed boundary, or no
// committed boundary at all. A record that cannot be read (corrupt, a newer
// format, encrypted with another key) stops the recovery too: skipping it
// would silently re-run actions.
//
// It runs once, before the first Put and Flush; after an error the store
// holds what was read so far and should be closed.
func (k *Kafka) Recover(ctx context.Context, markers []snapshot.Marker) error {
	start := time.Now()
	k.mu.Lock()
	early, again := k.puts > 0 || k.stats.Flushes > 0, k.rebuilt
	k.rebuilt = true
	k.mu.Unlock()
	if early || again {
		return recoverErr("Recover must be called once, before the first Put or Flush")
	}
	need, all, err := k.checkMarkers(markers)
	if err != nil {
		return err
	}
	k.mu.Lock()
	for _, m := range markers { // the restored cut: no later marker needs an input done after it
		k.cutFlushed = max(k.cutFlushed, m.CheckpointID)
	}
	k.mu.Unlock()
	if len(all) == 0 {
		k.log.Info("statestore: no Kafka marker to recover from; starting with an empty action state")
		return nil
	}
	if k.cfg.controlTopic != "" {
		if err := k.checkControl(ctx, all); err != nil {
			return err
		}
	}
	ends, err := k.checkOffsets(ctx, need)
	if err != nil {
		return err
	}
	read := make(map[int32]int64) // partition -> first offset to read
	for p, off := range need {
		if off < ends[p] {
			read[p] = off
		}
	}
	if len(read) > 0 {
		if err := k.replay(ctx, read, ends); err != nil {
			return err
		}
	}
	k.mu.Lock()
	for _, p := range k.writeParts {
		if e, ok := ends[p]; ok && e > k.end[p] {
			k.end[p] = e
		}
	}
	k.recSeq = make(map[keyID]uint64, k.idx.n)
	for e := range k.idx.all() {
		key := e.key
		id := keyID{key.KeyGroup, key.KeyHash}
		if top, ok := k.recSeq[id]; !ok || key.Seq > top {
			k.recSeq[id] = key.Seq
		}
	}
	k.stats.RebuildTime = time.Since(start)
	k.stats.ReplayedPartitions = slices.Sorted(maps.Keys(read))
	s := k.stats
	k.mu.Unlock()
	k.log.Info("statestore: action state recovered from Kafka",
		"partitions", len(read), "records", s.RecordsReplayed, "skipped", s.RecordsSkipped,
		"bytes", s.BytesReplayed, "took", s.RebuildTime)
	return nil
}

// checkMarkers validates the markers against the live topic. need is the
// smallest offset per partition this subtask reads; all is the smallest
// offset per partition over every Kafka marker.
func (k *Kafka) checkMarkers(markers []snapshot.Marker) (need, all map[int32]int64, err error) {
	mine := make(map[int32]bool)
	for _, p := range PartitionsFor(k.cfg.owned, k.topic.partitions) {
		mine[p] = true
	}
	need, all = make(map[int32]int64), make(map[int32]int64)
	for i := range markers {
		m := &markers[i]
		if m.Backend != "kafka" {
			continue
		}
		if m.Topic != k.cfg.topic {
			return nil, nil, recoverErr("marker %d is of topic %q, the store is configured with %q: "+
				"set kafkaActionStateTopic to the topic the checkpoint was written with", i, m.Topic, k.cfg.topic)
		}
		if m.TopicID.IsZero() {
			if k.cfg.controlTopic != "" {
				return nil, nil, recoverErr("marker %d of topic %q has no topic id (a legacy marker); with %s set "+
					"the topic identity must be checked: restore from a checkpoint taken by this version",
					i, m.Topic, OptKafkaCleanupControlTopic)
			}
		} else if m.TopicID != k.topic.id {
			return nil, nil, recoverErr("topic %q has id %s, the checkpoint's marker %d was taken on id %s: the topic "+
				"was deleted and recreated, so the records the checkpoint needs are gone; restore from a newer checkpoint "+
				"or start the job without state", k.cfg.topic, TopicIDString(k.topic.id), i, TopicIDString(m.TopicID))
		}
		for p, off := range m.Offsets {
			if p >= k.topic.partitions || off < 0 {
				return nil, nil, recoverErr("marker %d: partition %d offset %d, but topic %q has %d partitions: "+
					"partitions were added or the marker is corrupt", i, p, off, k.cfg.topic, k.topic.partitions)
			}
			if cur, ok := all[p]; !ok || off < cur {
				all[p] = off
			}
			if cur, ok := need[p]; mine[p] && (!ok || off < cur) {
				need[p] = off
			}
		}
	}
	return need, all, nil
}

// checkOffsets lists the start and end offsets of the topic and checks that
// every offset in need lies between them. It returns the end offsets.
func (k *Kafka) checkOffsets(ctx context.Context, need map[int32]int64) (map[int32]int64, error) {
	starts, err := k.adm.ListStartOffsets(ctx, k.cfg.topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, recoverErr("listing the start offsets of topic %q: %w", k.cfg.topic, err)
	}
	endsL, err := k.adm.ListEndOffsets(ctx, k.cfg.topic)
	if err == nil {
		err = endsL.Error()
	}
	if err != nil {
		return nil, recoverErr("listing the end offsets of topic %q: %w", k.cfg.topic, err)
	}
	ends := make(map[int32]int64)
	for _, p := range slices.Sorted(maps.Keys(need)) {
		off := need[p]
		s, ok1 := starts.Lookup(k.cfg.topic, p)
		e, ok2 := endsL.Lookup(k.cfg.topic, p)
		if !ok1 || !ok2 {
			return nil, recoverErr("topic %q: no offsets listed for partition %d", k.cfg.topic, p)
		}
		if off < s.Offset {
			return nil, recoverErr("topic %q partition %d: the checkpoint needs records from offset %d, but the log "+
				"starts at offset %d (records before it were deleted): restore from a newer checkpoint; if a cleanup "+
				"deleted them, set %s so that recovery checks the boundary", k.cfg.topic, p, off, s.Offset, OptKafkaCleanupControlTopic)
		}
		if off > e.Offset {
			return nil, recoverErr("topic %q partition %d: the checkpoint needs records from offset %d, beyond the "+
				"log's end offset %d: the topic is not the one the checkpoint was written to", k.cfg.topic, p, off, e.Offset)
		}
		ends[p] = e.Offset
	}
	return ends, nil
}

// replay reads every partition of read from its offset up to ends (both
// captured before reading) into memory.
//
// A partition is done once the record at end-1 was read. That record always
// exists: the log cleaner never touches the active segment, which holds the
// last record appended, and DeleteRecords only moves the log start.
func (k *Kafka) replay(ctx context.Context, read, ends map[int32]int64) error {
	at := make(map[int32]kgo.Offset, len(read))
	for p, off := range read {
		at[p] = kgo.NewOffset().At(off)
	}
	cons, err := kgo.NewClient(append(k.cl.Opts(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{k.cfg.topic: at}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()), // an offset gone meanwhile is an error, not a silent skip
	)...)
	if err != nil {
		return recoverErr("consumer for topic %q: %w", k.cfg.topic, err)
	}
	defer cons.Close()
	done := make(map[int32]bool, len(read))
	var ferr error
	for len(done) < len(read) {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return recoverErr("reading topic %q: %d of %d partitions not read to their end offset: %w",
				k.cfg.topic, len(read)-len(done), len(read), err)
		}
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = recoverErr("reading topic %q partition %d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			p, end := fp.Partition, ends[fp.Partition]
			for _, r := range fp.Records {
				if ferr != nil || r.Offset >= end || done[p] {
					break
				}
				ferr = k.replayRecord(r)
				if r.Offset+1 >= end {
					done[p] = true
					cons.PauseFetchPartitions(map[string][]int32{k.cfg.topic: {p}})
				}
			}
		})
		if ferr != nil {
			return ferr
		}
	}
	return nil
}

// replayRecord applies one record read from the log.
func (k *Kafka) replayRecord(r *kgo.Record) error {
	kg, err := RecordKeyGroup(r.Key)
	if err != nil {
		return recoverErr("topic %q partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	size := int64(len(r.Key) + len(r.Value))
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stats.BytesReplayed += size
	if !k.cfg.owned.Contains(kg) {
		k.stats.RecordsSkipped++
		return nil
	}
	var rec *Record
	if r.Value != nil {
		plain, err := k.ciph.open(r.Key, r.Value)
		if err != nil {
			return recoverErr("topic %q partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
		}
		if rec, err = DecodeRecordFor(r.Key, plain, k.cfg.owned); err != nil {
			return recoverErr("topic %q partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
		}
		size = int64(len(r.Key) + len(plain))
	}
	if rec == nil { // a tombstone deletes the key
		if old := k.idx.remove(rec0Key(rec, r.Key)); old != nil {
			old.dropped, old.rec, old.plain = true, nil, nil
		}
		return nil
	}
	e := &kEntry{key: rec.Key, rec: rec, size: int(size), part: r.Partition, off: r.Offset}
	if old := k.idx.set(e, nil); old != nil {
		old.next, old.rec, old.plain = e, nil, nil
	}
	if q := k.queueOf(r.Partition); q != nil { // nil: a partition this subtask does not write
		q.push(e)
	}
	k.stats.RecordsReplayed++
	return nil
}

// rec0Key is the key of rec, or the parsed raw key of a tombstone.
func rec0Key(rec *Record, raw []byte) RecordKey {
	if rec != nil {
		return rec.Key
	}
	key, _ := ParseRecordKey(raw) // checked by RecordKeyGroup already
	return key
}

// checkControl reads the cleanup control topic and refuses markers below the
// committed boundary. all is the smallest offset per partition over every
// Kafka marker.
func (k *Kafka) checkControl(ctx context.Context, all map[int32]int64) error {
	rec, err := ReadControl(ctx, k.cl, k.cfg.controlTopic, k.cfg.topic)
	if err != nil {
		return recoverErr("%w", err)
	}
	if rec == nil {
		return recoverErr("%s is %q but it holds no COMMITTED cleanup boundary for topic %q: run the cleanup "+
			"(flinkgo cleanup plan/apply) to commit one, or unset the option", OptKafkaCleanupControlTopic, k.cfg.controlTopic, k.cfg.topic)
	}
	id, err := ParseTopicID(rec.TopicID)
	if err != nil || id != k.topic.id {
		return recoverErr("the cleanup boundary of plan %s in %q is for topic id %s, topic %q has id %s: the topic was "+
			"recreated after the cleanup; restore from a checkpoint of the new topic", rec.PlanID, k.cfg.controlTopic,
			rec.TopicID, k.cfg.topic, TopicIDString(k.topic.id))
	}
	for _, p := range slices.Sorted(maps.Keys(all)) {
		if b, ok := rec.Offsets[p]; ok && all[p] < b {
			return recoverErr("topic %q partition %d: the checkpoint needs records from offset %d, below the cleanup "+
				"boundary %d committed by plan %s (%s): those records may be deleted; restore from the checkpoint the "+
				"plan was made from or a newer one", k.cfg.topic, p, all[p], b, rec.PlanID, rec.State)
		}
	}
	return nil
}
