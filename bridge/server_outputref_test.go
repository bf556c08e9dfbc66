package bridge

import (
	"fmt"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/operator"
)

// refAgent emits every input row as it is; its output columns are the
// input's (echoCols), so the rows can go back by reference. A row of key
// "slow" waits first.
func refAgent(slow time.Duration) *operator.Agent {
	return &operator.Agent{
		Name: "pass",
		Actions: []operator.Action{{Name: "pass", Listen: []string{operator.InputEventType}, Inline: slow == 0,
			Fn: func(ctx *operator.Context, ev *operator.Event) error {
				if slow > 0 && ev.Input().Value(0) == "slow" {
					time.Sleep(slow)
				}
				return ctx.EmitRow(ev.Input())
			}}},
		Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}},
	}
}

// TestServeOutputRef: with OPEN's output_refs, rows emitted as they are go
// back as OUTPUT_REF runs naming the input rows in DATA order, split at
// go.output.rows like OUTPUT; without it, as OUTPUT values.
func TestServeOutputRef(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("output_refs=", on), func(t *testing.T) {
			j := startServe(t, ServerConfig{Agents: []*operator.Agent{refAgent(0)}}, echoCols)
			open := j.defaultOpen("pass", map[string]string{OptOutputRows: "7"})
			open.OutputRefs = on
			rd := j.handshake(open, nil, nil)
			const batches, per = 4, 25
			if rd.Credit < batches*per {
				t.Fatalf("credit %d, the test needs %d", rd.Credit, batches*per)
			}
			for b := 0; b < batches; b++ {
				rows := make([]row, per)
				for i := range rows {
					n := int64(b*per + i)
					rows[i] = row{kg: int32(n % 128), key: fmt.Sprint("k", n), ts: 1000 + n, values: []any{fmt.Sprint("k", n), n}}
				}
				j.data(rows...)
			}
			j.send(&EndInput{})
			s := j.collect(FrameEndAck)
			if !on {
				if len(s.refs) != 0 || len(s.rows) != batches*per {
					t.Fatalf("without output_refs: %d refs, %d values; want 0 and %d", len(s.refs), len(s.rows), batches*per)
				}
				return
			}
			if s.keepFrom == 0 {
				t.Fatalf("keep_from never advanced, though the first batches were freed")
			}
			if len(s.rows) != 0 || len(s.refs) != batches*per {
				t.Fatalf("%d refs, %d values; want %d refs", len(s.refs), len(s.rows), batches*per)
			}
			for i, r := range s.refs {
				if r != int64(i) {
					t.Fatalf("ref %d is input row %d, want %d (refs %v)", i, r, i, s.refs)
				}
			}
			refFrames := 0
			for _, f := range s.frames {
				if f == FrameOutputRef {
					refFrames++
				}
			}
			if want := (batches*per + 6) / 7; refFrames < want {
				t.Fatalf("%d OUTPUT_REF frames, want at least %d (go.output.rows=7)", refFrames, want)
			}
			j.send(&Close{})
			if err := j.wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestServeOutputRefBeyondTheHorizon: a row emitted after credit for many
// later rows went out (a slow action) lies before keep_from, which the
// credit window bounds, so it goes as a value; the rows around it still go
// by reference, every one at or after keep_from, and nothing is lost.
func TestServeOutputRefBeyondTheHorizon(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{refAgent(time.Second)}}, echoCols)
	open := j.defaultOpen("pass", map[string]string{OptCreditRows: "8", OptOutputRows: "1", "num-async-threads": "2"})
	open.OutputRefs = true
	rd := j.handshake(open, nil, nil)
	s := &collected{credit: rd.Credit}
	sent := int64(0)
	const total = 200
	for sent < total {
		n := min(s.credit-sent, total-sent)
		if n <= 0 {
			j.collectInto(s, FrameCredit)
			continue
		}
		rows := make([]row, n)
		for i := range rows {
			k := fmt.Sprint("k", sent)
			if sent == 0 {
				k = "slow"
			}
			rows[i] = row{kg: int32(sent % 128), key: k, ts: 1000 + sent, values: []any{k, sent}}
			sent++
		}
		j.data(rows...)
	}
	j.send(&EndInput{})
	j.collectInto(s, FrameEndAck)
	if len(s.rows) != 1 || s.rows[0][1] != "slow" || s.rows[0][0] != int64(1000) {
		t.Fatalf("values %v; want only the slow row [1000 slow 0]", s.rows)
	}
	if s.keepFrom <= 1 {
		t.Fatalf("keep_from %d: the horizon did not pass the slow row", s.keepFrom)
	}
	if len(s.refs) != total-1 {
		t.Fatalf("%d refs, want %d", len(s.refs), total-1)
	}
	seen := map[int64]bool{}
	for _, r := range s.refs {
		if r < 1 || r >= total || seen[r] {
			t.Fatalf("ref %d is out of range or repeated", r)
		}
		seen[r] = true
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveBatchesOldest: the horizon follows the oldest batch not freed,
// whatever order the batches are freed in, and passes all of them once
// every one is.
func TestLiveBatchesOldest(t *testing.T) {
	var q liveBatches
	refs := []*batchRef{{seq: 0}, {seq: 10}, {seq: 30}}
	for i, r := range refs {
		q.add(r, []int{10, 20, 5}[i])
	}
	if got := q.oldest(); got != 0 {
		t.Fatalf("oldest %d, want 0", got)
	}
	refs[1].freed.Store(true)
	if got := q.oldest(); got != 0 {
		t.Fatalf("with the middle batch freed: oldest %d, want 0", got)
	}
	refs[0].freed.Store(true)
	if got := q.oldest(); got != 30 {
		t.Fatalf("with the first two freed: oldest %d, want 30", got)
	}
	refs[2].freed.Store(true)
	if got := q.oldest(); got != 35 || len(q.refs) != 0 {
		t.Fatalf("all freed: oldest %d with %d batches listed, want 35 and none", got, len(q.refs))
	}
}
