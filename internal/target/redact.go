package target

import (
	"encoding/base64"
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
	return maskValues(kvPassword, s)
}

// keyLike matches a masked value that is itself the key of another secret
// ("password= token: pw", "Authorization: X-Api-Key: pw") or an option whose value
// follows it ("--password --password pw").
var keyLike = regexp.MustCompile(`^(?:[A-Za-z_][\w.-]*[:=]|--?[A-Za-z][\w-]*)$`)

// maskValues masks the value (group 2) after each key (group 1) that re matches in s.
// A value that looks like another key is masked with the word after it, unless that
// word is a key too: the other key's own pattern would otherwise find it already masked
// and its secret would be kept. A secret that looks like a key ("abc=") costs the word
// after it.
func maskValues(re *regexp.Regexp, s string) string {
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return s
	}
	var b strings.Builder
	for loc != nil {
		b.WriteString(s[:loc[3]])
		b.WriteString("xxxxx")
		rest := s[loc[1]:]
		if keyLike.MatchString(s[loc[4]:loc[5]]) {
			// The next word is the secret, unless it is a key in turn, whose value
			// the scan goes on to find.
			sp := len(rest) - len(strings.TrimLeft(rest, " \t"))
			word := rest[sp:]
			if end := strings.IndexAny(word, " \t\n"); end >= 0 {
				word = word[:end]
			}
			if word != "" && !keyLike.MatchString(word) {
				b.WriteString(rest[:sp])
				b.WriteString("xxxxx")
				rest = rest[sp+len(word):]
			}
		}
		s = rest
		loc = re.FindStringSubmatchIndex(s)
	}
	b.WriteString(s)
	return b.String()
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

// Patterns of secrets in commands, SQL and their outputs (MaskSecrets).
var (
	// NAME=value where NAME says password: MYSQL_PWD=…, PGPASSWORD=…, DB_PASS=…,
	// API_TOKEN=…, also after export or env.
	envSecret = regexp.MustCompile(`(?i)(\b(?:[A-Z0-9_]*(?:PASSWORD|PASSWD|PWD|PASS|SECRET|TOKEN)[A-Z0-9_]*|[A-Z0-9_]*_AUTH)=)('(?:[^']*)'|"(?:[^"\\]|\\.)*"|[^\s;&|]*)`)
	// mysql -pSECRET (no space: a space makes -p prompt), also --password=… and
	// --password "…" style long options of any client.
	shortP   = regexp.MustCompile(`((?:^|[\s'"])-p)([^\s'"]+)`)
	longPass = regexp.MustCompile(`(?i)(--?(?:[a-z0-9]+-)*(?:password|passwd|pwd)(?:=|\s+))('(?:[^']*)'|"(?:[^"\\]|\\.)*"|[^\s;&|]+)`)
	// key=value and key: value in option strings and config lines: pwd=…, passwd=…
	kvSecret = regexp.MustCompile(`(?i)(\b(?:passwd|pwd|pass|secret|token)\s*[=:]\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;,]+)`)
	// SQL: IDENTIFIED BY '…', PASSWORD '…', PASSWORD('…'), MASTER_PASSWORD='…'.
	sqlIdentified = regexp.MustCompile(`(?i)(identified\s+(?:with\s+\S+\s+)?(?:by|as)\s+(?:password\s*)?\(?\s*)('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*")`)
	sqlPassword   = regexp.MustCompile(`(?i)(\bpassword\s*(?:\(\s*|=\s*(?:password\s*\(\s*)?)?)('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*")`)
	// curl -u user:pw, --user user:pw, --proxy-user=user:pw (also -uuser:pw): the part
	// after the first ':' is the password. mysql's -uroot has no ':' and is kept.
	userColon = regexp.MustCompile(`((?:^|[\s'"])(?:-u\s*|--(?:proxy-)?user(?:=|\s+))['"]?[^\s:'"]*:)([^\s'"]+)`)
	// HTTP headers that carry credentials: Authorization: Basic …, Bearer …, and
	// API-key headers, in commands (-H '…') and in what they print (curl -v). A header
	// name repeated ("Authorization: Authorization: Basic …", a doubled -H in a log) is
	// one prefix, or the second name would be masked as the value and the secret kept.
	userOf     = regexp.MustCompile(`(?:-u\s*|--(?:proxy-)?user(?:=|\s+))['"]?([^\s:'"]*):$`)
	authHeader = regexp.MustCompile(`(?i)(\b(?:(?:proxy-)?authorization\s*:\s*(?:(?:basic|bearer|token|digest|negotiate)\s+)?)+)([^\s'"]+)`)
	apiKey     = regexp.MustCompile(`(?i)(\b(?:x-)?api[-_]?key\s*[:=]\s*)([^\s'"&]+)`)
)

// MaskSecrets masks what looks like a secret in a command line, SQL statement or
// their output, before it is shown or stored: DSN passwords (as RedactString),
// environment assignments whose name says password (MYSQL_PWD=…, PGPASSWORD=…),
// mysql's -pSECRET, --password=…, password=/pwd=/passwd= pairs, SQL IDENTIFIED BY '…'
// and PASSWORD '…', and every one of known (the passwords fathom itself holds or
// handed to the command) wherever it appears.
func MaskSecrets(s string, known ...string) string {
	for _, k := range known {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, "xxxxx")
		}
	}
	// The most specific shapes first, so that a looser one cannot eat their context.
	s = sqlIdentified.ReplaceAllString(s, "${1}'xxxxx'")
	s = sqlPassword.ReplaceAllString(s, "${1}'xxxxx'")
	s = userColon.ReplaceAllString(s, "${1}xxxxx")
	s = maskValues(authHeader, s)
	s = maskValues(apiKey, s)
	s = RedactString(s)
	s = envSecret.ReplaceAllStringFunc(s, func(m string) string {
		name, _, _ := strings.Cut(m, "=")
		if strings.HasSuffix(strings.ToUpper(name), "FILE") {
			return m // PGPASSFILE=/path: where a secret is, not the secret
		}
		return name + "=xxxxx"
	})
	s = maskValues(longPass, s)
	s = shortP.ReplaceAllStringFunc(s, func(m string) string {
		sub := shortP.FindStringSubmatch(m)
		if isNumber(sub[2]) {
			return m // -p5432: a port (psql, pgbench)
		}
		return sub[1] + "xxxxx"
	})
	s = maskValues(kvSecret, s)
	return s
}

// MaskText is MaskSecrets of a whole text (a plan file, a hook's command) with every
// secret it holds masked wherever else it appears in it too: the password of
// `curl -u admin:pw` also in a later `printf admin:pw | base64`, and its base64.
func MaskText(s string) string { return MaskSecrets(s, SecretsIn(s)...) }

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// EnvSecrets are the values of the variables in env (NAME=value) whose names say
// password, token or secret: what a command was handed and must not echo.
func EnvSecrets(env []string) []string {
	var out []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			continue
		}
		u := strings.ToUpper(k)
		if strings.HasSuffix(u, "_AUTH") { // REDISCLI_AUTH: redis-cli's password
			out = append(out, v)
			continue
		}
		for _, w := range []string{"PASSWORD", "PASSWD", "PWD", "PASS", "SECRET", "TOKEN"} {
			if strings.Contains(u, w) && u != "PWD" && u != "OLDPWD" {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// SecretsIn returns the secrets MaskSecrets would mask in s (unquoted), so that
// where they reappear (a command's output echoing its own MYSQL_PWD) they are masked
// too.
func SecretsIn(s string) []string {
	var out []string
	for _, re := range []*regexp.Regexp{sqlIdentified, sqlPassword, envSecret, longPass, kvSecret, kvPassword, urlUserinfo, userColon, authHeader, apiKey} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			v := strings.Trim(m[2], `'"`)
			if re == envSecret && strings.HasSuffix(strings.ToUpper(m[1]), "FILE=") {
				continue
			}
			if len(v) >= 4 {
				out = append(out, v)
			}
		}
	}
	// curl -u user:pw sends and prints (-v) "Authorization: Basic base64(user:pw)".
	for _, m := range userColon.FindAllStringSubmatch(s, -1) {
		if u := userOf.FindStringSubmatch(m[1]); u != nil {
			out = append(out, base64.StdEncoding.EncodeToString([]byte(u[1]+":"+m[2])))
		}
	}
	for _, m := range shortP.FindAllStringSubmatch(s, -1) {
		if v := m[2]; len(v) >= 4 && !isNumber(v) {
			out = append(out, v)
		}
	}
	return out
}

// RedactArgs renders a command line (program name, then args) with passwords masked,
// quoting the arguments a shell would split.
func RedactArgs(program string, args []string) string {
	out := make([]string, 0, len(args)+1)
	out = append(out, program)
	for _, a := range args {
		a = RedactString(a)
		if strings.ContainsAny(a, " \t'\"") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
