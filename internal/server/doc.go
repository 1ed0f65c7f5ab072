// Package server is Strata's Redis-protocol (RESP2) front end: it serves a
// *strata.DB to Redis clients over TCP.
//
// Each connection is a goroutine running conn.go's loop: read, run every
// whole command in order, write the replies. request.go parses RESP2
// requests incrementally in a bounded buffer and enforces the protocol
// limits (limit.go: bulk and multibulk lengths, command size, inline lines,
// Redis's unauthenticated limits); the command table and its handlers are
// commands.go, strings.go, keys.go, admin.go and info.go; reply.go encodes
// replies (with github.com/tidwall/redcon's RESP encoders) and bounds
// pending output; server.go accepts connections and shuts down gracefully;
// metrics.go exports Prometheus metrics.
//
// Every command maps onto the root package's public API only: Get, Set,
// Delete, batches for MSET, Update for read-modify-write commands, View and
// iterators for MGET and SCAN, Stats for INFO and metrics, Checkpoint for
// SAVE. docs/ARCHITECTURE.md ("Server and operator tools") has the design.
package server
