package snapshot

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels for the kinds of snapshot errors. Every error returned by this
// package is an *Error whose Unwrap returns one of them; classify with
// errors.Is.
var (
	// ErrTruncated: the bytes end before the section (or marker) does.
	ErrTruncated = errors.New("snapshot: truncated")
	// ErrChecksum: the CRC32C stored in the header does not match the bytes.
	ErrChecksum = errors.New("snapshot: checksum mismatch")
	// ErrVersion: the bytes were written in a format version (or with flags)
	// this build does not read.
	ErrVersion = errors.New("snapshot: unsupported format version")
	// ErrCorrupt: the checksum matched but the content is not a valid
	// section or marker (or the bytes are not a flinkgo snapshot at all).
	ErrCorrupt = errors.New("snapshot: corrupt")
	// ErrNotOwned: DecodeSectionFor got a section for a key group outside the
	// range the subtask owns.
	ErrNotOwned = errors.New("snapshot: key group not owned")
	// ErrInvalid: EncodeSection or EncodeMarker was given a value that breaks
	// the format's rules (unsorted keys, a Go type outside the value domain,
	// ...). It is the caller's bug, never the data's.
	ErrInvalid = errors.New("snapshot: invalid input to encode")
)

// KeyGroupUnknown is Error.KeyGroup when the key group could not be read
// (the header is cut short before it).
const KeyGroupUnknown int32 = -1

// KeyGroupMarker is Error.KeyGroup for errors about a recovery marker, which
// belongs to a subtask, not to a key group.
const KeyGroupMarker int32 = -2

// Error is the error type of this package.
type Error struct {
	KeyGroup int32  // the section's key group, KeyGroupUnknown or KeyGroupMarker
	Kind     error  // one of the Err* sentinels
	Detail   string // what exactly is wrong (values found and expected)
}

// Error names the key group, the problem and what to do about it.
func (e *Error) Error() string {
	var where string
	switch e.KeyGroup {
	case KeyGroupMarker:
		where = "recovery marker"
	case KeyGroupUnknown:
		where = "section (key group unknown)"
	default:
		where = fmt.Sprintf("key group %d", e.KeyGroup)
	}
	kind := "error"
	if e.Kind != nil {
		kind = strings.TrimPrefix(e.Kind.Error(), "snapshot: ")
	}
	msg := "snapshot: " + where + ": " + kind
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if adv := advice(e.Kind, e.KeyGroup == KeyGroupMarker); adv != "" {
		msg += "; " + adv
	}
	return msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Kind }

func advice(kind error, marker bool) string {
	what := "section"
	if marker {
		what = "marker"
	}
	switch kind {
	case ErrTruncated:
		return "the " + what + " was cut short in transfer or storage; restore from an earlier checkpoint"
	case ErrChecksum:
		return "the " + what + " bytes were damaged in transfer or storage; restore from an earlier checkpoint"
	case ErrVersion:
		return "run a flinkgo build that reads this version, or restore from a checkpoint written by this build"
	case ErrCorrupt:
		return "the " + what + " was not written by a compatible flinkgo encoder or is damaged; restore from an earlier checkpoint"
	case ErrNotOwned:
		return "the JVM and Go disagree on key group assignment; check that both use the same maxParallelism and that sections are routed by KeyGroupRangeAssignment"
	case ErrInvalid:
		return "this is a bug in the caller; fix the state before encoding"
	}
	return ""
}

func newErr(kg int32, kind error, format string, args ...any) *Error {
	return &Error{KeyGroup: kg, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}
