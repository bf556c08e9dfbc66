package operator

import (
	"fmt"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// Barrier cuts the state for checkpoint checkpointID and appends it to the
// emitted stream as EmitSnapshot, after every output emitted so far. It is a
// consistent cut, not a drain: running actions keep running, and what they
// complete later belongs to the next checkpoint. Per key the snapshot holds
// committed memory, the in-flight input with its sensory memory and the
// tasks not yet completed (the running one first: it runs again after a
// restore), the queued inputs and the next sequence number.
//
// The sections share immutable values with the live state (memory values are
// never modified in place), so they may be encoded on another goroutine.
// Keys are in table order, not sorted: snapshot.EncodeSection sorts them, so
// the sort runs on the encoding goroutines, not on the core's.
func (c *Core) Barrier(checkpointID int64) {
	c.lastCut = checkpointID
	if c.linger != nil {
		// The records of actions running with unrecorded calls belong to
		// the cut: the store's flush after it writes them.
		if err := c.linger.flushAll(); err != nil {
			c.fail(fmt.Errorf("%w: running record at barrier %d: %w", ErrStore, checkpointID, err))
		}
	}
	var sections []*snapshot.Section
	for _, kg := range c.table.KeyGroups() {
		sec := &snapshot.Section{KeyGroup: kg, Keys: make([]snapshot.KeyState, 0, c.table.GroupLen(kg))}
		c.table.RangeGroup(kg, func(key []byte, ks *keyState) bool {
			sec.Keys = append(sec.Keys, ks.cut())
			return true
		})
		sections = append(sections, sec)
	}
	c.emits = append(c.emits, Emit{Kind: EmitSnapshot, CheckpointID: checkpointID, Sections: sections})
}

// cut returns the key's state. Short-term memory is shared with the snapshot,
// not copied: the key copies it before its next write (copy on write), so a
// cut costs nothing per key beyond its KeyState, and what a checkpoint costs
// afterwards follows the keys that change.
func (ks *keyState) cut() snapshot.KeyState {
	ks.memShared = len(ks.mem) > 0
	s := snapshot.KeyState{Key: ks.key, NextSeq: ks.nextSeq, ShortTerm: ks.mem[:len(ks.mem):len(ks.mem)]}
	if f := ks.cur; f != nil {
		fl := &snapshot.InFlight{Input: f.in.toSnapshot(), Sensory: f.sensory.items(), Emitted: f.emitted}
		for _, t := range f.tasks.items() {
			fl.Tasks = append(fl.Tasks, snapshot.Task{Action: t.act.Name, Event: t.ev.toSnapshot()})
		}
		s.InFlight = fl
	}
	if n := ks.queue.len(); n > 0 {
		s.Queued = make([]snapshot.Input, n)
		for i, in := range ks.queue.items() {
			s.Queued[i] = in.toSnapshot()
		}
	}
	return s
}

func (in *pendingInput) toSnapshot() snapshot.Input {
	return snapshot.Input{Seq: in.seq, Timestamp: in.ts, HasTS: in.hasTS, EventID: in.id, Row: materialize(in.row)}
}

// Restore loads key-group sections (from one or several old subtasks, after
// rescaling) into an empty core. In-flight and queued inputs are re-queued
// in their original order; the task that was running at the cut runs again.
// A section for a key group outside the owned range, a duplicate key or an
// action the agent no longer has is an error, and nothing is loaded.
//
// checkpointID is the checkpoint the sections come from: the largest
// CheckpointID among the recovery markers handed over with them (0 if none).
func (c *Core) Restore(checkpointID int64, sections []*snapshot.Section) error {
	if c.table.Len() > 0 || c.stats.InputsReceived > 0 {
		return fmt.Errorf("operator: Restore needs a fresh core; this one already holds %d keys", c.table.Len())
	}
	// Validate everything first: nothing is half-applied.
	seen := make(map[int32]bool)
	for _, sec := range sections {
		if !c.cfg.Owned.Contains(sec.KeyGroup) {
			return &snapshot.Error{KeyGroup: sec.KeyGroup, Kind: snapshot.ErrNotOwned,
				Detail: fmt.Sprintf("this subtask owns key groups %d..%d; hand each section to the subtask that owns it", c.cfg.Owned.Start, c.cfg.Owned.End)}
		}
		if seen[sec.KeyGroup] {
			return fmt.Errorf("operator: restore: two sections for key group %d", sec.KeyGroup)
		}
		seen[sec.KeyGroup] = true
		for i := range sec.Keys {
			if f := sec.Keys[i].InFlight; f != nil {
				for _, t := range f.Tasks {
					if c.actionByName(t.Action) == nil {
						return fmt.Errorf("operator: restore: key group %d has a pending execution of action %q, which agent %q does not declare; keep renamed actions under their old name until old checkpoints are gone",
							sec.KeyGroup, t.Action, c.ag.agent.Name)
					}
				}
			}
		}
	}
	c.lastCut = checkpointID
	for _, sec := range sections {
		for i := range sec.Keys {
			if err := c.restoreKey(sec.KeyGroup, &sec.Keys[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Core) actionByName(name string) *Action {
	for i := range c.ag.agent.Actions {
		if c.ag.agent.Actions[i].Name == name {
			return &c.ag.agent.Actions[i]
		}
	}
	return nil
}

func (c *Core) restoreKey(kg int32, s *snapshot.KeyState) error {
	h := statestore.HashKey64(s.Key)
	ks, stored, created := c.table.GetOrCreateKey(kg, s.Key, h)
	if !created {
		return fmt.Errorf("operator: restore: key group %d holds the same key twice", kg)
	}
	ks.kg, ks.hash, ks.key, ks.nextSeq = kg, h, stored, s.NextSeq
	ks.mem = memFromItems(s.ShortTerm)
	seg := c.wm.segment()
	if fl := s.InFlight; fl != nil {
		in := inputFromSnapshot(&fl.Input, seg)
		f := &inflight{in: in, sensory: memFromItems(fl.Sensory), emitted: fl.Emitted}
		f.ev = Event{ID: in.id, Type: InputEventType, row: in.row}
		for i := range fl.Tasks {
			t := &fl.Tasks[i]
			ev := &f.ev
			if t.Event.Type != InputEventType {
				e, err := eventFromSnapshot(&t.Event, nil)
				if err != nil {
					return fmt.Errorf("operator: restore key group %d: %w", kg, err)
				}
				ev = e
			}
			f.tasks.push(taskSpec{act: c.actionByName(t.Action), ev: ev})
		}
		ks.cur = f
		c.inFlight++
		c.wm.add(seg)
	}
	for i := range s.Queued {
		ks.queue.push(inputFromSnapshot(&s.Queued[i], seg))
		c.inFlight++
		c.wm.add(seg)
	}
	if ks.cur == nil && ks.queue.len() > 0 {
		c.begin(ks, ks.queue.pop())
	}
	if ks.cur != nil && ks.cur.tasks.len() == 0 {
		c.finishInput(ks)
	}
	c.markReady(ks)
	return nil
}

func inputFromSnapshot(in *snapshot.Input, seg uint64) *pendingInput {
	return &pendingInput{seq: in.Seq, ts: in.Timestamp, hasTS: in.HasTS, id: in.EventID, row: FieldsRow(in.Row), seg: seg}
}
