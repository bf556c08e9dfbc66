package operator

import (
	"fmt"
	"time"
)

// Normalize returns v in the value domain: nil, bool, int64, float64, string,
// []byte, []any and map[string]any (recursively). Narrower Go integers and
// floats are widened; anything else is an error naming path and Go type.
//
// Normalize returns v itself when it is already in the domain, so the common
// case does not allocate.
func Normalize(path string, v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, []byte:
		return v, nil
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
			return nil, fmt.Errorf("operator: value at %q: uint %d overflows int64", path, x)
		}
		return int64(x), nil
	case uint64:
		if x > 1<<63-1 {
			return nil, fmt.Errorf("operator: value at %q: uint64 %d overflows int64", path, x)
		}
		return int64(x), nil
	case float32:
		return float64(x), nil
	case []any:
		var out []any // copied only if an element changes
		for i, e := range x {
			n, err := Normalize(fmt.Sprintf("%s[%d]", path, i), e)
			if err != nil {
				return nil, err
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
			n, err := Normalize(path+"."+k, e)
			if err != nil {
				return nil, err
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
		return nil, fmt.Errorf("operator: value at %q has Go type %T, which memory cannot hold; use nil, bool, int64, float64, string, []byte, []any or map[string]any", path, v)
	}
}

// same reports whether a normalised value is the very value it came from.
// Only scalar widening changes a value, and widening always changes its type.
func same(n, e any) bool {
	switch e.(type) {
	case nil, bool, int64, float64, string, []byte, []any, map[string]any:
		return true
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
		return fmt.Errorf("operator: value at %q has Go type %T; convert it to int64 or float64", path, v)
	}
	return nil
}

// normalizeRowValue is Normalize for output rows, which may also carry
// time.Time (TIMESTAMP, DATE columns).
func normalizeRowValue(path string, v any) (any, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	return Normalize(path, v)
}
