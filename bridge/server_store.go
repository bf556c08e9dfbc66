package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/flinkgo/flinkgo/snapshot"
	"github.com/flinkgo/flinkgo/statestore"
)

// openStoreTimeout bounds connecting to Kafka and creating or checking the
// action-state topic; it stays below the operator's default
// go.startup.timeout.ms (60 s), so that the operator sees the ERROR naming
// the cause rather than its own timeout.
const openStoreTimeout = 45 * time.Second

// kafkaOptionDocs are the flinkgo Kafka options (kafka.*) for the describe
// manifest, so that the operator accepts them. The Flink Agents ones
// (kafkaBootstrapServers, ...) are the operator's own options.
func kafkaOptionDocs() []OptionDoc {
	return []OptionDoc{
		{statestore.OptKafkaSASLMechanism, "", "SASL mechanism of the Kafka action-state store: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512. Unset (default): no SASL."},
		{statestore.OptKafkaSASLUsername, "", "SASL user name (required with kafka.sasl.mechanism)."},
		{statestore.OptKafkaSASLPassword, "", "SASL password."},
		{statestore.OptKafkaTLSEnabled, "", "Connect to Kafka over TLS (true/false). Default: false."},
		{statestore.OptKafkaTLSCAFile, "", "PEM file of the CAs that sign the brokers' certificates. Unset (default): the system roots."},
		{statestore.OptKafkaTLSCertFile, "", "PEM client certificate (with kafka.tls.key.file)."},
		{statestore.OptKafkaTLSKeyFile, "", "PEM client key (with kafka.tls.cert.file)."},
		{statestore.OptKafkaTLSInsecure, "", "Do not verify the broker's certificate (tests only). Default: false."},
		{statestore.OptKafkaEncryptionKeyFile, "", "File holding the AES-256 key that encrypts action-state values: 64 hex digits or 32 raw bytes. Unset (default): values in the clear."},
		{statestore.OptKafkaEncryptionKeyEnv, "", "Environment variable holding that key (instead of kafka.encryption.key.file)."},
		{statestore.OptKafkaDeliveryTimeoutMs, "", "How long an action-state record may wait for its acknowledgement before the store, and the task, fail (ms, at least 1000). Default: 30000."},
		{statestore.OptKafkaFlushPerRecord, "", "Wait for every action-state record's acknowledgement, as upstream Flink Agents does (true/false); for benchmarks only. Default: false (group commit)."},
		{statestore.OptKafkaProducerLingerMs, "", "How long a partition's batch of action-state records may wait for more before it is sent (ms, 0..1000); larger batches cost the broker much less per record. Default: 5."},
		{statestore.OptKafkaRunningLingerMs, "", "How long the record a running action writes after a durable call may wait unsent for a newer version of itself (ms, 0..60000); barriers and reconciled calls send it at once. Default: 100."},
		{statestore.OptKafkaMaxBufferedRecords, "", "Action-state records written and not yet acknowledged before a write waits. Default: 50000."},
	}
}

// kafkaOptions reads the Kafka store's options from OPEN and adds the
// subtask's key groups.
func kafkaOptions(open *Open) ([]statestore.KafkaOpt, error) {
	opts, err := statestore.KafkaOptionsFrom(open.Options)
	if err != nil {
		return nil, fmt.Errorf("bridge: option %s=kafka: %w", OptStoreBackend, err)
	}
	owned := snapshot.KeyGroupRange{Start: int32(open.KeyGroupStart), End: int32(open.KeyGroupEnd)}
	return append(opts, statestore.KafkaKeyGroups(owned, int32(open.MaxParallelism))), nil
}

// openStore opens the Kafka action-state store if the options ask for it
// (the other backends are built by parseSettings). A failure is ERROR
// store_failed naming the cause.
func (s *server) openStore(open *Open) error {
	if s.set.kafka == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, openStoreTimeout)
	defer cancel()
	k, err := statestore.NewKafka(ctx, append(s.set.kafka, statestore.KafkaLogger(s.log))...)
	if err != nil {
		return &ProtocolError{Code: CodeStoreFailed, Err: err, Message: fmt.Sprintf(
			"opening the Kafka action-state store (subtask %d, key groups %d..%d): %v",
			open.Subtask, open.KeyGroupStart, open.KeyGroupEnd, err)}
	}
	s.set.store = k
	return nil
}

// recoverer is a store that rebuilds itself from its log after a restore
// (statestore.Kafka).
type recoverer interface {
	Recover(ctx context.Context, markers []snapshot.Marker) error
}

// recoverStore hands every subtask's marker from RESTORE_DONE to the store,
// before the core sees the restored state. A refusal (records deleted, the
// topic recreated, a cleanup boundary) is ERROR restore_failed, anything
// else store_failed; both carry the store's message, which names the
// partition and the offsets.
func (s *server) recoverStore() error {
	r, ok := s.set.store.(recoverer)
	if !ok {
		return nil
	}
	start := time.Now()
	if err := r.Recover(s.ctx, s.markers); err != nil {
		code := CodeStoreFailed
		if errors.Is(err, statestore.ErrKafkaRecover) {
			code = CodeRestoreFailed
		}
		return &ProtocolError{Code: code, Err: err, Message: fmt.Sprintf(
			"recovering the action state of checkpoint %d from %d recovery markers: %v", s.cpID, len(s.markers), err)}
	}
	if len(s.markers) > 0 {
		s.log.Info("action state recovered", "checkpoint", s.cpID, "markers", len(s.markers), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// markWork is the background goroutine of markRestored.
type markWork struct {
	stop chan struct{}
	done chan struct{}
}

// markRestored tells the store, for every restored key, that the inputs
// below the first one the key processes again finished before the restored
// cut (statestore.RestoredInputTracker), so that their recovered records
// are pruned by the next completed checkpoint instead of being held for
// ever. It runs in the background: the sections are only read, and READY
// does not wait for hashing every key.
func (s *server) markRestored(sections []*snapshot.Section) {
	tr, ok := s.set.store.(statestore.RestoredInputTracker)
	if !ok || len(sections) == 0 {
		return
	}
	w := &markWork{stop: make(chan struct{}), done: make(chan struct{})}
	s.marking = w
	go func(lg *slog.Logger, cut int64) {
		defer close(w.done)
		n := 0
		for _, sec := range sections {
			for i := range sec.Keys {
				if n%1024 == 0 {
					select {
					case <-w.stop:
						return
					default:
					}
				}
				k := &sec.Keys[i]
				tr.MarkDoneBelow(sec.KeyGroup, statestore.HashKey(k.Key), restartSeq(k), cut)
				n++
			}
		}
		lg.Debug("restored keys marked for pruning", "keys", n, "checkpoint", cut)
	}(s.log, s.cpID)
}

// restartSeq is the first input of a restored key that runs again: the one
// in flight at the cut, else the first queued one, else the next to come.
func restartSeq(k *snapshot.KeyState) uint64 {
	switch {
	case k.InFlight != nil:
		return k.InFlight.Input.Seq
	case len(k.Queued) > 0:
		return k.Queued[0].Seq
	}
	return k.NextSeq
}

// stopMarking stops markRestored's goroutine and waits for it.
func (s *server) stopMarking() {
	if w := s.marking; w != nil {
		close(w.stop)
		<-w.done
		s.marking = nil
	}
}

// closeStore closes the store after a failed handshake.
func (s *server) closeStore() {
	s.stopMarking()
	if s.set != nil && s.set.store != nil {
		if err := s.set.store.Close(); err != nil {
			s.log.Warn("closing the action-state store", "err", err)
		}
	}
}
