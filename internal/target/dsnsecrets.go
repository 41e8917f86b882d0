package target

import (
	"fmt"
	"net/url"
	"strings"
)

// DSNSecrets returns the password of a URL or key=value DSN, to be masked wherever it
// might appear.
func DSNSecrets(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
		if p := u.Query().Get("password"); p != "" {
			out = append(out, p)
		}
	}
	for _, f := range strings.Fields(dsn) {
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") && v != "" {
			out = append(out, strings.Trim(v, "'"))
		}
	}
	return out
}

// WithParam adds a query parameter to a URL DSN.
func WithParam(dsn, key, value string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("cannot add %s to the DSN: it is not a URL", key)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
