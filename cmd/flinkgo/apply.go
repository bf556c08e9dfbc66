package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// applier runs one plan against the brokers, in steps (check, commit,
// deleteRecords, verify, markApplied) that are each safe to repeat: an
// apply interrupted anywhere is finished by running it again.
type applier struct {
	cl      *kgo.Client
	adm     *kadm.Client
	plan    *Plan
	topic   string // --topic: must be the plan's
	control string // --control-topic
	out     io.Writer

	cur *statestore.ControlRecord // the control record read by check
}

func newApplier(cl *kgo.Client, p *Plan, topic, control string, out io.Writer) *applier {
	return &applier{cl: cl, adm: kadm.NewClient(cl), plan: p, topic: topic, control: control, out: out}
}

// apply runs every step.
func (a *applier) apply(ctx context.Context) error {
	if err := a.check(ctx); err != nil {
		return err
	}
	if a.cur != nil && a.cur.PlanID == a.plan.ID && a.cur.State == statestore.ControlApplied {
		if err := a.verify(ctx); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "Cleanup plan %s is APPLIED\n", a.plan.ID)
		return nil
	}
	for _, step := range []func(context.Context) error{a.commit, a.deleteRecords, a.verify, a.markApplied} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.out, "Cleanup plan %s is APPLIED\n", a.plan.ID)
	return nil
}

func (a *applier) fail(format string, args ...any) error {
	return fmt.Errorf("flinkgo cleanup apply: plan %s: %s", a.plan.ID, fmt.Sprintf(format, args...))
}

// identity checks that the topic still has the plan's id and partition
// count.
func (a *applier) identity(ctx context.Context) error {
	tds, err := a.adm.ListTopics(ctx, a.topic)
	if err != nil {
		return a.fail("describing topic %q: %v; check --bootstrap", a.topic, err)
	}
	td, ok := tds[a.topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return a.fail("topic %q does not exist", a.topic)
	}
	if td.Err != nil {
		return a.fail("topic %q: %v", a.topic, td.Err)
	}
	if id := statestore.TopicIDString(snapshot.UUID(td.ID)); id != a.plan.TopicID {
		return a.fail("topic %q has id %s, the plan was made for id %s: the topic was recreated; make a new plan", a.topic, id, a.plan.TopicID)
	}
	if n := int32(len(td.Partitions)); n != a.plan.Partitions {
		return a.fail("topic %q has %d partitions, the plan was made for %d: the partitions of key groups moved; make a new plan", a.topic, n, a.plan.Partitions)
	}
	return nil
}

// retentionSafe checks the topic's configuration: DeleteRecords needs a
// delete policy, and the boundary means something only if Kafka deletes
// nothing above it by age or size.
func (a *applier) retentionSafe(ctx context.Context) error {
	rcs, err := a.adm.DescribeTopicConfigs(ctx, a.topic)
	if err != nil {
		return a.fail("describing the configuration of topic %q: %v", a.topic, err)
	}
	rc, err := rcs.On(a.topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return a.fail("describing the configuration of topic %q: %v", a.topic, err)
	}
	vals := map[string]string{}
	for _, c := range rc.Configs {
		vals[c.Key] = c.MaybeValue()
	}
	policy := vals["cleanup.policy"]
	if !strings.Contains(policy, "delete") || !strings.Contains(policy, "compact") {
		return a.fail("topic %q has cleanup.policy=%q: checkpoint-aligned cleanup needs compact,delete (set it with kafka-configs.sh --alter --add-config cleanup.policy=[compact,delete])", a.topic, policy)
	}
	for _, k := range []string{"retention.ms", "retention.bytes"} {
		if v, ok := vals[k]; !ok || v != "-1" {
			return a.fail("topic %q has %s=%q: Kafka would delete records above the cleanup boundary by age or size; set %s=-1 first", a.topic, k, v, k)
		}
	}
	return nil
}

// check validates everything before anything is written: the plan's topic,
// the topic's identity and configuration, the offsets, and the control
// topic's current record (boundaries only move forward).
func (a *applier) check(ctx context.Context) error {
	if a.topic != a.plan.Topic {
		return a.fail("--topic is %q, the plan is for topic %q", a.topic, a.plan.Topic)
	}
	if a.control == "" || a.control == a.topic {
		return a.fail("--control-topic must name a topic other than the action-state topic (the job's %s)", statestore.OptKafkaCleanupControlTopic)
	}
	if err := a.identity(ctx); err != nil {
		return err
	}
	if err := a.retentionSafe(ctx); err != nil {
		return err
	}
	cur, err := statestore.ReadControl(ctx, a.cl, a.control, a.topic)
	if err != nil {
		return a.fail("reading control topic %q: %v", a.control, err)
	}
	a.cur = cur
	if cur != nil {
		if cur.TopicID != a.plan.TopicID {
			return a.fail("control topic %q holds plan %s for topic id %s, this plan is for id %s: use a new control topic for a recreated topic",
				a.control, cur.PlanID, cur.TopicID, a.plan.TopicID)
		}
		for _, p := range slices.Sorted(maps.Keys(cur.Offsets)) {
			if off, ok := a.plan.Offsets[p]; !ok || off < cur.Offsets[p] {
				return a.fail("partition %d: the plan's boundary %s is below boundary %d of plan %s (%s) in %q; boundaries only move forward: plan from a newer checkpoint",
					p, offsetOrMissing(off, ok), cur.Offsets[p], cur.PlanID, cur.State, a.control)
			}
		}
	}
	starts, ends, err := a.offsets(ctx)
	if err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(a.plan.Offsets)) {
		b := a.plan.Offsets[p]
		if b > ends[p] {
			return a.fail("partition %d: boundary %d is beyond the log's end offset %d: the plan is not for this topic's log", p, b, ends[p])
		}
		if starts[p] > b {
			return a.fail("partition %d: the log starts at offset %d, above the plan's boundary %d: records the plan keeps were deleted already (by retention or another tool)", p, starts[p], b)
		}
	}
	return nil
}

func offsetOrMissing(off int64, ok bool) string {
	if !ok {
		return "(missing)"
	}
	return fmt.Sprint(off)
}

// offsets lists the start and end offsets of the plan's partitions.
func (a *applier) offsets(ctx context.Context) (starts, ends map[int32]int64, err error) {
	get := func(list func(context.Context, ...string) (kadm.ListedOffsets, error), what string) (map[int32]int64, error) {
		lo, err := list(ctx, a.topic)
		if err == nil {
			err = lo.Error()
		}
		if err != nil {
			return nil, a.fail("listing the %s offsets of topic %q: %v", what, a.topic, err)
		}
		out := map[int32]int64{}
		for p := range a.plan.Offsets {
			l, ok := lo.Lookup(a.topic, p)
			if !ok {
				return nil, a.fail("topic %q: no %s offset listed for partition %d", a.topic, what, p)
			}
			out[p] = l.Offset
		}
		return out, nil
	}
	if starts, err = get(a.adm.ListStartOffsets, "start"); err != nil {
		return nil, nil, err
	}
	ends, err = get(a.adm.ListEndOffsets, "end")
	return starts, ends, err
}

func (a *applier) record(state statestore.ControlState) *statestore.ControlRecord {
	return &statestore.ControlRecord{Version: statestore.ControlVersion, PlanID: a.plan.ID, Topic: a.plan.Topic,
		TopicID: a.plan.TopicID, State: state, Offsets: maps.Clone(a.plan.Offsets)}
}

// commit writes COMMITTED (unless the control topic holds this plan
// already) and reads it back.
func (a *applier) commit(ctx context.Context) error {
	if a.cur == nil || a.cur.PlanID != a.plan.ID {
		if err := statestore.WriteControl(ctx, a.cl, a.control, a.record(statestore.ControlCommitted)); err != nil {
			return a.fail("committing: %v", err)
		}
	}
	cur, err := statestore.ReadControl(ctx, a.cl, a.control, a.topic)
	if err != nil {
		return a.fail("reading back control topic %q: %v", a.control, err)
	}
	if cur == nil || cur.PlanID != a.plan.ID {
		other := "nothing"
		if cur != nil {
			other = "plan " + cur.PlanID
		}
		return a.fail("control topic %q holds %s after this plan was committed: another cleanup runs at the same time; run one at a time", a.control, other)
	}
	a.cur = cur
	return nil
}

// deleteRecords moves the log start of every partition below its boundary.
func (a *applier) deleteRecords(ctx context.Context) error {
	starts, _, err := a.offsets(ctx)
	if err != nil {
		return err
	}
	req := kadm.Offsets{}
	for p, b := range a.plan.Offsets {
		if b > starts[p] {
			req.Add(kadm.Offset{Topic: a.topic, Partition: p, At: b})
		}
	}
	if len(req) == 0 {
		return nil // done already (a retry)
	}
	resp, err := a.adm.DeleteRecords(ctx, req)
	if err != nil {
		return a.fail("DeleteRecords on topic %q: %v; the plan stays COMMITTED: run apply again", a.topic, err)
	}
	for _, p := range slices.Sorted(maps.Keys(a.plan.Offsets)) {
		r, ok := resp.Lookup(a.topic, p)
		if !ok {
			continue
		}
		if r.Err != nil {
			return a.fail("DeleteRecords on topic %q partition %d up to offset %d: %v; the plan stays COMMITTED: run apply again", a.topic, p, a.plan.Offsets[p], r.Err)
		}
	}
	return nil
}

// verify checks that every partition's log now starts at its boundary (or
// later, for an empty tail) and that the topic is still the plan's.
func (a *applier) verify(ctx context.Context) error {
	if err := a.identity(ctx); err != nil {
		return err
	}
	starts, _, err := a.offsets(ctx)
	if err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(a.plan.Offsets)) {
		if starts[p] < a.plan.Offsets[p] {
			return a.fail("after DeleteRecords, partition %d starts at offset %d, below the boundary %d; the plan stays COMMITTED: run apply again", p, starts[p], a.plan.Offsets[p])
		}
	}
	return nil
}

// markApplied writes APPLIED.
func (a *applier) markApplied(ctx context.Context) error {
	if err := statestore.WriteControl(ctx, a.cl, a.control, a.record(statestore.ControlApplied)); err != nil {
		return a.fail("recording APPLIED: %v; the records are deleted and the plan is COMMITTED: run apply again", err)
	}
	return nil
}
