// Package sock gives database clients blocking sockets, read and written with plain
// system calls instead of Go's network poller (see Blocking).
package sock
