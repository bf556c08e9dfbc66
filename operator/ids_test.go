package operator

import (
	"math/rand"
	"testing"

	"github.com/flinkgo/flinkgo/snapshot"
)

// TestEventIDLayout pins eventID's bytes: hi then lo, big-endian, with the
// version 8 and RFC 9562 variant bits. Ids are persisted (snapshots,
// action-state record keys), so a change of layout would orphan them.
func TestEventIDLayout(t *testing.T) {
	ref := func(seed, keyHash, seq uint64, pos uint32) snapshot.UUID {
		hi := mix64(seed ^ keyHash ^ seq*0x9e3779b97f4a7c15)
		lo := mix64(hi ^ (uint64(pos)+1)*0xc2b2ae3d27d4eb4f ^ seq)
		var u snapshot.UUID
		for i := 0; i < 8; i++ {
			u[i] = byte(hi >> (56 - 8*i))
			u[8+i] = byte(lo >> (56 - 8*i))
		}
		u[6] = (u[6] & 0x0f) | 0x80
		u[8] = (u[8] & 0x3f) | 0x80
		return u
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 1000; i++ {
		seed, kh, seq, pos := rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint32()
		if got, want := eventID(seed, kh, seq, pos), ref(seed, kh, seq, pos); got != want {
			t.Fatalf("eventID(%d, %d, %d, %d) = %x, want %x", seed, kh, seq, pos, got, want)
		}
	}
	if got := eventID(0, 0, 0, 0); got[6]>>4 != 8 || got[8]>>6 != 2 {
		t.Fatalf("eventID(0,0,0,0) = %x: not a version 8, RFC 9562 variant UUID", got)
	}
}
