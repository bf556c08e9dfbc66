package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// PlanVersion is the version of the cleanup plan format.
const PlanVersion = 1

// maxPlanBytes bounds a plan file (a plan of 32768 partitions is ~1 MiB).
const maxPlanBytes = 4 << 20

// Plan is a checkpoint-aligned cleanup plan (docs/cleanup.md): for every
// partition the markers of the chosen checkpoint mention, the smallest
// offset any subtask still needs. Records below it may be deleted.
//
// Its JSON form is canonical: the fields in this order, partitions in
// increasing order, no spaces, integers in decimal, one trailing newline
// in a file. ID is the hex SHA-256 of the canonical JSON without the "id"
// member (prefixed by "flinkgo-cleanup-plan\x00"), so two plans with equal
// content have equal ids, and a plan bound to another topic id, partition
// count or boundary has another id.
type Plan struct {
	Version      int
	ID           string
	Topic        string
	TopicID      string // statestore.TopicIDString form
	Partitions   int32  // the topic's partition count when planned: the complete partition set is [0, Partitions)
	CheckpointID int64
	Offsets      map[int32]int64 // partition -> boundary (first offset kept)
}

// ErrPlan: a plan file is malformed, not canonical, or its id does not
// match its content.
var ErrPlan = errors.New("flinkgo: invalid cleanup plan")

func planErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPlan, fmt.Sprintf(format, args...))
}

// MakePlan builds the plan of the markers of every subtask of one
// checkpoint or savepoint, for the live topic with id topicID and
// partitions partitions. It refuses markers of another backend, topic, topic
// id or checkpoint, legacy markers without topic id, and partitions outside
// the topic.
func MakePlan(markers []*snapshot.Marker, topicID snapshot.UUID, partitions int32) (*Plan, error) {
	if len(markers) == 0 {
		return nil, planErr("no markers: give the recovery markers of every subtask of the checkpoint")
	}
	p := &Plan{Version: PlanVersion, Partitions: partitions, Offsets: map[int32]int64{}}
	for i, m := range markers {
		switch {
		case m.Backend != "kafka":
			return nil, planErr("marker %d has backend %q: the checkpoint was not taken with actionStateStoreBackend=kafka, there is nothing to clean up", i+1, m.Backend)
		case m.TopicID.IsZero():
			return nil, planErr("marker %d of topic %q has no topic id (a legacy marker): a plan must be bound to the topic's identity; use a checkpoint taken by this flinkgo version", i+1, m.Topic)
		case i == 0:
			p.Topic, p.TopicID, p.CheckpointID = m.Topic, statestore.TopicIDString(m.TopicID), m.CheckpointID
		case m.Topic != p.Topic || statestore.TopicIDString(m.TopicID) != p.TopicID:
			return nil, planErr("marker %d is of topic %q (id %s), marker 1 of %q (id %s): give the markers of one job's checkpoint",
				i+1, m.Topic, statestore.TopicIDString(m.TopicID), p.Topic, p.TopicID)
		case m.CheckpointID != p.CheckpointID:
			return nil, planErr("marker %d is of checkpoint %d, marker 1 of checkpoint %d: give the markers of one checkpoint (all of its subtasks)",
				i+1, m.CheckpointID, p.CheckpointID)
		}
		for part, off := range m.Offsets {
			if part < 0 || part >= partitions || off < 0 {
				return nil, planErr("marker %d: partition %d offset %d, but topic %q has partitions 0..%d", i+1, part, off, m.Topic, partitions-1)
			}
			if cur, ok := p.Offsets[part]; !ok || off < cur {
				p.Offsets[part] = off
			}
		}
	}
	if id := statestore.TopicIDString(topicID); id != p.TopicID {
		return nil, planErr("the markers were taken on topic %q id %s, the live topic has id %s: it was deleted and recreated; the checkpoint's records are gone already", p.Topic, p.TopicID, id)
	}
	if len(p.Offsets) == 0 {
		return nil, planErr("the markers name no partition")
	}
	p.ID = p.digest()
	return p, nil
}

// content appends the canonical JSON of p; withID includes the id member.
func (p *Plan) content(b []byte, withID bool) []byte {
	str := func(s string) []byte { q, _ := json.Marshal(s); return q }
	b = fmt.Appendf(b, `{"version":%d`, p.Version)
	if withID {
		b = append(append(b, `,"id":`...), str(p.ID)...)
	}
	b = append(append(b, `,"topic":`...), str(p.Topic)...)
	b = append(append(b, `,"topic_id":`...), str(p.TopicID)...)
	b = fmt.Appendf(b, `,"partitions":%d,"checkpoint_id":%d,"offsets":{`, p.Partitions, p.CheckpointID)
	for i, part := range slices.Sorted(maps.Keys(p.Offsets)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"%d":%d`, part, p.Offsets[part])
	}
	return append(b, "}}"...)
}

func (p *Plan) digest() string {
	h := sha256.New()
	h.Write([]byte("flinkgo-cleanup-plan\x00"))
	h.Write(p.content(nil, false))
	return hex.EncodeToString(h.Sum(nil))
}

// Encode returns the plan file: the canonical JSON and a newline.
func (p *Plan) Encode() []byte { return append(p.content(nil, true), '\n') }

// planJSON is the decoding target; pointers tell a missing member from a
// zero one.
type planJSON struct {
	Version      *int             `json:"version"`
	ID           *string          `json:"id"`
	Topic        *string          `json:"topic"`
	TopicID      *string          `json:"topic_id"`
	Partitions   *int32           `json:"partitions"`
	CheckpointID *int64           `json:"checkpoint_id"`
	Offsets      map[string]int64 `json:"offsets"`
}

// DecodePlan reads a plan file strictly: unknown or missing members,
// content after the object, a form other than the canonical one (member
// order, spaces, partitions as "007" or out of order, duplicates), invalid
// values and an id that does not match the content are errors of kind
// ErrPlan naming the problem. It never panics.
func DecodePlan(b []byte) (*Plan, error) {
	if len(b) > maxPlanBytes {
		return nil, planErr("%d bytes, more than the %d a plan may have", len(b), maxPlanBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var j planJSON
	if err := dec.Decode(&j); err != nil {
		return nil, planErr("not a plan: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, planErr("content after the plan's JSON object")
	}
	switch {
	case j.Version == nil || j.ID == nil || j.Topic == nil || j.TopicID == nil || j.Partitions == nil || j.CheckpointID == nil || j.Offsets == nil:
		return nil, planErr("a member is missing: a plan has version, id, topic, topic_id, partitions, checkpoint_id and offsets")
	case *j.Version != PlanVersion:
		return nil, planErr("version %d, this flinkgo reads version %d", *j.Version, PlanVersion)
	case *j.Topic == "" || len(*j.Topic) > 249:
		return nil, planErr("topic %q is not a Kafka topic name", *j.Topic)
	case *j.Partitions < 1:
		return nil, planErr("partitions %d: a topic has at least 1", *j.Partitions)
	case *j.CheckpointID < 0:
		return nil, planErr("checkpoint_id %d is negative", *j.CheckpointID)
	case len(j.Offsets) == 0:
		return nil, planErr("offsets is empty")
	}
	if id, err := statestore.ParseTopicID(*j.TopicID); err != nil || id.IsZero() {
		return nil, planErr("topic_id %q is not a Kafka topic id (22 characters of URL-safe base64, not all zero)", *j.TopicID)
	}
	p := &Plan{Version: *j.Version, ID: *j.ID, Topic: *j.Topic, TopicID: *j.TopicID, Partitions: *j.Partitions,
		CheckpointID: *j.CheckpointID, Offsets: make(map[int32]int64, len(j.Offsets))}
	for k, off := range j.Offsets {
		n, err := strconv.ParseInt(k, 10, 32)
		if err != nil || strconv.FormatInt(n, 10) != k {
			return nil, planErr("offsets: partition %q is not a partition number in canonical form", k)
		}
		part := int32(n)
		if part < 0 || part >= p.Partitions || off < 0 {
			return nil, planErr("offsets: partition %d offset %d; partitions are 0..%d and offsets >= 0", part, off, p.Partitions-1)
		}
		p.Offsets[part] = off
	}
	if canon := p.content(nil, true); !bytes.Equal(bytes.TrimSuffix(b, []byte("\n")), canon) {
		return nil, planErr("not in canonical form (member order, spacing, partition order or duplicates differ); plans are written by flinkgo cleanup plan and must not be edited")
	}
	if want := p.digest(); p.ID != want {
		return nil, planErr("id %s does not match the plan's content (digest %s): the plan was edited", p.ID, want)
	}
	return p, nil
}
