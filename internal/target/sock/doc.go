// Package sock gives database clients blocking sockets, read and written with plain
// system calls instead of Go's network poller (see Blocking).
//
// The raw path is Linux only (sock_unix.go, built for linux: it uses ppoll and
// MSG_NOSIGNAL); on every other system Blocking returns the connection unchanged, so
// clients keep Go's network poller (sock_other.go). Callers tell which path a
// connection took by whether Blocking returned a different connection.
package sock
