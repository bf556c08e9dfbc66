package bridge

import (
	"io"
	"math"
	"sort"

	"github.com/flinkgo/flinkgo/internal/msgp"
)

// ControlFrame is the decoded payload of a control frame (every frame type
// but DATA and OUTPUT). Marshal and AppendMsgpack encode it canonically
// (see wire_msgpack.go); Unmarshal accepts any valid encoding, ignores
// unknown keys and names a missing required key in a *ProtocolError
// (malformed_frame). Byte slices in an unmarshalled frame are copies.
type ControlFrame interface {
	FrameType() FrameType
	AppendMsgpack(dst []byte) []byte
	Marshal() []byte
	Unmarshal(payload []byte) error
}

// NewControlFrame returns an empty control frame of type t, or nil if t is
// a data frame or unknown.
func NewControlFrame(t FrameType) ControlFrame {
	switch t {
	case FrameHello:
		return new(Hello)
	case FrameOpen:
		return new(Open)
	case FrameRestore:
		return new(Restore)
	case FrameRestoreDone:
		return new(RestoreDone)
	case FrameReady:
		return new(Ready)
	case FrameCredit:
		return new(Credit)
	case FrameWatermark:
		return new(Watermark)
	case FrameWmAck:
		return new(WmAck)
	case FrameBarrier:
		return new(Barrier)
	case FrameSnapshot:
		return new(Snapshot)
	case FrameCheckpointComplete:
		return new(CheckpointComplete)
	case FrameCheckpointAborted:
		return new(CheckpointAborted)
	case FrameEndInput:
		return new(EndInput)
	case FrameEndAck:
		return new(EndAck)
	case FrameMetrics:
		return new(Metrics)
	case FrameOutputRef:
		return new(OutputRef)
	case FrameError:
		return new(ErrorFrame)
	case FrameClose:
		return new(Close)
	}
	return nil
}

// DecodeControl decodes the payload of a control frame into its typed
// struct. Data frames are refused (unexpected_frame).
func DecodeControl(f Frame) (ControlFrame, error) {
	m := NewControlFrame(f.Type)
	if m == nil {
		return nil, protoErrorf(CodeUnexpectedFrame, "%s is not a control frame", f.Type)
	}
	if err := m.Unmarshal(f.Payload); err != nil {
		return nil, err
	}
	return m, nil
}

// AppendControlFrame appends m as a whole frame (header and payload).
func AppendControlFrame(dst []byte, m ControlFrame) []byte {
	start := len(dst)
	dst = AppendFrameHeader(dst, m.FrameType(), 0)
	dst = m.AppendMsgpack(dst)
	n := uint32(len(dst) - start - 4)
	dst[start], dst[start+1], dst[start+2], dst[start+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return dst
}

// WriteControl writes m as one frame.
func WriteControl(w io.Writer, m ControlFrame) error {
	return WriteFrame(w, m.FrameType(), m.Marshal())
}

// readMap reads a map with string keys. For a key of keys, fn is called with
// r positioned at its value and the key's index; other keys are skipped.
// Duplicate keys and missing required keys (a bit set per index) are errors.
func (r *mpReader) readMap(keys []string, required uint32, fn func(k int) error) error {
	outer := r.key
	n, err := r.length("map")
	if err != nil {
		return err
	}
	var seen uint32
	for i := 0; i < n; i++ {
		r.key = outer
		kb, err := r.raw("str")
		if err != nil {
			return err
		}
		k := -1
		for j, name := range keys {
			if name == string(kb) {
				k = j
				break
			}
		}
		if k < 0 {
			if err := r.skip(0); err != nil {
				return err
			}
			continue
		}
		r.key = keys[k]
		if outer != "" {
			r.key = outer + "." + keys[k]
		}
		if seen&(1<<k) != 0 {
			return r.fail("duplicate key")
		}
		seen |= 1 << k
		if err := fn(k); err != nil {
			return err
		}
	}
	r.key = outer
	if missing := required &^ seen; missing != 0 {
		for j, name := range keys {
			if missing&(1<<j) != 0 {
				return r.fail("missing required key %q", name)
			}
		}
	}
	return nil
}

// decodeMap decodes a whole control payload: one map, nothing after it.
func decodeMap(t FrameType, payload []byte, keys []string, required uint32, fn func(r *mpReader, k int) error) error {
	r := &mpReader{b: payload, frame: t}
	if err := r.readMap(keys, required, func(k int) error { return fn(r, k) }); err != nil {
		return err
	}
	if r.p != len(payload) {
		return r.fail("%d bytes after the map", len(payload)-r.p)
	}
	return nil
}

func appendKey(b []byte, k string) []byte { return msgp.AppendStr(b, k) }

// Hello is HELLO (Go→JVM), the first frame: the protocol version Go speaks,
// the token from FLINKGO_TOKEN, the runtime name and the agents it has.
type Hello struct {
	Version int
	Token   string
	Runtime string
	Agents  []string
}

var helloKeys = []string{"version", "token", "runtime", "agents"}

func (m *Hello) FrameType() FrameType { return FrameHello }
func (m *Hello) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *Hello) AppendMsgpack(b []byte) []byte {
	b = msgp.AppendMapLen(b, 4)
	b = msgp.AppendInt(appendKey(b, "version"), int64(m.Version))
	b = msgp.AppendStr(appendKey(b, "token"), m.Token)
	b = msgp.AppendStr(appendKey(b, "runtime"), m.Runtime)
	b = msgp.AppendArrayLen(appendKey(b, "agents"), len(m.Agents))
	for _, a := range m.Agents {
		b = msgp.AppendStr(b, a)
	}
	return b
}

func (m *Hello) Unmarshal(p []byte) error {
	*m = Hello{}
	return decodeMap(FrameHello, p, helloKeys, 0b1111, func(r *mpReader, k int) (err error) {
		switch k {
		case 0:
			var v int64
			v, err = r.int(0, math.MaxInt32)
			m.Version = int(v)
		case 1:
			m.Token, err = r.str()
		case 2:
			m.Runtime, err = r.str()
		case 3:
			var n int
			if n, err = r.length("array"); err != nil {
				return err
			}
			m.Agents = make([]string, n)
			for i := range m.Agents {
				if m.Agents[i], err = r.str(); err != nil {
					return err
				}
			}
		}
		return err
	})
}

// Open is OPEN (JVM→Go): which agent to run for which subtask, its options
// and the input schema. MaxFrame 0 means the key is absent (DefaultMaxFrame).
type Open struct {
	Agent          string
	Options        map[string]string
	JobID          string
	OperatorID     string
	Subtask        int
	Parallelism    int
	MaxParallelism int
	KeyGroupStart  int32 // inclusive
	KeyGroupEnd    int32 // inclusive
	Attempt        int
	InputSchema    []byte // Arrow IPC schema message
	MaxFrame       int    // optional; 0: absent
	// OutputRefs (optional): the operator keeps the input rows it sent and
	// accepts OUTPUT_REF for rows emitted as they are (protocol.md,
	// "OUTPUT_REF").
	OutputRefs bool
}

// MinMaxFrame is the smallest max_frame OPEN may set.
const MinMaxFrame = 1024

var openKeys = []string{"agent", "options", "job_id", "operator_id", "subtask", "parallelism",
	"max_parallelism", "key_group_start", "key_group_end", "attempt", "input_schema", "max_frame", "output_refs"}

func (m *Open) FrameType() FrameType { return FrameOpen }
func (m *Open) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *Open) AppendMsgpack(b []byte) []byte {
	n := 11
	if m.MaxFrame != 0 {
		n++
	}
	if m.OutputRefs {
		n++
	}
	b = msgp.AppendMapLen(b, n)
	b = msgp.AppendStr(appendKey(b, "agent"), m.Agent)
	names := make([]string, 0, len(m.Options))
	for k := range m.Options {
		names = append(names, k)
	}
	sort.Strings(names) // byte order of the UTF-8 keys
	b = msgp.AppendMapLen(appendKey(b, "options"), len(names))
	for _, k := range names {
		b = msgp.AppendStr(msgp.AppendStr(b, k), m.Options[k])
	}
	b = msgp.AppendStr(appendKey(b, "job_id"), m.JobID)
	b = msgp.AppendStr(appendKey(b, "operator_id"), m.OperatorID)
	b = msgp.AppendInt(appendKey(b, "subtask"), int64(m.Subtask))
	b = msgp.AppendInt(appendKey(b, "parallelism"), int64(m.Parallelism))
	b = msgp.AppendInt(appendKey(b, "max_parallelism"), int64(m.MaxParallelism))
	b = msgp.AppendInt(appendKey(b, "key_group_start"), int64(m.KeyGroupStart))
	b = msgp.AppendInt(appendKey(b, "key_group_end"), int64(m.KeyGroupEnd))
	b = msgp.AppendInt(appendKey(b, "attempt"), int64(m.Attempt))
	b = msgp.AppendBin(appendKey(b, "input_schema"), m.InputSchema)
	if m.MaxFrame != 0 {
		b = msgp.AppendInt(appendKey(b, "max_frame"), int64(m.MaxFrame))
	}
	if m.OutputRefs {
		b = msgp.AppendBool(appendKey(b, "output_refs"), true)
	}
	return b
}

func (m *Open) Unmarshal(p []byte) error {
	*m = Open{}
	r := &mpReader{b: p, frame: FrameOpen}
	err := decodeMap(FrameOpen, p, openKeys, 1<<11-1, func(r *mpReader, k int) (err error) {
		var v int64
		switch k {
		case 0:
			m.Agent, err = r.str()
		case 1:
			m.Options, err = r.strMap()
		case 2:
			m.JobID, err = r.str()
		case 3:
			m.OperatorID, err = r.str()
		case 4:
			v, err = r.int(0, math.MaxInt32-1)
			m.Subtask = int(v)
		case 5:
			v, err = r.int(1, math.MaxInt32)
			m.Parallelism = int(v)
		case 6:
			v, err = r.int(1, math.MaxInt32)
			m.MaxParallelism = int(v)
		case 7:
			v, err = r.int(0, math.MaxInt32)
			m.KeyGroupStart = int32(v)
		case 8:
			v, err = r.int(0, math.MaxInt32)
			m.KeyGroupEnd = int32(v)
		case 9:
			v, err = r.int(0, math.MaxInt32)
			m.Attempt = int(v)
		case 10:
			m.InputSchema, err = r.bin()
		case 11:
			v, err = r.int(MinMaxFrame, DefaultMaxFrame)
			m.MaxFrame = int(v)
		case 12:
			m.OutputRefs, err = r.boolean()
		}
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case m.Subtask >= m.Parallelism:
		return r.fail("subtask %d is not below parallelism %d", m.Subtask, m.Parallelism)
	case m.Parallelism > m.MaxParallelism:
		return r.fail("parallelism %d exceeds max_parallelism %d", m.Parallelism, m.MaxParallelism)
	case m.KeyGroupStart > m.KeyGroupEnd || int(m.KeyGroupEnd) >= m.MaxParallelism:
		return r.fail("key group range [%d, %d] is not within [0, max_parallelism %d)", m.KeyGroupStart, m.KeyGroupEnd, m.MaxParallelism)
	}
	return nil
}

// strMap reads a map of str to str (OPEN's options).
func (r *mpReader) strMap() (map[string]string, error) {
	n, err := r.length("map")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, n)
	for i := 0; i < n; i++ {
		k, err := r.str()
		if err != nil {
			return nil, err
		}
		v, err := r.str()
		if err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, r.fail("duplicate option %q", k)
		}
		out[k] = v
	}
	return out, nil
}

// Restore is RESTORE (JVM→Go): the snapshot section of one key group.
type Restore struct {
	KeyGroup int32
	Section  []byte
}

var restoreKeys = []string{"key_group", "section"}

func (m *Restore) FrameType() FrameType { return FrameRestore }
func (m *Restore) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *Restore) AppendMsgpack(b []byte) []byte {
	b = msgp.AppendMapLen(b, 2)
	b = msgp.AppendInt(appendKey(b, "key_group"), int64(m.KeyGroup))
	return msgp.AppendBin(appendKey(b, "section"), m.Section)
}

func (m *Restore) Unmarshal(p []byte) error {
	*m = Restore{}
	return decodeMap(FrameRestore, p, restoreKeys, 0b11, func(r *mpReader, k int) (err error) {
		if k == 0 {
			var v int64
			v, err = r.int(0, math.MaxInt32)
			m.KeyGroup = int32(v)
			return err
		}
		m.Section, err = r.bin()
		return err
	})
}

// RestoreDone is RESTORE_DONE (JVM→Go): every subtask's recovery marker
// from operator union state; always sent, possibly with no markers.
type RestoreDone struct {
	Markers [][]byte
}

func (m *RestoreDone) FrameType() FrameType { return FrameRestoreDone }
func (m *RestoreDone) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *RestoreDone) AppendMsgpack(b []byte) []byte {
	b = msgp.AppendArrayLen(appendKey(msgp.AppendMapLen(b, 1), "markers"), len(m.Markers))
	for _, mk := range m.Markers {
		b = msgp.AppendBin(b, mk)
	}
	return b
}

func (m *RestoreDone) Unmarshal(p []byte) error {
	*m = RestoreDone{}
	return decodeMap(FrameRestoreDone, p, []string{"markers"}, 1, func(r *mpReader, _ int) error {
		n, err := r.length("array")
		if err != nil {
			return err
		}
		m.Markers = make([][]byte, n)
		for i := range m.Markers {
			if m.Markers[i], err = r.bin(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Ready is READY (Go→JVM): the output schema and the initial credit.
type Ready struct {
	OutputSchema []byte // Arrow IPC schema message
	Credit       int64  // rows
}

var readyKeys = []string{"output_schema", "credit"}

func (m *Ready) FrameType() FrameType { return FrameReady }
func (m *Ready) Marshal() []byte      { return m.AppendMsgpack(nil) }

func (m *Ready) AppendMsgpack(b []byte) []byte {
	b = msgp.AppendMapLen(b, 2)
	b = msgp.AppendBin(appendKey(b, "output_schema"), m.OutputSchema)
	return msgp.AppendInt(appendKey(b, "credit"), m.Credit)
}

func (m *Ready) Unmarshal(p []byte) error {
	*m = Ready{}
	return decodeMap(FrameReady, p, readyKeys, 0b11, func(r *mpReader, k int) (err error) {
		if k == 0 {
			m.OutputSchema, err = r.bin()
			return err
		}
		m.Credit, err = r.int(0, math.MaxInt64)
		return err
	})
}
