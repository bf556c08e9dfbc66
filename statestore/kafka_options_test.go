package statestore

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
)

func cfgFrom(t *testing.T, m map[string]string) (kafkaCfg, error) {
	t.Helper()
	opts, err := KafkaOptionsFrom(m)
	cfg := defaultKafkaCfg()
	if err != nil {
		return cfg, err
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg, cfg.validate()
}

func TestKafkaOptionsDefaults(t *testing.T) {
	cfg, err := cfgFrom(t, map[string]string{"kafkaActionStateTopic": "state", "error-handling-strategy": "retry"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.topic != "state" || len(cfg.brokers) != 1 || cfg.brokers[0] != "localhost:9092" ||
		cfg.partitions != 64 || cfg.replication != 1 || cfg.tombstones || cfg.controlTopic != "" ||
		cfg.encKey != nil || cfg.flushPerRecord || cfg.delivery != 30*time.Second ||
		cfg.owned != (snapshot.KeyGroupRange{Start: 0, End: 127}) || cfg.maxParallelism != 128 ||
		cfg.producerLinger != 50*time.Millisecond || cfg.compression != "none" {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestKafkaOptionsAll(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	key := bytes.Repeat([]byte{7}, 32)
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cfgFrom(t, map[string]string{
		"kafkaBootstrapServers":                  "a:1, b:2",
		"kafkaActionStateTopic":                  "state",
		"kafkaActionStateTopicNumPartitions":     "16",
		"kafkaActionStateTopicReplicationFactor": "3",
		"kafkaActionStateTombstoneEnabled":       "true",
		"kafka.sasl.mechanism":                   "scram-sha-512",
		"kafka.sasl.username":                    "u",
		"kafka.sasl.password":                    "p",
		"kafka.tls.enabled":                      "true",
		"kafka.tls.insecure.skip.verify":         "true",
		"kafka.encryption.key.file":              keyFile,
		"kafka.delivery.timeout.ms":              "5000",
		"kafka.flush.per.record":                 "true",
		"kafka.producer.linger.ms":               "20",
		"kafka.producer.compression":             "ZSTD",
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.brokers, ",") != "a:1,b:2" || cfg.partitions != 16 || cfg.replication != 3 || !cfg.tombstones ||
		cfg.saslMechanism != "SCRAM-SHA-512" || cfg.saslUser != "u" || cfg.saslPass != "p" ||
		!cfg.tlsEnabled || !cfg.tlsInsecure || !bytes.Equal(cfg.encKey, key) ||
		cfg.delivery != 5*time.Second || !cfg.flushPerRecord || cfg.producerLinger != 20*time.Millisecond ||
		cfg.compression != "zstd" {
		t.Fatalf("parsed: %+v", cfg)
	}
	if _, err := cfg.connOpts(); err != nil {
		t.Fatal(err)
	}
}

func TestKafkaOptionsErrors(t *testing.T) {
	t.Setenv("FLINKGO_TEST_KEY", hex.EncodeToString(bytes.Repeat([]byte{1}, 32)))
	t.Setenv("FLINKGO_TEST_BADKEY", "abc")
	base := func(kv ...string) map[string]string {
		m := map[string]string{"kafkaActionStateTopic": "t"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name string
		m    map[string]string
		want string
	}{
		{"no topic", map[string]string{"kafkaBootstrapServers": "x:1"}, "kafkaActionStateTopic is required"},
		{"unknown", base("kafkaActionStateTopicPartitions", "3"), `unknown option "kafkaActionStateTopicPartitions"`},
		{"unknown dotted", base("kafka.sasl.user", "u"), `unknown option "kafka.sasl.user"`},
		{"bad partitions", base("kafkaActionStateTopicNumPartitions", "0"), "kafkaActionStateTopicNumPartitions"},
		{"bad replication", base("kafkaActionStateTopicReplicationFactor", "x"), "kafkaActionStateTopicReplicationFactor"},
		{"bad bool", base("kafkaActionStateTombstoneEnabled", "yes please"), "kafkaActionStateTombstoneEnabled"},
		{"tombstones and control", base("kafkaActionStateTombstoneEnabled", "true", "kafkaActionStateCleanupControlTopic", "c"),
			"kafkaActionStateTombstoneEnabled and kafkaActionStateCleanupControlTopic"},
		{"control is the topic", base("kafkaActionStateCleanupControlTopic", "t"), "is the action-state topic itself"},
		{"sasl mechanism", base("kafka.sasl.mechanism", "GSSAPI", "kafka.sasl.username", "u"), "kafka.sasl.mechanism"},
		{"sasl without mechanism", base("kafka.sasl.username", "u"), "kafka.sasl.mechanism"},
		{"sasl without user", base("kafka.sasl.mechanism", "PLAIN"), "kafka.sasl.username is required"},
		{"tls files without tls", base("kafka.tls.ca.file", "/ca.pem"), "kafka.tls.enabled=true"},
		{"cert without key", base("kafka.tls.enabled", "true", "kafka.tls.cert.file", "/c.pem"), "kafka.tls.key.file"},
		{"key file and env", base("kafka.encryption.key.file", "/k", "kafka.encryption.key.env", "K"), "not both"},
		{"key file missing", base("kafka.encryption.key.file", "/nonexistent/key"), "cannot read the key"},
		{"key env unset", base("kafka.encryption.key.env", "FLINKGO_TEST_UNSET_KEY"), "FLINKGO_TEST_UNSET_KEY is not set"},
		{"key env bad", base("kafka.encryption.key.env", "FLINKGO_TEST_BADKEY"), "64 hex digits or 32 raw bytes"},
		{"delivery too short", base("kafka.delivery.timeout.ms", "10"), "kafka.delivery.timeout.ms"},
		{"empty broker", base("kafkaBootstrapServers", "a:1,,b:2"), "kafkaBootstrapServers"},
		{"compression", base("kafka.producer.compression", "brotli"), `kafka.producer.compression "brotli": use none, gzip, snappy, lz4 or zstd`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cfgFrom(t, tc.m)
			if !errors.Is(err, ErrKafkaConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrKafkaConfig naming %q", err, tc.want)
			}
		})
	}
	if cfg, err := cfgFrom(t, base("kafka.encryption.key.env", "FLINKGO_TEST_KEY")); err != nil || len(cfg.encKey) != 32 {
		t.Fatalf("key from env: %v", err)
	}
}

func TestKafkaConfigValidate(t *testing.T) {
	bad := []KafkaOpt{
		KafkaKeyGroups(snapshot.KeyGroupRange{Start: 5, End: 4}, 128),
		KafkaKeyGroups(snapshot.KeyGroupRange{Start: 0, End: 128}, 128),
		KafkaKeyGroups(snapshot.KeyGroupRange{Start: 0, End: 1}, 0),
		KafkaEncryptionKey(make([]byte, 16)),
		KafkaDeliveryTimeout(time.Millisecond),
	}
	for i, o := range bad {
		cfg := defaultKafkaCfg()
		KafkaTopic("t")(&cfg)
		o(&cfg)
		if err := cfg.validate(); !errors.Is(err, ErrKafkaConfig) {
			t.Errorf("case %d: err = %v", i, err)
		}
	}
	// NewKafka validates before it connects.
	if _, err := NewKafka(t.Context(), KafkaBootstrapServers("127.0.0.1:1")); !errors.Is(err, ErrKafkaConfig) {
		t.Errorf("NewKafka without a topic: %v", err)
	}
}

func TestValueCipher(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	c1, _ := newValueCipher(k1)
	c2, _ := newValueCipher(k2)
	key := testKey("a").Bytes()
	plain, _ := EncodeRecord(typicalRecord(t))
	sealed, err := c1.seal(key, plain)
	if err != nil {
		t.Fatal(err)
	}
	sealed2, _ := c1.seal(key, plain)
	if sealed[0] != envelopeMagic || bytes.Equal(sealed, sealed2) || bytes.Contains(sealed, []byte("positive")) {
		t.Fatal("envelope: wrong magic, repeated nonce or plaintext visible")
	}
	if got, err := c1.open(key, sealed); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open: %v", err)
	}
	if got, err := c1.open(key, plain); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("a plain value passes through: %v", err)
	}
	other := testKey("b").Bytes()
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	cases := []struct {
		name string
		c    *valueCipher
		key  []byte
		v    []byte
		want string
	}{
		{"wrong key", c2, key, sealed, "another key"},
		{"no key", nil, key, sealed, "no key is configured"},
		{"moved to another record key", c1, other, sealed, "authentication failed"},
		{"tampered", c1, key, tampered, "authentication failed"},
		{"truncated", c1, key, sealed[:20], "shorter than"},
		{"future version", c1, key, append([]byte{envelopeMagic, 9}, sealed[2:]...), "envelope version 9"},
	}
	for _, tc := range cases {
		_, err := tc.c.open(tc.key, tc.v)
		var de *DecryptError
		if !errors.As(err, &de) || !errors.Is(err, ErrDecrypt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a *DecryptError naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseEncryptionKey(bytes.Repeat([]byte{'z'}, 32)); err != nil {
		t.Errorf("32 raw bytes: %v", err)
	}
}
