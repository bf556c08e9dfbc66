package arrowio

import (
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// valueAt returns element i of a (checked) array as a normalised Go value.
func valueAt(t *typeSpec, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch t.kind {
	case kindBool:
		return a.(*array.Boolean).Value(i)
	case kindInt8:
		return int64(a.(*array.Int8).Value(i))
	case kindInt16:
		return int64(a.(*array.Int16).Value(i))
	case kindInt32:
		return int64(a.(*array.Int32).Value(i))
	case kindInt64:
		return a.(*array.Int64).Value(i)
	case kindFloat32:
		return float64(a.(*array.Float32).Value(i))
	case kindFloat64:
		return a.(*array.Float64).Value(i)
	case kindString:
		return string(binaryAt(a, i))
	case kindBinary:
		return append([]byte{}, binaryAt(a, i)...)
	case kindDecimal:
		return formatDecimal(a.(*array.Decimal128).Value(i), t.scale)
	case kindTimestamp, kindTimestampLTZ:
		return time.UnixMicro(int64(a.(*array.Timestamp).Value(i))).UTC()
	case kindDate:
		return dateTime(int32(a.(*array.Date32).Value(i)))
	case kindList:
		l := a.(*array.List)
		s, e := l.ValueOffsets(i)
		child := l.ListValues()
		out := make([]any, 0, e-s)
		for k := s; k < e; k++ {
			out = append(out, valueAt(t.elem, child, int(k)))
		}
		return out
	case kindStruct:
		st := a.(*array.Struct)
		out := make(map[string]any, len(t.fields))
		for j, f := range t.fields {
			out[f.name] = valueAt(f.typ, st.Field(j), i)
		}
		return out
	}
	return nil
}

// binaryAt returns element i of a checked utf8 or binary array, aliased.
func binaryAt(a arrow.Array, i int) []byte {
	d := a.Data()
	offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())
	return bufBytes(d.Buffers()[2])[offs[d.Offset()+i]:offs[d.Offset()+i+1]]
}

// dateTime returns midnight UTC of a date32 (days since the epoch).
func dateTime(days int32) time.Time {
	return time.Unix(int64(days)*86400, 0).UTC()
}

// formatDecimal renders an unscaled decimal exactly: an optional '-', the
// integer digits (at least "0"), and for scale > 0 a '.' and exactly scale
// fraction digits, e.g. "12.50", "-0.05", "7".
func formatDecimal(n decimal128.Num, scale int32) string {
	var digits []byte
	var buf [48]byte
	neg := n.Sign() < 0
	switch {
	case n.HighBits() == 0:
		digits = strconv.AppendUint(buf[:0], n.LowBits(), 10)
	case n.HighBits() == -1 && n.LowBits() != 0:
		digits = strconv.AppendUint(buf[:0], -n.LowBits(), 10)
	default:
		digits = new(big.Int).Abs(n.BigInt()).Append(buf[:0], 10)
	}
	out := make([]byte, 0, len(digits)+int(scale)+3)
	if neg {
		out = append(out, '-')
	}
	s := int(scale)
	if s <= 0 {
		return string(append(out, digits...))
	}
	if len(digits) <= s {
		out = append(out, '0', '.')
		for k := len(digits); k < s; k++ {
			out = append(out, '0')
		}
		return string(append(out, digits...))
	}
	out = append(out, digits[:len(digits)-s]...)
	out = append(out, '.')
	return string(append(out, digits[len(digits)-s:]...))
}

// parseDecimal parses an exact decimal string ("-12.5", "+3", "0.125") into
// an unscaled value of the given precision and scale. Fraction digits beyond
// the scale are an error (no rounding), as are exponents and spaces.
func parseDecimal(s string, precision, scale int32) (decimal128.Num, string) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var n decimal128.Num
	ten := decimal128.FromU64(10)
	intDigits, fracDigits := 0, 0
	seenDot, any := false, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !seenDot {
			seenDot = true
			continue
		}
		if c < '0' || c > '9' {
			return n, "is not a plain decimal number"
		}
		any = true
		if seenDot {
			fracDigits++
			if fracDigits > int(scale) {
				return n, "has more fraction digits than the scale allows"
			}
		} else if intDigits > 0 || c != '0' {
			intDigits++
			if intDigits > int(precision-scale) {
				return n, "has too many integer digits for the precision"
			}
		}
		n = n.Mul(ten).Add(decimal128.FromU64(uint64(c - '0')))
	}
	if !any {
		return n, "is not a plain decimal number"
	}
	for ; fracDigits < int(scale); fracDigits++ {
		n = n.Mul(ten)
	}
	if neg {
		n = n.Negate()
	}
	return n, ""
}
