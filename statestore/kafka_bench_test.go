package statestore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
)

// Put throughput on the real broker (FLINKGO_KAFKA): group commit, where a
// Flush at the end (the barrier) makes everything durable, against one
// acknowledged flush per record as upstream does. Records are the typical
// record of bench_test.go, spread over 128 key groups and 64 partitions.
//
// The timed region ends with the Flush. Use a fixed count large enough that
// the producer's buffer (50,000 records) does not hide the broker's pace:
//
//	FLINKGO_KAFKA=127.0.0.1:19092 go test -run '^$' -bench 'BenchmarkKafkaPut/GroupCommit' -benchtime 200000x ./statestore/
//	FLINKGO_KAFKA=127.0.0.1:19092 go test -run '^$' -bench 'BenchmarkKafkaPut/(FlushPerRecord|PutDurable)' -benchtime 20000x ./statestore/

func BenchmarkKafkaPut(b *testing.B) {
	addr := os.Getenv("FLINKGO_KAFKA")
	if addr == "" {
		b.Skip("FLINKGO_KAFKA is not set: start a broker with testdata/kafka/kafka.sh start")
	}
	for _, mode := range []struct {
		name string
		opts []KafkaOpt
	}{
		{"GroupCommit", nil},
		{"FlushPerRecord", []KafkaOpt{KafkaFlushPerRecord(true)}},
		{"PutDurable", nil},
	} {
		b.Run(mode.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			topic := fmt.Sprintf("flinkgo-bench-%s-%d", mode.name, time.Now().UnixNano())
			k, err := NewKafka(ctx, append([]KafkaOpt{
				KafkaBootstrapServers(addr), KafkaTopic(topic), KafkaLogger(discardLog),
				KafkaKeyGroups(snapshot.KeyGroupRange{Start: 0, End: 127}, 128),
			}, mode.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer k.Close()
			base := typicalRecord(b)
			recs := make([]*Record, 4096)
			for i := range recs {
				r := *base
				r.Key.KeyGroup = int32(i % 128)
				r.Key.Seq = uint64(i)
				recs[i] = &r
			}
			put := k.Put
			if mode.name == "PutDurable" {
				put = k.PutDurable
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				r := *recs[i%len(recs)]
				r.Key.Seq = uint64(i)
				if err := put(&r); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := k.Flush(); err != nil { // the barrier: all of them durable
				b.Fatal(err)
			}
			b.StopTimer()
			el := time.Since(start)
			s := k.KafkaStats()
			b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
			b.ReportMetric(float64(s.WriteLatencyP50.Microseconds()), "p50-ack-µs")
			b.ReportMetric(float64(s.WriteLatencyP99.Microseconds()), "p99-ack-µs")
			b.ReportMetric(float64(s.BytesWritten)/el.Seconds()/1e6, "MB/s-acked")
		})
	}
}
