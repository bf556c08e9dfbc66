package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// Cleanup against kfake and, when FLINKGO_KAFKA holds a broker's address
// (testdata/kafka/kafka.sh start), against the real broker.
func forEachBroker(t *testing.T, fn func(t *testing.T, addr string)) {
	t.Run("kfake", func(t *testing.T) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		fn(t, c.ListenAddrs()[0])
	})
	t.Run("real", func(t *testing.T) {
		addr := os.Getenv("FLINKGO_KAFKA")
		if addr == "" {
			t.Skip("FLINKGO_KAFKA is not set: start a broker with testdata/kafka/kafka.sh start and set FLINKGO_KAFKA to the address it prints")
		}
		fn(t, addr)
	})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fixture is an action-state topic of 2 partitions (key group g on
// partition g of max parallelism 2) holding 160 records on partition 0
// (offsets 0..159) and 10 on partition 1, plus the markers of two
// checkpoints: C0 needs partition 0 from offset 100, C1 from 150.
type fixture struct {
	addr, topic, control string
	id                   snapshot.UUID
	c0, c1               *snapshot.Marker
}

func newFixture(t *testing.T, addr string) *fixture {
	t.Helper()
	f := &fixture{addr: addr, topic: fmt.Sprintf("flinkgo-cleanup-%s-%d", strings.ReplaceAll(t.Name(), "/", "."), time.Now().UnixNano()%1e9)}
	f.control = f.topic + ".control"
	k := f.open(t)
	defer k.Close()
	put := func(kg int32, n int) {
		for i := 0; i < n; i++ {
			r := &statestore.Record{Key: statestore.RecordKey{KeyGroup: kg, KeyHash: statestore.HashKey([]byte(fmt.Sprint("k", i))),
				Seq: 0, EventID: snapshot.UUID{byte(i)}, Action: "act"}, Status: statestore.StatusCompleted}
			if err := k.Put(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(0, 160)
	put(1, 10)
	if _, err := k.Flush(); err != nil {
		t.Fatal(err)
	}
	f.id, _ = k.TopicID()
	f.c0 = &snapshot.Marker{Version: snapshot.MarkerVersion, Backend: "kafka", Topic: f.topic, TopicID: f.id, CheckpointID: 10, Offsets: map[int32]int64{0: 100, 1: 4}}
	f.c1 = &snapshot.Marker{Version: snapshot.MarkerVersion, Backend: "kafka", Topic: f.topic, TopicID: f.id, CheckpointID: 11, Offsets: map[int32]int64{0: 150, 1: 6}}
	return f
}

func (f *fixture) open(t *testing.T, extra ...statestore.KafkaOpt) *statestore.Kafka {
	t.Helper()
	k, err := statestore.NewKafka(testCtx(t), append([]statestore.KafkaOpt{
		statestore.KafkaBootstrapServers(f.addr), statestore.KafkaTopic(f.topic), statestore.KafkaNumPartitions(2),
		statestore.KafkaKeyGroups(snapshot.KeyGroupRange{Start: 0, End: 1}, 2), statestore.KafkaLogger(quiet),
	}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

// recoverWith restores a fresh store (with the control topic) from markers.
func (f *fixture) recoverWith(t *testing.T, ms ...*snapshot.Marker) error {
	k := f.open(t, statestore.KafkaCleanupControlTopic(f.control))
	defer k.Close()
	var list []snapshot.Marker
	for _, m := range ms {
		list = append(list, *m)
	}
	return k.Recover(testCtx(t), list)
}

// markersFile writes markers in MarkerExport's format.
func markersFile(t *testing.T, ms ...*snapshot.Marker) string {
	var b bytes.Buffer
	for _, m := range ms {
		enc, err := snapshot.EncodeMarker(m)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "{\"marker\":%q}\n", base64.StdEncoding.EncodeToString(enc))
	}
	name := filepath.Join(t.TempDir(), "markers.jsonl")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func (f *fixture) cli(t *testing.T, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(testCtx(t), args, strings.NewReader(""), &out)
	return out.String(), err
}

func (f *fixture) plan(t *testing.T, ms ...*snapshot.Marker) (string, *Plan) {
	t.Helper()
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if _, err := f.cli(t, "cleanup", "plan", "--markers", markersFile(t, ms...), "--bootstrap", f.addr, "--out", planFile); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	return planFile, p
}

func (f *fixture) apply(t *testing.T, planFile string) (string, error) {
	return f.cli(t, "cleanup", "apply", "--plan", planFile, "--bootstrap", f.addr, "--topic", f.topic, "--control-topic", f.control)
}

func (f *fixture) starts(t *testing.T) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lo, err := kadm.NewClient(cl).ListStartOffsets(testCtx(t), f.topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

func (f *fixture) controlRecord(t *testing.T) *statestore.ControlRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rec, err := statestore.ReadControl(testCtx(t), cl, f.control, f.topic)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestCleanupDesignExample is the example of the design: checkpoint C0
// needs partition 0 from offset 100, C1 from 150. After C1's plan is
// applied, recovery from C1 works and recovery from C0 fails, naming both
// offsets.
func TestCleanupDesignExample(t *testing.T) {
	forEachBroker(t, func(t *testing.T, addr string) {
		f := newFixture(t, addr)
		// Before any cleanup, with the option set, recovery is refused.
		if err := f.recoverWith(t, f.c1); err == nil || !strings.Contains(err.Error(), "holds no COMMITTED cleanup boundary") {
			t.Fatalf("recovery before any cleanup: %v", err)
		}
		planFile, p := f.plan(t, f.c1)
		if p.Offsets[0] != 150 || p.Offsets[1] != 6 || p.Partitions != 2 || p.CheckpointID != 11 {
			t.Fatalf("plan %s", p.Encode())
		}
		out, err := f.apply(t, planFile)
		if err != nil {
			t.Fatal(err)
		}
		if want := "Cleanup plan " + p.ID + " is APPLIED\n"; out != want {
			t.Fatalf("apply printed %q, want %q", out, want)
		}
		if s := f.starts(t); s[0] != 150 || s[1] != 6 {
			t.Fatalf("log starts %v, want partition 0 at 150 and 1 at 6", s)
		}
		if rec := f.controlRecord(t); rec == nil || rec.State != statestore.ControlApplied || rec.PlanID != p.ID {
			t.Fatalf("control record %+v", rec)
		}
		if err := f.recoverWith(t, f.c1); err != nil {
			t.Fatalf("recovery from C1 after its cleanup: %v", err)
		}
		err = f.recoverWith(t, f.c0)
		if err == nil || !strings.Contains(err.Error(), "offset 100") || !strings.Contains(err.Error(), "boundary 150") ||
			!strings.Contains(err.Error(), "partition 0") {
			t.Fatalf("recovery from C0 after C1's cleanup: %v; want an error naming partition 0, offsets 100 and 150", err)
		}
		t.Logf("recovery from C0: %v", err)
		// Applying again is a no-op; an older plan (C0) cannot move the boundary back.
		if out, err := f.apply(t, planFile); err != nil || !strings.Contains(out, "is APPLIED") {
			t.Fatalf("second apply: %q %v", out, err)
		}
		old, _ := f.plan(t, f.c0)
		if _, err := f.apply(t, old); err == nil || !strings.Contains(err.Error(), "only move forward") {
			t.Fatalf("applying C0's plan after C1's: %v", err)
		}
	})
}

// TestCleanupInterruptedAfterCommit: an apply that stopped after writing
// COMMITTED (before DeleteRecords) is finished by running it again.
func TestCleanupInterruptedAfterCommit(t *testing.T) {
	forEachBroker(t, func(t *testing.T, addr string) {
		f := newFixture(t, addr)
		planFile, p := f.plan(t, f.c1)
		cl, err := kgo.NewClient(kgo.SeedBrokers(f.addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		a := newApplier(cl, p, f.topic, f.control, io.Discard)
		if err := a.check(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if err := a.commit(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		// Interrupted here: COMMITTED, nothing deleted.
		if rec := f.controlRecord(t); rec == nil || rec.State != statestore.ControlCommitted {
			t.Fatalf("control record after commit: %+v", rec)
		}
		if s := f.starts(t); s[0] != 0 {
			t.Fatalf("log starts %v before DeleteRecords", s)
		}
		// While COMMITTED, recovery below the boundary is refused already.
		if err := f.recoverWith(t, f.c0); err == nil || !strings.Contains(err.Error(), "COMMITTED") {
			t.Fatalf("recovery from C0 while C1's plan is COMMITTED: %v", err)
		}
		out, err := f.apply(t, planFile)
		if err != nil || out != "Cleanup plan "+p.ID+" is APPLIED\n" {
			t.Fatalf("retry: %q %v", out, err)
		}
		if s := f.starts(t); s[0] != 150 || s[1] != 6 {
			t.Fatalf("log starts %v after the retry", s)
		}
		if rec := f.controlRecord(t); rec == nil || rec.State != statestore.ControlApplied || rec.PlanID != p.ID {
			t.Fatalf("control record after the retry %+v", rec)
		}
	})
}

// TestCleanupApplyRefuses: a plan for another topic identity or partition
// count, an unsafe topic configuration, and an edited plan are refused
// before anything is written.
func TestCleanupApplyRefuses(t *testing.T) {
	forEachBroker(t, func(t *testing.T, addr string) {
		f := newFixture(t, addr)
		planFile, p := f.plan(t, f.c1)
		write := func(p *Plan) string {
			p.ID = p.digest()
			name := filepath.Join(t.TempDir(), "p.json")
			if err := os.WriteFile(name, p.Encode(), 0o644); err != nil {
				t.Fatal(err)
			}
			return name
		}
		other := *p
		other.TopicID = statestore.TopicIDString(snapshot.UUID{7})
		if _, err := f.apply(t, write(&other)); err == nil || !strings.Contains(err.Error(), "recreated") {
			t.Errorf("another topic id: %v", err)
		}
		parts := *p
		parts.Partitions = 3
		if _, err := f.apply(t, write(&parts)); err == nil || !strings.Contains(err.Error(), "3") || !strings.Contains(err.Error(), "partitions") {
			t.Errorf("another partition count: %v", err)
		}
		beyond := *p
		beyond.Offsets = map[int32]int64{0: 999, 1: 6}
		if _, err := f.apply(t, write(&beyond)); err == nil || !strings.Contains(err.Error(), "beyond the log's end offset 160") {
			t.Errorf("boundary beyond the end: %v", err)
		}
		b, _ := os.ReadFile(planFile)
		edited := filepath.Join(t.TempDir(), "edited.json")
		_ = os.WriteFile(edited, bytes.Replace(b, []byte(`"0":150`), []byte(`"0":155`), 1), 0o644)
		if _, err := f.apply(t, edited); err == nil || !strings.Contains(err.Error(), "edited") {
			t.Errorf("edited plan: %v", err)
		}
		if _, err := f.cli(t, "cleanup", "apply", "--plan", planFile, "--bootstrap", f.addr, "--topic", "other", "--control-topic", f.control); err == nil || !strings.Contains(err.Error(), "--topic") {
			t.Errorf("another --topic: %v", err)
		}
		if rec := f.controlRecord(t); rec != nil {
			t.Fatalf("a refused apply wrote %+v", rec)
		}
		// A topic that deletes by age is refused.
		cl, _ := kgo.NewClient(kgo.SeedBrokers(f.addr))
		defer cl.Close()
		if _, err := kadm.NewClient(cl).AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("604800000")}}, f.topic); err != nil {
			t.Fatal(err)
		}
		if _, err := f.apply(t, planFile); err == nil || !strings.Contains(err.Error(), "retention.ms") {
			t.Errorf("retention.ms set: %v", err)
		}
	})
}
