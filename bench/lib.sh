# shellcheck shell=bash
# Shared by the bench scripts (sourced, not run).

# listener_pid HOST PORT prints the pid of the process listening on PORT when HOST is
# this host (loopback), nothing otherwise: the server whose CPU and threads a bench reads
# from /proc, or pins.
listener_pid() {
	case "$1" in
	127.* | localhost | ::1) ss -Hltnp "sport = :$2" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1 ;;
	esac
}
