package bridge

import (
	"math"

	"github.com/flinkgo/flinkgo/internal/msgp"
)

// Control frames with one integer, the snapshot, the empty frames and ERROR.

func appendIntMap(b []byte, key string, v int64) []byte {
	return msgp.AppendInt(appendKey(msgp.AppendMapLen(b, 1), key), v)
}

func decodeIntMap(t FrameType, p []byte, key string, lo, hi int64) (v int64, err error) {
	err = decodeMap(t, p, []string{key}, 1, func(r *mpReader, _ int) (err error) {
		v, err = r.int(lo, hi)
		return err
	})
	return v, err
}

// Credit is CREDIT (Go→JVM): rows the JVM may send in addition. KeepFrom
// (optional, only with OPEN's output_refs) is the reference horizon: the
// operator may drop the input rows before it, and OUTPUT_REF refers to none
// of them. It never decreases; 0 is absent.
type Credit struct{ Rows, KeepFrom int64 }

func (m *Credit) FrameType() FrameType { return FrameCredit }
func (m *Credit) Marshal() []byte      { return m.AppendMsgpack(nil) }
func (m *Credit) AppendMsgpack(b []byte) []byte {
	if m.KeepFrom == 0 {
		return appendIntMap(b, "rows", m.Rows)
	}
	b = msgp.AppendInt(appendKey(msgp.AppendMapLen(b, 2), "rows"), m.Rows)
	return msgp.AppendInt(appendKey(b, "keep_from"), m.KeepFrom)
}
func (m *Credit) Unmarshal(p []byte) error {
	*m = Credit{}
	return decodeMap(FrameCredit, p, []string{"rows", "keep_from"}, 1, func(r *mpReader, k int) (err error) {
		if k == 0 {
			m.Rows, err = r.int(0, math.MaxInt64)
		} else {
			m.KeepFrom, err = r.int(0, math.MaxInt64)
		}
		return err
	})
}

// OutputRef is OUTPUT_REF (Go→JVM): output rows that are input rows emitted
// as they are, by reference. Runs holds pairs (first, count): count rows
// from input row number first on (rows numbered from 0 in the order of the
// DATA frames), each emitted with the input's own timestamp, in order.
type OutputRef struct{ Runs []int64 }

// MaxOutputRefRuns bounds the runs of one OUTPUT_REF.
const MaxOutputRefRuns = 1 << 16

func (m *OutputRef) FrameType() FrameType { return FrameOutputRef }
func (m *OutputRef) Marshal() []byte      { return m.AppendMsgpack(nil) }
func (m *OutputRef) AppendMsgpack(b []byte) []byte {
	b = msgp.AppendArrayLen(appendKey(msgp.AppendMapLen(b, 1), "runs"), len(m.Runs))
	for _, v := range m.Runs {
		b = msgp.AppendInt(b, v)
	}
	return b
}
func (m *OutputRef) Unmarshal(p []byte) error {
	*m = OutputRef{}
	return decodeMap(FrameOutputRef, p, []string{"runs"}, 1, func(r *mpReader, _ int) error {
		n, err := r.length("array")
		if err != nil {
			return err
		}
		if n == 0 || n%2 != 0 || n > 2*MaxOutputRefRuns {
			return r.fail("runs holds %d integers; it must hold pairs (first, count), 1 to %d of them", n, MaxOutputRefRuns)
		}
		m.Runs = make([]int64, n)
		for i := 0; i < n; i += 2 {
			if m.Runs[i], err = r.int(0, math.MaxInt64); err != nil {
				return err
			}
			if m.Runs[i+1], err = r.int(1, math.MaxInt32); err != nil {
				return err
			}
			if m.Runs[i] > math.MaxInt64-m.Runs[i+1] {
				return r.fail("run %d (first %d, count %d) overflows the row numbers", i/2, m.Runs[i], m.Runs[i+1])
			}
		}
		return nil
	})
}

// Watermark is WATERMARK (JVM→Go): an event-time watermark in ms.
type Watermark struct{ TS int64 }

func (m *Watermark) FrameType() FrameType          { return FrameWatermark }
func (m *Watermark) Marshal() []byte               { return m.AppendMsgpack(nil) }
func (m *Watermark) AppendMsgpack(b []byte) []byte { return appendIntMap(b, "ts", m.TS) }
func (m *Watermark) Unmarshal(p []byte) (err error) {
	m.TS, err = decodeIntMap(FrameWatermark, p, "ts", math.MinInt64, math.MaxInt64)
	return err
}

// WmAck is WM_ACK (Go→JVM): the JVM may now emit watermark TS.
type WmAck struct{ TS int64 }

func (m *WmAck) FrameType() FrameType          { return FrameWmAck }
func (m *WmAck) Marshal() []byte               { return m.AppendMsgpack(nil) }
func (m *WmAck) AppendMsgpack(b []byte) []byte { return appendIntMap(b, "ts", m.TS) }
func (m *WmAck) Unmarshal(p []byte) (err error) {
	m.TS, err = decodeIntMap(FrameWmAck, p, "ts", math.MinInt64, math.MaxInt64)
	return err
}

// Barrier is BARRIER (JVM→Go): cut checkpoint CheckpointID.
type Barrier struct{ CheckpointID int64 }

func (m *Barrier) FrameType() FrameType { return FrameBarrier }
func (m *Barrier) Marshal() []byte      { return m.AppendMsgpack(nil) }
func (m *Barrier) AppendMsgpack(b []byte) []byte {
	return appendIntMap(b, "checkpoint_id", m.CheckpointID)
}
func (m *Barrier) Unmarshal(p []byte) (err error) {
	m.CheckpointID, err = decodeIntMap(FrameBarrier, p, "checkpoint_id", 0, math.MaxInt64)
	return err
}

// CheckpointComplete is CHECKPOINT_COMPLETE (JVM→Go).
type CheckpointComplete struct{ CheckpointID int64 }

func (m *CheckpointComplete) FrameType() FrameType { return FrameCheckpointComplete }
func (m *CheckpointComplete) Marshal() []byte      { return m.AppendMsgpack(nil) }
func (m *CheckpointComplete) AppendMsgpack(b []byte) []byte {
	return appendIntMap(b, "checkpoint_id", m.CheckpointID)
}
func (m *CheckpointComplete) Unmarshal(p []byte) (err error) {
	m.CheckpointID, err = decodeIntMap(FrameCheckpointComplete, p, "checkpoint_id", 0, math.MaxInt64)
	return err
}

// CheckpointAborted is CHECKPOINT_ABORTED (JVM→Go).
type CheckpointAborted struct{ CheckpointID int64 }

func (m *CheckpointAborted) FrameType() FrameType { return FrameCheckpointAborted }
func (m *CheckpointAborted) Marshal() []byte      { return m.AppendMsgpack(nil) }
func (m *CheckpointAborted) AppendMsgpack(b []byte) []byte {
	return appendIntMap(b, "checkpoint_id", m.CheckpointID)
}
func (m *CheckpointAborted) Unmarshal(p []byte) (err error) {
	m.CheckpointID, err = decodeIntMap(FrameCheckpointAborted, p, "checkpoint_id", 0, math.MaxInt64)
	return err
}

// SnapshotSection is the snapshot bytes of one key group.
type SnapshotSection struct {
	KeyGroup int32
	Section  []byte
}

// Snapshot is SNAPSHOT (Go→JVM): the state of checkpoint CheckpointID. It
// may span several frames; all but the last have Last false, and only the
// last carries Marker (encoded as the key "marker", possibly empty).
type Snapshot struct {
	CheckpointID int64
	Sections     []SnapshotSection
	Marker       []byte // only when Last
	Last         bool
}

var snapshotKeys = []string{"checkpoint_id", "sections", "marker", "last"}
var sectionKeys = []string{"key_group", "section"}

func (m *Snapshot) FrameType() FrameType { return FrameSnapshot }
func (m *Snapshot) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *Snapshot) AppendMsgpack(b []byte) []byte {
	n := 3
	if m.Last {
		n = 4
	}
	b = msgp.AppendMapLen(b, n)
	b = msgp.AppendInt(appendKey(b, "checkpoint_id"), m.CheckpointID)
	b = msgp.AppendArrayLen(appendKey(b, "sections"), len(m.Sections))
	for _, s := range m.Sections {
		b = msgp.AppendMapLen(b, 2)
		b = msgp.AppendInt(appendKey(b, "key_group"), int64(s.KeyGroup))
		b = msgp.AppendBin(appendKey(b, "section"), s.Section)
	}
	if m.Last {
		b = msgp.AppendBin(appendKey(b, "marker"), m.Marker)
	}
	return msgp.AppendBool(appendKey(b, "last"), m.Last)
}

func (m *Snapshot) Unmarshal(p []byte) error {
	*m = Snapshot{}
	hasMarker := false
	var rr *mpReader
	err := decodeMap(FrameSnapshot, p, snapshotKeys, 0b1011, func(r *mpReader, k int) (err error) {
		rr = r
		switch k {
		case 0:
			m.CheckpointID, err = r.int(0, math.MaxInt64)
		case 1:
			var n int
			if n, err = r.length("array"); err != nil {
				return err
			}
			m.Sections = make([]SnapshotSection, n)
			for i := range m.Sections {
				s := &m.Sections[i]
				err = r.readMap(sectionKeys, 0b11, func(k int) (err error) {
					if k == 0 {
						var v int64
						v, err = r.int(0, math.MaxInt32)
						s.KeyGroup = int32(v)
						return err
					}
					s.Section, err = r.bin()
					return err
				})
				if err != nil {
					return err
				}
			}
		case 2:
			hasMarker = true
			m.Marker, err = r.bin()
		case 3:
			m.Last, err = r.boolean()
		}
		return err
	})
	if err != nil {
		return err
	}
	if m.Last != hasMarker {
		if m.Last {
			return rr.fail("missing required key \"marker\" (the last SNAPSHOT frame carries the marker)")
		}
		return rr.fail("key \"marker\" on a SNAPSHOT frame with last=false (only the last frame carries it)")
	}
	return nil
}

// emptyFrame decodes a control frame that has no keys.
func emptyFrame(t FrameType, p []byte) error {
	return decodeMap(t, p, nil, 0, func(*mpReader, int) error { return nil })
}

// EndInput is END_INPUT (JVM→Go): no more input.
type EndInput struct{}

func (m *EndInput) FrameType() FrameType          { return FrameEndInput }
func (m *EndInput) Marshal() []byte               { return m.AppendMsgpack(nil) }
func (m *EndInput) AppendMsgpack(b []byte) []byte { return msgp.AppendMapLen(b, 0) }
func (m *EndInput) Unmarshal(p []byte) error      { return emptyFrame(FrameEndInput, p) }

// EndAck is END_ACK (Go→JVM): all input finished, all outputs sent.
type EndAck struct{}

func (m *EndAck) FrameType() FrameType          { return FrameEndAck }
func (m *EndAck) Marshal() []byte               { return m.AppendMsgpack(nil) }
func (m *EndAck) AppendMsgpack(b []byte) []byte { return msgp.AppendMapLen(b, 0) }
func (m *EndAck) Unmarshal(p []byte) error      { return emptyFrame(FrameEndAck, p) }

// Close is CLOSE (JVM→Go): orderly shutdown.
type Close struct{}

func (m *Close) FrameType() FrameType          { return FrameClose }
func (m *Close) Marshal() []byte               { return m.AppendMsgpack(nil) }
func (m *Close) AppendMsgpack(b []byte) []byte { return msgp.AppendMapLen(b, 0) }
func (m *Close) Unmarshal(p []byte) error      { return emptyFrame(FrameClose, p) }

// ErrorFrame is ERROR (both directions); the sender closes the connection
// after it. Code is one of the ErrorCode values; unknown codes from a newer
// peer are kept as they are.
type ErrorFrame struct {
	Code    string
	Message string
}

var errorKeys = []string{"code", "message"}

func (m *ErrorFrame) FrameType() FrameType { return FrameError }
func (m *ErrorFrame) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *ErrorFrame) AppendMsgpack(b []byte) []byte {
	b = msgp.AppendMapLen(b, 2)
	b = msgp.AppendStr(appendKey(b, "code"), m.Code)
	return msgp.AppendStr(appendKey(b, "message"), m.Message)
}

func (m *ErrorFrame) Unmarshal(p []byte) error {
	*m = ErrorFrame{}
	return decodeMap(FrameError, p, errorKeys, 0b11, func(r *mpReader, k int) (err error) {
		if k == 0 {
			m.Code, err = r.str()
		} else {
			m.Message, err = r.str()
		}
		return err
	})
}

// Err returns the ERROR frame as a *ProtocolError.
func (m *ErrorFrame) Err() *ProtocolError {
	return &ProtocolError{Code: ErrorCode(m.Code), Message: m.Message}
}
