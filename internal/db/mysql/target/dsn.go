package mysql

import (
	"errors"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"gopkg.in/ini.v1"

	"github.com/fathom-lab/fathom/internal/target"
)

// dsnForm is what every DSN error message shows the user, so that one line names the fix.
const dsnForm = "want mysql://user:password@host:port/dbname?socket=/path/to.sock (percent-encode special characters in the password)"

// options are the connection settings gathered from the DSN, an option file and the
// environment, before they become a driver config.
type options struct {
	user, password string
	hasUser        bool
	hasPassword    bool
	host, port     string
	socket         string
	dbname         string
}

// env is how DSN parsing reads the environment (HOME, USER, MYSQL_PWD).
type env func(string) string

// parseDSN turns a DSN into a driver config. Precedence, highest first: the DSN, the
// option file (defaults-file=PATH, else $HOME/.my.cnf, [client] section), MYSQL_PWD
// for the password. Errors are one line and never contain the password.
func parseDSN(dsn string, cfg target.Config, getenv env) (*mysql.Config, error) {
	dsnOpt, q, err := parseDSNURL(dsn)
	if err != nil {
		return nil, err
	}
	mc := mysql.NewConfig()
	mc.Params = map[string]string{}
	defaultsFile, err := applyDSNQuery(mc, q, &dsnOpt)
	if err != nil {
		return nil, err
	}

	// The option file fills in what the DSN does not say.
	var fileOpt options
	if defaultsFile != "" {
		fileOpt, err = readOptionFile(defaultsFile, true)
	} else if home := getenv("HOME"); home != "" {
		fileOpt, err = readOptionFile(filepath.Join(home, ".my.cnf"), false)
	}
	if err != nil {
		return nil, err
	}
	if err := mergeOptions(mc, dsnOpt, fileOpt, getenv); err != nil {
		return nil, err
	}
	applyConfig(mc, cfg)
	return mc, nil
}

// badDSN is the one-line error for a DSN that cannot be used: why, and the form.
func badDSN(why string) error {
	return target.Errorf(target.ClassOther, "", "invalid MySQL DSN: %s; %s", why, dsnForm)
}

// parseDSNURL reads the URL part of a DSN: scheme, user and password, host, port and
// database name, and the query parameters (not yet interpreted).
func parseDSNURL(dsn string) (options, url.Values, error) {
	var dsnOpt options
	if strings.Contains(dsn, "#") {
		return dsnOpt, nil, badDSN("unexpected '#' (write it as %23)")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// url's error text quotes the DSN, password and all: never show it.
		return dsnOpt, nil, badDSN("cannot parse it as a URL")
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return dsnOpt, nil, badDSN("the scheme must be mysql://")
	}
	if u.Opaque != "" {
		return dsnOpt, nil, badDSN("missing // after mysql:")
	}
	if u.User != nil {
		dsnOpt.user, dsnOpt.hasUser = u.User.Username(), true
		dsnOpt.password, dsnOpt.hasPassword = u.User.Password()
	}
	dsnOpt.host = u.Hostname()
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return dsnOpt, nil, badDSN("the port must be a number from 1 to 65535")
		}
		dsnOpt.port = p
	} else if strings.HasSuffix(u.Host, ":") {
		return dsnOpt, nil, badDSN("empty port after ':'")
	}
	dsnOpt.dbname = strings.TrimPrefix(u.Path, "/")
	if strings.Contains(dsnOpt.dbname, "/") {
		return dsnOpt, nil, badDSN("the database name cannot contain '/'")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return dsnOpt, nil, badDSN("the query string is malformed")
	}
	return dsnOpt, q, nil
}

// applyDSNQuery interprets the DSN's query parameters: the socket (into dsnOpt), TLS,
// character set and collation (into mc), and session variables (mc.Params). It
// returns the defaults-file= path, if any.
func applyDSNQuery(mc *mysql.Config, q url.Values, dsnOpt *options) (defaultsFile string, _ error) {
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch strings.ToLower(strings.ReplaceAll(k, "_", "-")) {
		case "socket":
			if v == "" {
				return "", badDSN("socket= needs a path")
			}
			dsnOpt.socket = v
		case "defaults-file":
			if v == "" {
				return "", badDSN("defaults-file= needs a path")
			}
			defaultsFile = v
		case "password", "user", "passwd", "pwd":
			return "", badDSN("put the user and password before the host (mysql://user:password@host), in ~/.my.cnf or in MYSQL_PWD, not in query parameters")
		case "tls":
			switch v {
			case "true", "false", "skip-verify", "preferred":
				mc.TLSConfig = v
			default:
				return "", badDSN("tls= must be true, false, skip-verify or preferred")
			}
		case "charset":
			if err := applyCharset(mc, v, q.Get("collation")); err != nil {
				return "", err
			}
		case "collation":
			if !isIdent(v) {
				return "", badDSN("collation= must be a collation name")
			}
			mc.Collation = v
		default:
			// Anything else is a session variable set on every connection, as with
			// go-sql-driver DSNs: ?transaction_isolation='READ-COMMITTED'.
			if !isIdent(k) {
				return "", badDSN("a query parameter name is not a valid variable name")
			}
			if v == "" {
				return "", badDSN("query parameter " + k + " needs a value")
			}
			mc.Params[k] = v
		}
	}
	return defaultsFile, nil
}

// applyCharset sets charset= (with the collation= beside it, if any) on mc.
func applyCharset(mc *mysql.Config, charset, coll string) error {
	if !isIdent(charset) {
		return badDSN("charset= must be a character set name")
	}
	if coll != "" && !isIdent(coll) {
		return badDSN("collation= must be a collation name")
	}
	if err := mc.Apply(mysql.Charset(charset, coll)); err != nil {
		return badDSN("bad charset")
	}
	return nil
}

// mergeOptions sets mc's user, password, database and address from the DSN, then the
// option file, then the environment (USER, MYSQL_PWD), then the defaults.
func mergeOptions(mc *mysql.Config, dsnOpt, fileOpt options, getenv env) error {
	mc.User = first(dsnOpt.user, dsnOpt.hasUser, fileOpt.user, fileOpt.hasUser)
	if !dsnOpt.hasUser && !fileOpt.hasUser {
		mc.User = getenv("USER") // as the mysql client does: the login name
	}
	switch {
	case dsnOpt.hasPassword:
		mc.Passwd = dsnOpt.password
	case fileOpt.hasPassword:
		mc.Passwd = fileOpt.password
	default:
		mc.Passwd = getenv("MYSQL_PWD")
	}
	mc.DBName = dsnOpt.dbname
	if mc.DBName == "" {
		mc.DBName = fileOpt.dbname
	}
	host := dsnOpt.host
	if host == "" {
		host = fileOpt.host
	}
	port := dsnOpt.port
	if port == "" {
		port = fileOpt.port
	}
	if port == "" {
		port = "3306"
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return target.Errorf(target.ClassOther, "", "invalid port %q in the option file", port)
	}
	switch {
	case dsnOpt.socket != "":
		mc.Net, mc.Addr = "unix", dsnOpt.socket
	case (host == "" || host == "localhost") && fileOpt.socket != "":
		// Like the mysql client: a socket from the option file applies to local connections.
		mc.Net, mc.Addr = "unix", fileOpt.socket
	default:
		if host == "" {
			host = "127.0.0.1"
		}
		mc.Net, mc.Addr = "tcp", net.JoinHostPort(host, port)
	}
	return nil
}

// applyConfig sets what comes from the target's Config rather than the DSN: how
// statements are sent, the connect timeout and the program name the server shows.
func applyConfig(mc *mysql.Config, cfg target.Config) {
	mc.ParseTime = false
	mc.InterpolateParams = cfg.Unprepared
	mc.Timeout = cfg.ConnectTimeout
	if mc.Timeout <= 0 {
		mc.Timeout = 10 * time.Second
	}
	app := cfg.AppName
	if app == "" {
		app = "fathom"
	}
	app = strings.Map(func(r rune) rune {
		if r == ',' || r == ':' {
			return '_'
		}
		return r
	}, app)
	mc.ConnectionAttributes = "program_name:" + app
	mc.Logger = &mysql.NopLogger{} // errors are returned, never printed
}

func first(a string, hasA bool, b string, hasB bool) string {
	if hasA {
		return a
	}
	if hasB {
		return b
	}
	return ""
}

// isIdent reports whether s is a plain identifier (variable, charset or collation name).
func isIdent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// readOptionFile reads the [client] section of a MySQL option file. A missing default
// file is not an error; a missing file named with defaults-file= is.
func readOptionFile(path string, named bool) (options, error) {
	var o options
	data, err := os.ReadFile(path)
	if err != nil {
		if !named && errors.Is(err, fs.ErrNotExist) {
			return o, nil
		}
		return o, target.Errorf(target.ClassOther, "", "cannot read MySQL option file %s: %v", path, pathErr(err))
	}
	f, err := ini.LoadSources(ini.LoadOptions{
		Insensitive:             true,
		AllowBooleanKeys:        true, // skip-ssl, !includedir …
		SkipUnrecognizableLines: true,
		IgnoreContinuation:      true,
		IgnoreInlineComment:     true, // MySQL rules differ from ini's: see optionValue
		PreserveSurroundedQuote: true,
		AllowShadows:            false,
	}, data)
	if err != nil {
		// The parser's message may quote a line holding the password.
		return o, target.Errorf(target.ClassOther, "", "cannot parse MySQL option file %s", path)
	}
	sec, err := f.GetSection("client")
	if err != nil {
		return o, nil
	}
	get := func(names ...string) (string, bool) {
		for _, n := range names {
			if sec.HasKey(n) {
				v := sec.Key(n).String()
				if v == "true" && isBooleanLine(data, n) {
					// "password" alone means "ask me", which we cannot do.
					return "", false
				}
				return optionValue(v), true
			}
		}
		return "", false
	}
	o.user, o.hasUser = get("user")
	o.password, o.hasPassword = get("password")
	o.host, _ = get("host")
	o.port, _ = get("port")
	o.socket, _ = get("socket")
	o.dbname, _ = get("database")
	return o, nil
}

// isBooleanLine reports whether the option file has key on a line of its own, without '='.
func isBooleanLine(data []byte, key string) bool {
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.EqualFold(line, key) {
			return true
		}
	}
	return false
}

// optionValue applies MySQL option-file rules to a raw value: a quoted value is taken
// between its quotes, an unquoted one ends at '#'; escape sequences \b \t \n \r \\ \s
// are decoded.
func optionValue(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		q := v[0]
		for i := 1; i < len(v); i++ {
			if v[i] == '\\' {
				i++
				continue
			}
			if v[i] == q {
				return unescapeOption(v[1:i])
			}
		}
	}
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return unescapeOption(v)
}

func unescapeOption(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 == len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch v[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 's':
			b.WriteByte(' ')
		case '\\', '"', '\'':
			b.WriteByte(v[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// pathErr keeps the reason of a file error without repeating the path.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// redact returns dsn with the password replaced by xxxxx.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return target.RedactString(dsn)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	out := u.String()
	if strings.Contains(u.RawQuery, "@") || strings.Contains(u.Path, "@") {
		// Probably a password that was not percent-encoded: mask by pattern too.
		out = target.RedactString(out)
	}
	return out
}
