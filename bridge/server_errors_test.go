package bridge

import (
	"errors"
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
)

func startEcho(t *testing.T, opts map[string]string) *fakeJVM {
	t.Helper()
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}}, echoCols)
	j.handshake(j.defaultOpen("echo", opts), nil, nil)
	return j
}

// TestServeProtocolErrors: every violation after READY is answered with
// ERROR carrying the protocol's code and naming the problem; Serve fails.
func TestServeProtocolErrors(t *testing.T) {
	cases := []struct {
		name  string
		opts  map[string]string
		do    func(j *fakeJVM)
		code  ErrorCode
		parts []string
	}{
		{"unknown frame type", nil, func(j *fakeJVM) { j.writeRaw([]byte{0, 0, 0, 2, 0x42, 0x80}) },
			CodeUnknownFrame, []string{"0x42"}},
		{"oversize frame", map[string]string{}, func(j *fakeJVM) { j.writeRaw([]byte{0, 0, 0x20, 0, byte(FrameData)}) },
			CodeFrameTooLarge, []string{"8192", "4096"}},
		{"malformed DATA", nil, func(j *fakeJVM) { j.writeRaw(append(AppendFrameHeader(nil, FrameData, 7), "garbage"...)) },
			CodeMalformedFrame, []string{"DATA"}},
		{"DATA of another schema", nil, func(j *fakeJVM) {
			other, err := arrowio.NewInputBuilder([]arrowio.Column{{Name: "x", Type: "DOUBLE"}}, nil)
			if err != nil {
				j.t.Fatal(err)
			}
			defer other.Release()
			_ = other.Append(1, []byte("k"), 0, false, []any{1.5})
			b, _ := other.Flush()
			j.writeRaw(append(AppendFrameHeader(nil, FrameData, len(b)), b...))
		}, CodeBadSchema, []string{"DATA"}},
		{"malformed control frame", nil, func(j *fakeJVM) { j.writeRaw(append(AppendFrameHeader(nil, FrameWatermark, 1), 0x01)) },
			CodeMalformedFrame, []string{"WATERMARK"}},
		{"missing key", nil, func(j *fakeJVM) { j.writeRaw(append(AppendFrameHeader(nil, FrameBarrier, 1), 0x80)) },
			CodeMalformedFrame, []string{"checkpoint_id"}},
		{"HELLO after READY", nil, func(j *fakeJVM) { j.send(&Hello{Version: 1}) },
			CodeUnexpectedFrame, []string{"HELLO after READY"}},
		{"OUTPUT from the JVM", nil, func(j *fakeJVM) { j.writeRaw(append(AppendFrameHeader(nil, FrameOutput, 1), 0)) },
			CodeUnexpectedFrame, []string{"OUTPUT"}},
		{"DATA over credit", map[string]string{"go.credit.rows": "2"}, func(j *fakeJVM) {
			j.data(row{kg: 1, key: "a", values: []any{"a", int64(1)}}, row{kg: 1, key: "b", values: []any{"b", int64(2)}},
				row{kg: 1, key: "c", values: []any{"c", int64(3)}})
		}, CodeUnexpectedFrame, []string{"3 rows", "credit for 2 rows"}},
		{"DATA after END_INPUT", nil, func(j *fakeJVM) {
			j.send(&EndInput{})
			j.collect(FrameEndAck)
			j.data(row{kg: 1, key: "a", values: []any{"a", int64(1)}})
		}, CodeUnexpectedFrame, []string{"DATA after END_INPUT"}},
		{"second END_INPUT", nil, func(j *fakeJVM) { j.send(&EndInput{}); j.send(&EndInput{}) },
			CodeUnexpectedFrame, []string{"second END_INPUT"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}}, echoCols)
			open := j.defaultOpen("echo", tc.opts)
			if tc.opts != nil && len(tc.opts) == 0 {
				open.MaxFrame = 4096
			}
			j.handshake(open, nil, nil)
			tc.do(j)
			j.expectError(tc.code, tc.parts...)
		})
	}
}

// TestServeBadBatchNotApplied: a batch with a row of a key group the
// subtask does not own is rejected whole: its valid rows produce nothing.
func TestServeBadBatchNotApplied(t *testing.T) {
	j := startEcho(t, nil)
	j.data(row{kg: 1, key: "a", values: []any{"a", int64(1)}}, row{kg: 200, key: "b", values: []any{"b", int64(2)}})
	for {
		f := j.next()
		if f.Type == FrameOutput {
			t.Fatalf("OUTPUT from a rejected batch: %v", decodeOutput(t, f.Payload))
		}
		if f.Type == FrameError {
			m, _ := DecodeControl(f)
			e := m.(*ErrorFrame)
			if e.Code != string(CodeMalformedFrame) || !strings.Contains(e.Message, "key group 200") || !strings.Contains(e.Message, "0..127") {
				t.Fatalf("ERROR %+v", e)
			}
			break
		}
	}
	j.conn.Close()
	if err := j.wait(); err == nil {
		t.Fatal("Serve returned nil after a protocol error")
	}
}

// TestServeHandshakeErrors: problems found in OPEN and RESTORE.
func TestServeHandshakeErrors(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(j *fakeJVM, o *Open)
		restore []*Restore
		code    ErrorCode
		parts   []string
	}{
		{"unknown option", func(j *fakeJVM, o *Open) { o.Options = map[string]string{"foo.bar": "1", "max-retries": "2"} },
			nil, CodeInternal, []string{`"foo.bar"`}},
		{"bad option value", func(j *fakeJVM, o *Open) { o.Options = map[string]string{"max-retries": "many"} },
			nil, CodeInternal, []string{"max-retries", "many"}},
		{"unknown agent", func(j *fakeJVM, o *Open) { o.Agent = "nope" },
			nil, CodeInternal, []string{`"nope"`, "echo"}},
		{"kafka store", func(j *fakeJVM, o *Open) { o.Options = map[string]string{"actionStateStoreBackend": "kafka"} },
			nil, CodeInternal, []string{"kafkaActionStateTopic is required"}},
		{"bad input schema", func(j *fakeJVM, o *Open) { o.InputSchema = []byte("not arrow") },
			nil, CodeBadSchema, []string{"input_schema"}},
		{"bad section", nil, []*Restore{{KeyGroup: 3, Section: []byte("garbage")}},
			CodeRestoreFailed, []string{"key group 3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}}, echoCols)
			if _, ok := j.nextControl().(*Hello); !ok {
				t.Fatal("want HELLO")
			}
			o := j.defaultOpen("echo", nil)
			if tc.edit != nil {
				tc.edit(j, o)
			}
			j.send(o)
			for _, r := range tc.restore {
				j.send(r)
			}
			j.send(&RestoreDone{})
			j.expectError(tc.code, tc.parts...)
		})
	}
}

func TestServeDataBeforeOpen(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}}, echoCols)
	j.nextControl()
	j.data(row{kg: 1, key: "a", values: []any{"a", int64(1)}})
	j.expectError(CodeUnexpectedFrame, "DATA while waiting for OPEN")
}

// TestServeVersionMismatch: an operator speaking another protocol version
// gets ERROR version_mismatch naming both versions.
func TestServeVersionMismatch(t *testing.T) {
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}, Protocol: "2"}, echoCols)
	j.expectError(CodeVersionMismatch, "protocol 2", "protocol 1")
}

// TestServePeerRejects: the operator answers HELLO with ERROR (a bad
// token, or its own version check); Serve fails naming the code.
func TestServePeerRejects(t *testing.T) {
	for _, code := range []ErrorCode{CodeBadToken, CodeVersionMismatch} {
		t.Run(string(code), func(t *testing.T) {
			j := startServe(t, ServerConfig{Agents: []*operator.Agent{echoAgent(0)}, Token: strings.Repeat("0", 64)}, echoCols)
			h := j.nextControl().(*Hello)
			if h.Token != strings.Repeat("0", 64) {
				t.Fatalf("HELLO token %q", h.Token)
			}
			j.send(&ErrorFrame{Code: string(code), Message: "rejected by the test"})
			err := j.wait()
			if !errors.Is(err, ErrPeer) || !strings.Contains(err.Error(), string(code)) || !strings.Contains(err.Error(), "OPEN") {
				t.Fatalf("Serve returned %v", err)
			}
		})
	}
}

// TestServeActionFails: a permanent action failure under
// error-handling-strategy=fail is ERROR action_failed naming the action.
func TestServeActionFails(t *testing.T) {
	a := &operator.Agent{Name: "bad", Output: []operator.Column{{Name: "k", Type: "STRING"}},
		Actions: []operator.Action{{Name: "explode", Listen: []string{operator.InputEventType},
			Fn: func(*operator.Context, *operator.Event) error {
				return operator.Permanent(errors.New("boom"))
			}}}}
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{a}}, echoCols)
	j.handshake(j.defaultOpen("bad", nil), nil, nil)
	j.data(row{kg: 1, key: "a", values: []any{"a", int64(1)}})
	j.expectError(CodeActionFailed, `"explode"`, "boom")
}

// TestServeOutputTypeMismatch: an output value that does not fit its
// column fails the subtask with action_failed naming the column.
func TestServeOutputTypeMismatch(t *testing.T) {
	a := &operator.Agent{Name: "wrong", Output: []operator.Column{{Name: "n", Type: "BIGINT"}},
		Actions: []operator.Action{{Name: "emit", Listen: []string{operator.InputEventType},
			Fn: func(ctx *operator.Context, _ *operator.Event) error {
				return ctx.SendEvent(operator.NewOutput("not a number"))
			}}}}
	j := startServe(t, ServerConfig{Agents: []*operator.Agent{a}}, echoCols)
	j.handshake(j.defaultOpen("wrong", nil), nil, nil)
	j.data(row{kg: 1, key: "a", values: []any{"a", int64(1)}})
	j.expectError(CodeActionFailed, "n")
}

// TestServeConnectionLost: the operator goes away without CLOSE.
func TestServeConnectionLost(t *testing.T) {
	j := startEcho(t, nil)
	j.conn.Close()
	if err := j.wait(); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Serve returned %v, want ErrConnClosed", err)
	}
}
