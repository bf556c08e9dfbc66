package bridge

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// The bridge with actionStateStoreBackend=kafka, against kfake and, when
// FLINKGO_KAFKA holds a broker's address (testdata/kafka/kafka.sh start),
// against the real broker.

type kafkaBroker struct {
	addr string
	stop func() // makes the broker unreachable; nil: cannot
}

func forEachBroker(t *testing.T, fn func(t *testing.T, b *kafkaBroker)) {
	t.Run("kfake", func(t *testing.T) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		fn(t, &kafkaBroker{addr: c.ListenAddrs()[0], stop: c.Close})
	})
	t.Run("real", func(t *testing.T) {
		addr := os.Getenv("FLINKGO_KAFKA")
		if addr == "" {
			t.Skip("FLINKGO_KAFKA is not set: start a broker with testdata/kafka/kafka.sh start and set FLINKGO_KAFKA to the address it prints")
		}
		fn(t, &kafkaBroker{addr: addr})
	})
}

func kafkaTopicName(t *testing.T) string {
	return fmt.Sprintf("flinkgo-bridge-%s-%d", strings.NewReplacer("/", ".", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
}

func kafkaOpts(b *kafkaBroker, topic string) map[string]string {
	return map[string]string{
		"actionStateStoreBackend":            "kafka",
		"kafkaBootstrapServers":              b.addr,
		"kafkaActionStateTopic":              topic,
		"kafkaActionStateTopicNumPartitions": "4",
		"kafka.delivery.timeout.ms":          "2000",
		"num-async-threads":                  "4",
	}
}

// countingAgent echoes (k, v); bodies counts executions of its action's
// body, calls executions of its durable call's function.
func countingAgent(bodies, calls *atomic.Int64) *operator.Agent {
	return countingAgentWith(bodies, calls, nil)
}

// countingAgentWith is countingAgent whose action calls afterCall (if not
// nil) after its durable call and fails with its error.
func countingAgentWith(bodies, calls *atomic.Int64, afterCall func() error) *operator.Agent {
	return &operator.Agent{
		Name: "echo",
		Actions: []operator.Action{{Name: "echo", Listen: []string{operator.InputEventType},
			Fn: func(ctx *operator.Context, ev *operator.Event) error {
				bodies.Add(1)
				in := ev.Input()
				k, v := in.Value(0), in.Value(1)
				got, err := ctx.Durable("double", v, func() (any, error) { calls.Add(1); return v.(int64) * 2, nil })
				if err != nil {
					return err
				}
				if got != v.(int64)*2 {
					return fmt.Errorf("durable result %v for %v", got, v)
				}
				if afterCall != nil {
					if err := afterCall(); err != nil {
						return err
					}
				}
				return ctx.SendEvent(operator.NewOutput(k, v))
			}}},
		Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}},
	}
}

func markerOf(t *testing.T, b []byte) *snapshot.Marker {
	t.Helper()
	m, err := snapshot.DecodeMarker(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestKafkaStoreRestoreReplaysCompleted: inputs that completed after the
// restored checkpoint's cut are replayed from Kafka after the restore (the
// source sends them again): their bodies and durable calls do not run
// again, their outputs are the same. The recovered records of inputs that
// finished before the cut are pruned (MarkDoneBelow), so the marker moves
// past them.
func TestKafkaStoreRestoreReplaysCompleted(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b *kafkaBroker) {
		topic := kafkaTopicName(t)
		var bodies, calls atomic.Int64
		agent := countingAgent(&bodies, &calls)
		in := func(v int64) row { return row{kg: 5, key: "a", ts: v, values: []any{"a", v}} }

		j := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		j.handshake(j.defaultOpen("echo", kafkaOpts(b, topic)), nil, nil)
		j.data(in(1))
		j.collect(FrameOutput)
		j.send(&Barrier{CheckpointID: 1})
		restore, marker1 := restoreFrames(j.collect(FrameSnapshot).snaps)
		m1 := markerOf(t, marker1)
		if m1.Backend != "kafka" || m1.Topic != topic || m1.TopicID.IsZero() || m1.CheckpointID != 1 || len(m1.Offsets) != 4 {
			t.Fatalf("marker of checkpoint 1: %+v", m1)
		}
		j.data(in(2), in(3))
		first := j.collect(FrameOutput).rows
		for len(first) < 2 {
			first = append(first, j.collect(FrameOutput).rows...)
		}
		j.send(&Barrier{CheckpointID: 2}) // flushes the records of inputs 2 and 3; checkpoint 2 never completes
		j.collect(FrameSnapshot)
		j.send(&Close{})
		if err := j.wait(); err != nil {
			t.Fatal(err)
		}
		if bodies.Load() != 3 || calls.Load() != 3 {
			t.Fatalf("first run: %d bodies, %d calls, want 3 each", bodies.Load(), calls.Load())
		}

		// Restore from checkpoint 1; the source sends inputs 2 and 3 again.
		j2 := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		j2.handshake(j2.defaultOpen("echo", kafkaOpts(b, topic)), restore, [][]byte{marker1})
		j2.data(in(2), in(3))
		again := j2.collect(FrameOutput).rows
		for len(again) < 2 {
			again = append(again, j2.collect(FrameOutput).rows...)
		}
		if !reflect.DeepEqual(again, first) {
			t.Fatalf("replayed outputs %v, first run %v", again, first)
		}
		if bodies.Load() != 3 || calls.Load() != 3 {
			t.Fatalf("after the restore: %d bodies, %d calls, want still 3 each (replayed from Kafka)", bodies.Load(), calls.Load())
		}
		part := statestore.Partition(5, 4)
		// Input 1 finished before cut 1 (MarkDoneBelow), inputs 2 and 3
		// after it (MarkInputDone): checkpoint 2 completing prunes all three,
		// so a later marker starts past their records.
		deadline := time.Now().Add(10 * time.Second)
		for cp := int64(3); ; cp += 2 {
			j2.send(&Barrier{CheckpointID: cp})
			j2.collect(FrameSnapshot)
			j2.send(&CheckpointComplete{CheckpointID: cp})
			j2.send(&Barrier{CheckpointID: cp + 1})
			_, mk := restoreFrames(j2.collect(FrameSnapshot).snaps)
			m := markerOf(t, mk)
			if m.Offsets[part] >= 2 { // input 1 wrote offsets 0 (call recorded) and 1 (completed)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("marker %v still holds partition %d at offset %d: recovered records were not pruned", m.Offsets, part, m.Offsets[part])
			}
		}
		j2.send(&Close{})
		if err := j2.wait(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestKafkaStoreRecoverRefused: a marker the store cannot honour is ERROR
// restore_failed naming the partition and the offsets.
func TestKafkaStoreRecoverRefused(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b *kafkaBroker) {
		topic := kafkaTopicName(t)
		var bodies, calls atomic.Int64
		agent := countingAgent(&bodies, &calls)
		j := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		j.handshake(j.defaultOpen("echo", kafkaOpts(b, topic)), nil, nil)
		j.send(&Barrier{CheckpointID: 1})
		_, mk := restoreFrames(j.collect(FrameSnapshot).snaps)
		j.send(&Close{})
		if err := j.wait(); err != nil {
			t.Fatal(err)
		}
		m := markerOf(t, mk)
		m.Offsets[2] = 777 // beyond the end of partition 2
		bad, err := snapshot.EncodeMarker(m)
		if err != nil {
			t.Fatal(err)
		}
		j2 := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		j2.send(j2.defaultOpen("echo", kafkaOpts(b, topic)))
		j2.nextControl() // HELLO
		j2.send(&RestoreDone{Markers: [][]byte{bad}})
		j2.expectError(CodeRestoreFailed, "partition 2", "777", topic)
	})
}

// TestKafkaStoreFailureFailsTheTask: when Kafka goes away, the task fails
// with ERROR store_failed; nothing goes on silently.
func TestKafkaStoreFailureFailsTheTask(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b *kafkaBroker) {
		if b.stop == nil {
			t.Skip("the real broker is stopped by the Java end-to-end test and statestore's suite (FLINKGO_KAFKA_SCRIPT)")
		}
		var bodies, calls atomic.Int64
		j := startServe(t, ServerConfig{Agents: []*operator.Agent{countingAgent(&bodies, &calls)}}, echoCols)
		j.handshake(j.defaultOpen("echo", kafkaOpts(b, kafkaTopicName(t))), nil, nil)
		b.stop()
		j.data(row{kg: 5, key: "a", ts: 1, values: []any{"a", int64(1)}})
		j.send(&Barrier{CheckpointID: 1})
		// Detection takes the delivery timeout (2 s) and more on a loaded machine.
		j.readWait = 60 * time.Second
		j.expectError(CodeStoreFailed, "Kafka action-state write failed")
	})
}

// TestKafkaStoreActionAtTheCutReusesItsCall: an action running at a barrier
// made a durable call, whose record the store held back (it waits for the
// action's completion, kafka.running.record.linger.ms); the barrier's flush
// writes it and the marker covers it. The action then fails, so no
// completion is written. After a restore from that checkpoint the action
// runs again and takes the call's outcome from its record: the call does
// not run twice, and the metrics count one re-run and one replayed call.
func TestKafkaStoreActionAtTheCutReusesItsCall(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b *kafkaBroker) {
		topic := kafkaTopicName(t)
		var bodies, calls atomic.Int64
		firstRun := make(chan struct{}) // closed: the first run's action fails
		var failing atomic.Bool
		failing.Store(true)
		agent := countingAgentWith(&bodies, &calls, func() error {
			if !failing.Load() {
				return nil
			}
			<-firstRun
			return operator.Permanent(errors.New("the first run fails after its durable call"))
		})
		opts := kafkaOpts(b, topic)
		opts[statestore.OptKafkaRunningLingerMs] = "60000" // only the barrier's flush can write the held record
		opts[OptMetrics] = "3600000"
		in := row{kg: 5, key: "a", ts: 1, values: []any{"a", int64(21)}}

		j := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		j.handshake(j.defaultOpen("echo", opts), nil, nil)
		j.data(in)
		for deadline := time.Now().Add(10 * time.Second); calls.Load() == 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the durable call did not run")
			}
		}
		j.send(&Barrier{CheckpointID: 1})
		restore, marker := restoreFrames(j.collect(FrameSnapshot).snaps)
		close(firstRun)
		j.expectError(CodeActionFailed, "the first run fails")
		if bodies.Load() != 1 || calls.Load() != 1 {
			t.Fatalf("first run: %d bodies, %d calls, want 1 each", bodies.Load(), calls.Load())
		}

		failing.Store(false)
		j2 := startServe(t, ServerConfig{Agents: []*operator.Agent{agent}}, echoCols)
		j2.handshake(j2.defaultOpen("echo", opts), restore, [][]byte{marker})
		got := j2.collectRows(1).rows
		if len(got) != 1 || !reflect.DeepEqual(got[0][1:], []any{"a", int64(21)}) {
			t.Fatalf("output after the restore: %v, want one row [_ts a 21]", got)
		}
		if bodies.Load() != 2 || calls.Load() != 1 {
			t.Fatalf("after the restore: %d bodies, %d calls; want the body run again and the call not", bodies.Load(), calls.Load())
		}
		j2.send(&Barrier{CheckpointID: 2})
		j2.collect(FrameSnapshot)
		m := j2.nextMetrics("SNAPSHOT(2) after the restore")
		if m[MetricActionsRerun] != 1 || m[MetricCallsReplayed] != 1 || m[MetricActionsReplayed] != 0 {
			t.Errorf("metrics after the restore: %v; want actions_rerun 1, calls_replayed 1, actions_replayed 0", m)
		}
		j2.send(&Close{})
		if err := j2.wait(); err != nil {
			t.Fatal(err)
		}
	})
}
