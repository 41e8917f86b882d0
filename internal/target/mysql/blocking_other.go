//go:build !unix

package mysql

import "net"

// toBlocking keeps the poller-based connection where blocking sockets are not set up.
func toBlocking(nc net.Conn) net.Conn { return nc }
