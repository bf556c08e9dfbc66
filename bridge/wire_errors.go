package bridge

import "fmt"

// ErrorCode is the code of an ERROR frame (docs/protocol.md, "Errors").
type ErrorCode string

// The error codes of protocol version 1.
const (
	CodeBadToken        ErrorCode = "bad_token"
	CodeVersionMismatch ErrorCode = "version_mismatch"
	CodeFrameTooLarge   ErrorCode = "frame_too_large"
	CodeUnknownFrame    ErrorCode = "unknown_frame"
	CodeMalformedFrame  ErrorCode = "malformed_frame"
	CodeUnexpectedFrame ErrorCode = "unexpected_frame"
	CodeBadSchema       ErrorCode = "bad_schema"
	CodeRestoreFailed   ErrorCode = "restore_failed"
	CodeActionFailed    ErrorCode = "action_failed"
	CodeStoreFailed     ErrorCode = "store_failed"
	CodeInternal        ErrorCode = "internal"
)

// ProtocolError is an error that ends the connection with an ERROR frame
// carrying Code and Message. Err, if set, is the underlying cause.
type ProtocolError struct {
	Code    ErrorCode
	Message string
	Err     error
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("flinkgo/bridge: %s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *ProtocolError) Unwrap() error { return e.Err }

// ErrorFrame returns the ERROR frame that reports e to the peer.
func (e *ProtocolError) ErrorFrame() *ErrorFrame {
	return &ErrorFrame{Code: string(e.Code), Message: e.Message}
}

func protoErrorf(code ErrorCode, format string, args ...any) *ProtocolError {
	return &ProtocolError{Code: code, Message: fmt.Sprintf(format, args...)}
}
