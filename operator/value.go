package operator

import (
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// Normalize returns v in the value domain: nil, bool, int64, float64, string,
// []byte, []any and map[string]any (recursively). Narrower Go integers and
// floats are widened; anything else is an error naming path and Go type.
//
// Normalize returns v itself when it is already in the domain, so the common
// case does not allocate.
func Normalize(path string, v any) (any, error) {
	n, bad := normalize(v)
	if bad != nil {
		return nil, bad.at(path)
	}
	return n, nil
}

// badValue is a value outside the domain, found by normalize. The path to it
// is built only then: its segments are collected on the way out, innermost
// first.
type badValue struct {
	v    any
	over bool     // an unsigned integer that overflows int64
	rev  []string // path segments below the caller's path, innermost first
}

func (b *badValue) at(path string) error {
	for i := len(b.rev) - 1; i >= 0; i-- {
		path += b.rev[i]
	}
	if b.over {
		return fmt.Errorf("operator: value at %q: %T %d overflows int64", path, b.v, b.v)
	}
	return fmt.Errorf("operator: value at %q has Go type %T, which memory cannot hold; use nil, bool, int64, float64, string, []byte, []any or map[string]any", path, b.v)
}

// inDomainScalar reports whether v is a value of the domain that Normalize
// returns as it is: nil, bool, int64, float64, string or []byte.
func inDomainScalar(v any) bool {
	switch v.(type) {
	case nil, bool, int64, float64, string, []byte:
		return true
	}
	return false
}

func normalize(v any) (any, *badValue) {
	if inDomainScalar(v) {
		return v, nil
	}
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		if uint64(x) > 1<<63-1 {
			return nil, &badValue{v: v, over: true}
		}
		return int64(x), nil
	case uint64:
		if x > 1<<63-1 {
			return nil, &badValue{v: v, over: true}
		}
		return int64(x), nil
	case float32:
		return float64(x), nil
	case []any:
		var out []any // copied only if an element changes
		for i, e := range x {
			n, bad := normalize(e)
			if bad != nil {
				bad.rev = append(bad.rev, "["+strconv.Itoa(i)+"]")
				return nil, bad
			}
			if out == nil && !same(n, e) {
				out = make([]any, len(x))
				copy(out, x[:i])
			}
			if out != nil {
				out[i] = n
			}
		}
		if out != nil {
			return out, nil
		}
		return x, nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case []int64:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case []float64:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			n, bad := normalize(e)
			if bad != nil {
				bad.rev = append(bad.rev, "."+k)
				return nil, bad
			}
			if out == nil && !same(n, e) {
				out = make(map[string]any, len(x))
				for k2, e2 := range x {
					out[k2] = e2
				}
			}
			if out != nil {
				out[k] = n
			}
		}
		if out != nil {
			return out, nil
		}
		return x, nil
	default:
		return nil, &badValue{v: v}
	}
}

// same reports whether a normalised value is the very value it came from.
// Widening a scalar always changes its type; a list or an object holding a
// widened value comes back as a copy, so for those the identity tells.
func same(n, e any) bool {
	if inDomainScalar(e) {
		return true
	}
	switch x := e.(type) {
	case []any:
		y, ok := n.([]any)
		return ok && len(y) == len(x) && (len(x) == 0 || &y[0] == &x[0])
	case map[string]any:
		y, ok := n.(map[string]any)
		return ok && reflect.ValueOf(y).UnsafePointer() == reflect.ValueOf(x).UnsafePointer()
	}
	return false
}

// CheckValue reports whether v is in the value domain without converting it.
func CheckValue(path string, v any) error {
	n, err := Normalize(path, v)
	if err != nil {
		return err
	}
	if !same(n, v) {
		p, t := widened(path, v)
		return fmt.Errorf("operator: value at %q has Go type %T; convert it to one of nil, bool, int64, float64, string, []byte, []any or map[string]any", p, t)
	}
	return nil
}

// widened finds the first value below path that Normalize would widen (v
// must hold one) and returns its path and the value.
func widened(path string, v any) (string, any) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if n, _ := normalize(e); !same(n, e) {
				return widened(path+"["+strconv.Itoa(i)+"]", e)
			}
		}
	case map[string]any:
		for k, e := range x {
			if n, _ := normalize(e); !same(n, e) {
				return widened(path+"."+k, e)
			}
		}
	}
	return path, v
}

// normalizeRowValue is Normalize for output rows, which may also carry
// time.Time (TIMESTAMP, DATE columns).
func normalizeRowValue(path string, v any) (any, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	return Normalize(path, v)
}
