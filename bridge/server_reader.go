package bridge

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/flinkgo/flinkgo/arrowio"
)

// inMsg is one frame from the operator, decoded by the reader goroutine,
// or the error that ended reading (then it is the last one).
type inMsg struct {
	typ   FrameType
	batch *arrowio.Batch // DATA, decoded in full
	// payload is the DATA frame's payload, which batch reads in place: from
	// s.payloads, to go back there once batch is released (batchRef).
	payload []byte
	ctl     ControlFrame // control frames
	err     error        // terminal: *ProtocolError, ErrConnClosed, I/O error
}

// reader reads frames, decodes them and hands them to the core goroutine
// in order. It owns the read side of the connection and the Arrow decoder
// (DATA is decoded here, off the core goroutine, so decoding overlaps with
// action execution; a malformed batch is rejected before any of its rows
// reaches the core).
//
// DATA payloads are read into buffers of s.payloads: the decoded batch is
// zero-copy and keeps its payload until the last hold on it ends
// (batchRef.release), and the buffer is reused only if the batch lent
// nothing (arrowio.Batch.Lent).
func (s *server) reader(out chan<- inMsg, stop <-chan struct{}) {
	dec := arrowio.NewDecoder(s.schema, nil)
	dec.ShareInput() // a payload is reused only when its batch lent nothing (batchRef.release)
	defer dec.Close()
	send := func(m inMsg) bool {
		select {
		case out <- m:
			return true
		case <-stop:
			if m.batch != nil {
				m.batch.Release()
			}
			return false
		}
	}
	for {
		// A DATA batch aliases its payload: the buffer comes from the pool
		// and goes back once the batch is released having lent nothing.
		// Control frames get their own (a decoded one may alias it).
		f, err := readFrame(s.br, s.conn, s.maxFrame, func(t FrameType, size int) []byte {
			if t == FrameData {
				return s.payloads.get(size)
			}
			return make([]byte, size)
		})
		if err != nil {
			send(inMsg{err: readErr(err)})
			return
		}
		m := inMsg{typ: f.Type}
		switch {
		case f.Type == FrameData:
			m.payload = f.Payload
			m.batch, err = dec.DecodeBatch(f.Payload)
			if err != nil {
				err = dataErr(err)
			}
		case f.Type.IsData():
			err = protoErrorf(CodeUnexpectedFrame, "%s from the operator (OUTPUT goes from Go to the JVM only)", f.Type)
		default:
			m.ctl, err = DecodeControl(f)
		}
		if err != nil {
			send(inMsg{err: err})
			return
		}
		if !send(m) {
			return
		}
	}
}

// readErr classifies an error of ReadFrame.
func readErr(err error) error {
	var pe *ProtocolError
	switch {
	case errors.As(err, &pe):
		return err
	case errors.Is(err, io.EOF):
		return ErrConnClosed
	case errors.Is(err, net.ErrClosed):
		return fmt.Errorf("%w (closed locally)", ErrConnClosed)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w in the middle of a frame", ErrConnClosed)
	}
	return fmt.Errorf("bridge: reading from the operator: %w", err)
}

// dataErr maps an arrowio decode error of a DATA frame to its code.
func dataErr(err error) error {
	code := CodeMalformedFrame
	if errors.Is(err, arrowio.ErrSchema) {
		code = CodeBadSchema
	}
	return &ProtocolError{Code: code, Err: err,
		Message: fmt.Sprintf("DATA: %v; no row of the batch was applied", err)}
}
