package bridge

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// ProtocolVersion is the wire protocol version this package speaks.
const ProtocolVersion = 1

// DefaultMaxFrame is the default maximum frame size: the largest value of a
// frame's length field (type byte plus payload). OPEN may lower it.
const DefaultMaxFrame = 64 << 20

// FrameHeaderLen is the size of a frame header: u32 length, u8 type.
const FrameHeaderLen = 5

// FrameType is the type byte of a frame.
type FrameType uint8

// Frame types of protocol version 1.
const (
	FrameHello              FrameType = 0x01 // Go→JVM
	FrameOpen               FrameType = 0x02 // JVM→Go
	FrameRestore            FrameType = 0x03 // JVM→Go
	FrameRestoreDone        FrameType = 0x04 // JVM→Go
	FrameReady              FrameType = 0x05 // Go→JVM
	FrameData               FrameType = 0x10 // JVM→Go, Arrow IPC stream
	FrameCredit             FrameType = 0x11 // Go→JVM
	FrameOutput             FrameType = 0x12 // Go→JVM, Arrow IPC stream
	FrameWatermark          FrameType = 0x13 // JVM→Go
	FrameWmAck              FrameType = 0x14 // Go→JVM
	FrameBarrier            FrameType = 0x15 // JVM→Go
	FrameSnapshot           FrameType = 0x16 // Go→JVM
	FrameCheckpointComplete FrameType = 0x17 // JVM→Go
	FrameCheckpointAborted  FrameType = 0x18 // JVM→Go
	FrameEndInput           FrameType = 0x19 // JVM→Go
	FrameEndAck             FrameType = 0x1A // Go→JVM
	FrameMetrics            FrameType = 0x1B // Go→JVM
	FrameOutputRef          FrameType = 0x1C // Go→JVM, only after OPEN's output_refs
	FrameError              FrameType = 0x7E // both directions
	FrameClose              FrameType = 0x7F // JVM→Go
)

var frameNames = map[FrameType]string{
	FrameHello: "HELLO", FrameOpen: "OPEN", FrameRestore: "RESTORE", FrameRestoreDone: "RESTORE_DONE",
	FrameReady: "READY", FrameData: "DATA", FrameCredit: "CREDIT", FrameOutput: "OUTPUT",
	FrameWatermark: "WATERMARK", FrameWmAck: "WM_ACK", FrameBarrier: "BARRIER", FrameSnapshot: "SNAPSHOT",
	FrameCheckpointComplete: "CHECKPOINT_COMPLETE", FrameCheckpointAborted: "CHECKPOINT_ABORTED",
	FrameEndInput: "END_INPUT", FrameEndAck: "END_ACK", FrameMetrics: "METRICS", FrameOutputRef: "OUTPUT_REF", FrameError: "ERROR", FrameClose: "CLOSE",
}

// String returns the protocol name of the frame type, e.g. "RESTORE_DONE".
func (t FrameType) String() string {
	if n, ok := frameNames[t]; ok {
		return n
	}
	return fmt.Sprintf("frame type 0x%02X", uint8(t))
}

// Known reports whether t is a frame type of protocol version 1.
func (t FrameType) Known() bool {
	_, ok := frameNames[t]
	return ok
}

// IsData reports whether frames of type t carry an Arrow IPC stream
// (DATA, OUTPUT) rather than a msgpack map.
func (t FrameType) IsData() bool { return t == FrameData || t == FrameOutput }

// Frame is one frame read from the wire.
type Frame struct {
	Type    FrameType
	Payload []byte
}

// ReadFrame reads one frame. maxSize bounds the length field (type byte plus
// payload); maxSize <= 0 means DefaultMaxFrame. The payload is read into buf
// when it fits (cap(buf) >= payload length), else into a new slice, so a
// caller that reuses buf must be done with the previous frame's payload.
//
// A clean end of stream before a frame starts is io.EOF; an end inside a
// frame is io.ErrUnexpectedEOF. A length of 0 (malformed_frame), a length
// above maxSize (frame_too_large) and an unknown type (unknown_frame) are
// *ProtocolError; the length is checked before anything is allocated, and
// after such an error the stream is not positioned at a frame boundary.
func ReadFrame(r *bufio.Reader, maxSize int, buf []byte) (Frame, error) {
	return readFrame(r, nil, maxSize, func(_ FrameType, size int) []byte {
		if cap(buf) >= size {
			return buf[:size]
		}
		return make([]byte, size)
	})
}

// readFrame is ReadFrame with the payload's buffer chosen once the type
// and the size are known: payloadBuf returns a slice of length size. With
// a non-nil direct, the reader that r reads from, a payload longer than
// what r holds is read from direct once r's buffered bytes are taken, not
// copied through r's buffer.
func readFrame(r *bufio.Reader, direct io.Reader, maxSize int, payloadBuf func(FrameType, int) []byte) (Frame, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxFrame
	}
	hdr, err := r.Peek(4)
	if err != nil {
		if len(hdr) > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr)
	if n == 0 {
		return Frame{}, protoErrorf(CodeMalformedFrame, "frame with length 0 (the length counts the type byte, so it is at least 1)")
	}
	if uint64(n) > uint64(maxSize) {
		return Frame{}, protoErrorf(CodeFrameTooLarge, "frame of %d bytes exceeds the maximum frame size of %d bytes", n, maxSize)
	}
	_, _ = r.Discard(4)
	tb, err := r.ReadByte()
	if err != nil {
		return Frame{}, unexpectedEOF(err)
	}
	typ := FrameType(tb)
	if !typ.Known() {
		return Frame{}, protoErrorf(CodeUnknownFrame, "unknown frame type 0x%02X (this runtime speaks protocol version %d)", tb, ProtocolVersion)
	}
	size := int(n - 1)
	payload := payloadBuf(typ, size)
	if direct != nil && size > r.Buffered() {
		k, _ := r.Read(payload[:r.Buffered()]) // what r holds; no read from direct
		if _, err := io.ReadFull(direct, payload[k:]); err != nil {
			return Frame{}, unexpectedEOF(err)
		}
		return Frame{Type: typ, Payload: payload}, nil
	}
	if _, err := io.ReadFull(r, payload); err != nil {
		return Frame{}, unexpectedEOF(err)
	}
	return Frame{Type: typ, Payload: payload}, nil
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// AppendFrameHeader appends the header of a frame with a payload of
// payloadLen bytes.
func AppendFrameHeader(dst []byte, typ FrameType, payloadLen int) []byte {
	return append(binary.BigEndian.AppendUint32(dst, uint32(payloadLen+1)), byte(typ))
}

// WriteFrame writes one frame: header, then payload. w should be buffered
// (two writes per frame). Unknown frame types and payloads that do not fit
// the u32 length are refused; the negotiated maximum frame size is the
// caller's to respect.
func WriteFrame(w io.Writer, typ FrameType, payload []byte) error {
	if !typ.Known() {
		return fmt.Errorf("flinkgo/bridge: refusing to write unknown frame type 0x%02X", uint8(typ))
	}
	if uint64(len(payload)) >= math.MaxUint32 {
		return fmt.Errorf("flinkgo/bridge: %s payload of %d bytes does not fit a frame", typ, len(payload))
	}
	var hdr [FrameHeaderLen]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(payload)+1))
	hdr[4] = byte(typ)
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if len(payload) == 0 {
		return nil
	}
	_, err := w.Write(payload)
	return err
}
