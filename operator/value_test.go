package operator

import (
	"reflect"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	type odd struct{}
	cases := []struct {
		name string
		in   any
		want any
		err  string // a part of the error; "" for none
	}{
		{"domain value kept", []any{int64(1), "a"}, []any{int64(1), "a"}, ""},
		{"widened", map[string]any{"n": int32(3), "l": []any{uint8(1), float32(0.5)}},
			map[string]any{"n": int64(3), "l": []any{int64(1), float64(0.5)}}, ""},
		{"typed slice", []string{"x"}, []any{"x"}, ""},
		// Only a nested value changes: the copy of the inner container must
		// reach the outer one (map order must not matter).
		{"widened in a nested list only", map[string]any{"l": []any{uint8(1)}, "s": "x"},
			map[string]any{"l": []any{int64(1)}, "s": "x"}, ""},
		{"widened in a nested object only", []any{"x", map[string]any{"n": int16(2)}},
			[]any{"x", map[string]any{"n": int64(2)}}, ""},
		{"path to a bad value", map[string]any{"a": []any{int64(1), map[string]any{"b": odd{}}}}, nil,
			`value at "mem.a[1].b" has Go type operator.odd`},
		{"overflow", []any{uint64(1 << 63)}, nil, `value at "mem[0]": uint64 9223372036854775808 overflows int64`},
		{"top-level", odd{}, nil, `value at "mem" has Go type operator.odd`},
	}
	for _, c := range cases {
		got, err := Normalize("mem", c.in)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.err)
		case c.err == "" && !reflect.DeepEqual(got, c.want):
			t.Errorf("%s: %#v, want %#v", c.name, got, c.want)
		}
	}
}

// TestCheckValue accepts values in the domain as they are and names the
// first one, however deep, that would need converting.
func TestCheckValue(t *testing.T) {
	for _, ok := range []any{nil, int64(1), "s", []any{int64(1), map[string]any{"a": 1.5}}} {
		if err := CheckValue("attr", ok); err != nil {
			t.Errorf("CheckValue(%#v): %v", ok, err)
		}
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{int32(1), `value at "attr" has Go type int32`},
		{map[string]any{"l": []any{int64(1), uint8(2)}}, `value at "attr.l[1]" has Go type uint8`},
		{[]any{"x", []string{"y"}}, `value at "attr[1]" has Go type []string`},
	} {
		err := CheckValue("attr", c.v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckValue(%#v) = %v, want an error with %q", c.v, err, c.want)
		}
	}
}
