// Package msgp appends canonical msgpack: the one encoding the project's
// codecs (control frames, action-state records, values, snapshots) write, so that equal
// data gives identical bytes in every language. Each integer takes its
// smallest encoding (positive fixint, uint8/16/32/64 for non-negative values;
// negative fixint, int8/16/32/64 for negative ones), strings
// fixstr/str8/str16/str32, binary bin8/bin16/bin32 (also when empty), arrays
// and maps their fix/16/32 forms by length, floats always float 64, times
// the timestamp extension in its smallest form. These are the encodings
// github.com/vmihailenco/msgpack/v5's Encoder chooses with its default
// settings (the tests compare the two).
package msgp

import (
	"encoding/binary"
	"math"
	"time"
)

// Each Append function appends one msgpack value (or header) to b and
// returns the extended slice.

// AppendMapLen appends a map header for n entries.
func AppendMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}

// AppendArrayLen appends an array header for n elements.
func AppendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

// AppendStr appends s as a msgpack str.
func AppendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// AppendBin appends v as msgpack bin.
func AppendBin(b []byte, v []byte) []byte { return append(AppendBinLen(b, len(v)), v...) }

// AppendInt appends v in its smallest integer encoding.
func AppendInt(b []byte, v int64) []byte {
	if v >= 0 {
		switch {
		case v <= 0x7f:
			return append(b, byte(v))
		case v <= math.MaxUint8:
			return append(b, 0xcc, byte(v))
		case v <= math.MaxUint16:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
		case v <= math.MaxUint32:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(v))
	}
	switch {
	case v >= -32:
		return append(b, byte(int8(v)))
	case v >= math.MinInt8:
		return append(b, 0xd0, byte(int8(v)))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(v)))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(v)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
}

// AppendBool appends true or false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

// AppendUint appends v in its smallest integer encoding.
func AppendUint(b []byte, v uint64) []byte {
	if v > math.MaxInt64 {
		return binary.BigEndian.AppendUint64(append(b, 0xcf), v)
	}
	return AppendInt(b, int64(v))
}

// AppendBinLen appends a bin header for n bytes, which the caller appends.
func AppendBinLen(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
}

// AppendFloat64 appends v as a float 64 (never a shorter form).
func AppendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(v))
}

// AppendNil appends nil.
func AppendNil(b []byte) []byte { return append(b, 0xc0) }

// AppendTime appends t as the msgpack timestamp extension (type -1) in its
// smallest form: 32-bit seconds when they fit and there are no nanoseconds,
// 64-bit (30-bit nanoseconds, 34-bit seconds), or 96-bit (32-bit
// nanoseconds, 64-bit signed seconds).
func AppendTime(b []byte, t time.Time) []byte {
	secs := uint64(t.Unix())
	if secs>>34 == 0 {
		data := uint64(t.Nanosecond())<<34 | secs
		if data&0xffffffff00000000 == 0 {
			return binary.BigEndian.AppendUint32(append(b, 0xd6, 0xff), uint32(data))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xd7, 0xff), data)
	}
	b = binary.BigEndian.AppendUint32(append(b, 0xc7, 12, 0xff), uint32(t.Nanosecond()))
	return binary.BigEndian.AppendUint64(b, secs)
}
