package bridge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
)

// holdAgent emits (k, v) of every input once gate is closed; its action
// waits for that on a worker.
func holdAgent(gate chan struct{}) *operator.Agent {
	return &operator.Agent{
		Name: "hold",
		Actions: []operator.Action{{Name: "hold", Listen: []string{operator.InputEventType},
			Fn: func(ctx *operator.Context, ev *operator.Event) error {
				<-gate
				in := ev.Input()
				return ctx.SendEvent(operator.NewOutput(in.Value(0), in.Value(1)))
			}}},
		Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}},
	}
}

var holdCols = []arrowio.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}, {Name: "p", Type: "STRING"}}

func holdRows(from, n, payload int) []row {
	p := strings.Repeat("p", payload)
	rows := make([]row, n)
	for i := range rows {
		k := "k" + string(rune('a'+(from+i)%26))
		rows[i] = row{kg: int32((from + i) % 128), key: k, ts: int64(from + i), values: []any{k, int64(from + i), p}}
	}
	return rows
}

// TestServeCreditWindowOpensAtFirstData: READY grants 1024 rows only;
// the first DATA of small rows opens the window to go.credit.rows at once,
// before any of its inputs has finished.
func TestServeCreditWindowOpensAtFirstData(t *testing.T) {
	gate := make(chan struct{})
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{holdAgent(gate)}}, holdCols)
	rd := j.handshake(j.defaultOpen("hold", nil), nil, nil)
	if rd.Credit != initialCreditRows {
		t.Fatalf("READY credit %d, want %d", rd.Credit, initialCreditRows)
	}
	// 64 rows, so that the frame's own bytes (schema, IPC framing) add
	// little to each row's share and the window is go.credit.rows, not
	// go.credit.bytes over the frame's bytes per row.
	const sent = 64
	j.data(holdRows(0, sent, 100)...)
	m := j.nextControl()
	c, ok := m.(*Credit)
	if !ok || c.Rows != defaultCreditRows-initialCreditRows {
		t.Fatalf("after the first DATA, with all its inputs held: %#v, want CREDIT of %d rows", m, defaultCreditRows-initialCreditRows)
	}
	close(gate)
	j.send(&EndInput{})
	got := j.collect(FrameEndAck)
	if len(got.rows) != sent || got.credit != sent {
		t.Fatalf("%d rows and %d rows of credit at the end, want %d and %d", len(got.rows), got.credit, sent, sent)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeCreditWindowInBytes: with rows of about 16 KiB and
// go.credit.bytes=256k, Go grants credit for about 256 KiB of rows, not for
// as many rows as finished: once all of READY's credit is spent and every
// input has finished, the operator may send about 15 rows, not 1024.
func TestServeCreditWindowInBytes(t *testing.T) {
	gate := make(chan struct{})
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{holdAgent(gate)}}, holdCols)
	rd := j.handshake(j.defaultOpen("hold", map[string]string{OptCreditBytes: "256k"}), nil, nil)
	if rd.Credit != initialCreditRows {
		t.Fatalf("READY credit %d, want %d", rd.Credit, initialCreditRows)
	}
	const payload = 16 << 10
	j.data(holdRows(0, 4, payload)...)
	for sent := 4; sent < initialCreditRows; sent += 255 { // READY's credit, spent in full
		j.data(holdRows(sent, min(255, initialCreditRows-sent), payload)...)
	}
	close(gate)
	j.send(&EndInput{})
	got := j.collect(FrameEndAck)
	if len(got.rows) != initialCreditRows {
		t.Fatalf("%d rows out, want %d", len(got.rows), initialCreditRows)
	}
	// A row is 16 KiB of payload plus its offsets, key and the batch's
	// framing: 256 KiB holds 15 of them.
	if got.credit < 14 || got.credit > 16 {
		t.Fatalf("credit %d rows after all %d inputs finished, want the 256 KiB window of about 15 rows", got.credit, initialCreditRows)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestCreditWindow: the window is go.credit.bytes over the row size, at
// least one row and at most go.credit.rows.
func TestCreditWindow(t *testing.T) {
	s := &settings{creditRows: 1000, creditBytes: 1 << 20}
	for _, c := range []struct{ rowBytes, want int64 }{
		{0, 1000}, {1, 1000}, {1024, 1000}, {2048, 512}, {1 << 20, 1}, {8 << 20, 1},
	} {
		if got := s.creditWindow(c.rowBytes); got != c.want {
			t.Errorf("creditWindow(%d) = %d, want %d", c.rowBytes, got, c.want)
		}
	}
	if got := (&settings{creditRows: defaultCreditRows}).initialCredit(); got != initialCreditRows {
		t.Errorf("initialCredit = %d, want %d", got, initialCreditRows)
	}
	if got := (&settings{creditRows: 10}).initialCredit(); got != 10 {
		t.Errorf("initialCredit with go.credit.rows=10 = %d, want 10", got)
	}
}

// TestServeCreditDoesNotLinger: credit for finished inputs goes out at
// once, ahead of their outputs, which wait for go.output.linger.ms (here a
// minute) to fill an OUTPUT batch; only the end of input flushes them.
func TestServeCreditDoesNotLinger(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}}, echoCols)
	rd := j.handshake(j.defaultOpen("echo", map[string]string{OptOutputLinger: "60000"}), nil, nil)
	j.data(row{kg: 1, key: "a", ts: 1, values: []any{"a", int64(1)}}, row{kg: 2, key: "b", ts: 2, values: []any{"b", int64(2)}},
		row{kg: 3, key: "c", ts: 3, values: []any{"c", int64(3)}})
	var credit int64
	for rd.Credit+credit-3 < defaultCreditRows { // the window opens, then the three inputs finish
		f := j.next()
		if f.Type == FrameMetrics {
			continue // every go.metrics.interval.ms; it moves nothing
		}
		if f.Type != FrameCredit {
			t.Fatalf("%s before the credit of the finished inputs (%d of %d rows granted)", f.Type, credit, defaultCreditRows-rd.Credit+3)
		}
		m, err := DecodeControl(f)
		if err != nil {
			t.Fatal(err)
		}
		credit += m.(*Credit).Rows
	}
	j.send(&EndInput{})
	got := j.collect(FrameEndAck)
	if len(got.rows) != 3 || got.credit != 0 {
		t.Fatalf("at the end: %d rows, %d more credit; want 3 rows, no more credit", len(got.rows), got.credit)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestServeCreditWindowOfOneRow: a window of one row (every row larger
// than go.credit.bytes) still moves. Once READY's credit is spent, the
// operator holds credit for one row at a time: it sends the row, waits for
// its credit, sends the next.
func TestServeCreditWindowOfOneRow(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}}, echoCols)
	credit := j.handshake(j.defaultOpen("echo", map[string]string{OptCreditBytes: "1"}), nil, nil).Credit
	mk := func(i int) row {
		k := fmt.Sprintf("k%d", i%50)
		return row{kg: int32(i % 128), key: k, ts: int64(i), values: []any{k, int64(i)}}
	}
	var first []row
	for i := int64(0); i < credit; i++ {
		first = append(first, mk(int(i)))
	}
	j.data(first...) // READY's credit, spent at once
	sent, out := len(first), 0
	for ; sent < len(first)+20; sent++ {
		credit = 0
		out += j.awaitCredit(&credit, 1)
		if credit != 1 {
			t.Fatalf("before row %d the operator got %d rows of credit; the window is one row", sent, credit)
		}
		j.data(mk(sent))
	}
	j.send(&EndInput{})
	got := j.collect(FrameEndAck)
	if out+len(got.rows) != sent || got.credit != 1 {
		t.Fatalf("%d rows out and %d credit at the end, want %d and 1", out+len(got.rows), got.credit, sent)
	}
	j.send(&Close{})
	if err := j.wait(); err != nil {
		t.Fatal(err)
	}
}
