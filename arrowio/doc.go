// Package arrowio is the Arrow side of the flinkgo wire protocol
// (docs/protocol.md): the input and output batch schemas, the decoding of
// DATA batches into zero-copy row views, and the encoding of OUTPUT batches.
// It imports nothing of flinkgo; the bridge uses it, and tests and tools
// use its InputBuilder to make DATA batches the way the JVM operator does.
//
// # Schemas
//
// An input batch starts with `_key_group` int32, `_key` binary and `_ts`
// int64 (ms, nullable), followed by user columns of the type mapping:
// bool, int8/16/32/64, float32/64, utf8, binary, decimal128(p, s),
// timestamp[us] (TIMESTAMP), timestamp[us, tz=UTC] (TIMESTAMP_LTZ), date32,
// list<T> and struct<...>, nested freely up to 32 levels. NewInputSchema and
// ReadInputSchema reject anything else with ErrSchema, naming the column and
// its type. OutputSchema maps the Flink SQL type names of the describe
// manifest ("DECIMAL(10, 2)", "ARRAY<ROW<a INT>>", ...) to Arrow, `_ts`
// first. Schemas travel as one encapsulated IPC schema message
// (SchemaMessage, ReadSchemaMessage).
//
// # Decoding
//
// A Decoder decodes the DATA payloads of one connection: each is a
// self-contained IPC stream of a schema message, exactly one record batch
// and the end-of-stream marker. Untrusted bytes are checked before arrow-go
// parses them (bounds of every flatbuffer table and vector, nesting depth,
// no dictionaries, no body compression) and every buffer and offset of the
// decoded arrays is checked afterwards, so a corrupted payload is an error
// wrapping ErrMalformed or ErrSchema, never a panic or an unbounded
// allocation. A Decoder is not safe for concurrent use.
//
// With a nil allocator a Batch is zero-copy: it references the payload,
// which must then stay unmodified until Batch.Release. With an allocator
// (NewPoolAllocator recycles memory across batches) the record batch body
// is copied once and the payload may be reused at once.
//
// # Lifetime
//
// Batch.Key slices, Row values themselves and the zero-copy Row.Bytes
// slices are valid until Batch.Release; a Row used after that panics. The
// values returned by Row.Value, Str, Decimal and Time are copies that stay
// valid. A Batch may be read from several goroutines and released by any
// one of them, once.
//
// # Values
//
// Row.Value returns the value domain of docs/architecture.md: integers as
// int64, floats as float64, STRING as string, BYTES as []byte, DECIMAL as
// its exact decimal string ("12.50": all scale digits, no exponent),
// TIMESTAMP and TIMESTAMP_LTZ as time.Time in UTC (microseconds), DATE as
// midnight UTC, ARRAY as []any, ROW as map[string]any, null as nil. The
// typed getters (Bool, Int64, Float64, Str, Bytes, Decimal, Time) avoid the
// boxing of Value on hot paths.
//
// # Encoding
//
// OutputBuilder (and InputBuilder) append rows of Go values and Flush them
// as one IPC stream. Builders, their Arrow buffers (through a PoolAllocator
// by default), the output buffer and the encoded schema message are reused
// from batch to batch. Append checks a whole row before it changes
// anything: a value that does not fit its column is an error wrapping
// ErrValue that names the column, its type and the Go type. Builders are
// not safe for concurrent use.
package arrowio
