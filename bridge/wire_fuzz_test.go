package bridge

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

func FuzzReadFrame(f *testing.F) {
	var seed []byte
	for _, m := range sampleFrames()[:6] {
		seed = AppendControlFrame(seed, m)
	}
	f.Add(seed, uint16(0))
	f.Add(seed, uint16(40))
	f.Add([]byte{0, 0, 0, 0}, uint16(0))
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0x10}, uint16(0))
	f.Add([]byte{0, 0, 0, 2, 0x10, 0xAA, 0, 0, 0, 1}, uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		buf := make([]byte, 0, 32)
		var again bytes.Buffer
		for {
			fr, err := ReadFrame(r, int(max), buf)
			if err != nil {
				var pe *ProtocolError
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &pe) {
					t.Fatalf("unclassified error %v", err)
				}
				if errors.Is(err, io.EOF) && !bytes.Equal(again.Bytes(), data) {
					t.Fatalf("clean EOF before the end of the data")
				}
				break
			}
			limit := int(max)
			if limit <= 0 {
				limit = DefaultMaxFrame
			}
			if len(fr.Payload)+1 > limit {
				t.Fatalf("frame of %d bytes over the max %d", len(fr.Payload)+1, limit)
			}
			if err := WriteFrame(&again, fr.Type, fr.Payload); err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, again.Bytes()) {
				t.Fatalf("re-encoded frames differ from the input")
			}
			if !fr.Type.IsData() {
				_, _ = DecodeControl(fr)
			}
		}
		// readFrame reading long payloads past the buffer gives the same
		// frames and the same end.
		src := bytes.NewReader(data)
		r1, r2 := bufio.NewReaderSize(bytes.NewReader(data), 16), bufio.NewReaderSize(src, 16)
		for {
			f1, err1 := ReadFrame(r1, int(max), nil)
			f2, err2 := readFrame(r2, src, int(max), func(_ FrameType, n int) []byte { return make([]byte, n) })
			if (err1 == nil) != (err2 == nil) || protoCode(err1) != protoCode(err2) || errors.Is(err1, io.EOF) != errors.Is(err2, io.EOF) {
				t.Fatalf("ReadFrame: %v; readFrame with a direct reader: %v", err1, err2)
			}
			if err1 != nil {
				break
			}
			if f1.Type != f2.Type || !bytes.Equal(f1.Payload, f2.Payload) {
				t.Fatalf("frames differ: %v %d bytes, %v %d bytes", f1.Type, len(f1.Payload), f2.Type, len(f2.Payload))
			}
		}
	})
}

func FuzzControlFrames(f *testing.F) {
	for _, m := range sampleFrames() {
		if b := m.Marshal(); len(b) < 1000 {
			f.Add(byte(m.FrameType()), b)
		}
	}
	f.Add(byte(FrameOpen), []byte{0x8c})
	f.Fuzz(func(t *testing.T, typ byte, payload []byte) {
		m, err := DecodeControl(Frame{Type: FrameType(typ), Payload: payload})
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ProtocolError: %v", err)
			}
			return
		}
		// Whatever decodes re-encodes canonically and decodes to the same.
		b := m.Marshal()
		m2 := NewControlFrame(m.FrameType())
		if err := m2.Unmarshal(b); err != nil {
			t.Fatalf("%T: canonical form does not decode: %v", m, err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("%T: %+v != %+v", m, m, m2)
		}
		if !bytes.Equal(m2.Marshal(), b) {
			t.Fatalf("%T: encoding not canonical", m)
		}
	})
}
