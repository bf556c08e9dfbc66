package arrowio

import (
	"bytes"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Decoder decodes the DATA batches of one connection against the input
// schema announced in OPEN. It keeps one arrow-go reader alive across
// batches, so that the schema message repeated in every DATA frame is
// compared byte-wise with the previous one instead of being parsed again.
//
// A Decoder is not safe for concurrent use; the batches it returns are
// independent of it and may be used and released on any goroutine.
type Decoder struct {
	schema *InputSchema
	alloc  memory.Allocator

	shared     bool   // the input bytes are not reused once lent: strings may share them (ShareInput)
	schemaRaw  []byte // last schema message accepted (a private copy)
	schemaMeta []byte // its flatbuffer metadata, inside schemaRaw
	rd         *ipc.Reader
	feed       feeder
}

// NewDecoder returns a decoder for batches of schema s.
//
// With a nil alloc the batches are zero-copy: they reference the bytes
// passed to DecodeBatch, which must then stay unmodified until the batch is
// released. With an allocator the record batch body is copied once into a
// buffer from alloc and the input bytes may be reused as soon as
// DecodeBatch returns.
func NewDecoder(s *InputSchema, alloc memory.Allocator) *Decoder {
	return &Decoder{schema: s, alloc: alloc}
}

// ShareInput declares that the bytes passed to DecodeBatch stay unmodified
// until the batch is released, and for ever after if Batch.Lent then
// reports true, so that Row.StrView and Row.ValueView may return strings
// that share them instead of copies. (The bridge reuses a DATA payload's
// buffer only for a batch that lent nothing.) It has no effect with an
// allocator, whose buffers are reused after Release.
func (d *Decoder) ShareInput() { d.shared = d.alloc == nil }

// Schema returns the input schema the decoder checks batches against.
func (d *Decoder) Schema() *InputSchema { return d.schema }

// DecodeBatch decodes the stream of a standalone DATA payload: its own
// schema must pass NewInputSchema. alloc is as in NewDecoder.
func DecodeBatch(ipcStream []byte, alloc memory.Allocator) (*Batch, error) {
	m, _, isEOS, err := nextMessage(ipcStream, 0)
	if err != nil {
		return nil, err
	}
	if isEOS || m.header != msgSchema {
		return nil, fmt.Errorf("%w: the stream does not start with a schema message", ErrMalformed)
	}
	s, err := parseSchema(m.raw)
	if err != nil {
		return nil, err
	}
	is, err := NewInputSchema(s)
	if err != nil {
		return nil, err
	}
	d := NewDecoder(is, alloc)
	defer d.Close()
	return d.DecodeBatch(ipcStream)
}

// Close releases the decoder's reader. The decoder may still be used.
func (d *Decoder) Close() {
	if d.rd != nil {
		d.rd.Release()
		d.rd = nil
	}
}

// feeder hands arrow-go's reader one message at a time.
type feeder struct{ msg *ipc.Message }

func (f *feeder) Message() (*ipc.Message, error) {
	m := f.msg
	f.msg = nil
	if m == nil {
		return nil, io.EOF
	}
	return m, nil
}
func (f *feeder) Retain()  {}
func (f *feeder) Release() {}

// DecodeBatch decodes one self-contained IPC stream (schema message, exactly
// one record batch, end-of-stream marker) whose schema must equal the
// decoder's input schema. Errors wrap ErrMalformed or ErrSchema; corrupted
// bytes never cause a panic. The caller must Release the batch.
func (d *Decoder) DecodeBatch(ipcStream []byte) (*Batch, error) {
	sm, p, isEOS, err := nextMessage(ipcStream, 0)
	if err != nil {
		return nil, err
	}
	if isEOS || sm.header != msgSchema {
		return nil, fmt.Errorf("%w: the stream does not start with a schema message", ErrMalformed)
	}
	if !bytes.Equal(sm.raw, d.schemaRaw) {
		if err := d.acceptSchema(sm); err != nil {
			return nil, err
		}
	}
	bm, p, isEOS, err := nextMessage(ipcStream, p)
	if err != nil {
		return nil, err
	}
	if isEOS {
		return nil, fmt.Errorf("%w: the stream holds no record batch (exactly one is required)", ErrMalformed)
	}
	if bm.header != msgRecordBatch {
		return nil, fmt.Errorf("%w: expected a record batch message", ErrMalformed)
	}
	em, p, isEOS, err := nextMessage(ipcStream, p)
	if err == nil && !isEOS {
		if em.header == msgRecordBatch {
			return nil, fmt.Errorf("%w: the stream holds several record batches (exactly one is required)", ErrMalformed)
		}
		return nil, fmt.Errorf("%w: expected the end-of-stream marker after the record batch", ErrMalformed)
	}
	if err != nil {
		return nil, err
	}
	if p != len(ipcStream) {
		return nil, fmt.Errorf("%w: %d bytes after the end-of-stream marker", ErrMalformed, len(ipcStream)-p)
	}
	rec, err := d.readRecord(bm)
	if err != nil {
		return nil, err
	}
	b, err := newBatch(d.schema, rec, d.shared)
	rec.Release() // newBatch holds its own reference
	if err != nil {
		return nil, err
	}
	return b, nil
}

// acceptSchema checks a schema message that differs byte-wise from the last
// accepted one and makes it the new reference.
func (d *Decoder) acceptSchema(sm ipcMessage) error {
	s, err := parseSchema(sm.raw)
	if err != nil {
		return err
	}
	if !s.Equal(d.schema.schema) {
		return fmt.Errorf("%w: batch schema %v differs from the input schema of OPEN %v", ErrSchema, s, d.schema.schema)
	}
	d.schemaRaw = bytes.Clone(sm.raw)
	d.schemaMeta = d.schemaRaw[8 : 8+len(sm.meta)] // after continuation marker and length
	d.Close()
	return nil
}

func (d *Decoder) allocator() memory.Allocator {
	if d.alloc == nil {
		return memory.DefaultAllocator
	}
	return d.alloc
}

// readRecord turns a checked record batch message into a record.
func (d *Decoder) readRecord(bm ipcMessage) (rec arrow.RecordBatch, err error) {
	defer func() {
		if r := recover(); r != nil {
			d.Close()
			rec, err = nil, fmt.Errorf("%w: record batch: %v", ErrMalformed, r)
		}
	}()
	if d.rd == nil {
		sm := ipc.NewMessage(memory.NewBufferBytes(d.schemaMeta), memory.NewBufferBytes(nil))
		d.feed.msg = sm
		rd, err := ipc.NewReaderFromMessageReader(&d.feed, ipc.WithAllocator(d.allocator()))
		sm.Release()
		if err != nil {
			return nil, fmt.Errorf("%w: schema: %v", ErrMalformed, err)
		}
		d.rd = rd
	}
	meta := memory.NewBufferBytes(bm.meta)
	var body *memory.Buffer
	if d.alloc == nil {
		body = memory.NewBufferBytes(bm.body)
	} else {
		body = memory.NewResizableBuffer(d.alloc)
		body.Resize(len(bm.body))
		copy(body.Bytes(), bm.body)
	}
	msg := ipc.NewMessage(meta, body)
	body.Release()
	d.feed.msg = msg
	ok := d.rd.Next()
	msg.Release()
	d.feed.msg = nil
	if !ok {
		err := d.rd.Err()
		d.Close()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: record batch: %v", ErrMalformed, err)
	}
	rec = d.rd.RecordBatch()
	rec.Retain()
	return rec, nil
}

func bufBytes(b *memory.Buffer) []byte {
	if b == nil {
		return nil
	}
	return b.Bytes()
}

// checkBitmap checks that a validity or boolean bitmap covers n bits.
func checkBitmap(b *memory.Buffer, n int, what string) error {
	if l := len(bufBytes(b)); l > 0 && l < (n+7)/8 {
		return fmt.Errorf("%w: %s of %d bytes for %d rows", ErrMalformed, what, l, n)
	}
	return nil
}

// checkOffsets checks the n+1 int32 offsets of a variable-length array:
// non-decreasing, within [0, limit].
func checkOffsets(b *memory.Buffer, n, limit int) ([]int32, error) {
	if n == 0 {
		return nil, nil
	}
	raw := bufBytes(b)
	if len(raw) < 4*(n+1) {
		return nil, fmt.Errorf("%w: offsets buffer of %d bytes for %d rows", ErrMalformed, len(raw), n)
	}
	offs := arrow.Int32Traits.CastFromBytes(raw)[:n+1]
	if offs[0] < 0 {
		return nil, fmt.Errorf("%w: negative offset", ErrMalformed)
	}
	for i := 1; i <= n; i++ {
		if offs[i] < offs[i-1] {
			return nil, fmt.Errorf("%w: decreasing offsets at row %d", ErrMalformed, i)
		}
	}
	if int(offs[n]) > limit {
		return nil, fmt.Errorf("%w: offset %d beyond the %d bytes or values it indexes", ErrMalformed, offs[n], limit)
	}
	return offs, nil
}

var fixedWidth = map[kind]int{
	kindInt8: 1, kindInt16: 2, kindInt32: 4, kindInt64: 8, kindFloat32: 4, kindFloat64: 8,
	kindDecimal: 16, kindTimestamp: 8, kindTimestampLTZ: 8, kindDate: 4,
}

// checkArray checks that every buffer of a (decoded, untrusted) array is
// large enough and every offset in range, so that reading any row of it
// cannot panic.
func checkArray(t *typeSpec, a arrow.Array, path string) error {
	d := a.Data()
	n := a.Len()
	bufs := d.Buffers()
	if n < 0 || d.Offset() != 0 || len(bufs) == 0 {
		return fmt.Errorf("%w: column %q: bad array layout", ErrMalformed, path)
	}
	if err := checkBitmap(bufs[0], n, "validity bitmap of "+path); err != nil {
		return err
	}
	if w, ok := fixedWidth[t.kind]; ok {
		if len(bufs) < 2 || len(bufBytes(bufs[1])) < w*n {
			return fmt.Errorf("%w: column %q: values buffer too short", ErrMalformed, path)
		}
		return nil
	}
	switch t.kind {
	case kindBool:
		if len(bufs) < 2 || len(bufBytes(bufs[1])) < (n+7)/8 {
			return fmt.Errorf("%w: column %q: values bitmap too short", ErrMalformed, path)
		}
	case kindString, kindBinary:
		if len(bufs) < 3 {
			return fmt.Errorf("%w: column %q: bad array layout", ErrMalformed, path)
		}
		if _, err := checkOffsets(bufs[1], n, len(bufBytes(bufs[2]))); err != nil {
			return fmt.Errorf("column %q: %w", path, err)
		}
	case kindList:
		l, ok := a.(*array.List)
		if !ok || len(bufs) < 2 {
			return fmt.Errorf("%w: column %q: bad list layout", ErrMalformed, path)
		}
		child := l.ListValues()
		if _, err := checkOffsets(bufs[1], n, child.Len()); err != nil {
			return fmt.Errorf("column %q: %w", path, err)
		}
		return checkArray(t.elem, child, path+"[]")
	case kindStruct:
		s, ok := a.(*array.Struct)
		if !ok || s.NumField() != len(t.fields) {
			return fmt.Errorf("%w: column %q: bad struct layout", ErrMalformed, path)
		}
		for j, f := range t.fields {
			c := s.Field(j)
			if c.Len() != n {
				return fmt.Errorf("%w: column %q: field %q has %d rows, want %d", ErrMalformed, path, f.name, c.Len(), n)
			}
			if err := checkArray(f.typ, c, path+"."+f.name); err != nil {
				return err
			}
		}
	}
	return nil
}
