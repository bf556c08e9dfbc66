package operator

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// encodeValue encodes a value-domain value as msgpack with sorted map keys.
func encodeValue(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("operator: encode value: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeValue decodes what encodeValue wrote, back into the value domain.
func decodeValue(b []byte) (any, error) {
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	v, err := dec.DecodeInterfaceLoose()
	if err != nil {
		return nil, fmt.Errorf("operator: decode value: %w", err)
	}
	return normalizeDecoded(v)
}

func normalizeDecoded(v any) (any, error) {
	switch x := v.(type) {
	case []any:
		for i := range x {
			n, err := normalizeDecoded(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return x, nil
	case map[string]any:
		for k, e := range x {
			n, err := normalizeDecoded(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
		return x, nil
	}
	return Normalize("", v)
}
