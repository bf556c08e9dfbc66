package arrowio

import (
	"encoding/binary"
	"fmt"
)

// This file checks the untrusted parts of an Arrow IPC stream before
// arrow-go sees them. arrow-go trusts its flatbuffers: a vector length taken
// from the bytes goes straight into make(), nesting recurses without a limit,
// and a compressed buffer announces its own uncompressed size. A few hundred
// corrupted bytes could therefore exhaust memory or the stack, which no
// recover() can catch. The walker below bounds-checks every table, vector and
// string that arrow-go would follow, rejects what flinkgo does not use
// (dictionaries, body compression, unsupported types) and limits nesting.

const (
	// maxMetadataLen bounds the flatbuffer metadata of one IPC message. A
	// schema of thousands of columns stays far below it.
	maxMetadataLen = 1 << 20
	// maxNesting bounds list/struct nesting in a schema.
	maxNesting = 32

	ipcContinuation = 0xFFFFFFFF

	// Message header types (Message.fbs).
	msgSchema          = 1
	msgDictionaryBatch = 2
	msgRecordBatch     = 3
)

// fbTable is one bounds-checked flatbuffer table.
type fbTable struct {
	buf   []byte
	pos   int // table start
	vt    int // vtable start
	vtLen int // vtable length in bytes
	tbLen int // inline table length in bytes
}

func fbU32(buf []byte, p int) (uint32, bool) {
	if p < 0 || p > len(buf)-4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(buf[p:]), true
}

func fbRoot(buf []byte) (fbTable, error) {
	off, ok := fbU32(buf, 0)
	if !ok {
		return fbTable{}, fmt.Errorf("%w: root offset out of range", ErrMalformed)
	}
	return fbTableAt(buf, int(off))
}

func fbTableAt(buf []byte, pos int) (fbTable, error) {
	soff, ok := fbU32(buf, pos)
	if !ok {
		return fbTable{}, fmt.Errorf("%w: table at %d out of range", ErrMalformed, pos)
	}
	vt := pos - int(int32(soff))
	if vt < 0 || vt > len(buf)-4 {
		return fbTable{}, fmt.Errorf("%w: vtable at %d out of range", ErrMalformed, vt)
	}
	vtLen := int(binary.LittleEndian.Uint16(buf[vt:]))
	tbLen := int(binary.LittleEndian.Uint16(buf[vt+2:]))
	if vtLen < 4 || vtLen%2 != 0 || vt+vtLen > len(buf) || tbLen < 4 || pos+tbLen > len(buf) {
		return fbTable{}, fmt.Errorf("%w: bad vtable at %d", ErrMalformed, vt)
	}
	return fbTable{buf: buf, pos: pos, vt: vt, vtLen: vtLen, tbLen: tbLen}, nil
}

// field returns the absolute position of field i, or -1 if it is absent.
// size is the inline size of the field, which must lie inside the table.
func (t fbTable) field(i, size int) (int, error) {
	o := 4 + 2*i
	if o+2 > t.vtLen {
		return -1, nil
	}
	fo := int(binary.LittleEndian.Uint16(t.buf[t.vt+o:]))
	if fo == 0 {
		return -1, nil
	}
	if fo+size > t.tbLen {
		return -1, fmt.Errorf("%w: field %d outside its table", ErrMalformed, i)
	}
	return t.pos + fo, nil
}

func (t fbTable) u8(i int, def uint8) (uint8, error) {
	p, err := t.field(i, 1)
	if err != nil || p < 0 {
		return def, err
	}
	return t.buf[p], nil
}

func (t fbTable) i16(i int, def int16) (int16, error) {
	p, err := t.field(i, 2)
	if err != nil || p < 0 {
		return def, err
	}
	return int16(binary.LittleEndian.Uint16(t.buf[p:])), nil
}

func (t fbTable) i64(i int, def int64) (int64, error) {
	p, err := t.field(i, 8)
	if err != nil || p < 0 {
		return def, err
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

// ref follows the offset stored in field i; -1 if the field is absent.
func (t fbTable) ref(i int) (int, error) {
	p, err := t.field(i, 4)
	if err != nil || p < 0 {
		return -1, err
	}
	off, _ := fbU32(t.buf, p)
	target := p + int(off)
	if target > len(t.buf)-4 {
		return -1, fmt.Errorf("%w: field %d points outside the buffer", ErrMalformed, i)
	}
	return target, nil
}

// table returns the sub-table of field i; ok is false if it is absent.
func (t fbTable) table(i int) (sub fbTable, ok bool, err error) {
	p, err := t.ref(i)
	if err != nil || p < 0 {
		return fbTable{}, false, err
	}
	sub, err = fbTableAt(t.buf, p)
	return sub, err == nil, err
}

// vector returns the start and length of the vector in field i, whose
// elements are elem bytes wide; n is 0 if the field is absent.
func (t fbTable) vector(i, elem int) (start, n int, err error) {
	p, err := t.ref(i)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	ln, _ := fbU32(t.buf, p)
	start = p + 4
	if int(ln) > (len(t.buf)-start)/elem {
		return 0, 0, fmt.Errorf("%w: vector %d of %d elements overruns the buffer", ErrMalformed, i, ln)
	}
	return start, int(ln), nil
}

// str returns the string in field i ("" if absent).
func (t fbTable) str(i int) (string, error) {
	start, n, err := t.vector(i, 1)
	if err != nil || n == 0 {
		return "", err
	}
	return string(t.buf[start : start+n]), nil
}

// vectorTable returns element j of a vector of tables starting at start.
func (t fbTable) vectorTable(start, j int) (fbTable, error) {
	p := start + 4*j
	off, ok := fbU32(t.buf, p)
	if !ok {
		return fbTable{}, fmt.Errorf("%w: vector element out of range", ErrMalformed)
	}
	return fbTableAt(t.buf, p+int(off))
}

// checkKeyValues checks a custom_metadata vector (field i of t).
func (t fbTable) checkKeyValues(i int) error {
	start, n, err := t.vector(i, 4)
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		kv, err := t.vectorTable(start, j)
		if err != nil {
			return err
		}
		if _, err := kv.str(0); err != nil {
			return err
		}
		if _, err := kv.str(1); err != nil {
			return err
		}
	}
	return nil
}

// ipcMessage is one encapsulated IPC message inside a stream.
type ipcMessage struct {
	header  uint8  // msgSchema, msgRecordBatch, ...
	meta    []byte // flatbuffer Message
	body    []byte
	raw     []byte // the whole encapsulated message, prefix to end of body
	bodyLen int64
}

// nextMessage parses the message at b[p:]. It returns eos=true at an
// end-of-stream marker (0xFFFFFFFF 0x00000000). Only the continuation
// format (Arrow ≥ 0.15) is accepted.
func nextMessage(b []byte, p int) (m ipcMessage, next int, eos bool, err error) {
	cont, ok := fbU32(b, p)
	if !ok {
		return m, p, false, fmt.Errorf("%w: stream truncated: missing message or end-of-stream marker", ErrMalformed)
	}
	if cont != ipcContinuation {
		return m, p, false, fmt.Errorf("%w: expected continuation marker 0xFFFFFFFF at byte %d, found 0x%08X", ErrMalformed, p, cont)
	}
	ml, ok := fbU32(b, p+4)
	if !ok {
		return m, p, false, fmt.Errorf("%w: stream truncated in a message length", ErrMalformed)
	}
	if ml == 0 {
		return m, p + 8, true, nil
	}
	if ml > maxMetadataLen {
		return m, p, false, fmt.Errorf("%w: message metadata of %d bytes exceeds the limit of %d", ErrMalformed, ml, maxMetadataLen)
	}
	start := p + 8
	if int(ml) > len(b)-start {
		return m, p, false, fmt.Errorf("%w: stream truncated: metadata of %d bytes, %d left", ErrMalformed, ml, len(b)-start)
	}
	meta := b[start : start+int(ml)]
	root, err := fbRoot(meta)
	if err != nil {
		return m, p, false, err
	}
	ht, err := root.u8(1, 0)
	if err != nil {
		return m, p, false, err
	}
	bodyLen, err := root.i64(3, 0)
	if err != nil {
		return m, p, false, err
	}
	if err := root.checkKeyValues(4); err != nil {
		return m, p, false, err
	}
	bodyStart := start + int(ml)
	if bodyLen < 0 || bodyLen > int64(len(b)-bodyStart) {
		return m, p, false, fmt.Errorf("%w: stream truncated: body of %d bytes, %d left", ErrMalformed, bodyLen, len(b)-bodyStart)
	}
	end := bodyStart + int(bodyLen)
	m = ipcMessage{header: ht, meta: meta, body: b[bodyStart:end], raw: b[p:end], bodyLen: bodyLen}
	header, ok, err := root.table(2)
	if err != nil {
		return m, p, false, err
	}
	if !ok {
		return m, p, false, fmt.Errorf("%w: message without header", ErrMalformed)
	}
	switch ht {
	case msgSchema:
		err = checkSchemaFB(header)
	case msgRecordBatch:
		err = checkRecordBatchFB(header, bodyLen)
	case msgDictionaryBatch:
		err = fmt.Errorf("%w: dictionary batches are not allowed (flinkgo uses no dictionary encoding)", ErrMalformed)
	default:
		err = fmt.Errorf("%w: unexpected IPC message type %d", ErrMalformed, ht)
	}
	return m, end, false, err
}

// checkSchemaFB checks a Schema table.
func checkSchemaFB(s fbTable) error {
	endianness, err := s.i16(0, 0)
	if err != nil {
		return err
	}
	if endianness != 0 {
		return fmt.Errorf("%w: big-endian schemas are not supported; write little-endian Arrow data", ErrSchema)
	}
	if _, _, err := s.vector(3, 8); err != nil { // features
		return err
	}
	if err := s.checkKeyValues(2); err != nil {
		return err
	}
	start, n, err := s.vector(1, 4)
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		f, err := s.vectorTable(start, j)
		if err != nil {
			return err
		}
		if err := checkFieldFB(f, "", 0); err != nil {
			return err
		}
	}
	return nil
}

// fbTypeNames names the members of the flatbuffer Type union.
var fbTypeNames = [...]string{"NONE", "null", "int", "floating point", "binary", "utf8",
	"bool", "decimal", "date", "time", "timestamp", "interval", "list", "struct",
	"union", "fixed_size_binary", "fixed_size_list", "map", "duration", "large_binary",
	"large_utf8", "large_list", "run_end_encoded", "binary_view", "utf8_view",
	"list_view", "large_list_view"}

func fbTypeName(t uint8) string {
	if int(t) < len(fbTypeNames) {
		return fbTypeNames[t]
	}
	return fmt.Sprintf("type #%d", t)
}

// checkFieldFB checks a Field table and its children.
func checkFieldFB(f fbTable, parent string, depth int) error {
	name, err := f.str(0)
	if err != nil {
		return err
	}
	path := name
	if parent != "" {
		path = parent + "." + name
	}
	if depth > maxNesting {
		return fmt.Errorf("%w: column %q: nesting deeper than %d levels", ErrSchema, path, maxNesting)
	}
	tt, err := f.u8(2, 0)
	if err != nil {
		return err
	}
	switch tt {
	case 2, 3, 4, 5, 6, 7, 8, 10, 12, 13: // int float binary utf8 bool decimal date timestamp list struct
	default:
		return fmt.Errorf("%w: column %q has Arrow type %s, which flinkgo does not support (see the type mapping in docs/protocol.md)", ErrSchema, path, fbTypeName(tt))
	}
	typ, ok, err := f.table(3)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: column %q has no type table", ErrMalformed, path)
	}
	if tt == 10 { // Timestamp: unit, timezone
		if _, err := typ.str(1); err != nil {
			return err
		}
	}
	if p, err := f.field(4, 4); err != nil {
		return err
	} else if p >= 0 {
		return fmt.Errorf("%w: column %q is dictionary-encoded; flinkgo uses no dictionary encoding", ErrSchema, path)
	}
	if err := f.checkKeyValues(6); err != nil {
		return err
	}
	start, n, err := f.vector(5, 4)
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		c, err := f.vectorTable(start, j)
		if err != nil {
			return err
		}
		if err := checkFieldFB(c, path, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// checkRecordBatchFB checks a RecordBatch table against its body length.
func checkRecordBatchFB(rb fbTable, bodyLen int64) error {
	length, err := rb.i64(0, 0)
	if err != nil {
		return err
	}
	if length < 0 {
		return fmt.Errorf("%w: negative row count %d", ErrMalformed, length)
	}
	if _, _, err := rb.vector(1, 16); err != nil { // nodes
		return err
	}
	start, n, err := rb.vector(2, 16)
	if err != nil {
		return err
	}
	for j := 0; j < n; j++ {
		p := start + 16*j
		off := int64(binary.LittleEndian.Uint64(rb.buf[p:]))
		ln := int64(binary.LittleEndian.Uint64(rb.buf[p+8:]))
		if off < 0 || ln < 0 || off > bodyLen || ln > bodyLen-off {
			return fmt.Errorf("%w: buffer %d [%d, +%d) outside a body of %d bytes", ErrMalformed, j, off, ln, bodyLen)
		}
	}
	if p, err := rb.field(3, 4); err != nil {
		return err
	} else if p >= 0 {
		return fmt.Errorf("%w: compressed record batches are not allowed; write uncompressed Arrow IPC", ErrMalformed)
	}
	if _, _, err := rb.vector(4, 8); err != nil {
		return err
	}
	return nil
}
