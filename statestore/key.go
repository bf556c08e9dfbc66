package statestore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/flinkgo/flinkgo/snapshot"
)

// Record key layout, format version 1 (see docs/action-state.md):
//
//	offset size  field
//	0      1     format version (RecordVersion)
//	1      4     key group, int32 big-endian, >= 0
//	5      32    SHA-256 of the Flink key bytes
//	37     8     input sequence number, uint64 big-endian
//	45     16    event id
//	61     2     length n of the action name, uint16 big-endian
//	63     n     action name (UTF-8 by convention; any bytes are kept as is)
//
// Every field has a fixed width or a length prefix, so no two distinct
// RecordKeys share an encoding, whatever bytes the action name holds.
const (
	recordKeyHeaderLen = 63
	// MaxActionNameLen is the longest action name a record key can carry.
	MaxActionNameLen = math.MaxUint16
)

// HashKey returns the SHA-256 of a Flink key's serialised bytes, the KeyHash
// of a RecordKey.
func HashKey(key []byte) [32]byte { return sha256.Sum256(key) }

// CheckActionName reports whether name fits in a record key. The operator
// should call it when an agent is built, so that a too long name fails then
// and not at the first record.
func CheckActionName(name string) error {
	if len(name) > MaxActionNameLen {
		return fmt.Errorf("statestore: action name of %d bytes is longer than the %d a record key can hold; shorten the name",
			len(name), MaxActionNameLen)
	}
	return nil
}

// validate reports whether k can be encoded.
func (k RecordKey) validate() error {
	if k.KeyGroup < 0 {
		return fmt.Errorf("key group %d is negative", k.KeyGroup)
	}
	return CheckActionName(k.Action)
}

// EncodedLen is the length of k's encoding.
func (k RecordKey) EncodedLen() int { return recordKeyHeaderLen + len(k.Action) }

// AppendBinary appends the version 1 encoding of k to b.
//
// REQUIRES: len(k.Action) <= MaxActionNameLen (see CheckActionName) and
// k.KeyGroup >= 0. A longer name panics: it cannot be encoded without
// ambiguity, and EncodeRecord reports it as an error before any key is built.
func (k RecordKey) AppendBinary(b []byte) []byte {
	if len(k.Action) > MaxActionNameLen {
		panic(fmt.Sprintf("statestore: action name of %d bytes exceeds MaxActionNameLen", len(k.Action)))
	}
	b = append(b, RecordVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(k.KeyGroup))
	b = append(b, k.KeyHash[:]...)
	b = binary.BigEndian.AppendUint64(b, k.Seq)
	b = append(b, k.EventID[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.Action)))
	return append(b, k.Action...)
}

// Bytes returns the version 1 encoding of k. Same REQUIRES as AppendBinary.
func (k RecordKey) Bytes() []byte {
	return k.AppendBinary(make([]byte, 0, k.EncodedLen()))
}

// String is a short human-readable form for logs and errors:
// kg/first 8 bytes of the key hash/seq/first 4 bytes of the event id/action.
func (k RecordKey) String() string {
	return fmt.Sprintf("%d/%s/%d/%s/%q", k.KeyGroup, hex.EncodeToString(k.KeyHash[:8]),
		k.Seq, hex.EncodeToString(k.EventID[:4]), k.Action)
}

// ParseRecordKey decodes a record key. It accepts exactly the encodings that
// AppendBinary produces, so ParseRecordKey(b).Bytes() equals b. Errors are
// *RecordError with Kind ErrRecordCorrupt or ErrRecordVersion.
func ParseRecordKey(b []byte) (RecordKey, error) {
	var k RecordKey
	if len(b) == 0 {
		return k, keyErr(b, ErrRecordCorrupt, "empty key")
	}
	if b[0] != RecordVersion {
		return k, keyErr(b, ErrRecordVersion,
			fmt.Sprintf("record key format version %d found, this reader supports version %d; read it with the flinkgo version that wrote it or a newer one", b[0], RecordVersion))
	}
	if len(b) < recordKeyHeaderLen {
		return k, keyErr(b, ErrRecordCorrupt,
			fmt.Sprintf("key of %d bytes is shorter than the %d-byte header", len(b), recordKeyHeaderLen))
	}
	k.KeyGroup = int32(binary.BigEndian.Uint32(b[1:5]))
	if k.KeyGroup < 0 {
		return k, keyErr(b, ErrRecordCorrupt, fmt.Sprintf("negative key group %d", k.KeyGroup))
	}
	copy(k.KeyHash[:], b[5:37])
	k.Seq = binary.BigEndian.Uint64(b[37:45])
	copy(k.EventID[:], b[45:61])
	n := int(binary.BigEndian.Uint16(b[61:63]))
	if len(b) != recordKeyHeaderLen+n {
		return k, keyErr(b, ErrRecordCorrupt,
			fmt.Sprintf("action name length %d does not match the %d bytes after the header", n, len(b)-recordKeyHeaderLen))
	}
	k.Action = string(b[recordKeyHeaderLen:])
	return k, nil
}

// RecordKeyGroup returns the key group of an encoded record key without
// decoding the rest, so that a reader can skip records of key groups it does
// not own cheaply. The key is checked as ParseRecordKey checks it.
func RecordKeyGroup(b []byte) (int32, error) {
	k, err := ParseRecordKey(b)
	return k.KeyGroup, err
}

// Partition is the Kafka partition that holds the records of key group kg
// when the action-state topic has numPartitions partitions:
// kg mod numPartitions.
//
// REQUIRES: kg >= 0, numPartitions > 0.
func Partition(kg int32, numPartitions int32) int32 { return kg % numPartitions }

// PartitionsFor returns, in increasing order, the partitions that can hold
// records of the key groups in r: a restoring subtask reads only these.
//
// REQUIRES: numPartitions > 0.
func PartitionsFor(r snapshot.KeyGroupRange, numPartitions int32) []int32 {
	if r.End < r.Start || r.Start < 0 {
		return nil
	}
	if int64(r.End)-int64(r.Start)+1 >= int64(numPartitions) {
		all := make([]int32, numPartitions)
		for i := range all {
			all[i] = int32(i)
		}
		return all
	}
	seen := make([]bool, numPartitions)
	n := 0
	for kg := r.Start; ; kg++ {
		p := Partition(kg, numPartitions)
		if !seen[p] {
			seen[p] = true
			n++
		}
		if kg == r.End {
			break
		}
	}
	out := make([]int32, 0, n)
	for p, ok := range seen {
		if ok {
			out = append(out, int32(p))
		}
	}
	return out
}
