package operator

import (
	"errors"
	"fmt"
)

// ErrorKind classifies an action failure for the error-handling strategy.
type ErrorKind uint8

const (
	// KindRetryable: the action may succeed if run again (timeouts, rate
	// limits). Unclassified errors are retryable.
	KindRetryable ErrorKind = 0
	// KindPermanent: running again cannot help (bad input, a bug). Never
	// retried.
	KindPermanent ErrorKind = 1
	// KindNeedsHuman: an operator has to look (credentials revoked, quota
	// exhausted). Never retried; fails the job unless the strategy is ignore.
	KindNeedsHuman ErrorKind = 2
)

func (k ErrorKind) String() string {
	switch k {
	case KindRetryable:
		return "retryable"
	case KindPermanent:
		return "permanent"
	case KindNeedsHuman:
		return "needs-a-human"
	}
	return fmt.Sprintf("ErrorKind(%d)", uint8(k))
}

// ActionError is an error with a kind. Wrap errors with Retryable, Permanent
// or NeedsHuman instead of building one.
type ActionError struct {
	Kind ErrorKind
	Err  error
}

func (e *ActionError) Error() string { return e.Kind.String() + ": " + e.Err.Error() }
func (e *ActionError) Unwrap() error { return e.Err }

// Retryable marks err as worth retrying.
func Retryable(err error) error { return classify(KindRetryable, err) }

// Permanent marks err as final: it is never retried.
func Permanent(err error) error { return classify(KindPermanent, err) }

// NeedsHuman marks err as needing an operator's attention.
func NeedsHuman(err error) error { return classify(KindNeedsHuman, err) }

func classify(k ErrorKind, err error) error {
	if err == nil {
		return nil
	}
	return &ActionError{Kind: k, Err: err}
}

// KindOf returns the kind of err: the outermost ActionError's kind, else
// KindRetryable.
func KindOf(err error) ErrorKind {
	var ae *ActionError
	if errors.As(err, &ae) {
		return ae.Kind
	}
	return KindRetryable
}

// Sentinel errors of the operator package.
var (
	// ErrLineage: an event sent by an action already carries lineage.
	ErrLineage = errors.New("operator: event already carries lineage")
	// ErrInDurable: memory or events were touched inside a durable call.
	ErrInDurable = errors.New("operator: memory access and event sending are not allowed inside a durable call")
	// ErrMemory: a memory path or value is not allowed.
	ErrMemory = errors.New("operator: memory")
	// ErrNotOwned: restore of a key group this subtask does not own.
	ErrNotOwned = errors.New("operator: key group not owned by this subtask")
	// ErrConfig: an option is missing or invalid.
	ErrConfig = errors.New("operator: invalid configuration")
	// ErrStore: the action-state store failed; the subtask must fail.
	ErrStore = errors.New("operator: action-state store failed")
	// ErrAgent: the agent definition is invalid.
	ErrAgent = errors.New("operator: invalid agent")
)
