package statestore

import (
	"errors"
	"fmt"
)

// Kinds of errors of the Kafka backend; test them with errors.Is.
var (
	// ErrKafkaConfig: an option is missing, unknown or invalid. Nothing
	// connected.
	ErrKafkaConfig = errors.New("statestore: invalid Kafka action-state store configuration")
	// ErrKafkaWrite: a record could not be written. The store is failed: every
	// later write returns the same *KafkaWriteError.
	ErrKafkaWrite = errors.New("statestore: Kafka action-state write failed")
	// ErrKafkaRecover: Recover refused the markers or could not read the log
	// (changed topic identity, deleted offsets, cleanup boundary, corrupt
	// record). The message names the partition and the offsets.
	ErrKafkaRecover = errors.New("statestore: Kafka action-state recovery failed")
	// ErrKafkaTopic: the action-state topic could not be created or described.
	ErrKafkaTopic = errors.New("statestore: Kafka action-state topic")
	// ErrDecrypt: an encrypted value could not be decrypted: no key, a
	// different key, or damaged bytes (*DecryptError).
	ErrDecrypt = errors.New("statestore: cannot decrypt action-state value")
	// ErrControl: a cleanup control record is malformed or cannot be written
	// or read.
	ErrControl = errors.New("statestore: cleanup control record")
)

// KafkaWriteError is the sticky failure of a Kafka store: the first record
// (or tombstone) Kafka did not acknowledge. Unwrap gives ErrKafkaWrite and
// the Kafka error.
type KafkaWriteError struct {
	Topic     string
	Partition int32  // -1 if unknown
	Key       []byte // the record key, nil if unknown
	Err       error  // the producer's error (a kerr.Error, a timeout, ...)
}

func (e *KafkaWriteError) Error() string {
	key := ""
	if k, err := ParseRecordKey(e.Key); err == nil {
		key = ", record " + k.String()
	}
	return fmt.Sprintf("%v: topic %q partition %d%s: %v; the store is failed, restart the job from its last checkpoint once Kafka is healthy",
		ErrKafkaWrite, e.Topic, e.Partition, key, e.Err)
}

// Unwrap gives ErrKafkaWrite and the producer's error.
func (e *KafkaWriteError) Unwrap() []error { return []error{ErrKafkaWrite, e.Err} }

// DecryptError reports a value that could not be decrypted. Unwrap gives
// ErrDecrypt.
type DecryptError struct {
	Key    []byte // the record key
	Reason string
}

func (e *DecryptError) Error() string {
	key := "?"
	if k, err := ParseRecordKey(e.Key); err == nil {
		key = k.String()
	}
	return fmt.Sprintf("%v: record %s: %s", ErrDecrypt, key, e.Reason)
}

func (e *DecryptError) Unwrap() error { return ErrDecrypt }

func recoverErr(format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrKafkaRecover, fmt.Errorf(format, args...))
}
