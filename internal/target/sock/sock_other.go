//go:build !unix

package sock

import "net"

// Blocking keeps the poller-based connection where blocking sockets are not set up.
func Blocking(nc net.Conn) net.Conn { return nc }
