package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/arrowio"
	"github.com/flinkgo/flinkgo/operator"
	"github.com/flinkgo/flinkgo/snapshot"
)

// ServerConfig configures Serve.
type ServerConfig struct {
	// Agents the binary holds; OPEN selects one by name.
	Agents []*operator.Agent
	// Token from FLINKGO_TOKEN, sent back in HELLO.
	Token string
	// Protocol is FLINKGO_PROTOCOL as given ("" means ProtocolVersion). A
	// version this runtime does not speak is answered with ERROR
	// version_mismatch naming both versions.
	Protocol string
	// Logger for the runtime; nil discards. Serve adds the subtask index
	// and the agent name once OPEN has named them.
	Logger *slog.Logger
	// ProcessWide applies the options that change the whole process:
	// go.memory.limit (debug.SetMemoryLimit), go.gc.min.heap (GOGC, see
	// startGCPacer; not when GOGC is set in the environment) and
	// go.maxprocs (GOMAXPROCS). Main sets it; in-process tests, which run
	// several servers in one process, leave it off.
	ProcessWide bool
}

// ErrPeer: the JVM operator sent ERROR. The error names its code and message.
var ErrPeer = errors.New("bridge: the Flink operator reported an error")

// ErrConnClosed: the connection ended without CLOSE.
var ErrConnClosed = errors.New("bridge: the connection to the Flink operator ended without CLOSE")

// errWriteTimeout bounds writing the final ERROR frame to a peer that does
// not read.
const errWriteTimeout = 2 * time.Second

// server is one connection from HELLO to exit. The fields set by the
// handshake are read-only afterwards.
type server struct {
	cfg  ServerConfig
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer // handshake only; the writer goroutine has its own
	log  *slog.Logger
	buf  []byte // payload scratch for control frames during the handshake
	// payloads keeps DATA payload buffers for reuse (reader, batchRef).
	payloads payloadPool

	open     Open
	maxFrame int
	agent    *operator.Agent
	set      *settings
	core     *operator.Core
	schema   *arrowio.InputSchema
	ob       *arrowio.OutputBuilder
	debt     int // restored inputs: their credit is not granted again
	cpID     int64
	ctx      context.Context   // Serve's
	markers  []snapshot.Marker // RESTORE_DONE's, decoded
	marking  *markWork         // MarkDoneBelow of the restored keys, nil if none
}

// readBufferSize is the read side's bufio buffer. It holds frame headers
// and control frames; a DATA payload is read past it, straight into its
// pooled buffer (readFrame), except for what the buffer already holds. A
// large buffer (256 KiB before) took in most of the next DATA frame with
// each header, which then was copied out of it: 5 % of the Go process's
// CPU in the pass-through benchmark.
const readBufferSize = 16 << 10

// Serve runs the protocol on conn, as the Go process of one operator
// subtask: HELLO, OPEN, restore, READY, then the run loop until CLOSE
// (nil), ctx ends (context.Cause, after sending what was produced), the
// operator sends ERROR or closes the connection, or something fails. On a
// failure Serve sends ERROR with the protocol's code naming the problem
// before it returns the error (a *ProtocolError for what it reported).
// Serve closes conn.
func Serve(ctx context.Context, conn net.Conn, cfg ServerConfig) error {
	lg := cfg.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &server{cfg: cfg, conn: conn, br: bufio.NewReaderSize(conn, readBufferSize),
		bw: bufio.NewWriterSize(conn, 64<<10), log: lg, maxFrame: DefaultMaxFrame, ctx: ctx}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // unblocks handshake reads
	err := s.handshake()
	if !stop() {
		// ctx ended during the handshake.
		s.closeStore()
		if s.ob != nil {
			s.ob.Release()
		}
		return fmt.Errorf("bridge: stopped before READY: %w", context.Cause(ctx))
	}
	if err != nil {
		s.closeStore()
		if s.ob != nil {
			s.ob.Release()
		}
		return s.reject(err)
	}
	return s.run(ctx)
}

// reject sends err as ERROR if it is a *ProtocolError, then returns it.
func (s *server) reject(err error) error {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		_ = s.conn.SetWriteDeadline(time.Now().Add(errWriteTimeout))
		if werr := WriteControl(s.bw, pe.ErrorFrame()); werr == nil {
			_ = s.bw.Flush()
		}
		s.log.Error("sent ERROR to the operator", "code", pe.Code, "message", pe.Message)
		lingerClose(s.conn, s.br)
	}
	return err
}

// lingerTimeout bounds lingerClose.
const lingerTimeout = 500 * time.Millisecond

// lingerClose ends the connection after an ERROR so that the peer can read
// it: it shuts down the write side, discards what the peer still sends
// until it closes (or lingerTimeout passes), then closes. Closing a Unix
// socket with unread data would make the peer's next read fail with
// ECONNRESET instead of returning the ERROR frame. REQUIRES: no other
// goroutine reads conn.
func lingerClose(conn net.Conn, r io.Reader) {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = conn.SetReadDeadline(time.Now().Add(lingerTimeout))
	_, _ = io.Copy(io.Discard, r)
	_ = conn.Close()
}

func (s *server) send(m ControlFrame) error {
	if err := WriteControl(s.bw, m); err != nil {
		return fmt.Errorf("bridge: sending %s: %w", m.FrameType(), err)
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("bridge: sending %s: %w", m.FrameType(), err)
	}
	return nil
}

// readControl reads the next frame during the handshake. ERROR from the
// peer and the end of the connection are errors; a data frame is
// unexpected_frame.
func (s *server) readControl(waitingFor string) (ControlFrame, error) {
	f, err := ReadFrame(s.br, s.maxFrame, s.buf[:0])
	if err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) {
			return nil, err
		}
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			return nil, fmt.Errorf("%w while waiting for %s", ErrConnClosed, waitingFor)
		}
		return nil, fmt.Errorf("bridge: reading while waiting for %s: %w", waitingFor, err)
	}
	if cap(f.Payload) > cap(s.buf) && cap(f.Payload) <= 1<<20 {
		s.buf = f.Payload[:0]
	}
	if f.Type.IsData() {
		return nil, protoErrorf(CodeUnexpectedFrame, "%s while waiting for %s", f.Type, waitingFor)
	}
	m, err := DecodeControl(f)
	if err != nil {
		return nil, err
	}
	if e, ok := m.(*ErrorFrame); ok {
		return nil, fmt.Errorf("%w while this process waited for %s: %s: %s", ErrPeer, waitingFor, e.Code, e.Message)
	}
	return m, nil
}

func agentNames(agents []*operator.Agent) []string {
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = a.Name
	}
	return names
}

// handshake runs HELLO, OPEN, RESTORE*, RESTORE_DONE and READY.
func (s *server) handshake() error {
	if p := strings.TrimSpace(s.cfg.Protocol); p != "" && p != strconv.Itoa(ProtocolVersion) {
		return protoErrorf(CodeVersionMismatch, "the Flink operator speaks flinkgo protocol %s (FLINKGO_PROTOCOL), this binary (%s) speaks protocol %d; rebuild the Go binary with a flinkgo release that matches the operator's jar",
			p, Runtime, ProtocolVersion)
	}
	hello := &Hello{Version: ProtocolVersion, Token: s.cfg.Token, Runtime: Runtime, Agents: agentNames(s.cfg.Agents)}
	if err := s.send(hello); err != nil {
		return err
	}
	m, err := s.readControl("OPEN")
	if err != nil {
		return err
	}
	open, ok := m.(*Open)
	if !ok {
		return protoErrorf(CodeUnexpectedFrame, "%s while waiting for OPEN (after HELLO the operator sends OPEN)", m.FrameType())
	}
	s.open = *open
	if open.MaxFrame > 0 {
		s.maxFrame = open.MaxFrame
	}
	s.log = s.log.With("subtask", open.Subtask, "agent", open.Agent)
	if err := s.setup(open); err != nil {
		return err
	}
	sections, err := s.readRestore()
	if err != nil {
		return err
	}
	if err := s.recoverStore(); err != nil {
		return err
	}
	if err := s.core.Restore(s.cpID, sections); err != nil {
		return &ProtocolError{Code: CodeRestoreFailed, Message: fmt.Sprintf("restoring %d key-group sections of checkpoint %d: %v", len(sections), s.cpID, err), Err: err}
	}
	s.markRestored(sections)
	// Restored inputs (held, or finished during Restore) earn credit the
	// operator never spent: it is not passed on.
	st := s.core.Stats()
	s.debt = st.QueuedInputs + int(st.InputsFinished)
	if len(sections) > 0 {
		s.log.Info("restored", "checkpoint", s.cpID, "key_groups", len(sections), "keys", s.core.Stats().Keys, "inputs", s.debt)
	}
	ready := &Ready{OutputSchema: s.ob.SchemaMessage(), Credit: s.set.initialCredit()}
	if err := s.send(ready); err != nil {
		return err
	}
	s.log.Info("ready", "key_groups", fmt.Sprintf("%d..%d", open.KeyGroupStart, open.KeyGroupEnd),
		"attempt", open.Attempt, "credit", ready.Credit, "credit_rows", s.set.creditRows, "credit_bytes", s.set.creditBytes, "num_async_threads", s.set.workers, "tasks_in_flight", s.set.core.MaxConcurrency, "store", s.set.backend)
	return nil
}

// setup selects the agent, reads the options and builds the core and the
// schemas from OPEN.
func (s *server) setup(open *Open) error {
	for _, a := range s.cfg.Agents {
		if a.Name == open.Agent {
			s.agent = a
		}
	}
	if s.agent == nil {
		return protoErrorf(CodeInternal, "OPEN asks for agent %q, but this binary holds %q; set go.agent to one of them (or run the binary that holds the agent)",
			open.Agent, agentNames(s.cfg.Agents))
	}
	set, err := parseSettings(open)
	if err != nil {
		return &ProtocolError{Code: CodeInternal, Message: err.Error(), Err: err}
	}
	s.set = set
	set.core.Logger = s.log
	if err := s.openStore(open); err != nil {
		return err
	}
	if set.memoryLimit > 0 && s.cfg.ProcessWide {
		applyMemoryLimit(set.memoryLimit)
		s.log.Info("memory limit set", "bytes", set.memoryLimit)
	}
	if set.maxProcs > 0 && s.cfg.ProcessWide {
		prev := runtime.GOMAXPROCS(set.maxProcs)
		s.log.Info("GOMAXPROCS set", "option", OptMaxProcs, "procs", set.maxProcs, "was", prev)
	}
	s.schema, err = arrowio.ReadInputSchema(open.InputSchema)
	if err != nil {
		return &ProtocolError{Code: CodeBadSchema, Message: fmt.Sprintf("OPEN input_schema: %v", err), Err: err}
	}
	cols, err := outputColumns(s.agent)
	if err != nil {
		return &ProtocolError{Code: CodeBadSchema, Message: err.Error(), Err: err}
	}
	if s.ob, err = arrowio.NewOutputBuilder(cols, nil); err != nil {
		return &ProtocolError{Code: CodeBadSchema, Message: fmt.Sprintf("agent %q output schema: %v", s.agent.Name, err), Err: err}
	}
	if s.core, err = operator.NewCore(s.agent, set.core, set.store); err != nil {
		return &ProtocolError{Code: CodeInternal, Message: err.Error(), Err: err}
	}
	return nil
}

// readRestore reads RESTORE frames up to RESTORE_DONE and decodes the
// sections (for the owned key groups only) and the markers.
func (s *server) readRestore() ([]*snapshot.Section, error) {
	owned := s.set.core.Owned
	var sections []*snapshot.Section
	for {
		m, err := s.readControl("RESTORE or RESTORE_DONE")
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *Restore:
			sec, err := snapshot.DecodeSectionFor(m.Section, owned)
			if err != nil {
				return nil, &ProtocolError{Code: CodeRestoreFailed, Err: err,
					Message: fmt.Sprintf("RESTORE of key group %d (this subtask owns %d..%d): %v", m.KeyGroup, owned.Start, owned.End, err)}
			}
			if sec.KeyGroup != m.KeyGroup {
				return nil, protoErrorf(CodeRestoreFailed, "RESTORE says key group %d, but its section holds key group %d; the operator must send each section under its own key group", m.KeyGroup, sec.KeyGroup)
			}
			sections = append(sections, sec)
		case *RestoreDone:
			for i, b := range m.Markers {
				mk, err := snapshot.DecodeMarker(b)
				if err != nil {
					return nil, &ProtocolError{Code: CodeRestoreFailed, Err: err,
						Message: fmt.Sprintf("RESTORE_DONE marker %d of %d: %v", i+1, len(m.Markers), err)}
				}
				s.cpID = max(s.cpID, mk.CheckpointID)
				s.markers = append(s.markers, *mk)
			}
			return sections, nil
		default:
			return nil, protoErrorf(CodeUnexpectedFrame, "%s while waiting for RESTORE or RESTORE_DONE (after OPEN the operator sends RESTORE frames, then RESTORE_DONE)", m.FrameType())
		}
	}
}
