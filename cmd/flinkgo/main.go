// Command flinkgo is the operator's tool for the Kafka action-state store
// (docs/cleanup.md):
//
//	flinkgo cleanup plan  --markers FILE|- --bootstrap HOST:PORT [--out FILE]
//	flinkgo cleanup plan  --savepoint PATH --uid UID --bootstrap HOST:PORT [--classpath CP] [--out FILE]
//	flinkgo cleanup apply --plan FILE --bootstrap HOST:PORT --topic T --control-topic C
//	flinkgo inspect record   --key HEX [--value HEX]
//	flinkgo inspect snapshot FILE|-
//
// Kafka connection settings (SASL, TLS) are the job's agent options, given
// with --kafka-option name=value (repeatable), e.g.
// --kafka-option kafka.tls.enabled=true.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

const usage = `usage:
  flinkgo cleanup plan  (--markers FILE|- | --savepoint PATH --uid UID [--classpath CP] [--java BIN])
                        --bootstrap HOST:PORT [--kafka-option NAME=VALUE]... [--out FILE]
  flinkgo cleanup apply --plan FILE --bootstrap HOST:PORT --topic TOPIC --control-topic TOPIC
                        [--kafka-option NAME=VALUE]... [--timeout 2m]
  flinkgo inspect record   --key HEX [--value HEX]
  flinkgo inspect snapshot FILE|-      (a key-group section or a recovery marker)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "flinkgo:", err)
		os.Exit(1)
	}
}

// run executes one command line; output goes to out.
func run(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("a command is missing\n%s", usage)
	}
	switch args[0] + " " + args[1] {
	case "cleanup plan":
		return cmdPlan(ctx, args[2:], stdin, out)
	case "cleanup apply":
		return cmdApply(ctx, args[2:], out)
	case "inspect record":
		return cmdInspectRecord(args[2:], out)
	case "inspect snapshot":
		return cmdInspectSnapshot(args[2:], stdin, out)
	}
	return fmt.Errorf("unknown command %q\n%s", strings.Join(args[:2], " "), usage)
}

// kafkaOptionFlags collects --kafka-option name=value.
type kafkaOptionFlags map[string]string

func (k kafkaOptionFlags) String() string { return fmt.Sprint(map[string]string(k)) }

func (k kafkaOptionFlags) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	k[name] = val
	return nil
}

// kafkaClient connects like the job's store would, with the given options.
func kafkaClient(bootstrap, topic string, extra kafkaOptionFlags) (*kgo.Client, error) {
	if bootstrap == "" {
		return nil, errors.New("--bootstrap is required: the Kafka brokers of the action-state topic")
	}
	o := map[string]string{statestore.OptKafkaBootstrapServers: bootstrap, statestore.OptKafkaTopic: topic}
	for k, v := range extra {
		o[k] = v
	}
	opts, err := statestore.KafkaOptionsFrom(o)
	if err != nil {
		return nil, err
	}
	return statestore.NewKafkaClient(opts...)
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %v\n%s", fs.Name(), err, usage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q\n%s", fs.Name(), fs.Arg(0), usage)
	}
	return nil
}

func cmdPlan(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	fs := newFlags("cleanup plan")
	markers := fs.String("markers", "", "MarkerExport output (JSON lines), - for stdin")
	savepoint := fs.String("savepoint", "", "savepoint or retained checkpoint path (runs MarkerExport)")
	uid := fs.String("uid", "", "uid of the agent operator (with --savepoint)")
	classpath := fs.String("classpath", os.Getenv("FLINKGO_JAVA_CLASSPATH"), "Java classpath for MarkerExport")
	java := fs.String("java", "java", "java binary for MarkerExport")
	bootstrap := fs.String("bootstrap", "", "Kafka bootstrap servers")
	outFile := fs.String("out", "", "write the plan here instead of stdout")
	kopts := kafkaOptionFlags{}
	fs.Var(kopts, "kafka-option", "Kafka agent option NAME=VALUE (SASL, TLS)")
	if err := parse(fs, args); err != nil {
		return err
	}
	var ms []*snapshot.Marker
	var err error
	switch {
	case (*markers == "") == (*savepoint == ""):
		return errors.New("cleanup plan: give either --markers or --savepoint (with --uid)")
	case *markers != "":
		ms, err = readMarkersFile(*markers, stdin)
	case *uid == "":
		return errors.New("cleanup plan: --savepoint needs --uid, the uid of the agent operator (GoAgents.connect(...).uid(...))")
	default:
		ms, err = exportMarkers(ctx, *java, *classpath, *savepoint, *uid)
	}
	if err != nil {
		return fmt.Errorf("cleanup plan: %w", err)
	}
	if len(ms) == 0 {
		return errors.New("cleanup plan: no markers were read: the checkpoint holds none for that operator (check --uid)")
	}
	topic := ms[0].Topic
	cl, err := kafkaClient(*bootstrap, topic, kopts)
	if err != nil {
		return fmt.Errorf("cleanup plan: %w", err)
	}
	defer cl.Close()
	tds, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("cleanup plan: describing topic %q: %w", topic, err)
	}
	td, ok := tds[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("cleanup plan: topic %q of the markers does not exist", topic)
	}
	if td.Err != nil {
		return fmt.Errorf("cleanup plan: topic %q: %w", topic, td.Err)
	}
	p, err := MakePlan(ms, snapshot.UUID(td.ID), int32(len(td.Partitions)))
	if err != nil {
		return err
	}
	if *outFile == "" {
		_, err = out.Write(p.Encode())
		return err
	}
	if err := os.WriteFile(*outFile, p.Encode(), 0o644); err != nil {
		return fmt.Errorf("cleanup plan: %w", err)
	}
	fmt.Fprintf(out, "Cleanup plan %s written to %s\n", p.ID, *outFile)
	return nil
}

func cmdApply(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("cleanup apply")
	planFile := fs.String("plan", "", "the plan file (flinkgo cleanup plan)")
	bootstrap := fs.String("bootstrap", "", "Kafka bootstrap servers")
	topic := fs.String("topic", "", "the action-state topic (must be the plan's)")
	control := fs.String("control-topic", "", "the cleanup control topic (the job's kafkaActionStateCleanupControlTopic)")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long (a retry is safe)")
	kopts := kafkaOptionFlags{}
	fs.Var(kopts, "kafka-option", "Kafka agent option NAME=VALUE (SASL, TLS)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *planFile == "" || *topic == "" || *control == "" {
		return fmt.Errorf("cleanup apply: --plan, --topic and --control-topic are required\n%s", usage)
	}
	b, err := os.ReadFile(*planFile)
	if err != nil {
		return fmt.Errorf("cleanup apply: %w", err)
	}
	p, err := DecodePlan(b)
	if err != nil {
		return fmt.Errorf("cleanup apply: %s: %w", *planFile, err)
	}
	cl, err := kafkaClient(*bootstrap, *topic, kopts)
	if err != nil {
		return fmt.Errorf("cleanup apply: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return newApplier(cl, p, *topic, *control, out).apply(ctx)
}
