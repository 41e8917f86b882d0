//go:build !linux

package sock

import "net"

// Blocking keeps the poller-based connection where blocking sockets are not set up.
func Blocking(nc net.Conn) net.Conn { return nc }

// Conns reports how many connections are open in blocking mode: none here.
func Conns() int { return 0 }

// FD gives no descriptor where connections are not made blocking.
func FD(net.Conn) (int, bool) { return -1, false }
