package bridge

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/flinkgo/flinkgo/internal/msgp"
)

// sampleFrames has one value of every control frame.
func sampleFrames() []ControlFrame {
	return []ControlFrame{
		&Hello{Version: 1, Token: strings.Repeat("ab", 32), Runtime: "flinkgo-go/0.1.0", Agents: []string{"a", "b"}},
		&Hello{Version: 1, Token: "t", Runtime: "r", Agents: []string{}},
		&Open{Agent: "a", Options: map[string]string{"z": "1", "a": "2", "é": "3"}, JobID: "j", OperatorID: "o",
			Subtask: 3, Parallelism: 4, MaxParallelism: 128, KeyGroupStart: 96, KeyGroupEnd: 127, Attempt: 0,
			InputSchema: bytes.Repeat([]byte{1}, 300), MaxFrame: 1 << 20},
		&Open{Agent: "a", Options: map[string]string{}, Subtask: 0, Parallelism: 1, MaxParallelism: 1, InputSchema: []byte{}, OutputRefs: true},
		&Restore{KeyGroup: 5, Section: []byte{1, 2, 3}},
		&RestoreDone{Markers: [][]byte{{1}, {}, bytes.Repeat([]byte{2}, 70000)}},
		&RestoreDone{Markers: [][]byte{}},
		&Ready{OutputSchema: []byte{9}, Credit: 16384},
		&Credit{Rows: 0},
		&Credit{Rows: math.MaxInt64},
		&Credit{Rows: 5, KeepFrom: 1 << 40},
		&OutputRef{Runs: []int64{0, 1, 7, 4096, math.MaxInt64 - 9, 9}},
		&Watermark{TS: math.MinInt64},
		&Watermark{TS: -33},
		&WmAck{TS: 1700000000000},
		&Barrier{CheckpointID: 1},
		&Snapshot{CheckpointID: 2, Sections: []SnapshotSection{{KeyGroup: 1, Section: []byte{1}}, {KeyGroup: 2, Section: []byte{}}}, Marker: []byte{}, Last: true},
		&Snapshot{CheckpointID: 2, Sections: []SnapshotSection{}, Last: false},
		&CheckpointComplete{CheckpointID: 1 << 40},
		&CheckpointAborted{CheckpointID: 3},
		&EndInput{}, &EndAck{}, &Close{},
		&Metrics{Values: map[string]int64{MetricActionsExecuted: 12, MetricStoreBytesWritten: 1 << 33, "é": -1, "": 0}},
		&Metrics{Values: map[string]int64{}},
		&ErrorFrame{Code: string(CodeBadSchema), Message: strings.Repeat("m", 40)},
	}
}

func TestControlRoundTrip(t *testing.T) {
	for _, m := range sampleFrames() {
		b := m.Marshal()
		f := Frame{Type: m.FrameType(), Payload: b}
		got, err := DecodeControl(f)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%T:\n got %+v\nwant %+v", m, got, m)
		}
		if !bytes.Equal(got.Marshal(), b) {
			t.Errorf("%T: re-encoding differs", m)
		}
		// An independent msgpack decoder reads the same map.
		var generic map[string]any
		if err := msgpack.Unmarshal(b, &generic); err != nil {
			t.Errorf("%T: msgpack library: %v", m, err)
		}
		// AppendControlFrame = header + payload.
		whole := AppendControlFrame([]byte{0xEE}, m)
		if !bytes.Equal(whole[1:], append(AppendFrameHeader(nil, m.FrameType(), len(b)), b...)) {
			t.Errorf("%T: AppendControlFrame % x", m, whole[:8])
		}
	}
}

func TestCanonicalInts(t *testing.T) {
	cases := []struct {
		v   int64
		hex string
	}{
		{0, "00"}, {127, "7f"}, {128, "cc80"}, {255, "ccff"}, {256, "cd0100"}, {65535, "cdffff"},
		{65536, "ce00010000"}, {4294967295, "ceffffffff"}, {4294967296, "cf0000000100000000"},
		{-1, "ff"}, {-32, "e0"}, {-33, "d0df"}, {-128, "d080"}, {-129, "d1ff7f"}, {-32768, "d18000"},
		{-32769, "d2ffff7fff"}, {math.MinInt32, "d280000000"}, {math.MinInt32 - 1, "d3ffffffff7fffffff"},
		{math.MaxInt64, "cf7fffffffffffffff"}, {math.MinInt64, "d38000000000000000"},
	}
	for _, c := range cases {
		got := hex.EncodeToString(msgp.AppendInt(nil, c.v))
		if got != c.hex {
			t.Errorf("%d: %s, want %s", c.v, got, c.hex)
		}
		r := &mpReader{b: msgp.AppendInt(nil, c.v)}
		if v, err := r.int(math.MinInt64, math.MaxInt64); err != nil || v != c.v {
			t.Errorf("%d: decoded %d %v", c.v, v, err)
		}
	}
	for n, want := range map[int]string{0: "a0", 31: "bf", 32: "d920", 255: "d9ff", 256: "da0100", 65536: "db00010000"} {
		if got := hex.EncodeToString(msgp.AppendStr(nil, strings.Repeat("x", n))[:len(want)/2]); got != want {
			t.Errorf("str %d: %s", n, got)
		}
	}
	for n, want := range map[int]string{0: "c400", 255: "c4ff", 256: "c50100", 65536: "c600010000"} {
		if got := hex.EncodeToString(msgp.AppendBin(nil, make([]byte, n))[:len(want)/2]); got != want {
			t.Errorf("bin %d: %s", n, got)
		}
	}
}

// enc builds a msgpack payload with the library, for non-canonical inputs.
func enc(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestControlDecodeIsLenient(t *testing.T) {
	// Keys in another order, wide integer encodings, unknown keys of every
	// shape, str8 for short strings: all accepted.
	var b []byte
	b = msgp.AppendMapLen(b, 6)
	b = msgp.AppendStr(b, "future")
	b = append(b, 0x92, 0x81, 0xa1, 'x', 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xd4, 1, 2) // [{x: 0.0}, fixext1]
	b = msgp.AppendStr(b, "agents")
	b = append(b, 0xdc, 0, 1, 0xd9, 1, 'a') // array16 [str8 "a"]
	b = msgp.AppendStr(b, "runtime")
	b = append(b, 0xda, 0, 1, 'r') // str16
	b = msgp.AppendStr(b, "token")
	b = msgp.AppendStr(b, "t")
	b = msgp.AppendStr(b, "version")
	b = append(b, 0xd3, 0, 0, 0, 0, 0, 0, 0, 1) // int64 1
	b = msgp.AppendStr(b, "nil")
	b = append(b, 0xc0)
	var h Hello
	if err := h.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, Hello{Version: 1, Token: "t", Runtime: "r", Agents: []string{"a"}}) {
		t.Fatalf("%+v", h)
	}
	// The msgpack library's own encoding of an OPEN map.
	open := map[string]any{"agent": "a", "options": map[string]string{"k": "v"}, "job_id": "j", "operator_id": "o",
		"subtask": uint64(1), "parallelism": int32(2), "max_parallelism": int64(128), "key_group_start": 64,
		"key_group_end": uint16(127), "attempt": int8(0), "input_schema": []byte{1, 2}, "extra": map[string]any{"a": []any{1, "x", nil}}}
	var o Open
	if err := o.Unmarshal(enc(t, open)); err != nil {
		t.Fatal(err)
	}
	if o.Subtask != 1 || o.KeyGroupEnd != 127 || o.MaxFrame != 0 || o.Options["k"] != "v" {
		t.Fatalf("%+v", o)
	}
}

func TestControlDecodeErrors(t *testing.T) {
	okOpen := func() map[string]any {
		return map[string]any{"agent": "a", "options": map[string]string{}, "job_id": "j", "operator_id": "o",
			"subtask": 0, "parallelism": 2, "max_parallelism": 4, "key_group_start": 0, "key_group_end": 1,
			"attempt": 0, "input_schema": []byte{}}
	}
	with := func(k string, v any) []byte {
		m := okOpen()
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return enc(t, m)
	}
	cases := []struct {
		typ     FrameType
		payload []byte
		msg     string
	}{
		{FrameOpen, with("agent", nil), `OPEN: missing required key "agent"`},
		{FrameOpen, with("input_schema", nil), `missing required key "input_schema"`},
		{FrameOpen, with("subtask", "0"), `OPEN: key "subtask": expected int, got msgpack str`},
		{FrameOpen, with("subtask", 2), `subtask 2 is not below parallelism 2`},
		{FrameOpen, with("parallelism", 5), `parallelism 5 exceeds max_parallelism 4`},
		{FrameOpen, with("key_group_end", 4), `key group range [0, 4]`},
		{FrameOpen, with("subtask", -1), `integer -1 out of range`},
		{FrameOpen, with("max_frame", 10), `key "max_frame": integer 10 out of range [1024, 67108864]`},
		{FrameOpen, with("options", map[string]any{"k": 1}), `key "options": expected str, got msgpack int`},
		{FrameOpen, with("input_schema", 1.5), `expected bin, got msgpack float`},
		{FrameHello, enc(t, map[string]any{"version": 1, "token": "t", "runtime": "r"}), `HELLO: missing required key "agents"`},
		{FrameHello, enc(t, []any{1}), `HELLO: expected map, got msgpack array`},
		{FrameCredit, enc(t, map[string]any{"rows": uint64(math.MaxUint64)}), `out of range`},
		{FrameCredit, enc(t, map[string]any{"rows": -1}), `integer -1 out of range`},
		{FrameCredit, append(enc(t, map[string]any{"rows": 1}), 0), `CREDIT: 1 bytes after the map`},
		{FrameCredit, []byte{0x81, 0xa4, 'r', 'o', 'w', 's'}, `truncated`},
		{FrameCredit, []byte{0x82, 0xa4, 'r', 'o', 'w', 's', 1, 0xa4, 'r', 'o', 'w', 's', 2}, `key "rows": duplicate key`},
		{FrameCredit, []byte{0x81, 1, 1}, `expected str, got msgpack int`},
		{FrameCredit, []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, `map of 4294967295 elements exceeds`},
		{FrameWatermark, nil, `WATERMARK: truncated`},
		{FrameEndInput, []byte{}, `END_INPUT: truncated`},
		{FrameEndInput, []byte{0x81, 0xa1, 'x', 0xc1}, `invalid msgpack byte 0xc1`},
		{FrameSnapshot, enc(t, map[string]any{"checkpoint_id": 1, "sections": []any{}, "last": true}), `missing required key "marker"`},
		{FrameSnapshot, enc(t, map[string]any{"checkpoint_id": 1, "sections": []any{}, "last": false, "marker": []byte{}}), `last=false`},
		{FrameSnapshot, enc(t, map[string]any{"checkpoint_id": 1, "sections": []any{map[string]any{"key_group": 1}}, "last": false}), `key "sections": missing required key "section"`},
		{FrameSnapshot, enc(t, map[string]any{"checkpoint_id": 1, "sections": []any{}, "last": 1}), `key "last": expected bool`},
		{FrameRestoreDone, enc(t, map[string]any{"markers": []any{"a", 1}}), `key "markers": expected bin, got msgpack int`},
		{FrameError, enc(t, map[string]any{"code": "x"}), `ERROR: missing required key "message"`},
		{FrameMetrics, enc(t, map[string]any{"actions_executed": 1, "future": 1.5}), `METRICS: key "future": expected int, got msgpack float`},
		{FrameMetrics, enc(t, map[string]any{"actions_executed": "1"}), `key "actions_executed": expected int, got msgpack str`},
		{FrameMetrics, []byte{0x82, 0xa1, 'x', 1, 0xa1, 'x', 2}, `METRICS: key "x": duplicate metric`},
		{FrameMetrics, []byte{0x81, 1, 1}, `METRICS: expected str, got msgpack int`},
		{FrameMetrics, enc(t, map[string]any{"x": uint64(math.MaxUint64)}), `out of range`},
		{FrameMetrics, append(enc(t, map[string]any{"x": 1}), 0x80), `METRICS: 1 bytes after the map`},
		{FrameMetrics, enc(t, []any{1}), `METRICS: expected map, got msgpack array`},
		{FrameData, nil, `DATA is not a control frame`},
	}
	for _, c := range cases {
		_, err := DecodeControl(Frame{Type: c.typ, Payload: c.payload})
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s %x:\n got %v\nwant %q", c.typ, c.payload, err, c.msg)
			continue
		}
		want := CodeMalformedFrame
		if c.typ == FrameData {
			want = CodeUnexpectedFrame
		}
		if protoCode(err) != want {
			t.Errorf("%s: code %q", c.typ, protoCode(err))
		}
	}
	// Deep nesting in an unknown key is bounded.
	deep := []byte{0x81, 0xa1, 'x'}
	for i := 0; i < 100; i++ {
		deep = append(deep, 0x91)
	}
	deep = append(deep, 0)
	if _, err := DecodeControl(Frame{Type: FrameClose, Payload: deep}); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep: %v", err)
	}
}

func TestProtocolErrorFrame(t *testing.T) {
	e := &ProtocolError{Code: CodeVersionMismatch, Message: "m"}
	if e.Error() != "flinkgo/bridge: version_mismatch: m" {
		t.Fatal(e.Error())
	}
	f := e.ErrorFrame()
	var back ErrorFrame
	if err := back.Unmarshal(f.Marshal()); err != nil || back.Err().Code != CodeVersionMismatch {
		t.Fatal(err)
	}
}

// TestOutputRefRejects: an OUTPUT_REF without pairs, with an empty run or
// one past the largest row number is malformed, naming the problem.
func TestOutputRefRejects(t *testing.T) {
	for _, c := range []struct {
		runs []int64
		want string
	}{
		{[]int64{}, "pairs (first, count)"},
		{[]int64{1, 2, 3}, "pairs (first, count)"},
		{[]int64{4, 0}, "runs"},
		{[]int64{-1, 3}, "runs"},
		{[]int64{math.MaxInt64 - 1, 5}, "overflows"},
	} {
		p := (&OutputRef{Runs: c.runs}).Marshal()
		_, err := DecodeControl(Frame{Type: FrameOutputRef, Payload: p})
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Code != CodeMalformedFrame || !strings.Contains(err.Error(), c.want) {
			t.Errorf("runs %v: %v; want malformed_frame naming %q", c.runs, err, c.want)
		}
	}
}
