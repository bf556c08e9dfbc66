package bridge

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func protoCode(err error) ErrorCode {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	payloads := [][]byte{{}, {0x80}, bytes.Repeat([]byte{7}, 5000)}
	types := []FrameType{FrameEndInput, FrameClose, FrameData}
	for i, p := range payloads {
		if err := WriteFrame(&buf, types[i], p); err != nil {
			t.Fatal(err)
		}
	}
	if got := buf.Bytes()[:5]; !bytes.Equal(got, []byte{0, 0, 0, 1, 0x19}) {
		t.Fatalf("header % x", got)
	}
	r := bufio.NewReader(&buf)
	scratch := make([]byte, 0, 16)
	for i, p := range payloads {
		f, err := ReadFrame(r, 0, scratch)
		if err != nil {
			t.Fatal(err)
		}
		if f.Type != types[i] || !bytes.Equal(f.Payload, p) {
			t.Fatalf("frame %d: %v % x", i, f.Type, f.Payload)
		}
		if len(p) <= 16 && len(p) > 0 && &f.Payload[0] != &scratch[:1][0] {
			t.Errorf("frame %d: small payload not read into buf", i)
		}
	}
	if _, err := ReadFrame(r, 0, nil); err != io.EOF {
		t.Fatalf("at end: %v", err)
	}
	if h := AppendFrameHeader(nil, FrameOutput, 3); !bytes.Equal(h, []byte{0, 0, 0, 4, 0x12}) {
		t.Fatalf("AppendFrameHeader % x", h)
	}
}

func TestReadFrameErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		max  int
		code ErrorCode
		err  error
		msg  string
	}{
		{"zero length", []byte{0, 0, 0, 0}, 0, CodeMalformedFrame, nil, "length 0"},
		{"over default max", []byte{0x04, 0, 0, 1, 0x10}, 0, CodeFrameTooLarge, nil, "67108865 bytes exceeds the maximum frame size of 67108864"},
		{"over max", []byte{0, 0, 0, 11, 0x10}, 10, CodeFrameTooLarge, nil, "11 bytes"},
		{"huge", []byte{0xFF, 0xFF, 0xFF, 0xFF}, 0, CodeFrameTooLarge, nil, "4294967295"},
		{"unknown type", []byte{0, 0, 0, 1, 0x42}, 0, CodeUnknownFrame, nil, "0x42"},
		{"data type 0x00", []byte{0, 0, 0, 1, 0x00}, 0, CodeUnknownFrame, nil, "0x00"},
		{"truncated header", []byte{0, 0}, 0, "", io.ErrUnexpectedEOF, ""},
		{"no type byte", []byte{0, 0, 0, 1}, 0, "", io.ErrUnexpectedEOF, ""},
		{"truncated payload", []byte{0, 0, 0, 3, 0x19, 0x80}, 0, "", io.ErrUnexpectedEOF, ""},
	}
	for _, c := range cases {
		_, err := ReadFrame(bufio.NewReader(bytes.NewReader(c.in)), c.max, nil)
		if c.code != "" {
			if protoCode(err) != c.code || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s: %v", c.name, err)
			}
		} else if !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
}

// A frame announcing more than the maximum must be refused before anything
// of its announced size is allocated.
func TestReadFrameDoesNotPreallocateOversize(t *testing.T) {
	in := []byte{0x7F, 0xFF, 0xFF, 0xFF, 0x10}
	r := bufio.NewReaderSize(bytes.NewReader(in), 16)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFrame(r, 1<<20, nil)
	runtime.ReadMemStats(&after)
	if protoCode(err) != CodeFrameTooLarge {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("%d bytes allocated for a rejected frame", n)
	}
}

func TestWriteFrameRefusesUnknownType(t *testing.T) {
	if err := WriteFrame(io.Discard, FrameType(0x42), nil); err == nil {
		t.Fatal("no error")
	}
}

func TestFrameTypeNames(t *testing.T) {
	if FrameRestoreDone.String() != "RESTORE_DONE" || FrameType(0x42).String() != "frame type 0x42" {
		t.Fatal(FrameRestoreDone.String())
	}
	if !FrameData.IsData() || FrameHello.IsData() || !FrameClose.Known() || FrameType(0).Known() {
		t.Fatal("predicates")
	}
}
