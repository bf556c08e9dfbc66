// Package snapshot defines the bytes flinkgo puts into a Flink checkpoint:
// one section per key group (Flink raw keyed state) and one recovery marker
// per subtask (operator union state).
//
// A Section holds, for every key of one key group, its short-term memory,
// the input it was processing at the cut (with sensory memory and the tasks
// still to run), its queued inputs and its next input sequence number. A
// Marker says where the action-state log must be read from after a restore.
// The byte layout is specified field by field in docs/snapshot-format.md.
//
// # Who calls it
//
// The operator core builds Sections at a barrier and hands them to the
// bridge, which encodes them (EncodeSection) into the SNAPSHOT message; on
// restore the bridge decodes what the JVM sends (DecodeSectionFor, with the
// subtask's key group range) and gives the Sections to Core.Restore. The
// action-state store produces the Marker; EncodeMarker and DecodeMarker carry
// it through union state. A Java tool may read both formats from a savepoint.
// This package imports nothing of flinkgo's.
//
// # Concurrency
//
// Every function is pure: it reads its argument, returns new memory and
// keeps no state between calls apart from pooled scratch buffers and the
// shared zstd encoder and decoder. All are safe for concurrent use, so the
// sections of one checkpoint may be encoded or decoded in parallel. The
// caller must not modify a Section while it is being encoded. A decoded
// Section shares no memory with the input bytes.
//
// # Invariants
//
//   - Identical Sections encode to identical bytes (and identical Markers to
//     identical bytes): map keys and marker partitions are written in sorted
//     order and the encoder refuses Keys that are not sorted by bytes.Compare
//     and memory items that are not sorted by Path, or that repeat.
//   - Whatever EncodeSection accepts, DecodeSection returns equal (up to the
//     normalisations below), and encoding that again gives the same bytes;
//     whatever DecodeSection accepts re-encodes. Values come back as the
//     value domain's Go types: every integer as int64, every float as
//     float64, time.Time (row fields only) in UTC. Empty slices of the
//     Section's own structs come back as nil; an empty list, map or []byte
//     inside a value comes back empty and non-nil.
//   - Decoding never panics. A length read from the input is checked
//     against the bytes that must back it before anything is sized by it;
//     a decompressed body is capped at the header's uncompressed length, and
//     is allocated up front only when that length is within 256 times the
//     payload (beyond that the buffer grows with the real output). Every
//     failure is an *Error whose Kind is one of ErrTruncated, ErrChecksum,
//     ErrVersion, ErrCorrupt, ErrNotOwned (decode) or ErrInvalid (encode).
//   - A reader accepts exactly the versions it knows. A format change gets a
//     new version written beside the old one; the golden files of a released
//     version in testdata/snapshot are never rewritten.
package snapshot
