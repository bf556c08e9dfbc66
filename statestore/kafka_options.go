package statestore

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaOpt configures NewKafka. Options apply in order; a later one wins.
type KafkaOpt func(*kafkaCfg)

// kafkaCfg is the configuration of a Kafka store; defaultKafkaCfg gives the
// defaults, validate checks it before anything connects.
type kafkaCfg struct {
	brokers        []string
	topic          string
	partitions     int32
	replication    int16
	tombstones     bool
	controlTopic   string
	saslMechanism  string
	saslUser       string
	saslPass       string
	tlsEnabled     bool
	tlsCA          string
	tlsCert        string
	tlsKey         string
	tlsInsecure    bool
	tlsConfig      *tls.Config
	encKey         []byte
	owned          snapshot.KeyGroupRange
	maxParallelism int32
	flushPerRecord bool
	runningLinger  time.Duration
	producerLinger time.Duration
	compression    string
	maxBuffered    int
	delivery       time.Duration
	logger         *slog.Logger
	clientOpts     []kgo.Opt
}

// Defaults, as in Apache Flink Agents where the option exists there.
const (
	DefaultKafkaBootstrapServers  = "localhost:9092"
	DefaultKafkaNumPartitions     = 64
	DefaultKafkaReplicationFactor = 1
	DefaultKafkaMaxParallelism    = 128
	DefaultKafkaDeliveryTimeout   = 30 * time.Second
	DefaultKafkaRunningLinger     = 100 * time.Millisecond
	DefaultKafkaProducerLinger    = 50 * time.Millisecond
	DefaultKafkaMaxBuffered       = 50000
	DefaultKafkaCompression       = "none"
)

func defaultKafkaCfg() kafkaCfg {
	return kafkaCfg{
		brokers:        []string{DefaultKafkaBootstrapServers},
		partitions:     DefaultKafkaNumPartitions,
		replication:    DefaultKafkaReplicationFactor,
		owned:          snapshot.KeyGroupRange{Start: 0, End: DefaultKafkaMaxParallelism - 1},
		maxParallelism: DefaultKafkaMaxParallelism,
		delivery:       DefaultKafkaDeliveryTimeout,
		runningLinger:  DefaultKafkaRunningLinger,
		producerLinger: DefaultKafkaProducerLinger,
		compression:    DefaultKafkaCompression,
		maxBuffered:    DefaultKafkaMaxBuffered,
	}
}

// KafkaBootstrapServers sets the brokers to connect to first
// (kafkaBootstrapServers, comma-separated). Default: localhost:9092.
func KafkaBootstrapServers(addrs ...string) KafkaOpt {
	return func(c *kafkaCfg) { c.brokers = addrs }
}

// KafkaTopic sets the action-state topic (kafkaActionStateTopic). Required.
func KafkaTopic(name string) KafkaOpt { return func(c *kafkaCfg) { c.topic = name } }

// KafkaNumPartitions sets the partitions of the topic when the store creates
// it (kafkaActionStateTopicNumPartitions). An existing topic keeps its own
// count. Default: 64.
func KafkaNumPartitions(n int32) KafkaOpt { return func(c *kafkaCfg) { c.partitions = n } }

// KafkaReplicationFactor sets the replication factor of the topic when the
// store creates it (kafkaActionStateTopicReplicationFactor). Default: 1.
func KafkaReplicationFactor(n int16) KafkaOpt { return func(c *kafkaCfg) { c.replication = n } }

// KafkaTombstones makes CheckpointComplete write a tombstone for every record
// it prunes, so that compaction removes them from the topic
// (kafkaActionStateTombstoneEnabled). Default: false.
func KafkaTombstones(on bool) KafkaOpt { return func(c *kafkaCfg) { c.tombstones = on } }

// KafkaCleanupControlTopic names the single-partition compacted topic where
// checkpoint-aligned cleanup records its boundaries
// (kafkaActionStateCleanupControlTopic). When set, Recover refuses markers
// below the committed boundary; see docs/kafka-store.md. Default: unset.
func KafkaCleanupControlTopic(name string) KafkaOpt {
	return func(c *kafkaCfg) { c.controlTopic = name }
}

// KafkaSASL authenticates with SASL; mechanism is PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512 (kafka.sasl.mechanism, kafka.sasl.username,
// kafka.sasl.password). Default: no SASL. Use it with TLS: PLAIN sends the
// password as is.
func KafkaSASL(mechanism, user, password string) KafkaOpt {
	return func(c *kafkaCfg) { c.saslMechanism, c.saslUser, c.saslPass = mechanism, user, password }
}

// KafkaTLS connects over TLS (kafka.tls.enabled). caFile (kafka.tls.ca.file)
// replaces the system roots when set; certFile and keyFile
// (kafka.tls.cert.file, kafka.tls.key.file) give a client certificate;
// insecureSkipVerify (kafka.tls.insecure.skip.verify) disables verification
// of the broker's certificate, for tests only. Default: plaintext.
func KafkaTLS(caFile, certFile, keyFile string, insecureSkipVerify bool) KafkaOpt {
	return func(c *kafkaCfg) {
		c.tlsEnabled = true
		c.tlsCA, c.tlsCert, c.tlsKey, c.tlsInsecure = caFile, certFile, keyFile, insecureSkipVerify
	}
}

// KafkaTLSConfig connects over TLS with cfg as given; it replaces KafkaTLS.
// Default: plaintext.
func KafkaTLSConfig(cfg *tls.Config) KafkaOpt {
	return func(c *kafkaCfg) { c.tlsEnabled, c.tlsConfig = cfg != nil, cfg }
}

// KafkaEncryptionKey encrypts record values with AES-256-GCM under key (32
// bytes; kafka.encryption.key.file or kafka.encryption.key.env). Keys are
// not encrypted. See docs/kafka-store.md for the envelope. Default: values
// are written in the clear.
func KafkaEncryptionKey(key []byte) KafkaOpt {
	return func(c *kafkaCfg) { c.encKey = append([]byte(nil), key...) }
}

// KafkaKeyGroups sets the key groups this subtask owns and the job's max
// parallelism (the number of key groups). The store writes only records of
// owned key groups and Recover reads only the partitions that can hold them.
// Default: all of [0, 127], max parallelism 128.
func KafkaKeyGroups(owned snapshot.KeyGroupRange, maxParallelism int32) KafkaOpt {
	return func(c *kafkaCfg) { c.owned, c.maxParallelism = owned, maxParallelism }
}

// KafkaFlushPerRecord makes every Put wait until its record is acknowledged,
// as upstream's one flush per record does (kafka.flush.per.record). For
// benchmarks only. Default: false (group commit).
func KafkaFlushPerRecord(on bool) KafkaOpt { return func(c *kafkaCfg) { c.flushPerRecord = on } }

// KafkaRunningLinger sets how long the record of a running action (written
// after each durable call, with calls only) may wait unsent for a newer version of itself
// (kafka.running.record.linger.ms): when the action writes again within
// that time (its next durable call, or its completion), only the newer
// record is written. A Flush (every barrier) and a PutDurable (a
// reconciler's pending record) send it at once. A durable call's outcome is
// therefore written at most this long after the call returned, unless a
// newer record of the same action holds it. 0 writes every record at once.
// Default: 100 ms.
func KafkaRunningLinger(d time.Duration) KafkaOpt { return func(c *kafkaCfg) { c.runningLinger = d } }

// KafkaProducerLinger sets how long a partition's batch of records may wait
// for more before it is sent (kafka.producer.linger.ms). Larger batches cost
// the broker much less per record (benchmarks/kafka). A Flush (every barrier)
// and a PutDurable send at once, without waiting for the linger. 0 sends
// whenever no request is in flight. Default: 50 ms.
func KafkaProducerLinger(d time.Duration) KafkaOpt { return func(c *kafkaCfg) { c.producerLinger = d } }

// KafkaCompression sets the codec of the record batches the store writes
// (kafka.producer.compression): none, gzip, snappy, lz4 or zstd. A codec
// costs CPU on both sides of every batch and saves bytes on the broker's
// disk; the records are short msgpack values. Default: none, as Kafka's own
// producer (compression.type).
func KafkaCompression(codec string) KafkaOpt { return func(c *kafkaCfg) { c.compression = codec } }

// compressionCodec is the kgo codec of a validated compression name.
func compressionCodec(name string) kgo.CompressionCodec {
	switch name {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

// KafkaMaxBufferedRecords bounds the records written and not yet
// acknowledged (kafka.max.buffered.records): a Put beyond it waits for
// acknowledgements. Default: 50,000.
func KafkaMaxBufferedRecords(n int) KafkaOpt { return func(c *kafkaCfg) { c.maxBuffered = n } }

// KafkaDeliveryTimeout bounds how long a record may wait for its
// acknowledgement before it fails (and the store with it), and how long
// Flush waits (kafka.delivery.timeout.ms). At least 1 s. Default: 30 s.
func KafkaDeliveryTimeout(d time.Duration) KafkaOpt { return func(c *kafkaCfg) { c.delivery = d } }

// KafkaLogger sets the logger for warnings (unsafe topic settings) and
// recovery summaries. Default: slog.Default().
func KafkaLogger(l *slog.Logger) KafkaOpt { return func(c *kafkaCfg) { c.logger = l } }

// KafkaClientOpts appends franz-go options to the clients the store builds,
// after its own (tests use it for short timeouts). Default: none.
func KafkaClientOpts(opts ...kgo.Opt) KafkaOpt {
	return func(c *kafkaCfg) { c.clientOpts = append(c.clientOpts, opts...) }
}

func (c *kafkaCfg) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrKafkaConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.topic == "":
		return bad("kafkaActionStateTopic is required: set it to the action-state topic name")
	case len(c.brokers) == 0 || slicesHasEmpty(c.brokers):
		return bad("kafkaBootstrapServers %q: give host:port[,host:port...]", strings.Join(c.brokers, ","))
	case c.partitions < 1:
		return bad("kafkaActionStateTopicNumPartitions %d: must be at least 1", c.partitions)
	case c.replication < 1:
		return bad("kafkaActionStateTopicReplicationFactor %d: must be at least 1", c.replication)
	case c.tombstones && c.controlTopic != "":
		return bad("kafkaActionStateTombstoneEnabled and kafkaActionStateCleanupControlTopic are both set: " +
			"tombstones delete records behind the cleanup boundary's back; use one cleanup mechanism")
	case c.controlTopic != "" && c.controlTopic == c.topic:
		return bad("kafkaActionStateCleanupControlTopic %q is the action-state topic itself: use a separate topic", c.controlTopic)
	case c.encKey != nil && len(c.encKey) != 32:
		return bad("encryption key of %d bytes: AES-256 needs exactly 32", len(c.encKey))
	case c.maxParallelism < 1 || c.maxParallelism > 1<<15:
		return bad("max parallelism %d: must be in [1, 32768]", c.maxParallelism)
	case c.owned.Start < 0 || c.owned.End < c.owned.Start || c.owned.End >= c.maxParallelism:
		return bad("owned key groups [%d, %d]: must be a non-empty range inside [0, %d]",
			c.owned.Start, c.owned.End, c.maxParallelism-1)
	case c.delivery < time.Second:
		return bad("delivery timeout %v: must be at least 1s", c.delivery)
	case c.runningLinger < 0 || c.runningLinger > time.Minute:
		return bad("kafka.running.record.linger.ms %v: must be in [0, 60000] ms", c.runningLinger)
	case c.producerLinger < 0 || c.producerLinger > time.Second:
		return bad("kafka.producer.linger.ms %v: must be in [0, 1000] ms", c.producerLinger)
	case c.maxBuffered < 1:
		return bad("kafka.max.buffered.records %d: must be at least 1", c.maxBuffered)
	case !slices.Contains([]string{"none", "gzip", "snappy", "lz4", "zstd"}, c.compression):
		return bad("kafka.producer.compression %q: use none, gzip, snappy, lz4 or zstd", c.compression)
	}
	if c.saslMechanism != "" || c.saslUser != "" || c.saslPass != "" {
		switch c.saslMechanism {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return bad("kafka.sasl.mechanism %q: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.saslMechanism)
		}
		if c.saslUser == "" {
			return bad("kafka.sasl.username is required with kafka.sasl.mechanism %s", c.saslMechanism)
		}
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return bad("kafka.tls.cert.file and kafka.tls.key.file go together: set both or neither")
	}
	return nil
}

func slicesHasEmpty(s []string) bool {
	for _, v := range s {
		if strings.TrimSpace(v) == "" {
			return true
		}
	}
	return false
}

// Option names accepted by KafkaOptionsFrom.
const (
	OptKafkaBootstrapServers    = "kafkaBootstrapServers"
	OptKafkaTopic               = "kafkaActionStateTopic"
	OptKafkaNumPartitions       = "kafkaActionStateTopicNumPartitions"
	OptKafkaReplicationFactor   = "kafkaActionStateTopicReplicationFactor"
	OptKafkaTombstones          = "kafkaActionStateTombstoneEnabled"
	OptKafkaCleanupControlTopic = "kafkaActionStateCleanupControlTopic"
	OptKafkaSASLMechanism       = "kafka.sasl.mechanism"
	OptKafkaSASLUsername        = "kafka.sasl.username"
	OptKafkaSASLPassword        = "kafka.sasl.password"
	OptKafkaTLSEnabled          = "kafka.tls.enabled"
	OptKafkaTLSCAFile           = "kafka.tls.ca.file"
	OptKafkaTLSCertFile         = "kafka.tls.cert.file"
	OptKafkaTLSKeyFile          = "kafka.tls.key.file"
	OptKafkaTLSInsecure         = "kafka.tls.insecure.skip.verify"
	OptKafkaEncryptionKeyFile   = "kafka.encryption.key.file"
	OptKafkaEncryptionKeyEnv    = "kafka.encryption.key.env"
	OptKafkaDeliveryTimeoutMs   = "kafka.delivery.timeout.ms"
	OptKafkaFlushPerRecord      = "kafka.flush.per.record"
	OptKafkaRunningLingerMs     = "kafka.running.record.linger.ms"
	OptKafkaMaxBufferedRecords  = "kafka.max.buffered.records"
	OptKafkaProducerLingerMs    = "kafka.producer.linger.ms"
	OptKafkaCompression         = "kafka.producer.compression"
)

var kafkaOptionNames = []string{
	OptKafkaBootstrapServers, OptKafkaTopic, OptKafkaNumPartitions, OptKafkaReplicationFactor,
	OptKafkaTombstones, OptKafkaCleanupControlTopic, OptKafkaSASLMechanism, OptKafkaSASLUsername,
	OptKafkaSASLPassword, OptKafkaTLSEnabled, OptKafkaTLSCAFile, OptKafkaTLSCertFile, OptKafkaTLSKeyFile,
	OptKafkaTLSInsecure, OptKafkaEncryptionKeyFile, OptKafkaEncryptionKeyEnv, OptKafkaDeliveryTimeoutMs,
	OptKafkaFlushPerRecord, OptKafkaRunningLingerMs, OptKafkaMaxBufferedRecords, OptKafkaProducerLingerMs,
	OptKafkaCompression,
}

// KafkaOptionsFrom turns agent options into KafkaOpts. It reads every option
// whose name starts with "kafka" and ignores the others (they belong to other
// parts of the runtime); an unknown "kafka" option, a value that does not
// parse, or a missing kafkaActionStateTopic is an error naming the option.
// An encryption key file or variable is read here.
//
// The owned key groups, the logger and the other Go-only settings are not
// agent options: append KafkaKeyGroups and the rest to the result.
func KafkaOptionsFrom(options map[string]string) ([]KafkaOpt, error) {
	known := make(map[string]bool, len(kafkaOptionNames))
	for _, n := range kafkaOptionNames {
		known[n] = true
	}
	names := make([]string, 0, len(options))
	for n := range options {
		if strings.HasPrefix(n, "kafka") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if !known[n] {
			return nil, fmt.Errorf("%w: unknown option %q; the Kafka action-state store knows %s",
				ErrKafkaConfig, n, strings.Join(kafkaOptionNames, ", "))
		}
	}
	if strings.TrimSpace(options[OptKafkaTopic]) == "" {
		return nil, fmt.Errorf("%w: %s is required: set it to the action-state topic name", ErrKafkaConfig, OptKafkaTopic)
	}
	p := optParser{m: options}
	var opts []KafkaOpt
	if v, ok := p.str(OptKafkaBootstrapServers); ok {
		var addrs []string
		for _, a := range strings.Split(v, ",") {
			addrs = append(addrs, strings.TrimSpace(a))
		}
		opts = append(opts, KafkaBootstrapServers(addrs...))
	}
	opts = append(opts, KafkaTopic(strings.TrimSpace(options[OptKafkaTopic])))
	if n, ok := p.int(OptKafkaNumPartitions, 1, math.MaxInt32); ok {
		opts = append(opts, KafkaNumPartitions(int32(n)))
	}
	if n, ok := p.int(OptKafkaReplicationFactor, 1, math.MaxInt16); ok {
		opts = append(opts, KafkaReplicationFactor(int16(n)))
	}
	if b, ok := p.bool(OptKafkaTombstones); ok {
		opts = append(opts, KafkaTombstones(b))
	}
	if v, ok := p.str(OptKafkaCleanupControlTopic); ok {
		opts = append(opts, KafkaCleanupControlTopic(v))
	}
	mech, hasMech := p.str(OptKafkaSASLMechanism)
	user, hasUser := p.str(OptKafkaSASLUsername)
	pass, hasPass := p.str(OptKafkaSASLPassword)
	if hasMech || hasUser || hasPass {
		if !hasMech {
			p.fail(OptKafkaSASLMechanism, "", "required with %s and %s: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
				OptKafkaSASLUsername, OptKafkaSASLPassword)
		}
		opts = append(opts, KafkaSASL(strings.ToUpper(mech), user, pass))
	}
	tlsOn, _ := p.bool(OptKafkaTLSEnabled)
	ca, hasCA := p.str(OptKafkaTLSCAFile)
	cert, hasCert := p.str(OptKafkaTLSCertFile)
	key, hasKey := p.str(OptKafkaTLSKeyFile)
	insecure, hasInsecure := p.bool(OptKafkaTLSInsecure)
	if tlsOn {
		opts = append(opts, KafkaTLS(ca, cert, key, insecure))
	} else if hasCA || hasCert || hasKey || hasInsecure {
		p.fail(OptKafkaTLSEnabled, options[OptKafkaTLSEnabled], "the kafka.tls.* options need %s=true", OptKafkaTLSEnabled)
	}
	if k, ok := p.encryptionKey(); ok {
		opts = append(opts, KafkaEncryptionKey(k))
	}
	if n, ok := p.int(OptKafkaDeliveryTimeoutMs, 1000, math.MaxInt32); ok {
		opts = append(opts, KafkaDeliveryTimeout(time.Duration(n)*time.Millisecond))
	}
	if b, ok := p.bool(OptKafkaFlushPerRecord); ok {
		opts = append(opts, KafkaFlushPerRecord(b))
	}
	if n, ok := p.int(OptKafkaRunningLingerMs, 0, 60000); ok {
		opts = append(opts, KafkaRunningLinger(time.Duration(n)*time.Millisecond))
	}
	if n, ok := p.int(OptKafkaProducerLingerMs, 0, 1000); ok {
		opts = append(opts, KafkaProducerLinger(time.Duration(n)*time.Millisecond))
	}
	if v, ok := p.str(OptKafkaCompression); ok {
		opts = append(opts, KafkaCompression(strings.ToLower(v)))
	}
	if n, ok := p.int(OptKafkaMaxBufferedRecords, 1, 1<<24); ok {
		opts = append(opts, KafkaMaxBufferedRecords(int(n)))
	}
	if p.err != nil {
		return nil, p.err
	}
	return opts, nil
}

// optParser reads options, keeping the first error.
type optParser struct {
	m   map[string]string
	err error
}

func (p *optParser) fail(name, value, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: option %s=%q: %s", ErrKafkaConfig, name, value, fmt.Sprintf(format, args...))
	}
}

func (p *optParser) str(name string) (string, bool) {
	v, ok := p.m[name]
	if !ok {
		return "", false
	}
	v = strings.TrimSpace(v)
	return v, v != ""
}

func (p *optParser) int(name string, lo, hi int64) (int64, bool) {
	v, ok := p.str(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		p.fail(name, v, "want an integer in [%d, %d]", lo, hi)
		return 0, false
	}
	return n, true
}

func (p *optParser) bool(name string) (bool, bool) {
	v, ok := p.str(name)
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, v, "want true or false")
		return false, false
	}
	return b, true
}

// encryptionKey reads the key named by kafka.encryption.key.file or
// kafka.encryption.key.env (not both): 64 hex digits or 32 raw bytes.
func (p *optParser) encryptionKey() ([]byte, bool) {
	file, hasFile := p.str(OptKafkaEncryptionKeyFile)
	env, hasEnv := p.str(OptKafkaEncryptionKeyEnv)
	switch {
	case hasFile && hasEnv:
		p.fail(OptKafkaEncryptionKeyEnv, env, "set either %s or %s, not both", OptKafkaEncryptionKeyFile, OptKafkaEncryptionKeyEnv)
		return nil, false
	case hasFile:
		b, err := os.ReadFile(file)
		if err != nil {
			p.fail(OptKafkaEncryptionKeyFile, file, "cannot read the key: %v", err)
			return nil, false
		}
		k, err := ParseEncryptionKey(b)
		if err != nil {
			p.fail(OptKafkaEncryptionKeyFile, file, "%v", err)
			return nil, false
		}
		return k, true
	case hasEnv:
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			p.fail(OptKafkaEncryptionKeyEnv, env, "environment variable %s is not set", env)
			return nil, false
		}
		k, err := ParseEncryptionKey([]byte(v))
		if err != nil {
			p.fail(OptKafkaEncryptionKeyEnv, env, "%v", err)
			return nil, false
		}
		return k, true
	}
	return nil, false
}
