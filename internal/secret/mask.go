package secret

import (
	"regexp"
	"strings"
)

// Query parameters and key=value keys that hold a secret (password=, sslpassword=,
// pwd=, auth=, token=, secret=).
var (
	queryPassword = regexp.MustCompile(`(?i)([?&](?:[a-z_]*pass(?:word|wd)?|pwd|auth|[a-z_]*token|[a-z_]*secret)=)[^&#]*`)
	driverAddr    = regexp.MustCompile(`^(?:[a-z0-9]+\(|/)`) // tcp(host:port), unix(/path), /db
	kvPassword    = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]*)`)
)

// MaskDSN is one DSN with its password replaced by xxxxx, in every form fathom takes:
// scheme://user:password@host/…?password=… (postgres, mysql, redis …: the user
// part up to the last '@' before the path, so a stray '@' in a password is masked
// too), libpq's key=value (password=, sslpassword=, quoted or not) and the MySQL
// driver's user:password@tcp(host)/db. The rest is kept byte for byte; a string with
// none of these passes unchanged.
func MaskDSN(s string) string {
	if i := strings.Index(s, "://"); i > 0 {
		return maskURL(s[:i+3], s[i+3:])
	}
	if strings.Contains(s, "=") {
		s = kvPassword.ReplaceAllString(s, "${1}"+mask)
	}
	// user:password@tcp(host)/db; a path holds a '/' before its ':'.
	if at := strings.LastIndex(s, "@"); at > 0 {
		if c := strings.Index(s[:at], ":"); c >= 0 && !strings.ContainsAny(s[:c], "/\\ =") && driverAddr.MatchString(s[at+1:]) {
			s = s[:c+1] + mask + s[at:]
		}
	}
	return s
}

func maskURL(scheme, rest string) string {
	// The user part ends at the last '@' before the query: a '/' or '@' that a
	// password should have percent-encoded is still inside it.
	q := strings.IndexAny(rest, "?#")
	if q < 0 {
		q = len(rest)
	}
	if at := strings.LastIndex(rest[:q], "@"); at >= 0 {
		if c := strings.Index(rest[:at], ":"); c >= 0 {
			rest = rest[:c+1] + mask + rest[at:]
		}
	}
	if strings.Contains(rest, "?") {
		rest = queryPassword.ReplaceAllString(rest, "${1}"+mask)
	}
	return scheme + rest
}
