package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

var decodeKinds = []error{ErrTruncated, ErrChecksum, ErrVersion, ErrCorrupt}

// checkErr fails unless err is an *Error of one of kinds.
func checkErr(t *testing.T, err error, kinds ...error) {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v is a %T, not *Error", err, err)
	}
	for _, k := range kinds {
		if se.Kind == k {
			return
		}
	}
	t.Fatalf("error %v has an unexpected kind %v", err, se.Kind)
}

// checkSection decodes b; whatever decodes must re-encode, and the
// re-encoding must be a fixed point of decode → encode.
func checkSection(t *testing.T, b []byte) {
	t.Helper()
	s, err := DecodeSection(b)
	if err != nil {
		if s != nil {
			t.Fatal("a section and an error")
		}
		checkErr(t, err, decodeKinds...)
		return
	}
	b2, err := EncodeSection(s)
	if err != nil {
		t.Fatalf("decoded section does not re-encode: %v", err)
	}
	s2, err := DecodeSection(b2)
	if err != nil {
		t.Fatalf("re-encoded section does not decode: %v", err)
	}
	b3, err := EncodeSection(s2)
	if err != nil || !bytes.Equal(b2, b3) {
		t.Fatalf("decode → encode is not stable (err %v)", err)
	}
	if _, err := DecodeSectionFor(b, KeyGroupRange{Start: s.KeyGroup + 1, End: MaxKeyGroup}); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("DecodeSectionFor outside the owned range: %v", err)
	}
}

// arrayCount reads the msgpack array length at the start of body (0 if none).
func arrayCount(body []byte) uint32 {
	switch {
	case len(body) >= 1 && body[0]&0xf0 == 0x90:
		return uint32(body[0] & 0x0f)
	case len(body) >= 3 && body[0] == 0xdc:
		return uint32(binary.BigEndian.Uint16(body[1:]))
	case len(body) >= 5 && body[0] == 0xdd:
		return binary.BigEndian.Uint32(body[1:])
	}
	return 0
}

func FuzzDecodeSection(f *testing.F) {
	seeds := []*Section{{KeyGroup: 0}, smallSection(), valuesSection(), counterSection(9, 0, 40)}
	for _, s := range seeds {
		b, err := EncodeSection(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(bytes.Clone(body(b))) // exercised as a bare body below
		f.Add(b[:len(b)/2])
		f.Add(patch(b, func(b []byte) { b[len(b)/2] ^= 0x10 }))
		f.Add(patch(b, func(b []byte) { b[5] = 2 }))
		f.Add(patch(b, func(b []byte) { b[19]++; fixCRC(b) }))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSection(t, data)
		if len(data) >= sectionHeaderLen { // get past the checksum
			fixed := bytes.Clone(data)
			fixCRC(fixed)
			checkSection(t, fixed)
		}
		checkSection(t, rawSection(7, arrayCount(data), data))
	})
}

func FuzzDecodeMarker(f *testing.F) {
	for _, m := range []*Marker{kafkaMarker(), noneMarker()} {
		b, err := EncodeMarker(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-3])
		f.Add(patch(b, func(b []byte) { b[len(b)-2] ^= 1 }))
		f.Add(patch(b, func(b []byte) { b[5] = 9 }))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(b []byte) {
			m, err := DecodeMarker(b)
			if err != nil {
				if m != nil {
					t.Fatal("a marker and an error")
				}
				checkErr(t, err, decodeKinds...)
				return
			}
			b2, err := EncodeMarker(m)
			if err != nil {
				t.Fatalf("decoded marker does not re-encode: %v", err)
			}
			m2, err := DecodeMarker(b2)
			if err != nil {
				t.Fatalf("re-encoded marker does not decode: %v", err)
			}
			if b3, err := EncodeMarker(m2); err != nil || !bytes.Equal(b2, b3) {
				t.Fatalf("decode → encode is not stable (err %v)", err)
			}
		}
		check(data)
		if len(data) >= markerHeaderLen { // get past length and checksum
			fixed := bytes.Clone(data)
			binary.BigEndian.PutUint32(fixed[8:], uint32(len(fixed)-markerHeaderLen))
			binary.BigEndian.PutUint32(fixed[markerCRCOffset:], markerCRC(fixed))
			check(fixed)
		}
	})
}
