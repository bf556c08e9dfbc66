package snapshot

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"slices"

	"github.com/flinkgo/flinkgo/internal/msgp"
)

// Marker layout (all integers big-endian); see docs/snapshot-format.md.
//
//	off len field
//	  0   4 magic "FGRM"
//	  4   2 marker version (MarkerVersion)
//	  6   2 flags, 0 (reserved)
//	  8   4 body length
//	 12   4 CRC32C (Castagnoli) of bytes 0..11 followed by the body
//	 16   - body: msgpack [backend, topic, topic id, checkpoint id, offsets]
const (
	markerMagic     = "FGRM"
	markerHeaderLen = 16
	markerCRCOffset = 12
	maxMarkerBody   = 16 << 20
)

// EncodeMarker encodes a recovery marker. Offsets are written in partition
// order, so identical markers give identical bytes. m.Version must be
// MarkerVersion or 0 (meaning MarkerVersion); partitions must not be negative.
func EncodeMarker(m *Marker) ([]byte, error) {
	if m == nil {
		return nil, newErr(KeyGroupMarker, ErrInvalid, "nil marker")
	}
	if m.Version != 0 && m.Version != MarkerVersion {
		return nil, newErr(KeyGroupMarker, ErrInvalid, "marker version %d cannot be written by this build, which writes version %d", m.Version, MarkerVersion)
	}
	parts := make([]int32, 0, len(m.Offsets))
	for p := range m.Offsets {
		if p < 0 {
			return nil, newErr(KeyGroupMarker, ErrInvalid, "negative partition %d in offsets", p)
		}
		parts = append(parts, p)
	}
	slices.Sort(parts)

	st := getEncState()
	defer putEncState(st)
	st.b = append(st.b, make([]byte, markerHeaderLen)...)
	st.arr(5)
	st.str(m.Backend)
	st.str(m.Topic)
	st.uuid(m.TopicID)
	st.int(m.CheckpointID)
	st.b = msgp.AppendMapLen(st.b, len(parts))
	for _, p := range parts {
		st.int(int64(p))
		st.int(m.Offsets[p])
	}
	out := slices.Clone(st.b)
	copy(out, markerMagic)
	binary.BigEndian.PutUint16(out[4:], MarkerVersion)
	binary.BigEndian.PutUint16(out[6:], 0)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-markerHeaderLen))
	binary.BigEndian.PutUint32(out[markerCRCOffset:], markerCRC(out))
	return out, nil
}

func markerCRC(b []byte) uint32 {
	c := crc32.Checksum(b[:markerCRCOffset], castagnoli)
	return crc32.Update(c, castagnoli, b[markerHeaderLen:])
}

// DecodeMarker decodes a recovery marker written by EncodeMarker. Bad input
// gives an *Error with KeyGroup KeyGroupMarker; it never panics.
func DecodeMarker(b []byte) (*Marker, error) {
	const kg = KeyGroupMarker
	if len(b) < len(markerMagic) {
		return nil, newErr(kg, ErrTruncated, "%d bytes, a marker header has %d", len(b), markerHeaderLen)
	}
	if string(b[:4]) != markerMagic {
		return nil, newErr(kg, ErrCorrupt, "magic is %q, want %q: these bytes are not a flinkgo recovery marker", b[:4], markerMagic)
	}
	if len(b) >= 6 {
		if v := binary.BigEndian.Uint16(b[4:]); v != MarkerVersion {
			return nil, newErr(kg, ErrVersion, "found marker version %d, this build reads version %d", v, MarkerVersion)
		}
	}
	if len(b) < markerHeaderLen {
		return nil, newErr(kg, ErrTruncated, "%d bytes, a marker header has %d", len(b), markerHeaderLen)
	}
	blen := uint64(binary.BigEndian.Uint32(b[8:]))
	if have := uint64(len(b) - markerHeaderLen); have != blen {
		if have < blen {
			return nil, newErr(kg, ErrTruncated, "header announces a %d-byte body, only %d bytes follow", blen, have)
		}
		return nil, newErr(kg, ErrCorrupt, "header announces a %d-byte body, %d bytes follow", blen, have)
	}
	if stored, computed := binary.BigEndian.Uint32(b[markerCRCOffset:]), markerCRC(b); stored != computed {
		return nil, newErr(kg, ErrChecksum, "stored CRC32C %08x, computed %08x over %d bytes", stored, computed, len(b))
	}
	if f := binary.BigEndian.Uint16(b[6:]); f != 0 {
		return nil, newErr(kg, ErrVersion, "found flags %#04x, this build (marker version %d) knows none", f, MarkerVersion)
	}
	if blen > maxMarkerBody {
		return nil, newErr(kg, ErrCorrupt, "body of %d bytes exceeds the maximum %d", blen, maxMarkerBody)
	}

	d := getDecoder(b[markerHeaderLen:])
	defer putDecoder(d)
	m := &Marker{Version: MarkerVersion}
	d.fixedArray("marker", 5)
	m.Backend = d.str("backend")
	m.Topic = d.str("topic")
	m.TopicID = d.uuid("topic id")
	m.CheckpointID = d.int("checkpoint id")
	if c := d.peek(); d.err == nil && !isMap(c) {
		d.fail("offsets: expected a map, found msgpack code %#02x", c)
	}
	if d.err == nil {
		n, err := d.dec.DecodeMapLen()
		if !d.libErr(err) && 2*n > d.r.Len() {
			d.fail("offsets: map of %d entries but only %d bytes remain", n, d.r.Len())
		}
		if d.err == nil && n > 0 {
			m.Offsets = make(map[int32]int64, n)
		}
		prev := int64(-1)
		for i := 0; i < n && d.err == nil; i++ {
			p := d.int("partition")
			off := d.int("offset")
			if d.err == nil && (p <= prev || p > math.MaxInt32) {
				d.fail("offsets: partition %d after %d; partitions must be increasing and in [0, %d]", p, prev, math.MaxInt32)
			}
			m.Offsets[int32(p)] = off
			prev = p
		}
	}
	if d.err == nil && d.r.Len() != 0 {
		d.fail("%d bytes follow the offsets", d.r.Len())
	}
	if d.err != nil {
		return nil, newErr(kg, ErrCorrupt, "%v", d.err)
	}
	return m, nil
}
