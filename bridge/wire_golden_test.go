package bridge

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flinkgo/flinkgo/arrowio"
)

var update = flag.Bool("update", false, "write golden frames that do not exist yet (existing files are never rewritten)")

const goldenDir = "../testdata/wire"

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatalf("%v (the Arrow files come from `go test ./arrowio -run Golden -update`)", err)
	}
	return b
}

// goldenFrame is one file of testdata/wire: a whole frame, length prefix
// included. testdata/wire/README.md lists the same values; keep both in step.
type goldenFrame struct {
	file string
	typ  FrameType
	msg  ControlFrame // nil for DATA and OUTPUT
	data string       // Arrow file carried by DATA and OUTPUT
}

func goldenFrames(t *testing.T) []goldenFrame {
	inSchema := readGolden(t, "input_schema.arrow")
	outSchema := readGolden(t, "output_schema.arrow")
	seq := func(n int, start byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = start + byte(i)
		}
		return b
	}
	return []goldenFrame{
		{file: "hello.bin", typ: FrameHello, msg: &Hello{Version: 1,
			Token:   "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
			Runtime: "flinkgo-go/0.1.0", Agents: []string{"order-scoring", "fraud-check"}}},
		{file: "open.bin", typ: FrameOpen, msg: &Open{Agent: "order-scoring",
			Options: map[string]string{"go.batch.size": "1024", "error-handling-strategy": "retry", "max-retries": "3"},
			JobID:   "a1b2c3d4e5f60718293a4b5c6d7e8f90", OperatorID: "ea632d67b7d595e5b851708ae9ad79d6",
			Subtask: 1, Parallelism: 4, MaxParallelism: 128, KeyGroupStart: 32, KeyGroupEnd: 63, Attempt: 2,
			InputSchema: inSchema, MaxFrame: 16777216}},
		{file: "restore.bin", typ: FrameRestore, msg: &Restore{KeyGroup: 40, Section: seq(32, 0)}},
		{file: "restore_done.bin", typ: FrameRestoreDone, msg: &RestoreDone{Markers: [][]byte{[]byte("marker-0"), {}, []byte("marker-2")}}},
		{file: "ready.bin", typ: FrameReady, msg: &Ready{OutputSchema: outSchema, Credit: 16384}},
		{file: "data.bin", typ: FrameData, data: "input_batch.arrow"},
		{file: "credit.bin", typ: FrameCredit, msg: &Credit{Rows: 1024}},
		{file: "output.bin", typ: FrameOutput, data: "output_batch.arrow"},
		{file: "watermark.bin", typ: FrameWatermark, msg: &Watermark{TS: 1700000000000}},
		{file: "watermark_negative.bin", typ: FrameWatermark, msg: &Watermark{TS: -2000}},
		{file: "wm_ack.bin", typ: FrameWmAck, msg: &WmAck{TS: -9223372036854775808}},
		{file: "barrier.bin", typ: FrameBarrier, msg: &Barrier{CheckpointID: 7}},
		{file: "snapshot_part.bin", typ: FrameSnapshot, msg: &Snapshot{CheckpointID: 7,
			Sections: []SnapshotSection{{KeyGroup: 32, Section: seq(16, 0x10)}}, Last: false}},
		{file: "snapshot.bin", typ: FrameSnapshot, msg: &Snapshot{CheckpointID: 7,
			Sections: []SnapshotSection{{KeyGroup: 33, Section: seq(16, 0x20)}, {KeyGroup: 63, Section: []byte{}}},
			Marker:   []byte("marker-bytes"), Last: true}},
		{file: "checkpoint_complete.bin", typ: FrameCheckpointComplete, msg: &CheckpointComplete{CheckpointID: 300}},
		{file: "checkpoint_aborted.bin", typ: FrameCheckpointAborted, msg: &CheckpointAborted{CheckpointID: 200}},
		{file: "end_input.bin", typ: FrameEndInput, msg: &EndInput{}},
		{file: "end_ack.bin", typ: FrameEndAck, msg: &EndAck{}},
		{file: "metrics.bin", typ: FrameMetrics, msg: &Metrics{Values: map[string]int64{
			"events_processed": 2400, "actions_executed": 1200, "actions_replayed": 3, "actions_rerun": 1, "calls_replayed": 0,
			"store_records_written": 70000, "store_bytes_written": 5000000000,
			"store_write_latency_p50_us": 850, "store_write_latency_p99_us": 12000,
			"store_records_replayed": 42, "store_bytes_replayed": 9000, "store_rebuild_ms": 250}}},
		{file: "error.bin", typ: FrameError, msg: &ErrorFrame{Code: "version_mismatch",
			Message: "the Flink operator speaks flinkgo protocol 2, this binary speaks protocol 1; rebuild the Go binary with a matching flinkgo release"}},
		{file: "close.bin", typ: FrameClose, msg: &Close{}},
	}
}

func (g goldenFrame) encode(t *testing.T) []byte {
	var buf bytes.Buffer
	if g.msg != nil {
		if err := WriteControl(&buf, g.msg); err != nil {
			t.Fatal(err)
		}
	} else if err := WriteFrame(&buf, g.typ, readGolden(t, g.data)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGoldenFrames(t *testing.T) {
	for _, g := range goldenFrames(t) {
		t.Run(g.file, func(t *testing.T) {
			want := g.encode(t)
			path := filepath.Join(goldenDir, g.file)
			file, err := os.ReadFile(path)
			if os.IsNotExist(err) && *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s", path)
				file = want
			} else if err != nil {
				t.Fatalf("%v (run `go test ./bridge -run GoldenFrames -update` once to create it)", err)
			}
			// Byte equality: the canonical encoder reproduces the file.
			if !bytes.Equal(file, want) {
				t.Fatalf("re-encoding differs from %s:\n file % x\n  now % x", g.file, file, want)
			}
			// The file decodes to the listed values, and nothing follows.
			r := bufio.NewReader(bytes.NewReader(file))
			f, err := ReadFrame(r, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.ReadByte(); err == nil {
				t.Fatal("bytes after the frame")
			}
			if f.Type != g.typ {
				t.Fatalf("type %v", f.Type)
			}
			if g.msg == nil {
				if !bytes.Equal(f.Payload, readGolden(t, g.data)) {
					t.Fatalf("payload differs from %s", g.data)
				}
				return
			}
			m, err := DecodeControl(f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, g.msg) {
				t.Fatalf("decoded %+v, want %+v", m, g.msg)
			}
		})
	}
}

// The schemas and batches inside the golden frames are the ones arrowio
// reads back (arrowio's golden test checks every value).
func TestGoldenFramesCarryArrow(t *testing.T) {
	var o Open
	f := readGolden(t, "open.bin")
	if err := o.Unmarshal(f[FrameHeaderLen:]); err != nil {
		t.Fatal(err)
	}
	is, err := arrowio.ReadInputSchema(o.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	data := readGolden(t, "data.bin")
	b, err := arrowio.NewDecoder(is, nil).DecodeBatch(data[FrameHeaderLen:])
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if b.Len() != 4 || string(b.Key(0)) != "alice" || b.Row(0).Str(is.Index("name")) != "héllo ✓" {
		t.Fatalf("data.bin: %d rows", b.Len())
	}
	var rd Ready
	if err := rd.Unmarshal(readGolden(t, "ready.bin")[FrameHeaderLen:]); err != nil {
		t.Fatal(err)
	}
	if _, err := arrowio.ReadSchemaMessage(rd.OutputSchema); err != nil {
		t.Fatal(err)
	}
}
