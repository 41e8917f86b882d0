package target

import (
	"net/url"
	"regexp"
	"strings"
)

var kvPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)
var urlUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*):([^@\s]*)@`)

// RedactString masks passwords in any text that may hold a DSN: the password of
// scheme://user:password@host URLs and password=… in key=value strings and query
// parameters. Use it on command lines and messages; targets' Redacted is exact for
// their own DSNs.
func RedactString(s string) string {
	if !strings.Contains(strings.ToLower(s), "password") && !strings.Contains(s, "@") {
		return s
	}
	s = urlUserinfo.ReplaceAllString(s, "${1}:xxxxx@")
	return kvPassword.ReplaceAllString(s, "${1}xxxxx")
}

// RedactURL masks the password in a URL-form DSN; other strings pass through
// RedactString.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return RedactString(s)
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Set(k, "xxxxx")
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}
