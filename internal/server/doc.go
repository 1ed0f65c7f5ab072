// Package server is Strata's Redis-protocol (RESP2) front end: it serves a
// *strata.DB to Redis clients over TCP.
//
// The connection loop, RESP parsing and reply encoding are
// github.com/tidwall/redcon's. This package adds, per connection, a framing
// limiter that reads the byte stream ahead of redcon's parser (limit.go:
// bulk and multibulk lengths, command size, inline lines), the command
// table and its handlers (commands.go, strings.go, keys.go, admin.go), a
// bound on pending output (reply.go), graceful shutdown (server.go) and
// Prometheus metrics (metrics.go).
//
// Every command maps onto the root package's public API only: Get, Set,
// Delete, batches for MSET, Update for read-modify-write commands, View and
// iterators for MGET and SCAN, Stats for INFO and metrics, Checkpoint for
// SAVE. docs/ARCHITECTURE.md ("Server and operator tools") has the design.
package server
