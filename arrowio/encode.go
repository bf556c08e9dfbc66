package arrowio

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// valueError is a value that does not fit its type; path is relative to
// the column ("", "[2]", ".x[0]").
type valueError struct {
	path   string
	typ    *typeSpec
	goType string
	reason string
}

func badValue(t *typeSpec, v any, reason string) *valueError {
	return &valueError{typ: t, goType: fmt.Sprintf("%T", v), reason: reason}
}

var (
	minMicroTime = time.UnixMicro(math.MinInt64)
	maxMicroTime = time.UnixMicro(math.MaxInt64)
)

// toInt64 converts any Go integer; ok is false for other types, inRange is
// false for a uint64 above MaxInt64.
func toInt64(v any) (n int64, ok, inRange bool) {
	switch x := v.(type) {
	case int64:
		return x, true, true
	case int:
		return int64(x), true, true
	case int32:
		return int64(x), true, true
	case int16:
		return int64(x), true, true
	case int8:
		return int64(x), true, true
	case uint8:
		return int64(x), true, true
	case uint16:
		return int64(x), true, true
	case uint32:
		return int64(x), true, true
	case uint:
		return int64(x), true, x <= math.MaxInt64
	case uint64:
		return int64(x), true, x <= math.MaxInt64
	}
	return 0, false, false
}

var intRange = map[kind][2]int64{
	kindInt8:  {math.MinInt8, math.MaxInt8},
	kindInt16: {math.MinInt16, math.MaxInt16},
	kindInt32: {math.MinInt32, math.MaxInt32},
	kindInt64: {math.MinInt64, math.MaxInt64},
}

// decimalOf converts a string or integer to the unscaled decimal of t.
func decimalOf(t *typeSpec, v any) (decimal128.Num, *valueError) {
	if s, ok := v.(string); ok {
		n, reason := parseDecimal(s, t.precision, t.scale)
		if reason != "" {
			return n, badValue(t, v, fmt.Sprintf("%q %s", s, reason))
		}
		return n, nil
	}
	i, ok, inRange := toInt64(v)
	if !ok {
		return decimal128.Num{}, badValue(t, v, "want a decimal string or an integer")
	}
	n := decimal128.FromI64(i)
	if !inRange || !n.Abs().Less(decimal128.GetScaleMultiplier(int(t.precision-t.scale))) {
		return n, badValue(t, v, "out of range for the precision")
	}
	return n.Mul(decimal128.GetScaleMultiplier(int(t.scale))), nil
}

// dateDays returns the calendar date of t (in its own location) as days
// since the epoch.
func dateDays(t time.Time) (int32, bool) {
	y, m, d := t.Date()
	days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	return int32(days), days >= math.MinInt32 && days <= math.MaxInt32
}

// checkValue reports why v cannot be stored as type t, nil if it can.
func checkValue(t *typeSpec, v any) *valueError {
	if v == nil {
		return nil
	}
	switch t.kind {
	case kindBool:
		if _, ok := v.(bool); !ok {
			return badValue(t, v, "want bool")
		}
	case kindInt8, kindInt16, kindInt32, kindInt64:
		n, ok, inRange := toInt64(v)
		if !ok {
			return badValue(t, v, "want an integer (int64)")
		}
		if r := intRange[t.kind]; !inRange || n < r[0] || n > r[1] {
			return badValue(t, v, fmt.Sprintf("%v is out of range", v))
		}
	case kindFloat32, kindFloat64:
		switch v.(type) {
		case float64, float32:
		default:
			return badValue(t, v, "want float64")
		}
	case kindString:
		if _, ok := v.(string); !ok {
			return badValue(t, v, "want string")
		}
	case kindBinary:
		if _, ok := v.([]byte); !ok {
			return badValue(t, v, "want []byte")
		}
	case kindDecimal:
		if _, err := decimalOf(t, v); err != nil {
			return err
		}
	case kindTimestamp, kindTimestampLTZ:
		tm, ok := v.(time.Time)
		if !ok {
			return badValue(t, v, "want time.Time")
		}
		if tm.Before(minMicroTime) || tm.After(maxMicroTime) {
			return badValue(t, v, "out of the range of microsecond timestamps")
		}
	case kindDate:
		tm, ok := v.(time.Time)
		if !ok {
			return badValue(t, v, "want time.Time")
		}
		if _, ok := dateDays(tm); !ok {
			return badValue(t, v, "out of the range of dates")
		}
	case kindList:
		l, ok := v.([]any)
		if !ok {
			return badValue(t, v, "want []any")
		}
		for k, e := range l {
			if err := checkValue(t.elem, e); err != nil {
				err.path = fmt.Sprintf("[%d]%s", k, err.path)
				return err
			}
		}
	case kindStruct:
		m, ok := v.(map[string]any)
		if !ok {
			return badValue(t, v, "want map[string]any")
		}
		for name, e := range m {
			j, ok := t.index[name]
			if !ok {
				return badValue(t, v, fmt.Sprintf("no field %q in %s", name, t))
			}
			if err := checkValue(t.fields[j].typ, e); err != nil {
				err.path = "." + name + err.path
				return err
			}
		}
	}
	return nil
}

// appendValue appends v to b. REQUIRES: checkValue(t, v) == nil.
func appendValue(t *typeSpec, b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch t.kind {
	case kindBool:
		b.(*array.BooleanBuilder).Append(v.(bool))
	case kindInt8:
		n, _, _ := toInt64(v)
		b.(*array.Int8Builder).Append(int8(n))
	case kindInt16:
		n, _, _ := toInt64(v)
		b.(*array.Int16Builder).Append(int16(n))
	case kindInt32:
		n, _, _ := toInt64(v)
		b.(*array.Int32Builder).Append(int32(n))
	case kindInt64:
		n, _, _ := toInt64(v)
		b.(*array.Int64Builder).Append(n)
	case kindFloat32, kindFloat64:
		f, ok := v.(float64)
		if !ok {
			f = float64(v.(float32))
		}
		if t.kind == kindFloat32 {
			b.(*array.Float32Builder).Append(float32(f))
		} else {
			b.(*array.Float64Builder).Append(f)
		}
	case kindString:
		b.(*array.StringBuilder).Append(v.(string))
	case kindBinary:
		b.(*array.BinaryBuilder).Append(v.([]byte))
	case kindDecimal:
		n, _ := decimalOf(t, v)
		b.(*array.Decimal128Builder).Append(n)
	case kindTimestamp, kindTimestampLTZ:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	case kindDate:
		d, _ := dateDays(v.(time.Time))
		b.(*array.Date32Builder).Append(arrow.Date32(d))
	case kindList:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		for _, e := range v.([]any) {
			appendValue(t.elem, vb, e)
		}
	case kindStruct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		m := v.(map[string]any)
		for j, f := range t.fields {
			appendValue(f.typ, sb.FieldBuilder(j), m[f.name])
		}
	}
}
