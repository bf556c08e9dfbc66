package deps

import (
	_ "github.com/apache/arrow-go/v18/arrow"
	_ "github.com/apache/arrow-go/v18/arrow/array"
	_ "github.com/apache/arrow-go/v18/arrow/ipc"
	_ "github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/apache/arrow-go/v18/arrow/decimal128"
	_ "github.com/cespare/xxhash/v2"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/kadm"
	_ "github.com/vmihailenco/msgpack/v5"
)
