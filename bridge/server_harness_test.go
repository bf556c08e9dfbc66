package bridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
)

// fakeJVM plays the Flink operator's side of the protocol over a real Unix
// socket, against a Serve running in the test process.
type fakeJVM struct {
	t        testing.TB
	conn     net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	in       *arrowio.InputBuilder
	done     chan error // Serve's result
	cols     []arrowio.Column
	token    string
	readWait time.Duration // per-frame read deadline; 0 means 10 s
	open     Open
}

// testSocketPath returns a short socket path (sun_path holds 108 bytes).
func testSocketPath(t testing.TB) string {
	dir, err := os.MkdirTemp("", "fg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

// startServe listens, runs Serve on the dialled side and accepts.
func startServe(t testing.TB, cfg ServerConfig, inputCols []arrowio.Column) *fakeJVM {
	t.Helper()
	path := testSocketPath(t)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if cfg.Token == "" {
		cfg.Token = strings.Repeat("ab", 32)
	}
	j := &fakeJVM{t: t, done: make(chan error, 1), cols: inputCols, token: cfg.Token}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		c, err := net.Dial("unix", path)
		if err != nil {
			j.done <- err
			return
		}
		j.done <- Serve(ctx, c, cfg)
	}()
	if j.conn, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.conn.Close() })
	j.br, j.bw = bufio.NewReader(j.conn), bufio.NewWriter(j.conn)
	if j.in, err = arrowio.NewInputBuilder(inputCols, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.in.Release)
	return j
}

func (j *fakeJVM) writeRaw(b []byte) {
	j.t.Helper()
	if _, err := j.bw.Write(b); err != nil {
		j.t.Fatal(err)
	}
	if err := j.bw.Flush(); err != nil {
		j.t.Fatal(err)
	}
}

func (j *fakeJVM) send(m ControlFrame) {
	j.t.Helper()
	j.writeRaw(AppendControlFrame(nil, m))
}

// next reads the next frame from Go (deadline j.readWait, default 10 s).
func (j *fakeJVM) next() Frame {
	j.t.Helper()
	wait := j.readWait
	if wait == 0 {
		wait = 10 * time.Second
	}
	_ = j.conn.SetReadDeadline(time.Now().Add(wait))
	f, err := ReadFrame(j.br, 0, nil)
	if err != nil {
		j.t.Fatalf("reading from Go: %v", err)
	}
	return f
}

func (j *fakeJVM) nextControl() ControlFrame {
	j.t.Helper()
	f := j.next()
	m, err := DecodeControl(f)
	if err != nil {
		j.t.Fatalf("decoding %s from Go: %v", f.Type, err)
	}
	return m
}

// expectError reads frames up to ERROR and checks its code and that its
// message holds every part; then Serve must have failed with that code.
func (j *fakeJVM) expectError(code ErrorCode, parts ...string) {
	j.t.Helper()
	for {
		f := j.next()
		if f.Type != FrameError {
			continue
		}
		m, err := DecodeControl(f)
		if err != nil {
			j.t.Fatal(err)
		}
		e := m.(*ErrorFrame)
		j.t.Logf("ERROR %s: %s", e.Code, e.Message)
		if e.Code != string(code) {
			j.t.Fatalf("ERROR code %q (%s), want %q", e.Code, e.Message, code)
		}
		for _, p := range parts {
			if !strings.Contains(e.Message, p) {
				j.t.Fatalf("ERROR message %q does not mention %q", e.Message, p)
			}
		}
		break
	}
	j.conn.Close() // as the operator does after an ERROR
	err := j.wait()
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Code != code {
		j.t.Fatalf("Serve returned %v, want a *ProtocolError with code %s", err, code)
	}
}

// wait returns Serve's result (10 s at most).
func (j *fakeJVM) wait() error {
	j.t.Helper()
	select {
	case err := <-j.done:
		return err
	case <-time.After(10 * time.Second):
		j.t.Fatal("Serve did not return")
		return nil
	}
}

func (j *fakeJVM) defaultOpen(agent string, opts map[string]string) *Open {
	return &Open{Agent: agent, Options: opts, JobID: "job-1", OperatorID: "op-1", Subtask: 0,
		Parallelism: 1, MaxParallelism: 128, KeyGroupStart: 0, KeyGroupEnd: 127,
		InputSchema: j.in.SchemaMessage()}
}

// handshake reads HELLO, sends OPEN, the restore frames and RESTORE_DONE,
// and reads READY.
func (j *fakeJVM) handshake(open *Open, restore []*Restore, markers [][]byte) *Ready {
	j.t.Helper()
	h, ok := j.nextControl().(*Hello)
	if !ok || h.Token != j.token || h.Version != ProtocolVersion || h.Runtime != Runtime {
		j.t.Fatalf("HELLO: %+v", h)
	}
	j.open = *open
	j.send(open)
	for _, r := range restore {
		j.send(r)
	}
	j.send(&RestoreDone{Markers: markers})
	rd, ok := j.nextControl().(*Ready)
	if !ok {
		j.t.Fatalf("want READY")
	}
	return rd
}

// row is one input row for the fake JVM.
type row struct {
	kg     int32
	key    string
	ts     int64
	values []any
}

func (j *fakeJVM) data(rows ...row) {
	j.t.Helper()
	for _, r := range rows {
		if err := j.in.Append(r.kg, []byte(r.key), r.ts, true, r.values); err != nil {
			j.t.Fatal(err)
		}
	}
	b, err := j.in.Flush()
	if err != nil {
		j.t.Fatal(err)
	}
	j.writeRaw(append(AppendFrameHeader(nil, FrameData, len(b)), b...))
}

// awaitCredit reads frames until *credit reaches min, adding every CREDIT
// to it, and returns how many OUTPUT rows came meanwhile (other frames are
// skipped).
func (j *fakeJVM) awaitCredit(credit *int64, min int64) (outRows int) {
	j.t.Helper()
	for *credit < min {
		f := j.next()
		switch f.Type {
		case FrameCredit:
			m, err := DecodeControl(f)
			if err != nil {
				j.t.Fatal(err)
			}
			*credit += m.(*Credit).Rows
		case FrameOutput:
			outRows += len(decodeOutput(j.t, f.Payload))
		}
	}
	return outRows
}

// collected is what the fake JVM read from Go.
type collected struct {
	rows    [][]any // OUTPUT rows, in order, _ts first
	credit  int64
	frames  []FrameType
	snaps   []*Snapshot // SNAPSHOT frames of the last collect
	wmAcks  []int64
	outputs int        // OUTPUT frames
	metrics []*Metrics // METRICS frames
	// With output_refs: the input row numbers OUTPUT_REF sent, in order,
	// and the last keep_from (checked never to go back, and to precede
	// every reference).
	refs     []int64
	keepFrom int64
}

// collect reads frames until one of type until (for SNAPSHOT: the last
// part) and returns everything read.
func (j *fakeJVM) collect(until FrameType) *collected {
	j.t.Helper()
	c := &collected{}
	j.collectInto(c, until)
	return c
}

// collectInto is collect adding to c.
func (j *fakeJVM) collectInto(c *collected, until FrameType) {
	j.t.Helper()
	for {
		f := j.next()
		c.frames = append(c.frames, f.Type)
		switch f.Type {
		case FrameOutput:
			c.outputs++
			c.rows = append(c.rows, decodeOutput(j.t, f.Payload)...)
		case FrameError:
			m, _ := DecodeControl(f)
			j.t.Fatalf("ERROR from Go: %+v", m)
		default:
			m, err := DecodeControl(f)
			if err != nil {
				j.t.Fatal(err)
			}
			switch m := m.(type) {
			case *Credit:
				c.credit += m.Rows
				if m.KeepFrom < c.keepFrom {
					j.t.Fatalf("keep_from went back from %d to %d", c.keepFrom, m.KeepFrom)
				}
				c.keepFrom = m.KeepFrom
			case *OutputRef:
				for i := 0; i < len(m.Runs); i += 2 {
					if m.Runs[i] < c.keepFrom {
						j.t.Fatalf("OUTPUT_REF run (%d, %d) starts before keep_from %d", m.Runs[i], m.Runs[i+1], c.keepFrom)
					}
					for r := m.Runs[i]; r < m.Runs[i]+m.Runs[i+1]; r++ {
						c.refs = append(c.refs, r)
					}
				}
			case *WmAck:
				c.wmAcks = append(c.wmAcks, m.TS)
			case *Metrics:
				c.metrics = append(c.metrics, m)
			case *Snapshot:
				c.snaps = append(c.snaps, m)
				if !m.Last {
					continue
				}
			}
		}
		if f.Type == until {
			return
		}
	}
}

// decodeOutput decodes an OUTPUT payload into rows of Go values.
func decodeOutput(t testing.TB, payload []byte) [][]any {
	t.Helper()
	rd, err := ipc.NewReader(bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("OUTPUT is not an Arrow IPC stream: %v", err)
	}
	defer rd.Release()
	var out [][]any
	n := 0
	for rd.Next() {
		n++
		rec := rd.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			r := make([]any, rec.NumCols())
			for c := range r {
				r[c] = cell(t, rec.Column(c), i)
			}
			out = append(out, r)
		}
	}
	if rd.Err() != nil || n != 1 {
		t.Fatalf("OUTPUT holds %d batches (want 1), err %v", n, rd.Err())
	}
	return out
}

func cell(t testing.TB, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...)
	}
	t.Fatalf("test decoder: unsupported column type %s", a.DataType())
	return nil
}

// byKey groups rows by the string in column col, keeping their order.
func byKey(rows [][]any, col int) map[string][][]any {
	m := map[string][][]any{}
	for _, r := range rows {
		k := fmt.Sprint(r[col])
		m[k] = append(m[k], r)
	}
	return m
}

func sortedRows(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r)
	}
	sort.Strings(out)
	return out
}

// echoAgent emits every input row as its output row; an input whose key
// column is "slow" sleeps first.
func echoAgent(slow time.Duration) *operator.Agent {
	return &operator.Agent{
		Name: "echo",
		Actions: []operator.Action{{Name: "echo", Listen: []string{operator.InputEventType},
			Fn: func(ctx *operator.Context, ev *operator.Event) error {
				in := ev.Input()
				vals := make([]any, in.NumFields())
				for i := range vals {
					vals[i] = in.Value(i)
				}
				if slow > 0 && vals[0] == "slow" {
					time.Sleep(slow)
				}
				return ctx.SendEvent(operator.NewOutput(vals...))
			}}},
		Output: []operator.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}},
	}
}

var echoCols = []arrowio.Column{{Name: "k", Type: "STRING"}, {Name: "v", Type: "BIGINT"}}
