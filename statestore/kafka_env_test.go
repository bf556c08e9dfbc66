package statestore

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestKafkaFake runs the store suite against franz-go's in-process fake
// Kafka; it runs in -short too.
func TestKafkaFake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	env := &kafkaEnv{
		bootstrap: c.ListenAddrs()[0],
		stop:      func(*testing.T) { c.Close() },
	}
	runKafkaSuite(t, env)
}

// TestKafkaReal runs the store suite against the real broker whose
// bootstrap address FLINKGO_KAFKA holds (testdata/kafka/kafka.sh start
// prints it). With FLINKGO_KAFKA_SCRIPT naming kafka.sh, the failure test
// stops the broker and starts it again.
func TestKafkaReal(t *testing.T) {
	addr := os.Getenv("FLINKGO_KAFKA")
	if addr == "" {
		t.Skip("FLINKGO_KAFKA is not set: start a broker with testdata/kafka/kafka.sh start and set FLINKGO_KAFKA to the address it prints")
	}
	env := &kafkaEnv{bootstrap: addr}
	if script := os.Getenv("FLINKGO_KAFKA_SCRIPT"); script != "" {
		env.stop = func(t *testing.T) {
			runScript(t, script, "stop")
			t.Cleanup(func() { runScript(t, script, "start") })
		}
	}
	runKafkaSuite(t, env)
}

func runScript(t *testing.T, script, cmd string) {
	out, err := exec.Command(script, cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", script, cmd, err, out)
	}
	t.Logf("%s %s: %s", script, cmd, strings.TrimSpace(string(out)))
}
