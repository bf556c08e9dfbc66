package statestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ControlVersion is the version of the cleanup control record format.
const ControlVersion = 1

// ControlState is the state of a cleanup plan in the control topic.
type ControlState string

const (
	// ControlCommitted: the plan's boundary is committed; records below it
	// may be deleted from now on.
	ControlCommitted ControlState = "COMMITTED"
	// ControlApplied: the records below the boundary were deleted and the
	// deletion verified.
	ControlApplied ControlState = "APPLIED"
)

// ControlRecord is one record of the cleanup control topic: the boundary
// of a checkpoint-aligned cleanup of one action-state topic. Its Kafka key
// is Topic; its value is the JSON of docs/kafka-store.md (EncodeControl).
// Offsets maps a partition to its boundary: the first offset kept.
type ControlRecord struct {
	Version int             `json:"version"`
	PlanID  string          `json:"plan_id"`
	Topic   string          `json:"topic"`
	TopicID string          `json:"topic_id"` // TopicIDString form
	State   ControlState    `json:"state"`
	Offsets map[int32]int64 `json:"offsets"`
}

// maxPlanIDLen bounds the plan id (a hex digest in practice).
const maxPlanIDLen = 128

func (r *ControlRecord) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrControl, fmt.Sprintf(format, args...))
	}
	switch {
	case r.Version != ControlVersion:
		return bad("version %d, this build reads and writes version %d", r.Version, ControlVersion)
	case r.PlanID == "" || len(r.PlanID) > maxPlanIDLen:
		return bad("plan_id must be 1 to %d characters, found %d", maxPlanIDLen, len(r.PlanID))
	case r.Topic == "":
		return bad("topic is empty")
	case r.State != ControlCommitted && r.State != ControlApplied:
		return bad("state %q is not COMMITTED or APPLIED", r.State)
	case len(r.Offsets) == 0:
		return bad("offsets is empty: a boundary names at least one partition")
	}
	if id, err := ParseTopicID(r.TopicID); err != nil || id.IsZero() {
		return bad("topic_id %q is not a Kafka topic id (22 characters of URL-safe base64, not all zero)", r.TopicID)
	}
	for p, off := range r.Offsets {
		if p < 0 || off < 0 {
			return bad("offsets: partition %d offset %d; both must be >= 0", p, off)
		}
	}
	return nil
}

// EncodeControl returns the JSON value of a control record, after checking
// it: fields in a fixed order, partitions in increasing numeric order, so
// equal records give equal bytes.
func EncodeControl(r *ControlRecord) ([]byte, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	head := *r
	head.Offsets = nil
	b, err := json.Marshal(controlHead{head})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrControl, err)
	}
	b = append(b[:len(b)-1], `,"offsets":{`...)
	for i, p := range slices.Sorted(maps.Keys(r.Offsets)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"%d":%d`, p, r.Offsets[p])
	}
	return append(b, "}}"...), nil
}

// controlHead marshals a ControlRecord without its offsets.
type controlHead struct{ r ControlRecord }

func (h controlHead) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Version int          `json:"version"`
		PlanID  string       `json:"plan_id"`
		Topic   string       `json:"topic"`
		TopicID string       `json:"topic_id"`
		State   ControlState `json:"state"`
	}{h.r.Version, h.r.PlanID, h.r.Topic, h.r.TopicID, h.r.State})
}

// DecodeControl reads a control record value. Unknown fields, trailing
// bytes, a version other than ControlVersion and invalid fields are errors
// of kind ErrControl; it never panics.
func DecodeControl(b []byte) (*ControlRecord, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r ControlRecord
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: not a control record: %w", ErrControl, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: bytes after the JSON object", ErrControl)
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReadControl returns the current control record of the action-state topic
// topic in controlTopic: the last record whose key is topic (nil if there
// is none, the control topic does not exist, or the last one is a
// tombstone). It reads the control topic from its start up to the end
// offset listed first, with a temporary consumer configured like cl.
func ReadControl(ctx context.Context, cl *kgo.Client, controlTopic, topic string) (*ControlRecord, error) {
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, controlTopic)
	if err != nil {
		return nil, fmt.Errorf("%w: listing the end offset of control topic %q: %w", ErrControl, controlTopic, err)
	}
	parts := ends[controlTopic]
	if m, ok := parts[-1]; ok && errors.Is(m.Err, kerr.UnknownTopicOrPartition) {
		return nil, nil // no control topic: nothing committed
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("%w: control topic %q: %w", ErrControl, controlTopic, err)
	}
	end, ok := parts[0]
	if !ok || len(parts) != 1 {
		return nil, fmt.Errorf("%w: control topic %q has %d partitions, it must have exactly 1", ErrControl, controlTopic, len(parts))
	}
	if end.Offset == 0 {
		return nil, nil
	}
	cons, err := kgo.NewClient(append(cl.Opts(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{controlTopic: {0: kgo.NewOffset().AtStart()}}),
	)...)
	if err != nil {
		return nil, fmt.Errorf("%w: consumer for control topic %q: %w", ErrControl, controlTopic, err)
	}
	defer cons.Close()
	var last *kgo.Record
	for next := int64(0); next < end.Offset; {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w: reading control topic %q up to offset %d: %w", ErrControl, controlTopic, end.Offset, err)
		}
		if err := fs.Err(); err != nil {
			return nil, fmt.Errorf("%w: reading control topic %q: %w", ErrControl, controlTopic, err)
		}
		for it := fs.RecordIter(); !it.Done() && next < end.Offset; {
			r := it.Next()
			if r.Offset >= end.Offset {
				next = end.Offset
				break
			}
			next = r.Offset + 1
			if string(r.Key) == topic {
				last = r
			}
		}
	}
	if last == nil || last.Value == nil {
		return nil, nil
	}
	rec, err := DecodeControl(last.Value)
	if err != nil {
		return nil, fmt.Errorf("control topic %q offset %d: %w", controlTopic, last.Offset, err)
	}
	if rec.Topic != topic {
		return nil, fmt.Errorf("%w: control topic %q offset %d: record keyed %q names topic %q", ErrControl, controlTopic, last.Offset, topic, rec.Topic)
	}
	return rec, nil
}

// WriteControl appends rec to controlTopic (keyed by rec.Topic) and waits
// for the acknowledgement. It creates the control topic if it is missing (1
// partition, cleanup.policy=compact, the broker's replication factor).
// Boundaries only move forward: a record for another topic id, or with a
// partition's offset below the current record's, is refused. Writing the
// same plan again is safe; a COMMITTED after the same plan's APPLIED is a
// no-op.
func WriteControl(ctx context.Context, cl *kgo.Client, controlTopic string, rec *ControlRecord) error {
	val, err := EncodeControl(rec)
	if err != nil {
		return err
	}
	if err := ensureControlTopic(ctx, cl, controlTopic); err != nil {
		return err
	}
	cur, err := ReadControl(ctx, cl, controlTopic, rec.Topic)
	if err != nil {
		return err
	}
	if cur != nil {
		if cur.TopicID != rec.TopicID {
			return fmt.Errorf("%w: control topic %q holds a boundary for topic %q id %s, the new one is for id %s: "+
				"the topic was recreated; use a new control topic for it", ErrControl, controlTopic, rec.Topic, cur.TopicID, rec.TopicID)
		}
		for _, p := range slices.Sorted(maps.Keys(cur.Offsets)) {
			if off, ok := rec.Offsets[p]; !ok || off < cur.Offsets[p] {
				return fmt.Errorf("%w: topic %q partition %d: new boundary %s is below the committed %d of plan %s; boundaries only move forward",
					ErrControl, rec.Topic, p, offsetText(off, ok), cur.Offsets[p], cur.PlanID)
			}
		}
		if cur.PlanID == rec.PlanID && cur.State == ControlApplied && rec.State == ControlCommitted {
			return nil
		}
	}
	kr := &kgo.Record{Topic: controlTopic, Partition: 0, Key: []byte(rec.Topic), Value: val}
	if err := cl.ProduceSync(ctx, kr).FirstErr(); err != nil {
		return fmt.Errorf("%w: writing plan %s (%s) to control topic %q: %w", ErrControl, rec.PlanID, rec.State, controlTopic, err)
	}
	return nil
}

func offsetText(off int64, ok bool) string {
	if !ok {
		return "(missing)"
	}
	return fmt.Sprint(off)
}

func ensureControlTopic(ctx context.Context, cl *kgo.Client, controlTopic string) error {
	adm := kadm.NewClient(cl)
	_, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, controlTopic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("%w: creating control topic %q: %w", ErrControl, controlTopic, err)
	}
	// Wait until the topic is visible, so that the produce does not race
	// the metadata of a just created topic.
	for {
		info, found, err := describeTopic(ctx, adm, controlTopic)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrControl, err)
		}
		if found {
			if info.partitions != 1 {
				return fmt.Errorf("%w: control topic %q has %d partitions, it must have exactly 1", ErrControl, controlTopic, info.partitions)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: control topic %q not visible: %w", ErrControl, controlTopic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
