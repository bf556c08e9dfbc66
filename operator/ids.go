package operator

import (
	"encoding/binary"

	"github.com/flinkgo/flinkgo/snapshot"
)

// Event ids are deterministic: a function of the seed, the key's hash, the
// input sequence number and the event's position among the events the input
// produced. A re-run after a restore therefore gives every event the id it
// had before, which is what lets action-state records (keyed by the
// triggering event's id) be found again. The ids have the layout of RFC 9562
// version 8 UUIDs (custom, name-based).
//
// Two events share an id only if their keys share a 64-bit xxhash and the
// same (seq, position): action-state record keys also carry the key's
// SHA-256, so even then records cannot mix.

const inputEventPos = ^uint32(0)

func eventID(seed, keyHash, seq uint64, pos uint32) snapshot.UUID {
	var u snapshot.UUID
	putEventID(&u, seed, keyHash, seq, pos)
	return u
}

// putEventID writes eventID(seed, keyHash, seq, pos) into u: two 8-byte
// stores, the version and variant bits set in registers (byte stores then
// a 16-byte copy of the result stalled the CPU's store forwarding).
func putEventID(u *snapshot.UUID, seed, keyHash, seq uint64, pos uint32) {
	hi := mix64(seed ^ keyHash ^ seq*0x9e3779b97f4a7c15)
	lo := mix64(hi ^ (uint64(pos)+1)*0xc2b2ae3d27d4eb4f ^ seq)
	hi = hi&^0xf000 | 0x8000       // byte 6: version 8
	lo = lo&^(0xc0<<56) | 0x80<<56 // byte 8: RFC 9562 variant
	binary.BigEndian.PutUint64(u[:8], hi)
	binary.BigEndian.PutUint64(u[8:], lo)
}

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
