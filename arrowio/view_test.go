package arrowio

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// inside reports whether s's bytes lie within buf.
func inside(s string, buf []byte) bool {
	if len(s) == 0 || len(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	b := uintptr(unsafe.Pointer(&buf[0]))
	return p >= b && p+uintptr(len(s)) <= b+uintptr(len(buf))
}

// TestValueViewSharesOnlyWhenInputIsNeverReused decodes the golden batch
// three ways: ShareInput (strings point into the payload), the default
// zero-copy decoder without ShareInput, and an allocator (strings are
// copies). In every mode ValueView equals Value column by column.
func TestValueViewSharesOnlyWhenInputIsNeverReused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alloc memory.Allocator
		share bool
	}{{"shared", nil, true}, {"zero-copy, not shared", nil, false}, {"allocator", memory.NewGoAllocator(), true}} {
		t.Run(tc.name, func(t *testing.T) {
			stream := buildGoldenInput(t)
			d := NewDecoder(goldenInputSchema(t), tc.alloc)
			if tc.share {
				d.ShareInput()
			}
			b, err := d.DecodeBatch(stream)
			if err != nil {
				t.Fatal(err)
			}
			wantShared := tc.share && tc.alloc == nil
			sawString := false
			for i := 0; i < b.Len(); i++ {
				r := b.Row(i)
				for j := 0; j < r.NumFields(); j++ {
					v, w := r.ValueView(j), r.Value(j)
					if !reflect.DeepEqual(canon(v), canon(w)) {
						t.Errorf("row %d column %q: ValueView %#v, Value %#v", i, r.Name(j), v, w)
					}
					s, ok := v.(string)
					if !ok || b.cols[j].spec.kind != kindString || s == "" {
						continue
					}
					sawString = true
					if got := inside(s, stream); got != wantShared {
						t.Errorf("row %d column %q: string inside the payload = %v, want %v", i, r.Name(j), got, wantShared)
					}
					if sv := r.StrView(j); sv != s || inside(sv, stream) != wantShared {
						t.Errorf("row %d column %q: StrView %q (shared %v)", i, r.Name(j), sv, inside(sv, stream))
					}
					if inside(w.(string), stream) {
						t.Errorf("row %d column %q: Value shares the payload; it must copy", i, r.Name(j))
					}
				}
			}
			if !sawString {
				t.Fatal("the golden batch has no non-empty STRING value to check")
			}
			// Lent says whether a string sharing the payload went out.
			if b.Lent() != wantShared {
				t.Errorf("Lent = %v after shared views %v", b.Lent(), wantShared)
			}
			b.Release()
			// A batch from the pool starts again with nothing lent.
			b2, err := d.DecodeBatch(stream)
			if err != nil {
				t.Fatal(err)
			}
			defer b2.Release()
			for i := 0; i < b2.Len(); i++ {
				r := b2.Row(i)
				for j := 0; j < r.NumFields(); j++ {
					_ = r.Value(j)
					if b2.cols[j].spec.kind == kindString {
						_ = r.Str(j)
					}
				}
			}
			if b2.Lent() {
				t.Error("Lent after Value and Str only, which copy")
			}
		})
	}
}

// TestStrViewRejectsOtherTypes: like Str, StrView panics on a column that is
// not a STRING, and returns "" for null.
func TestStrViewRejectsOtherTypes(t *testing.T) {
	b := decodeGolden(t)
	defer b.Release()
	r := b.Row(0)
	defer func() {
		if recover() == nil {
			t.Error("StrView of a BIGINT column did not panic")
		}
	}()
	r.StrView(r.Index("big"))
}

// decodeGolden decodes the golden DATA batch; the caller releases it.
func decodeGolden(t *testing.T) *Batch {
	t.Helper()
	b, err := DecodeBatch(buildGoldenInput(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func goldenInputSchema(t *testing.T) *InputSchema { return inputSchemaOf(t, goldenColumns) }

// inputSchemaOf is the InputSchema of a DATA batch with user columns cols.
func inputSchemaOf(t *testing.T, cols []Column) *InputSchema {
	t.Helper()
	s, err := InputSchemaFor(cols)
	if err != nil {
		t.Fatal(err)
	}
	is, err := NewInputSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return is
}
