package statestore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Seeds: the golden records plus a few hand-made shapes.
func fuzzSeeds(f *testing.F) (keys, values [][]byte) {
	paths, _ := filepath.Glob(filepath.Join(goldenDir, "*.key.hex"))
	for _, kp := range paths {
		vp := strings.TrimSuffix(kp, ".key.hex") + ".value.hex"
		k, v := readHexF(f, kp), readHexF(f, vp)
		keys, values = append(keys, k), append(values, v)
	}
	keys = append(keys, nil, []byte{1}, []byte{2, 0, 0, 0, 0}, testKey("").Bytes())
	values = append(values, nil, []byte{0x95, 1, 1, 0x90, 0x90, 0x90}, []byte{0x93, 2, 0xc0, 0xc0})
	return keys, values
}

func readHexF(f *testing.F, path string) []byte {
	text, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	b, err := hexDecode(string(text))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func FuzzParseRecordKey(f *testing.F) {
	keys, _ := fuzzSeeds(f)
	for _, k := range keys {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseRecordKey(b)
		if err != nil {
			if _, ok := err.(*RecordError); !ok {
				t.Fatalf("error of type %T, want *RecordError", err)
			}
			return
		}
		// Parsing is strict: only canonical encodings are accepted.
		if got := k.Bytes(); !bytes.Equal(got, b) {
			t.Fatalf("ParseRecordKey(%x).Bytes() = %x", b, got)
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	keys, values := fuzzSeeds(f)
	for i, v := range values {
		f.Add(keys[i%len(keys)], v)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := DecodeRecord(key, value)
		if err != nil {
			if _, ok := err.(*RecordError); !ok {
				t.Fatalf("error of type %T, want *RecordError", err)
			}
			return
		}
		// Whatever decodes re-encodes, and the re-encoding is a fixed point.
		// (Bytes, not DeepEqual: a NaN is not equal to itself.)
		enc, err := EncodeRecord(r)
		if err != nil {
			t.Fatalf("a decoded record does not encode: %v", err)
		}
		r2, err := DecodeRecord(key, enc)
		if err != nil {
			t.Fatalf("a re-encoded record does not decode: %v", err)
		}
		enc2, err := EncodeRecord(r2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable: %v\n%x\n%x", err, enc, enc2)
		}
	})
}

func FuzzDecodeValue(f *testing.F) {
	_, values := fuzzSeeds(f)
	for _, v := range values {
		f.Add(v)
	}
	f.Add([]byte{0xc0})
	f.Fuzz(func(t *testing.T, b []byte) {
		// The non-allocating check agrees with the decoder.
		r := getReader(b)
		_, skipErr := r.skipValue(0)
		skipOK := skipErr == nil && r.remaining() == 0
		putReader(r)
		v, err := DecodeValue(b)
		if skipOK != (err == nil) {
			t.Fatalf("skipValue ok=%v (%v), DecodeValue err=%v", skipOK, skipErr, err)
		}
		if err != nil {
			return
		}
		enc, err := EncodeValue(v)
		if err != nil {
			t.Fatalf("a decoded value does not encode: %v", err)
		}
		v2, err := DecodeValue(enc)
		if err != nil {
			t.Fatalf("a re-encoded value does not decode: %v", err)
		}
		if enc2, _ := EncodeValue(v2); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%x\n%x", enc, enc2)
		}
	})
}
