package bridge

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/examples/orderscoring"
	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
)

var orderCols = func() []arrowio.Column {
	var out []arrowio.Column
	for _, c := range orderscoring.InputColumns() {
		out = append(out, arrowio.Column{Name: c.Name, Type: c.Type})
	}
	return out
}()

// Key groups of the test customers.
var custKG = map[string]int32{"alice": 5, "bob": 9, "carol": 100}

func order(customer string, id int64, amount float64) row {
	return row{kg: custKG[customer], key: customer, ts: 1000 + id, values: []any{customer, id, amount}}
}

// scored is the expected OUTPUT row of an order: _ts, then the agent's
// output columns.
func scored(customer string, id, orders int64, avg, risk float64) []any {
	return []any{1000 + id, customer, id, orders, avg, risk, risk >= 0.75}
}

func startOrders(t *testing.T) *fakeJVM {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0), orderscoring.Agent()}}, orderCols)
	return j
}

func TestServeOrderScoring(t *testing.T) {
	opts := map[string]string{"num-async-threads": "4", "go.batch.size": "1024", "kafkaBootstrapServers": "localhost:9092"}
	j := startOrders(t)
	rd := j.handshake(j.defaultOpen(orderscoring.AgentName, opts), nil, nil)
	if rd.Credit != initialCreditRows {
		t.Fatalf("READY credit %d, want %d", rd.Credit, initialCreditRows)
	}
	if _, err := arrowio.ReadSchemaMessage(rd.OutputSchema); err != nil {
		t.Fatalf("READY output_schema: %v", err)
	}
	risk := orderscoring.Risk

	// Batch 1, then a watermark: WM_ACK after all five outputs.
	j.data(order("alice", 1, 10), order("bob", 2, 50), order("alice", 3, 10), order("alice", 4, 100), order("bob", 5, 40))
	j.send(&Watermark{TS: 2000})
	c := j.collect(FrameWmAck)
	if !reflect.DeepEqual(c.wmAcks, []int64{2000}) {
		t.Fatalf("WM_ACKs %v", c.wmAcks)
	}
	got := byKey(c.rows, 1)
	want := map[string][][]any{
		"alice": {scored("alice", 1, 1, 10, 0.5), scored("alice", 3, 2, 10, 0), scored("alice", 4, 3, 40, 1)},
		"bob":   {scored("bob", 2, 1, 50, 0.5), scored("bob", 5, 2, 45, 0)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outputs before WM_ACK:\n got %v\nwant %v", got, want)
	}
	credit := c.credit

	// Batch 2, the barrier right after it, then batch 3 (after the cut).
	batch2 := []row{order("carol", 6, 7), order("alice", 7, 30), order("bob", 8, 45)}
	batch3 := []row{order("alice", 9, 10), order("carol", 10, 20)}
	j.data(batch2...)
	j.send(&Barrier{CheckpointID: 1})
	j.data(batch3...)
	c = j.collect(FrameSnapshot)
	beforeCut := c.rows
	credit += c.credit
	snap := c.snaps
	j.send(&CheckpointComplete{CheckpointID: 1})
	j.send(&EndInput{})
	c = j.collect(FrameEndAck)
	afterCut := c.rows
	credit += c.credit
	all := byKey(append(append([][]any{}, beforeCut...), afterCut...), 1)
	want = map[string][][]any{
		"alice": {scored("alice", 7, 4, 37.5, risk(30, []float64{10, 10, 100})), scored("alice", 9, 5, 32, risk(10, []float64{10, 10, 100, 30}))},
		"bob":   {scored("bob", 8, 3, 45, 0)},
		"carol": {scored("carol", 6, 1, 7, 0.5), scored("carol", 10, 2, 13.5, 1)},
	}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("outputs of batches 2 and 3:\n got %v\nwant %v", all, want)
	}
	// READY's credit and every grant, less the 10 rows sent, come to the
	// window: each finished input earned its row back, and the first DATA
	// opened the window.
	if rd.Credit+credit-10 != defaultCreditRows {
		t.Fatalf("credit granted %d after READY's %d, want %d (the window, plus one per finished input)", credit, rd.Credit, defaultCreditRows-rd.Credit+10)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatalf("Serve after CLOSE: %v", err)
	}

	// A fresh server restored from the snapshot, fed what came after the
	// barrier, produces exactly the outputs the first one produced after
	// the cut: order counts and averages continue.
	last := snap[len(snap)-1]
	mk, err := snapshot.DecodeMarker(last.Marker)
	if err != nil || mk.CheckpointID != 1 || mk.Backend != "none" {
		t.Fatalf("marker %+v, %v", mk, err)
	}
	var restore []*Restore
	for _, f := range snap {
		for _, s := range f.Sections {
			restore = append(restore, &Restore{KeyGroup: s.KeyGroup, Section: s.Section})
		}
	}
	if len(restore) != 3 {
		t.Fatalf("snapshot has %d sections, want 3 (key groups 5, 9, 100)", len(restore))
	}
	j2 := startOrders(t)
	rd2 := j2.handshake(j2.defaultOpen(orderscoring.AgentName, opts), restore, [][]byte{last.Marker})
	j2.data(batch3...)
	j2.send(&EndInput{})
	c = j2.collect(FrameEndAck)
	if g, w := sortedRows(c.rows), sortedRows(afterCut); !reflect.DeepEqual(g, w) {
		t.Fatalf("restored server:\n got %v\nwant %v", g, w)
	}
	// Credit: the restored inputs were not sent as DATA by this operator,
	// so only batch 3 earns credit (beyond the window's opening).
	if rd2.Credit+c.credit-int64(len(batch3)) != defaultCreditRows {
		t.Fatalf("restored server granted %d credit after READY's %d, want %d", c.credit, rd2.Credit, defaultCreditRows-rd2.Credit+int64(len(batch3)))
	}
	j2.send(&Close{})
	if err := j2.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeSlowActionDoesNotBlock: a 2 s action on one key delays neither
// the outputs of other keys nor the snapshot of a barrier sent meanwhile.
func TestServeSlowActionDoesNotBlock(t *testing.T) {
	const slow = 2 * time.Second
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(slow)}}, echoCols)
	opts := map[string]string{"num-async-threads": "4"}
	j.handshake(j.defaultOpen("echo", opts), nil, nil)
	start := time.Now()
	rows := []row{{kg: 1, key: "slow", values: []any{"slow", int64(0)}}}
	for i := 1; i <= 20; i++ {
		k := fmt.Sprintf("k%02d", i)
		rows = append(rows, row{kg: int32(i), key: k, values: []any{k, int64(i)}})
	}
	j.data(rows...)
	var got [][]any
	for len(got) < 20 {
		got = append(got, j.collect(FrameOutput).rows...)
	}
	if d := time.Since(start); d > slow/2 {
		t.Fatalf("outputs of other keys took %v; they waited for the slow action", d)
	}
	for _, r := range got {
		if r[1] == "slow" {
			t.Fatalf("slow row arrived early: %v", r)
		}
	}
	bStart := time.Now()
	j.send(&Barrier{CheckpointID: 7})
	c := j.collect(FrameSnapshot)
	if d := time.Since(bStart); d > slow/2 {
		t.Fatalf("SNAPSHOT took %v; the barrier waited for the slow action", d)
	}
	if len(c.rows) != 0 {
		t.Fatalf("unexpected rows before SNAPSHOT: %v", c.rows)
	}
	inFlight := 0
	for _, f := range c.snaps {
		for _, s := range f.Sections {
			sec, err := snapshot.DecodeSection(s.Section)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range sec.Keys {
				if k.InFlight != nil {
					inFlight++
					if string(k.Key) != "slow" {
						t.Fatalf("key %q in flight at the cut", k.Key)
					}
				}
			}
		}
	}
	if inFlight != 1 {
		t.Fatalf("%d keys in flight at the cut, want 1 (the slow one)", inFlight)
	}
	j.send(&EndInput{})
	c = j.collect(FrameEndAck)
	if len(c.rows) != 1 || c.rows[0][1] != "slow" {
		t.Fatalf("after END_INPUT: %v", c.rows)
	}
	if d := time.Since(start); d < slow {
		t.Fatalf("END_ACK after %v, before the slow action could finish", d)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeManyRows pushes more rows than the credit window through in
// several batches, waiting for credit like the operator does, and splits
// outputs across OUTPUT frames.
func TestServeManyRows(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}}, echoCols)
	opts := map[string]string{"go.credit.rows": "300", "go.output.rows": "128", "num-async-threads": "8"}
	rd := j.handshake(j.defaultOpen("echo", opts), nil, nil)
	credit := rd.Credit
	const total = 2000
	sent, received := 0, 0
	sum := int64(0)
	for received < total {
		if sent < total && credit > 0 {
			n := min(int(credit), 100, total-sent)
			rows := make([]row, n)
			for i := range rows {
				k := fmt.Sprintf("key%d", (sent+i)%37)
				rows[i] = row{kg: int32((sent + i) % 128), key: k, ts: int64(sent + i), values: []any{k, int64(sent + i)}}
			}
			j.data(rows...)
			sent += n
			credit -= int64(n)
			continue
		}
		f := j.next()
		switch f.Type {
		case FrameOutput:
			rows := decodeOutput(t, f.Payload)
			if len(rows) > 128 {
				t.Fatalf("OUTPUT of %d rows, over go.output.rows=128", len(rows))
			}
			for _, r := range rows {
				sum += r[2].(int64)
				if r[0] != r[2] {
					t.Fatalf("row %v: _ts is not the input's timestamp", r)
				}
			}
			received += len(rows)
		case FrameCredit:
			m, _ := DecodeControl(f)
			credit += m.(*Credit).Rows
		case FrameMetrics: // periodic, may come between any two frames
		default:
			t.Fatalf("unexpected %s", f.Type)
		}
	}
	if want := int64(total * (total - 1) / 2); sum != want {
		t.Fatalf("sum of values %d, want %d", sum, want)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}
