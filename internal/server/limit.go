package server

// The protocol limits of a connection's requests, and the error that
// reports a broken one. The request reader (request.go) enforces them as it
// parses: a client cannot make the server buffer a declared length it has
// not sent, nor more than MaxCommandBytes for one command.

// Limits are the protocol limits of a connection. Zero fields mean the
// defaults of DefaultLimits.
type Limits struct {
	// MaxBulkLen is the longest argument in bytes (Redis's
	// proto-max-bulk-len). Strata stores values up to 16 MiB.
	MaxBulkLen int64
	// MaxMultibulkLen is the most arguments in one command.
	MaxMultibulkLen int64
	// MaxCommandBytes is the most bytes one command may take on the wire
	// (Redis's client-query-buffer-limit, applied per command).
	MaxCommandBytes int64
	// MaxInlineLen is the longest inline (non-RESP) command line.
	MaxInlineLen int64
}

// DefaultLimits are Redis's limits scaled to what Strata can store: a value
// is at most 16 MiB, a batch (MSET) at most 64 MiB of writes.
var DefaultLimits = Limits{
	MaxBulkLen:      16<<20 + 1024,
	MaxMultibulkLen: 1 << 20,
	MaxCommandBytes: 96 << 20,
	MaxInlineLen:    64 << 10,
}

// Before AUTH on a server with a password, Redis allows only tiny
// commands: an unauthenticated client cannot make the server buffer much.
const (
	unauthMaxMultibulk = 10
	unauthMaxBulk      = 16 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = DefaultLimits.MaxBulkLen
	}
	if l.MaxMultibulkLen <= 0 {
		l.MaxMultibulkLen = DefaultLimits.MaxMultibulkLen
	}
	if l.MaxCommandBytes <= 0 {
		l.MaxCommandBytes = DefaultLimits.MaxCommandBytes
	}
	if l.MaxInlineLen <= 0 {
		l.MaxInlineLen = DefaultLimits.MaxInlineLen
	}
	return l
}

// protocolError is a broken limit or grammar; its text is Redis's.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "Protocol error: " + e.msg }
