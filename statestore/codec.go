package statestore

import (
	"fmt"
	"slices"

	"github.com/flinkgo/flinkgo/snapshot"
)

// Record value layout, format version 1: one msgpack array (field by field in
// docs/action-state.md):
//
//	[version, status, [update...], [event...], [call...]]
//	update = [scope, path, flags, value]        flags: 1 object, 2 overwrite, 4 delete
//	event  = [id(bin16), type, attrs(map), upstream id(bin16|nil), upstream action]
//	call   = [call id, args digest(bin32), status, result(value|nil), error, error kind]
const (
	recordFields = 5
	updateFields = 4
	eventFields  = 5
	callFields   = 6

	flagObject    = 1
	flagOverwrite = 2
	flagDelete    = 4
	flagsKnown    = flagObject | flagOverwrite | flagDelete

	// Smallest encodings, which bound how many elements a header may claim.
	minUpdateLen = 5  // fixarray + scope + fixstr + flags + nil
	minEventLen  = 23 // fixarray + bin16 + fixstr + fixmap + nil + fixstr
	minCallLen   = 41 // fixarray + fixstr + bin32 + status + nil + fixstr + kind
)

// EncodeRecord returns the value bytes of r (its key is r.Key.Bytes()).
// Equal records give identical bytes. A record that breaks the format's rules
// is a *RecordError of kind ErrRecordInvalid; see validate for the rules.
func EncodeRecord(r *Record) ([]byte, error) {
	return AppendRecord(nil, r)
}

// AppendRecord appends the value bytes of r to dst.
func AppendRecord(dst []byte, r *Record) ([]byte, error) {
	w := getWriter(false)
	defer putWriter(w)
	if err := w.encodeRecord(r); err != nil {
		return dst, err
	}
	if dst == nil {
		return slices.Clone(w.b), nil
	}
	return append(dst, w.b...), nil
}

// encodeKeyValue returns r's key bytes and EncodeRecord(r) in one
// allocation (key first; each slice capped at its own length).
func encodeKeyValue(r *Record) (key, val []byte, err error) {
	_, key, val, err = encodeKeyValueIn(nil, r)
	return key, val, err
}

// encodeKeyValueIn is encodeKeyValue into buf when it is large enough, else
// into a new buffer; b is the buffer used, which key and val share.
func encodeKeyValueIn(buf []byte, r *Record) (b, key, val []byte, err error) {
	w := getWriter(false)
	defer putWriter(w)
	if err := w.encodeRecord(r); err != nil {
		return buf, nil, nil, err
	}
	kl := r.Key.EncodedLen()
	if n := kl + len(w.b); cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	b = r.Key.AppendBinary(buf[:0])
	b = append(b, w.b...)
	return b, b[:kl:kl], b[kl:len(b):len(b)], nil
}

// encodedLen is len(EncodeRecord(r)) without keeping the bytes.
func encodedLen(r *Record) (int, error) {
	w := getWriter(false)
	defer putWriter(w)
	err := w.encodeRecord(r)
	return len(w.b), err
}

// encodeRecord writes r into w.b, or returns a *RecordError.
func (w *valueWriter) encodeRecord(r *Record) error {
	if err := r.Key.validate(); err != nil {
		return &RecordError{Kind: ErrRecordInvalid, Detail: "key", Err: err}
	}
	if err := w.writeRecord(r); err != nil {
		fe := err.(fieldErr)
		return &RecordError{Key: r.Key.Bytes(), Kind: ErrRecordInvalid, Detail: fe.field, Err: fe.err}
	}
	return nil
}

// fieldErr names the part of the record that is wrong.
type fieldErr struct {
	field string
	err   error
}

func (e fieldErr) Error() string { return e.field + ": " + e.err.Error() }

func invalid(field, format string, args ...any) error {
	return fieldErr{field, fmt.Errorf(format, args...)}
}

func (w *valueWriter) writeRecord(r *Record) error {
	if r.Status != StatusRunning && r.Status != StatusCompleted {
		return invalid("status", "%d is not StatusRunning (1) or StatusCompleted (2)", r.Status)
	}
	w.writeArrayLen(recordFields)
	w.writeUint(RecordVersion)
	w.writeUint(uint64(r.Status))

	w.writeArrayLen(len(r.Updates))
	for i := range r.Updates {
		if err := w.writeUpdate(&r.Updates[i]); err != nil {
			return fieldErr{fmt.Sprintf("updates[%d]", i), err}
		}
	}
	w.writeArrayLen(len(r.Events))
	for i := range r.Events {
		if err := w.writeEvent(&r.Events[i]); err != nil {
			return fieldErr{fmt.Sprintf("events[%d]", i), err}
		}
	}
	w.writeArrayLen(len(r.Calls))
	for i := range r.Calls {
		if err := w.writeCall(&r.Calls[i]); err != nil {
			return fieldErr{fmt.Sprintf("calls[%d]", i), err}
		}
	}
	return nil
}

// checkUpdate holds the rules of a MemUpdate: a scope of 1 or 2; an object
// creation (Object, optionally Overwrite) or a delete carries no value;
// Overwrite only goes with Object; Delete goes with neither.
func checkUpdate(scope Scope, flags uint64, hasValue bool) error {
	if scope != ScopeShortTerm && scope != ScopeSensory {
		return fmt.Errorf("scope %d is not ScopeShortTerm (1) or ScopeSensory (2)", scope)
	}
	switch {
	case flags&^flagsKnown != 0:
		return fmt.Errorf("unknown flag bits 0x%x", flags&^flagsKnown)
	case flags&flagDelete != 0 && flags != flagDelete:
		return fmt.Errorf("a delete cannot also create an object")
	case flags&flagOverwrite != 0 && flags&flagObject == 0:
		return fmt.Errorf("overwrite is only meaningful with an object creation")
	case flags != 0 && hasValue:
		return fmt.Errorf("an object creation or a delete carries no value")
	}
	return nil
}

func (w *valueWriter) writeUpdate(u *MemUpdate) error {
	var flags uint64
	if u.Object {
		flags |= flagObject
	}
	if u.Overwrite {
		flags |= flagOverwrite
	}
	if u.Delete {
		flags |= flagDelete
	}
	if err := checkUpdate(u.Scope, flags, u.Value != nil); err != nil {
		return err
	}
	w.writeArrayLen(updateFields)
	w.writeUint(uint64(u.Scope))
	w.writeString(u.Path)
	w.writeUint(flags)
	return w.writeValue(u.Value, 0)
}

func (w *valueWriter) writeEvent(e *snapshot.Event) error {
	w.writeArrayLen(eventFields)
	w.writeBin(e.ID[:])
	w.writeString(e.Type)
	if err := w.writeMap(e.Attrs, 0); err != nil {
		return prefixPath(err, "attrs")
	}
	if e.UpstreamID.IsZero() {
		w.writeNil()
	} else {
		w.writeBin(e.UpstreamID[:])
	}
	w.writeString(e.UpstreamAction)
	return nil
}

// checkCall holds the rules of a CallRecord: pending and failed calls carry
// no result; only a failed call carries an error message and kind; a
// succeeded call carries exactly one msgpack value (EncodeValue(nil) for nil).
func checkCall(c *CallRecord) error {
	switch c.Status {
	case CallPending, CallSucceeded:
		if c.Error != "" || c.ErrorKind != 0 {
			return fmt.Errorf("only a failed call carries an error (status %d, error %q, kind %d)", c.Status, c.Error, c.ErrorKind)
		}
	case CallFailed:
		if c.ErrorKind > 2 {
			return fmt.Errorf("error kind %d is not 0 (retryable), 1 (permanent) or 2 (needs a human)", c.ErrorKind)
		}
	default:
		return fmt.Errorf("status %d is not CallPending (1), CallSucceeded (2) or CallFailed (3)", c.Status)
	}
	if c.Status != CallSucceeded && c.Result != nil {
		return fmt.Errorf("a pending or failed call carries no result")
	}
	return nil
}

// checkCallOut holds the rules of a CallRecord being written: checkCall's,
// and a succeeded call's result is one msgpack value of the value domain.
func checkCallOut(c *CallRecord) error {
	if err := checkCall(c); err != nil {
		return err
	}
	if c.Status != CallSucceeded {
		return nil
	}
	if len(c.Result) == 0 {
		return fmt.Errorf("a succeeded call needs a result; a nil result is EncodeValue(nil) = 0xc0")
	}
	r := getReader(c.Result)
	_, err := r.skipValue(0)
	if err == nil && r.remaining() != 0 {
		err = r.corruptf("%d bytes after the value", r.remaining())
	}
	putReader(r)
	if err != nil {
		return fmt.Errorf("result is not one msgpack value of the value domain: %v", err)
	}
	return nil
}

func (w *valueWriter) writeCall(c *CallRecord) error {
	if err := checkCallOut(c); err != nil {
		return err
	}
	w.writeArrayLen(callFields)
	w.writeString(c.CallID)
	w.writeBin(c.ArgsDigest[:])
	w.writeUint(uint64(c.Status))
	if c.Status == CallSucceeded {
		w.b = append(w.b, c.Result...)
	} else {
		w.writeNil()
	}
	w.writeString(c.Error)
	w.writeUint(uint64(c.ErrorKind))
	return nil
}

// DecodeRecord decodes one action-state record from its Kafka key and value.
// It never panics; bad bytes are a *RecordError of kind ErrRecordCorrupt or
// ErrRecordVersion. Lists of length zero decode as nil slices; event
// attributes, lists and maps inside values decode as empty, non-nil values.
// The record does not alias key or value.
func DecodeRecord(key, value []byte) (*Record, error) {
	k, err := ParseRecordKey(key)
	if err != nil {
		return nil, err
	}
	return decodeValueFor(k, key, value)
}

// DecodeRecordFor is DecodeRecord for a reader that owns the key groups in
// owned: a record of any other key group is a *RecordError of kind
// ErrRecordKeyGroup, found before the value is decoded. A restoring subtask
// skips such records (they belong to another subtask after a rescale).
func DecodeRecordFor(key, value []byte, owned snapshot.KeyGroupRange) (*Record, error) {
	k, err := ParseRecordKey(key)
	if err != nil {
		return nil, err
	}
	if !owned.Contains(k.KeyGroup) {
		return nil, keyErr(key, ErrRecordKeyGroup,
			fmt.Sprintf("key group %d is outside the owned range [%d, %d]", k.KeyGroup, owned.Start, owned.End))
	}
	return decodeValueFor(k, key, value)
}

func decodeValueFor(k RecordKey, key, value []byte) (*Record, error) {
	rd := getReader(value)
	defer putReader(rd)
	rec := &Record{Key: k}
	if err := rd.readRecord(rec); err != nil {
		kind := ErrRecordCorrupt
		if _, ok := err.(versionErr); ok {
			kind = ErrRecordVersion
		}
		return nil, keyErr(key, kind, "value: "+err.Error())
	}
	return rec, nil
}

type versionErr struct{ found uint64 }

func (e versionErr) Error() string {
	return fmt.Sprintf("record value format version %d found, this reader supports version %d; read it with the flinkgo version that wrote it or a newer one",
		e.found, RecordVersion)
}

func (r *valueReader) readRecord(rec *Record) error {
	n, err := r.readArrayLen("record", 1)
	if err != nil {
		return err
	}
	if n < 1 {
		return r.corruptf("record: empty array, no format version")
	}
	v, err := r.readInt("version")
	if err != nil {
		return err
	}
	if v != RecordVersion {
		if v < 0 {
			return r.corruptf("version: negative %d", v)
		}
		return versionErr{uint64(v)}
	}
	if n != recordFields {
		return r.corruptf("record: %d fields, version %d has %d", n, RecordVersion, recordFields)
	}
	st, err := r.readUint("status", uint64(StatusCompleted))
	if err != nil {
		return err
	}
	if rec.Status = Status(st); rec.Status != StatusRunning && rec.Status != StatusCompleted {
		return r.corruptf("status: %d is not 1 (running) or 2 (completed)", st)
	}
	if n, err = r.readArrayLen("updates", minUpdateLen); err != nil {
		return err
	}
	if n > 0 {
		rec.Updates = make([]MemUpdate, n)
	}
	for i := range rec.Updates {
		if err := r.readUpdate(&rec.Updates[i]); err != nil {
			return fmt.Errorf("updates[%d]: %w", i, err)
		}
	}
	if n, err = r.readArrayLen("events", minEventLen); err != nil {
		return err
	}
	if n > 0 {
		rec.Events = make([]snapshot.Event, n)
	}
	for i := range rec.Events {
		if err := r.readEvent(&rec.Events[i]); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
	}
	if n, err = r.readArrayLen("calls", minCallLen); err != nil {
		return err
	}
	if n > 0 {
		rec.Calls = make([]CallRecord, n)
	}
	for i := range rec.Calls {
		if err := r.readCall(&rec.Calls[i]); err != nil {
			return fmt.Errorf("calls[%d]: %w", i, err)
		}
	}
	if r.remaining() != 0 {
		return r.corruptf("%d bytes after the record", r.remaining())
	}
	return nil
}

func (r *valueReader) fields(what string, want, minElem int) error {
	n, err := r.readArrayLen(what, minElem)
	if err != nil {
		return err
	}
	if n != want {
		return r.corruptf("%s: %d fields, want %d", what, n, want)
	}
	return nil
}

func (r *valueReader) readUpdate(u *MemUpdate) error {
	if err := r.fields("update", updateFields, 1); err != nil {
		return err
	}
	scope, err := r.readUint("scope", 255)
	if err != nil {
		return err
	}
	if u.Path, err = r.readString("path"); err != nil {
		return err
	}
	flags, err := r.readUint("flags", 255)
	if err != nil {
		return err
	}
	if u.Value, err = r.readValue(0); err != nil {
		return err
	}
	if err := checkUpdate(Scope(scope), flags, u.Value != nil); err != nil {
		return r.corruptf("%v", err)
	}
	u.Scope = Scope(scope)
	u.Object = flags&flagObject != 0
	u.Overwrite = flags&flagOverwrite != 0
	u.Delete = flags&flagDelete != 0
	return nil
}

func (r *valueReader) readEvent(e *snapshot.Event) error {
	if err := r.fields("event", eventFields, 1); err != nil {
		return err
	}
	if err := r.readFixedBin("event id", e.ID[:]); err != nil {
		return err
	}
	var err error
	if e.Type, err = r.readString("event type"); err != nil {
		return err
	}
	if e.Attrs, err = r.readMap(0); err != nil {
		return err
	}
	isNil, err := r.readNil()
	if err != nil {
		return err
	}
	if !isNil {
		if err := r.readFixedBin("upstream id", e.UpstreamID[:]); err != nil {
			return err
		}
	}
	e.UpstreamAction, err = r.readString("upstream action")
	return err
}

func (r *valueReader) readCall(c *CallRecord) error {
	if err := r.fields("call", callFields, 1); err != nil {
		return err
	}
	var err error
	if c.CallID, err = r.readString("call id"); err != nil {
		return err
	}
	if err := r.readFixedBin("args digest", c.ArgsDigest[:]); err != nil {
		return err
	}
	st, err := r.readUint("call status", 255)
	if err != nil {
		return err
	}
	c.Status = CallStatus(st)
	if c.Status == CallSucceeded {
		s, err := r.skipValue(0)
		if err != nil {
			return err
		}
		c.Result = slices.Clone(r.b[s.start:s.end:s.end])
	} else if isNil, err := r.readNil(); err != nil {
		return err
	} else if !isNil {
		return r.corruptf("result: a call of status %d carries no result", st)
	}
	if c.Error, err = r.readString("error"); err != nil {
		return err
	}
	kind, err := r.readUint("error kind", 255)
	if err != nil {
		return err
	}
	c.ErrorKind = uint8(kind)
	if err := checkCall(c); err != nil {
		return r.corruptf("%v", err)
	}
	return nil
}
