package arrowio

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// kind is a column type of the protocol's type mapping.
type kind uint8

const (
	kindBool kind = iota + 1
	kindInt8
	kindInt16
	kindInt32
	kindInt64
	kindFloat32
	kindFloat64
	kindString
	kindBinary
	kindDecimal
	kindTimestamp    // TIMESTAMP(p): timestamp[us], no time zone
	kindTimestampLTZ // TIMESTAMP_LTZ(p): timestamp[us, tz=UTC]
	kindDate
	kindList
	kindStruct
)

// typeSpec is one type of the type mapping, with its Flink name and Arrow
// type. Specs are immutable once built.
type typeSpec struct {
	kind      kind
	precision int32 // DECIMAL precision; TIMESTAMP precision (3..6)
	scale     int32 // DECIMAL scale
	elem      *typeSpec
	fields    []fieldSpec
	index     map[string]int // struct field name -> position
	arrow     arrow.DataType
}

type fieldSpec struct {
	name string
	typ  *typeSpec
}

// Column is one user column of an output (or input) schema: a name and a
// Flink SQL type name as written in the describe manifest, e.g. "STRING",
// "DECIMAL(10, 2)", "ARRAY<BIGINT>", "ROW<x DOUBLE, y DOUBLE>".
type Column struct {
	Name string
	Type string
}

var simpleKinds = map[string]kind{
	"BOOLEAN": kindBool, "TINYINT": kindInt8, "SMALLINT": kindInt16, "INT": kindInt32,
	"INTEGER": kindInt32, "BIGINT": kindInt64, "FLOAT": kindFloat32, "DOUBLE": kindFloat64,
	"STRING": kindString, "BYTES": kindBinary, "DATE": kindDate,
}

var simpleNames = map[kind]string{
	kindBool: "BOOLEAN", kindInt8: "TINYINT", kindInt16: "SMALLINT", kindInt32: "INT",
	kindInt64: "BIGINT", kindFloat32: "FLOAT", kindFloat64: "DOUBLE", kindString: "STRING",
	kindBinary: "BYTES", kindDate: "DATE",
}

// String returns the canonical Flink SQL name of the type.
func (t *typeSpec) String() string {
	switch t.kind {
	case kindDecimal:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.precision, t.scale)
	case kindTimestamp:
		return fmt.Sprintf("TIMESTAMP(%d)", t.precision)
	case kindTimestampLTZ:
		return fmt.Sprintf("TIMESTAMP_LTZ(%d)", t.precision)
	case kindList:
		return "ARRAY<" + t.elem.String() + ">"
	case kindStruct:
		var sb strings.Builder
		sb.WriteString("ROW<")
		for i, f := range t.fields {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(quoteIdent(f.name))
			sb.WriteByte(' ')
			sb.WriteString(f.typ.String())
		}
		sb.WriteByte('>')
		return sb.String()
	}
	return simpleNames[t.kind]
}

// quoteIdent quotes a ROW field name with backticks, as Flink's
// asSerializableString does, so that names that are keywords parse too.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// newSpec builds the Arrow type of a spec whose other fields are set.
func newSpec(t *typeSpec) *typeSpec {
	switch t.kind {
	case kindBool:
		t.arrow = arrow.FixedWidthTypes.Boolean
	case kindInt8:
		t.arrow = arrow.PrimitiveTypes.Int8
	case kindInt16:
		t.arrow = arrow.PrimitiveTypes.Int16
	case kindInt32:
		t.arrow = arrow.PrimitiveTypes.Int32
	case kindInt64:
		t.arrow = arrow.PrimitiveTypes.Int64
	case kindFloat32:
		t.arrow = arrow.PrimitiveTypes.Float32
	case kindFloat64:
		t.arrow = arrow.PrimitiveTypes.Float64
	case kindString:
		t.arrow = arrow.BinaryTypes.String
	case kindBinary:
		t.arrow = arrow.BinaryTypes.Binary
	case kindDecimal:
		t.arrow = &arrow.Decimal128Type{Precision: t.precision, Scale: t.scale}
	case kindTimestamp:
		t.arrow = &arrow.TimestampType{Unit: arrow.Microsecond}
	case kindTimestampLTZ:
		t.arrow = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case kindDate:
		t.arrow = arrow.FixedWidthTypes.Date32
	case kindList:
		t.arrow = arrow.ListOf(t.elem.arrow)
	case kindStruct:
		fs := make([]arrow.Field, len(t.fields))
		t.index = make(map[string]int, len(t.fields))
		for i, f := range t.fields {
			fs[i] = arrow.Field{Name: f.name, Type: f.typ.arrow, Nullable: true}
			t.index[f.name] = i
		}
		t.arrow = arrow.StructOf(fs...)
	}
	return t
}

// specFromArrow validates an Arrow type against the type mapping. path names
// the column for the error message.
func specFromArrow(dt arrow.DataType, path string, depth int) (*typeSpec, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("column %q: nesting deeper than %d levels", path, maxNesting)
	}
	t := &typeSpec{arrow: dt}
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		t.kind = kindBool
	case *arrow.Int8Type:
		t.kind = kindInt8
	case *arrow.Int16Type:
		t.kind = kindInt16
	case *arrow.Int32Type:
		t.kind = kindInt32
	case *arrow.Int64Type:
		t.kind = kindInt64
	case *arrow.Float32Type:
		t.kind = kindFloat32
	case *arrow.Float64Type:
		t.kind = kindFloat64
	case *arrow.StringType:
		t.kind = kindString
	case *arrow.BinaryType:
		t.kind = kindBinary
	case *arrow.Decimal128Type:
		if dt.Precision < 1 || dt.Precision > 38 || dt.Scale < 0 || dt.Scale > dt.Precision {
			return nil, fmt.Errorf("column %q has Arrow type %s: precision must be 1..38 and scale 0..precision", path, dt)
		}
		t.kind, t.precision, t.scale = kindDecimal, dt.Precision, dt.Scale
	case *arrow.TimestampType:
		if dt.Unit != arrow.Microsecond {
			return nil, fmt.Errorf("column %q has Arrow type %s: timestamps must be in microseconds (timestamp[us])", path, dt)
		}
		switch dt.TimeZone {
		case "":
			t.kind = kindTimestamp
		case "UTC":
			t.kind = kindTimestampLTZ
		default:
			return nil, fmt.Errorf("column %q has Arrow type %s: the time zone must be empty (TIMESTAMP) or \"UTC\" (TIMESTAMP_LTZ)", path, dt)
		}
		t.precision = 6
	case *arrow.Date32Type:
		t.kind = kindDate
	case *arrow.ListType:
		elem, err := specFromArrow(dt.Elem(), path+"[]", depth+1)
		if err != nil {
			return nil, err
		}
		t.kind, t.elem = kindList, elem
	case *arrow.StructType:
		if dt.NumFields() == 0 {
			return nil, fmt.Errorf("column %q is a struct without fields", path)
		}
		t.kind = kindStruct
		t.index = make(map[string]int, dt.NumFields())
		for i, f := range dt.Fields() {
			if _, dup := t.index[f.Name]; dup {
				return nil, fmt.Errorf("column %q has two fields named %q", path, f.Name)
			}
			ft, err := specFromArrow(f.Type, path+"."+f.Name, depth+1)
			if err != nil {
				return nil, err
			}
			t.index[f.Name] = i
			t.fields = append(t.fields, fieldSpec{name: f.Name, typ: ft})
		}
	default:
		return nil, fmt.Errorf("column %q has Arrow type %s, which flinkgo does not support (see the type mapping in docs/protocol.md)", path, dt)
	}
	return t, nil
}

// ParseType parses a Flink SQL type name of the describe manifest and
// returns its Arrow type. Keywords are case-insensitive; ROW field names
// may be quoted with backticks. TIMESTAMP and TIMESTAMP_LTZ take a precision
// of 3..6 (default 6), DECIMAL a precision of 1..38 and a scale of 0..p
// (default DECIMAL(10, 0), as in Flink).
func ParseType(s string) (arrow.DataType, error) {
	t, err := parseFlinkType(s)
	if err != nil {
		return nil, err
	}
	return t.arrow, nil
}

func parseFlinkType(s string) (*typeSpec, error) {
	p := &typeParser{s: s}
	t, err := p.parse(0)
	if err == nil {
		p.space()
		if p.pos < len(p.s) {
			err = p.errorf("unexpected %q", p.s[p.pos:])
		}
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

type typeParser struct {
	s   string
	pos int
}

func (p *typeParser) errorf(format string, args ...any) error {
	return fmt.Errorf("type %q at offset %d: %s", p.s, p.pos, fmt.Sprintf(format, args...))
}

func (p *typeParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

func (p *typeParser) accept(c byte) bool {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *typeParser) expect(c byte) error {
	if !p.accept(c) {
		return p.errorf("expected %q", c)
	}
	return nil
}

func (p *typeParser) ident() string {
	p.space()
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.pos > start && c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.s[start:p.pos]
}

// name reads a ROW field name: an identifier or a `quoted` name.
func (p *typeParser) name() (string, error) {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '`' {
		var sb strings.Builder
		for i := p.pos + 1; i < len(p.s); i++ {
			if p.s[i] != '`' {
				sb.WriteByte(p.s[i])
				continue
			}
			if i+1 < len(p.s) && p.s[i+1] == '`' {
				sb.WriteByte('`')
				i++
				continue
			}
			p.pos = i + 1
			if sb.Len() == 0 {
				return "", p.errorf("empty field name")
			}
			return sb.String(), nil
		}
		return "", p.errorf("unterminated `quoted` name")
	}
	n := p.ident()
	if n == "" {
		return "", p.errorf("expected a field name")
	}
	return n, nil
}

func (p *typeParser) number() (int, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.s[start:p.pos])
	if err != nil || p.pos-start > 4 {
		return 0, p.errorf("expected a number")
	}
	return n, nil
}

// params reads an optional "(a)" or "(a, b)" list of at most max numbers.
func (p *typeParser) params(max int) ([]int, error) {
	if !p.accept('(') {
		return nil, nil
	}
	var out []int
	for {
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if p.accept(')') {
			break
		}
		if len(out) == max {
			return nil, p.errorf("expected ')'")
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *typeParser) parse(depth int) (*typeSpec, error) {
	if depth > maxNesting {
		return nil, p.errorf("nesting deeper than %d levels", maxNesting)
	}
	word := strings.ToUpper(p.ident())
	if k, ok := simpleKinds[word]; ok {
		return newSpec(&typeSpec{kind: k}), nil
	}
	switch word {
	case "DECIMAL":
		ps, err := p.params(2)
		if err != nil {
			return nil, err
		}
		t := &typeSpec{kind: kindDecimal, precision: 10}
		if len(ps) > 0 {
			t.precision = int32(ps[0])
		}
		if len(ps) > 1 {
			t.scale = int32(ps[1])
		}
		if t.precision < 1 || t.precision > 38 || t.scale > t.precision {
			return nil, p.errorf("DECIMAL(%d, %d): precision must be 1..38 and scale 0..precision", t.precision, t.scale)
		}
		return newSpec(t), nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		ps, err := p.params(1)
		if err != nil {
			return nil, err
		}
		t := &typeSpec{kind: kindTimestamp, precision: 6}
		if word == "TIMESTAMP_LTZ" {
			t.kind = kindTimestampLTZ
		}
		if len(ps) > 0 {
			t.precision = int32(ps[0])
		}
		if t.precision < 3 || t.precision > 6 {
			return nil, p.errorf("%s(%d): precision must be 3..6 (values travel as microseconds)", word, t.precision)
		}
		return newSpec(t), nil
	case "ARRAY":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		elem, err := p.parse(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return newSpec(&typeSpec{kind: kindList, elem: elem}), nil
	case "ROW":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		t := &typeSpec{kind: kindStruct}
		seen := map[string]bool{}
		for {
			n, err := p.name()
			if err != nil {
				return nil, err
			}
			if seen[n] {
				return nil, p.errorf("duplicate field name %q", n)
			}
			seen[n] = true
			ft, err := p.parse(depth + 1)
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, fieldSpec{name: n, typ: ft})
			if p.accept('>') {
				break
			}
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
		return newSpec(t), nil
	case "":
		return nil, p.errorf("expected a type name")
	}
	return nil, p.errorf("unknown or unsupported type %s (supported: BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, BYTES, DECIMAL(p, s), TIMESTAMP(p), TIMESTAMP_LTZ(p), DATE, ARRAY<T>, ROW<name T, ...>)", word)
}
