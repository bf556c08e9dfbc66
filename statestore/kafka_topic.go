package statestore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Settings of a topic the store creates (DESIGN.md §5): compaction keeps the
// last record per key; delete with infinite retention removes only what
// DeleteRecords (checkpoint-aligned cleanup) cuts off.
var createdTopicConfigs = map[string]string{
	"cleanup.policy":  "compact,delete",
	"retention.ms":    "-1",
	"retention.bytes": "-1",
}

// connOpts are the franz-go options that reach the brokers: seeds, SASL,
// TLS, then extra, then the options of KafkaClientOpts.
func (c *kafkaCfg) connOpts(extra ...kgo.Opt) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(c.brokers...)}
	switch c.saslMechanism {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: c.saslUser, Pass: c.saslPass}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.saslUser, Pass: c.saslPass}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.saslUser, Pass: c.saslPass}.AsSha512Mechanism()))
	}
	if c.tlsEnabled {
		tc, err := c.tlsClientConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	opts = append(opts, extra...)
	return append(opts, c.clientOpts...), nil
}

func (c *kafkaCfg) tlsClientConfig() (*tls.Config, error) {
	if c.tlsConfig != nil {
		return c.tlsConfig.Clone(), nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.tlsInsecure} //nolint:gosec // opt-in, documented as tests only
	if c.tlsCA != "" {
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrKafkaConfig, OptKafkaTLSCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: %s %s holds no PEM certificate", ErrKafkaConfig, OptKafkaTLSCAFile, c.tlsCA)
		}
		tc.RootCAs = pool
	}
	if c.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("%w: %s / %s: %w", ErrKafkaConfig, OptKafkaTLSCertFile, OptKafkaTLSKeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// NewKafkaClient returns a franz-go client that reaches the brokers the way
// a store with opts would (seeds, SASL, TLS), for tools such as the cleanup
// CLI (WriteControl, ReadControl). The caller closes it.
func NewKafkaClient(opts ...KafkaOpt) (*kgo.Client, error) {
	cfg := defaultKafkaCfg()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	co, err := cfg.connOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(co...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKafkaConfig, err)
	}
	return cl, nil
}

// TopicIDString is Kafka's text form of a topic id (URL-safe base64 without
// padding), as kafka-topics.sh --describe prints it.
func TopicIDString(id snapshot.UUID) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseTopicID reads TopicIDString's form.
func ParseTopicID(s string) (snapshot.UUID, error) {
	var id snapshot.UUID
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("topic id %q is not 22 characters of URL-safe base64 (16 bytes)", s)
	}
	copy(id[:], b)
	return id, nil
}

// topicInfo is what the store knows about the live topic.
type topicInfo struct {
	id         snapshot.UUID
	partitions int32
	led        bool // every partition has a leader
}

// ensureTopic creates the action-state topic if it is missing and describes
// it. An existing topic is used as it is; settings that can lose records are
// returned as warnings.
func ensureTopic(ctx context.Context, adm *kadm.Client, c *kafkaCfg) (topicInfo, []string, error) {
	info, found, err := describeTopic(ctx, adm, c.topic)
	if err != nil {
		return info, nil, err
	}
	if !found {
		configs := make(map[string]*string, len(createdTopicConfigs))
		for k, v := range createdTopicConfigs {
			configs[k] = kadm.StringPtr(v)
		}
		_, err := adm.CreateTopic(ctx, c.partitions, c.replication, configs, c.topic)
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) { // another subtask may have won the race
			return info, nil, fmt.Errorf("%w %q: creating it with %d partitions, replication factor %d: %w; create it yourself or fix the broker settings",
				ErrKafkaTopic, c.topic, c.partitions, c.replication, err)
		}
		// Metadata can lag behind the creation on a real cluster, and the
		// partitions have no leader for a moment: wait until every one has
		// one, so that the first writes are not refused and retried only at
		// the next metadata refresh (half a second later).
		for {
			if info, found, err = describeTopic(ctx, adm, c.topic); err != nil || (found && info.led) {
				break
			}
			select {
			case <-ctx.Done():
				return info, nil, fmt.Errorf("%w %q: created but not visible in metadata: %w", ErrKafkaTopic, c.topic, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
		if err != nil {
			return info, nil, err
		}
	}
	warnings, err := topicWarnings(ctx, adm, c, info)
	return info, warnings, err
}

// describeTopic returns the topic's id and partition count; found is false
// when the topic does not exist.
func describeTopic(ctx context.Context, adm *kadm.Client, topic string) (topicInfo, bool, error) {
	var info topicInfo
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return info, false, fmt.Errorf("%w %q: metadata request failed: %w; check kafkaBootstrapServers and the credentials", ErrKafkaTopic, topic, err)
	}
	td, ok := tds[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return info, false, nil
	}
	if td.Err != nil {
		return info, false, fmt.Errorf("%w %q: %w", ErrKafkaTopic, topic, td.Err)
	}
	if len(td.Partitions) == 0 {
		return info, false, nil
	}
	info.id = snapshot.UUID(td.ID)
	info.partitions = int32(len(td.Partitions))
	info.led = true
	for _, pd := range td.Partitions {
		if pd.Err != nil || pd.Leader < 0 {
			info.led = false
		}
	}
	return info, true, nil
}

// topicWarnings describes the topic's settings and returns what can lose
// records or surprise: finite retention under a delete policy, no
// compaction, another partition count than configured.
func topicWarnings(ctx context.Context, adm *kadm.Client, c *kafkaCfg, info topicInfo) ([]string, error) {
	rcs, err := adm.DescribeTopicConfigs(ctx, c.topic)
	if err != nil {
		return nil, fmt.Errorf("%w %q: describing its configs: %w", ErrKafkaTopic, c.topic, err)
	}
	rc, err := rcs.On(c.topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return nil, fmt.Errorf("%w %q: describing its configs: %w", ErrKafkaTopic, c.topic, err)
	}
	vals := map[string]string{}
	for _, cfg := range rc.Configs {
		vals[cfg.Key] = cfg.MaybeValue()
	}
	var w []string
	policy := vals["cleanup.policy"]
	if policy == "" {
		policy = "delete" // Kafka's default
	}
	deletes := strings.Contains(policy, "delete")
	if ms, ok := vals["retention.ms"]; deletes && (!ok || ms != "-1") {
		if !ok {
			ms = "the broker default"
		}
		w = append(w, fmt.Sprintf("topic %q has cleanup.policy=%s and retention.ms=%s: Kafka deletes records by age, so a restore may miss durable-call records it needs; set retention.ms=-1",
			c.topic, policy, ms))
	}
	if b, ok := vals["retention.bytes"]; deletes && ok && b != "-1" {
		w = append(w, fmt.Sprintf("topic %q has cleanup.policy=%s and retention.bytes=%s: Kafka deletes records by size, so a restore may miss durable-call records it needs; set retention.bytes=-1",
			c.topic, policy, b))
	}
	if !strings.Contains(policy, "compact") {
		w = append(w, fmt.Sprintf("topic %q has cleanup.policy=%s without compact: superseded records are never removed and recovery reads them all; add compact",
			c.topic, policy))
	}
	if info.partitions != c.partitions {
		w = append(w, fmt.Sprintf("topic %q has %s partitions, kafkaActionStateTopicNumPartitions is %d: the topic's count is used; never change it while a job may restore from the topic",
			c.topic, strconv.Itoa(int(info.partitions)), c.partitions))
	}
	return w, nil
}
