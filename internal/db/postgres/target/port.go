package postgres

import (
	"fmt"
	"strconv"
	"strings"
)

// portProblem says what is wrong with the port of a DSN that pgconn refused ("" when
// the port is not the problem or cannot be found). pgconn's own message ("invalid
// port") is not shown because its error text repeats the DSN. getenv (nil: none) reads
// PGPORT.
func portProblem(dsn string, getenv func(string) string) string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var ports []string
	if i := strings.Index(dsn, "://"); i >= 0 {
		auth := dsn[i+3:]
		if j := strings.IndexAny(auth, "/?"); j >= 0 {
			auth = auth[:j]
		}
		if j := strings.LastIndexByte(auth, '@'); j >= 0 {
			auth = auth[j+1:]
		}
		for _, h := range strings.Split(auth, ",") {
			if strings.HasPrefix(h, "[") {
				if j := strings.Index(h, "]:"); j >= 0 {
					ports = append(ports, h[j+2:])
				}
			} else if j := strings.LastIndexByte(h, ':'); j >= 0 {
				ports = append(ports, h[j+1:])
			}
		}
	} else {
		for _, f := range strings.Fields(dsn) {
			if v, ok := strings.CutPrefix(f, "port="); ok {
				ports = append(ports, strings.Split(strings.Trim(v, "'"), ",")...)
			}
		}
	}
	for _, p := range ports {
		if p == "" {
			continue
		}
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			// The value is not shown: with an unencoded '/' or '@' in a password, what
			// looks like the port may be part of the password.
			return "the port is not a number from 1 to 65535 (host:port in a URL, port= otherwise)"
		}
	}
	if p := getenv("PGPORT"); p != "" && len(ports) == 0 {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("PGPORT=%q is not a port number from 1 to 65535", p)
		}
	}
	return ""
}
