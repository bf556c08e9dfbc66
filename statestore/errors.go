package statestore

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Kinds of *RecordError; test them with errors.Is.
var (
	// ErrRecordCorrupt: the bytes are not a well-formed record key or value.
	ErrRecordCorrupt = errors.New("statestore: corrupt action-state record")
	// ErrRecordVersion: the record was written in a format version this
	// reader does not know. The Detail names the version found and the one
	// supported.
	ErrRecordVersion = errors.New("statestore: unsupported action-state record version")
	// ErrRecordKeyGroup: the record belongs to a key group the reader does
	// not own (DecodeRecordFor).
	ErrRecordKeyGroup = errors.New("statestore: action-state record of a key group not owned")
	// ErrRecordInvalid: EncodeRecord was given a record that breaks the
	// format's rules (a status out of range, a value outside the value
	// domain, ...). Nothing was written.
	ErrRecordInvalid = errors.New("statestore: invalid action-state record")
	// ErrValueDomain: a value is not one of nil, bool, int64, float64,
	// string, []byte, []any, map[string]any (see docs/architecture.md).
	ErrValueDomain = errors.New("statestore: value outside the value domain")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("statestore: action store closed")
)

// RecordError is an error about one action-state record. Kind is one of
// ErrRecordCorrupt, ErrRecordVersion, ErrRecordKeyGroup, ErrRecordInvalid;
// errors.Is(err, Kind) holds.
type RecordError struct {
	Key    []byte // the encoded record key as given (may be nil or malformed)
	Kind   error
	Detail string
	Err    error // underlying cause, if any
}

func (e *RecordError) Error() string {
	key := "?"
	if k, err := ParseRecordKey(e.Key); err == nil {
		key = k.String()
	} else if len(e.Key) > 0 {
		h := e.Key
		if len(h) > 16 {
			h = h[:16]
		}
		key = "0x" + hex.EncodeToString(h)
		if len(e.Key) > 16 {
			key += "..."
		}
	}
	s := fmt.Sprintf("%v: key %s: %s", e.Kind, key, e.Detail)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the cause, so errors.Is matches either.
func (e *RecordError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

func keyErr(key []byte, kind error, detail string) error {
	return &RecordError{Key: append([]byte(nil), key...), Kind: kind, Detail: detail}
}

// ValueError reports a value outside the value domain. Unwrap gives
// ErrValueDomain.
type ValueError struct {
	Path   string // where in the value: "" for the root, "[2].a" for a nested one
	GoType string // the Go type found, e.g. "int32" or "time.Time"
	Reason string // set when the type is right but the value is not (too deep, too long)
}

func (e *ValueError) Error() string {
	where := strings.TrimPrefix(e.Path, ".")
	if where == "" {
		where = "(root)"
	}
	if e.Reason != "" {
		return fmt.Sprintf("%v: at %s: %s", ErrValueDomain, where, e.Reason)
	}
	return fmt.Sprintf("%v: at %s: Go type %s; use nil, bool, int64, float64, string, []byte, []any or map[string]any",
		ErrValueDomain, where, e.GoType)
}

func (e *ValueError) Unwrap() error { return ErrValueDomain }
