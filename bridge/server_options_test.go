package bridge

import (
	"strings"
	"testing"

	"github.com/flinkgo/flinkgo/operator"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"536870912": 536870912, "512m": 512 << 20, "512 MB": 512 << 20, "2g": 2 << 30,
		"1gib": 1 << 30, "64k": 64 << 10, "10b": 10, "1t": 1 << 40} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "12x", "m", "1.5g", "99999999999t"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q): no error", in)
		}
	}
}

func TestParseSettings(t *testing.T) {
	open := &Open{Agent: "echo", OperatorID: "op-1", KeyGroupStart: 10, KeyGroupEnd: 20, Attempt: 3, Options: map[string]string{
		"num-async-threads": "7", "error-handling-strategy": "retry", "retry-wait-interval": "250ms",
		"go.credit.rows": "100", "go.memory.limit": "512m", "go.output.rows": "64", "go.output.linger.ms": "0", "go.metrics.interval.ms": "250",
		"go.tasks.per.thread": "3", "go.binary": "/x", "kafkaBootstrapServers": "localhost:9092", "actionStateStoreBackend": "memory",
	}}
	s, err := parseSettings(open)
	if err != nil {
		t.Fatal(err)
	}
	if s.workers != 7 || s.core.MaxConcurrency != 21 || s.core.Strategy != operator.StrategyRetry || s.core.RetryWait.Milliseconds() != 250 ||
		s.creditRows != 100 || s.memoryLimit != 512<<20 || s.outRows != 64 || s.lingerMs != 0 || s.metricsMs != 250 || s.store == nil ||
		s.core.Owned.Start != 10 || s.core.Owned.End != 20 {
		t.Fatalf("settings %+v", s)
	}
	// By default the core hands out 16 tasks per worker.
	if d, err := parseSettings(&Open{Agent: "echo", Options: map[string]string{"num-async-threads": "2"}}); err != nil ||
		d.workers != 2 || d.core.MaxConcurrency != 2*defaultTasksPerThread {
		t.Fatalf("defaults: %+v, %v", d, err)
	}
	for _, bad := range []string{"0", "-1", "1025", "x"} {
		_, err := parseSettings(&Open{Agent: "echo", Options: map[string]string{OptTasksPerThread: bad}})
		if err == nil || !strings.Contains(err.Error(), OptTasksPerThread) {
			t.Errorf("%s=%q: %v", OptTasksPerThread, bad, err)
		}
	}
	// The seed follows the job identity and the agent, never the attempt.
	open2 := *open
	open2.Attempt = 4
	s2, _ := parseSettings(&open2)
	if s2.core.Seed != s.core.Seed || s.core.Seed != Seed("op-1", "echo") {
		t.Fatal("seed depends on the attempt")
	}
	open2.Options = map[string]string{"job-identifier": "orders-v1"}
	s3, err := parseSettings(&open2)
	if err != nil {
		t.Fatal(err)
	}
	if s3.core.Seed != Seed("orders-v1", "echo") || s3.core.Seed == s.core.Seed {
		t.Fatal("job-identifier does not set the seed")
	}
	if Seed("a", "bc") == Seed("ab", "c") {
		t.Fatal("seed parts are ambiguous")
	}

	for opt, part := range map[string]string{
		"go.credit.rows=0": "go.credit.rows", "go.memory.limit=1k": "minimum", "actionStateStoreBackend=redis": "none, memory or kafka",
		"max-retries=-1": "max-retries", "frobnicate=1": `"frobnicate"`, "go.output.bytes=lots": "go.output.bytes",
		"go.metrics.interval.ms=-1": "go.metrics.interval.ms", "go.metrics.interval.ms=3600001": "3600000",
		"go.metrics.interval.ms=1s": "whole number of milliseconds",
		"go.credit.bytes=0":         "at least 1 byte", "go.credit.bytes=lots": "go.credit.bytes",
	} {
		kv := strings.SplitN(opt, "=", 2)
		if _, err := parseSettings(&Open{Agent: "echo", Options: map[string]string{kv[0]: kv[1]}}); err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("%s: %v, want an error mentioning %s", opt, err, part)
		}
	}
}

// TestJavaShimDefaults: OPEN as the Java shim sends it with nothing set
// (GoAgentConfig.toWireOptions: every known option with its default) is
// accepted.
func TestJavaShimDefaults(t *testing.T) {
	opts := map[string]string{
		"kafkaBootstrapServers": "localhost:9092", "kafkaActionStateTopicNumPartitions": "64",
		"kafkaActionStateTopicReplicationFactor": "1", "kafkaActionStateTombstoneEnabled": "false",
		"error-handling-strategy": "fail", "max-retries": "3", "retry-wait-interval": "1000ms",
		"go.binary": "/opt/agent", "go.batch.size": "1024", "go.batch.bytes": "1048576", "go.batch.timeout.ms": "10",
		"go.credit.rows": "8192", "go.close.timeout.ms": "10000", "go.max.frame.bytes": "67108864",
		"go.startup.timeout.ms": "60000", "go.barrier.timeout.ms": "600000", "go.end.timeout.ms": "3600000",
		"go.memory.limit": "536870912",
	}
	s, err := parseSettings(&Open{Agent: "echo", OperatorID: "op", Options: opts, KeyGroupEnd: 127})
	if err != nil {
		t.Fatal(err)
	}
	if s.creditRows != 8192 || s.memoryLimit != 512<<20 || s.core.RetryWait.Seconds() != 1 || s.store != nil || s.backend != "none" ||
		s.metricsMs != 1000 {
		t.Fatalf("settings %+v", s)
	}
}
