package snapshot

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Section header layout (all integers big-endian); see docs/snapshot-format.md.
//
//	off len field
//	  0   4 magic "FGKS"
//	  4   2 format version (FormatVersion)
//	  6   2 flags (bit 0: payload is zstd; bit 1: reserved for incremental)
//	  8   4 key group (int32)
//	 12   4 key count
//	 16   4 uncompressed length of the body
//	 20   4 payload length (bytes that follow the header)
//	 24   4 CRC32C (Castagnoli) of bytes 0..23 followed by the payload
//	 28   - payload: the body (msgpack), zstd-compressed if bit 0 is set
const (
	sectionMagic     = "FGKS"
	sectionHeaderLen = 28
	crcOffset        = 24

	// FlagZstd marks a zstd-compressed payload.
	FlagZstd uint16 = 1 << 0
	// FlagIncremental is reserved for a future incremental (delta) section
	// that holds only the keys changed since the previous checkpoint. Version
	// 1 never sets it and rejects sections that do (ErrVersion).
	FlagIncremental uint16 = 1 << 1

	knownFlags = FlagZstd

	// MaxKeyGroup is the largest key group Flink can assign (its maximum
	// maxParallelism is 32768).
	MaxKeyGroup = 1<<15 - 1

	// maxBodyLen bounds the uncompressed body and the payload: what fits in a
	// Java byte array.
	maxBodyLen = 1<<31 - 1

	// minCompress: bodies shorter than this are stored uncompressed.
	minCompress = 64

	// maxZstdRatio is the most a zstd payload can expand (a 4-byte RLE block
	// yields at most 128 KiB). A header claiming more is corrupt.
	maxZstdRatio = 128 << 10 / 4

	// eagerRatio: if the header claims an expansion of at most this much, the
	// whole uncompressed length is allocated up front; beyond it the output
	// buffer grows only as real data is decompressed, so a header that lies
	// about the length cannot make us allocate what the payload does not hold.
	eagerRatio = 256
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderCRC(false), // the section has its own CRC32C
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
})

var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecodeAllCapLimit(true), // never decode past cap(dst)
		zstd.WithDecoderMaxMemory(maxBodyLen))
})

// Scratch buffers for zstd output (compressed on encode, decompressed on
// decode), reused across calls. Decoded sections never alias them.
var zbufPool = sync.Pool{New: func() any { return new([]byte) }}

func putZbuf(b *[]byte) {
	if cap(*b) <= maxPooledBuf {
		zbufPool.Put(b)
	}
}

// EncodeSection encodes the state of one key group. Identical sections give
// identical bytes. If s.Keys are not sorted by Key (bytes.Compare),
// EncodeSection sorts them in place first — so a producer can hand over keys
// in any order and the sort runs on the encoding goroutine. Keys must not
// repeat, every ShortTerm and Sensory sorted by Path without duplicates,
// and every value in the value domain; otherwise it returns an *Error of kind
// ErrInvalid naming the key and the offending path.
func EncodeSection(s *Section) ([]byte, error) {
	if s == nil {
		return nil, newErr(KeyGroupUnknown, ErrInvalid, "nil section")
	}
	if s.KeyGroup < 0 || s.KeyGroup > MaxKeyGroup {
		return nil, newErr(s.KeyGroup, ErrInvalid, "key group %d is outside [0, %d]", s.KeyGroup, MaxKeyGroup)
	}
	sortKeys(s.Keys)
	st := getEncState()
	defer putEncState(st)
	body, err := st.encodeBody(s)
	if err != nil {
		return nil, err
	}
	if len(body) > maxBodyLen {
		return nil, newErr(s.KeyGroup, ErrInvalid, "section body is %d bytes, more than the %d a section can hold; use a larger maxParallelism to spread keys over more key groups", len(body), maxBodyLen)
	}

	payload, flags := body, uint16(0)
	if len(body) >= minCompress {
		enc, err := zstdEncoder()
		if err != nil {
			return nil, newErr(s.KeyGroup, ErrInvalid, "zstd encoder: %v", err)
		}
		zb := zbufPool.Get().(*[]byte)
		defer putZbuf(zb)
		*zb = enc.EncodeAll(body, (*zb)[:0])
		if len(*zb) < len(body) {
			payload, flags = *zb, FlagZstd
		}
	}

	out := make([]byte, sectionHeaderLen+len(payload))
	copy(out, sectionMagic)
	binary.BigEndian.PutUint16(out[4:], FormatVersion)
	binary.BigEndian.PutUint16(out[6:], flags)
	binary.BigEndian.PutUint32(out[8:], uint32(s.KeyGroup))
	binary.BigEndian.PutUint32(out[12:], uint32(len(s.Keys)))
	binary.BigEndian.PutUint32(out[16:], uint32(len(body)))
	binary.BigEndian.PutUint32(out[20:], uint32(len(payload)))
	copy(out[sectionHeaderLen:], payload)
	binary.BigEndian.PutUint32(out[crcOffset:], sectionCRC(out))
	return out, nil
}

// sectionCRC is the CRC32C of the header before the CRC field and of the
// payload. REQUIRES: len(b) >= sectionHeaderLen.
func sectionCRC(b []byte) uint32 {
	c := crc32.Checksum(b[:crcOffset], castagnoli)
	return crc32.Update(c, castagnoli, b[sectionHeaderLen:])
}

// DecodeSection decodes a section written by EncodeSection. Bad input gives
// an *Error (ErrTruncated, ErrChecksum, ErrVersion or ErrCorrupt); it never
// panics. The result shares no memory with b.
func DecodeSection(b []byte) (*Section, error) {
	return decodeSection(b, nil)
}

// DecodeSectionFor is DecodeSection for a subtask that owns the key groups
// in owned: a section for any other key group is rejected with ErrNotOwned
// before its payload is decompressed.
func DecodeSectionFor(b []byte, owned KeyGroupRange) (*Section, error) {
	return decodeSection(b, &owned)
}

func decodeSection(b []byte, owned *KeyGroupRange) (*Section, error) {
	kg := KeyGroupUnknown
	if len(b) >= 12 {
		kg = int32(binary.BigEndian.Uint32(b[8:]))
	}
	if len(b) < len(sectionMagic) {
		return nil, newErr(kg, ErrTruncated, "%d bytes, a section header has %d", len(b), sectionHeaderLen)
	}
	if string(b[:4]) != sectionMagic {
		return nil, newErr(kg, ErrCorrupt, "magic is %q, want %q: these bytes are not a flinkgo key group section", b[:4], sectionMagic)
	}
	if len(b) >= 6 {
		if v := binary.BigEndian.Uint16(b[4:]); v != FormatVersion {
			return nil, newErr(kg, ErrVersion, "found format version %d, this build reads version %d", v, FormatVersion)
		}
	}
	if len(b) < sectionHeaderLen {
		return nil, newErr(kg, ErrTruncated, "%d bytes, a section header has %d", len(b), sectionHeaderLen)
	}
	flags := binary.BigEndian.Uint16(b[6:])
	count := binary.BigEndian.Uint32(b[12:])
	ulen := uint64(binary.BigEndian.Uint32(b[16:]))
	plen := uint64(binary.BigEndian.Uint32(b[20:]))
	if have := uint64(len(b) - sectionHeaderLen); have != plen {
		if have < plen {
			return nil, newErr(kg, ErrTruncated, "header announces a %d-byte payload, only %d bytes follow", plen, have)
		}
		return nil, newErr(kg, ErrCorrupt, "header announces a %d-byte payload, %d bytes follow", plen, have)
	}
	stored, computed := binary.BigEndian.Uint32(b[crcOffset:]), sectionCRC(b)
	if stored != computed {
		return nil, newErr(kg, ErrChecksum, "stored CRC32C %08x, computed %08x over %d bytes", stored, computed, len(b))
	}
	if flags&^knownFlags != 0 {
		return nil, newErr(kg, ErrVersion, "found flags %#04x, this build (format version %d) knows only %#04x", flags, FormatVersion, knownFlags)
	}
	if kg < 0 || kg > MaxKeyGroup {
		return nil, newErr(kg, ErrCorrupt, "key group %d is outside [0, %d]", kg, MaxKeyGroup)
	}
	if owned != nil && !owned.Contains(kg) {
		return nil, newErr(kg, ErrNotOwned, "key group %d is outside the owned range [%d, %d]", kg, owned.Start, owned.End)
	}
	if ulen > maxBodyLen {
		return nil, newErr(kg, ErrCorrupt, "uncompressed length %d exceeds the maximum %d", ulen, maxBodyLen)
	}
	payload := b[sectionHeaderLen:]
	var body []byte
	if flags&FlagZstd == 0 {
		if ulen != plen {
			return nil, newErr(kg, ErrCorrupt, "uncompressed payload of %d bytes but uncompressed length %d", plen, ulen)
		}
		body = payload
	} else {
		zb := zbufPool.Get().(*[]byte)
		defer putZbuf(zb)
		var err error
		if body, err = unzstd(kg, payload, ulen, (*zb)[:0]); err != nil {
			return nil, err
		}
		*zb = body
	}
	// Every key takes at least minKeyLen body bytes: bounds the preallocation.
	if uint64(count)*minKeyLen > ulen {
		return nil, newErr(kg, ErrCorrupt, "header announces %d keys, a %d-byte body holds at most %d", count, ulen, ulen/minKeyLen)
	}
	return decodeBody(kg, body, int(count))
}

// unzstd decompresses payload, which must expand to exactly ulen bytes,
// into buf if it is large enough. Memory never exceeds ulen plus what the
// payload really decompresses to.
func unzstd(kg int32, payload []byte, ulen uint64, buf []byte) ([]byte, error) {
	plen := uint64(len(payload))
	if ulen > plen*maxZstdRatio {
		return nil, newErr(kg, ErrCorrupt, "uncompressed length %d is impossible for a %d-byte zstd payload", ulen, plen)
	}
	var out []byte
	if ulen <= plen*eagerRatio+64<<10 {
		dec, err := zstdDecoder()
		if err != nil {
			return nil, newErr(kg, ErrCorrupt, "zstd decoder: %v", err)
		}
		if uint64(cap(buf)) < ulen {
			buf = make([]byte, 0, ulen)
		}
		out, err = dec.DecodeAll(payload, buf[:0:ulen])
		if err != nil {
			return nil, newErr(kg, ErrCorrupt, "zstd payload (%d bytes, uncompressed length %d): %v", plen, ulen, err)
		}
	} else {
		// A very high ratio: stream, growing the buffer with the real output.
		const maxWindow = 64 << 20
		win := min(max(ulen, zstd.MinWindowSize), maxWindow)
		dec, err := zstd.NewReader(bytes.NewReader(payload),
			zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(win))
		if err != nil {
			return nil, newErr(kg, ErrCorrupt, "zstd payload (%d bytes, uncompressed length %d): %v", plen, ulen, err)
		}
		defer dec.Close()
		var buf bytes.Buffer
		buf.Grow(int(min(ulen, plen*eagerRatio)))
		if _, err := buf.ReadFrom(io.LimitReader(dec, int64(ulen)+1)); err != nil {
			return nil, newErr(kg, ErrCorrupt, "zstd payload (%d bytes, uncompressed length %d): %v", plen, ulen, err)
		}
		out = buf.Bytes()
	}
	if uint64(len(out)) != ulen {
		return nil, newErr(kg, ErrCorrupt, "zstd payload decompresses to %d bytes, header says %d", len(out), ulen)
	}
	return out, nil
}

// sortKeys sorts keys by Key unless they already are.
func sortKeys(keys []KeyState) {
	cmp := func(a, b KeyState) int { return bytes.Compare(a.Key, b.Key) }
	if !slices.IsSortedFunc(keys, cmp) {
		slices.SortFunc(keys, cmp)
	}
}
