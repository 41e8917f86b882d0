package storecopy

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fathom-lab/fathom/internal/store"
)

// anonymizer replaces what identifies hosts, networks and people with stable
// pseudonyms: HMAC-SHA256 of the value under a key of the copy, so one value always
// becomes the same pseudonym ("host-1f3a9c0b") and runs from one host still group
// together, while nobody without the key can test a guess. The structured fields
// (host names, targets, data directories, devices, pids, UUIDs, settings that name
// paths, hosts, ports and users) are replaced as a whole; free text (command lines,
// reasons, warnings, labels, plans, hooks, errors) is scrubbed by pattern (URLs,
// libpq key=value, client flags, IP and MAC addresses, e-mail and user@host, UUIDs,
// absolute paths, domain names) and of every name learnt from the structured fields.
type anonymizer struct {
	key    []byte
	keepHW bool
	// known are the names learnt (lower case) with their kind, replaced wherever they
	// stand as a word; words is the same, longest first, rebuilt when known grows.
	known map[string]string
	words []string
	made  map[string]bool // the pseudonyms made, left as they are
}

func newAnonymizer(key []byte, keepHW bool) *anonymizer {
	return &anonymizer{key: key, keepHW: keepHW, known: map[string]string{}, made: map[string]bool{}}
}

// generic names that are not worth hiding and would wreck text if replaced as words;
// in a structured place (a DSN's user or database) they are still replaced.
var generic = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`postgres postgresql mysql mariadb root redis sqlite test tests localhost admin default
		public bench sbtest pgbench template0 template1 information_schema performance_schema sys user users none null
		true false data main fathom local host server client db database fathom_results results tmp var lib home usr
		etc run dev proc sys opt srv mnt`) {
		generic[w] = true
	}
}

// pseudo is the pseudonym of a value of a kind. A pseudonym is left as it is, so
// scrubbing twice changes nothing more.
func (a *anonymizer) pseudo(kind, v string) string {
	if v == "" || a.made[v] {
		return v
	}
	norm := v
	switch kind {
	case "host", "user", "email", "db", "dev", "name":
		norm = strings.ToLower(v)
	}
	switch kind {
	case "host", "user", "db", "dev", "name":
		a.learn(kind, norm)
		if kind == "host" {
			if short, _, ok := strings.Cut(norm, "."); ok && net.ParseIP(norm) == nil {
				a.learn(kind, short)
			}
		}
	}
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(kind + "\x00" + norm))
	sum := m.Sum(nil)
	if kind == "uuid" {
		sum[6] = sum[6]&0x0f | 0x40 // a version-4 shape, so stores that type the column take it
		sum[8] = sum[8]&0x3f | 0x80
		h := hex.EncodeToString(sum[:16])
		u := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		a.made[u] = true
		return u
	}
	p := kind + "-" + hex.EncodeToString(sum[:4])
	a.made[p] = true
	return p
}

// learn keeps a name to replace wherever it stands as a word.
func (a *anonymizer) learn(kind, w string) {
	if len(w) < 3 || generic[w] || a.made[w] || strings.Trim(w, "0123456789.") == "" {
		return
	}
	if _, ok := a.known[w]; ok {
		return
	}
	a.known[w] = kind
	a.words = nil
}

// learnPIDs keeps process ids to replace where they stand as words (4 digits or
// more: shorter numbers are too common in text).
func (a *anonymizer) learnPIDs(pids ...int) {
	for _, p := range pids {
		if w := fmt.Sprint(p); p >= 1000 {
			if _, ok := a.known[w]; !ok {
				a.known[w], a.words = "pid", nil
			}
		}
	}
}

// host is the pseudonym of a host: an IP address or a name.
func (a *anonymizer) host(h string) string {
	h = strings.Trim(h, "[]")
	if h == "" {
		return ""
	}
	if strings.HasPrefix(h, "/") { // a Unix socket directory
		return a.pseudo("path", h)
	}
	if net.ParseIP(h) != nil {
		return a.pseudo("ip", h)
	}
	return a.pseudo("host", h)
}

var (
	urlRE      = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*)://([^\s'"<>\x02\x03` + "`" + `]*)`)
	sqliteRE   = regexp.MustCompile(`\bsqlite:([^\s'"\x02\x03]+)`)
	kvRE       = regexp.MustCompile(`(?i)\b(host|hostaddr|hostname|server|servername|address|addr|bind|user|username|login|owner|dbname|database|db|port|password|passwd|pwd|passfile|sslcert|sslkey|sslrootcert|sslcrl|service|socket|datadir|data_directory|pgdata|pid)(\s*[=:]\s*)('[^']*'|"[^"]*"|[^\s,;&'"\x02\x03]+)`)
	flagRE     = regexp.MustCompile(`(^|\s)(-h|--host|-U|--user|--username|-u|-d|--dbname|--database|-p|--port|--socket|--pgdata|--datadir|--defaults-file|--ssh|-i)(=|\s+)([^\s\x02\x03-][^\s\x02\x03]*)`)
	emailRE    = regexp.MustCompile(`\b([A-Za-z0-9._%+-]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)`)
	macRE      = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(?::[0-9a-f]{2}){5}\b`)
	uuidRE     = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	ipv4RE     = regexp.MustCompile(`\b(\d{1,3}(?:\.\d{1,3}){3})(:\d{1,5})?\b`)
	ipv6RE     = regexp.MustCompile(`(?i)\[?[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:%\w+)?\]?`)
	pathRE     = regexp.MustCompile(`(^|[\s=:'"(,\[{>])((?:/|~/)[^\s'"),;\]}<\x02\x03]+|[A-Za-z]:\\[^\s'"),;\]}<\x02\x03]+)`)
	domainRE   = regexp.MustCompile(`(?i)\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:com|net|org|io|local|localdomain|internal|intranet|intra|lan|corp|home|arpa|cloud|dev|app|biz|info|edu|gov|mil|int|eu|de|uk|fr|nl|ch|at|be|se|no|dk|fi|es|it|pl|cz|ru|cn|jp|kr|in|br|au|ca|us|nz|za)\b(:\d{1,5}\b)?`)
	hostPortRE = regexp.MustCompile(`\b((?:host|ip)-[0-9a-f]{8}):(\d{1,5})\b`)
	pidRE      = regexp.MustCompile(`(?i)\b(pid|process|postmaster|mysqld|redis-server)(\s*[:=#]?\s*)(\d{2,})\b`)
	homeRE     = regexp.MustCompile(`^(?:/home|/Users|/export/home|/var/home)/([^/]+)`)
	personKey  = regexp.MustCompile(`(?i)^(user|username|owner|author|by|who|email|mail|operator|person|contact|customer)$`)
	machineKey = regexp.MustCompile(`(?i)^(host|hostname|server|machine|node|ip|address|addr)$`)
)

// words returns the known names, longest first.
func (a *anonymizer) wordList() []string {
	if a.words == nil {
		for w := range a.known {
			a.words = append(a.words, w)
		}
		sort.Slice(a.words, func(i, j int) bool {
			if len(a.words[i]) != len(a.words[j]) {
				return len(a.words[i]) > len(a.words[j])
			}
			return a.words[i] < a.words[j]
		})
	}
	return a.words
}

func wordByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// replaceKnown replaces every known name standing as a word (not inside a longer
// word, a pseudonym or a UUID), case-insensitively.
func (a *anonymizer) replaceKnown(s string) string {
	if len(a.known) == 0 {
		return s
	}
	for _, w := range a.wordList() {
		lower := strings.ToLower(s)
		if !strings.Contains(lower, w) {
			continue
		}
		var b strings.Builder
		last := 0
		for i := 0; i <= len(lower)-len(w); {
			j := strings.Index(lower[i:], w)
			if j < 0 {
				break
			}
			j += i
			end := j + len(w)
			if (j == 0 || !wordByte(lower[j-1])) && (end == len(lower) || !wordByte(lower[end])) {
				b.WriteString(s[last:j])
				b.WriteString(a.pseudo(a.known[w], s[j:end]))
				last = end
			}
			i = end
		}
		if last > 0 {
			b.WriteString(s[last:])
			s = b.String()
		}
	}
	return s
}

// stash keeps what a rule wrote out of the reach of the rules after it: a
// placeholder of control characters (no letter or digit a rule could match) stands in
// for it until the end.
type stash []string

var stashRE = regexp.MustCompile(`\x02[\x04-\x0f]+\x03`)

func (st *stash) put(v string) string {
	n := len(*st)
	*st = append(*st, v)
	b := []byte{0x03}
	for {
		b = append(b, byte(0x04+n%12))
		if n /= 12; n == 0 {
			break
		}
	}
	b = append(b, 0x02)
	slices.Reverse(b)
	return string(b)
}

func (st stash) restore(s string) string {
	return stashRE.ReplaceAllStringFunc(s, func(m string) string {
		n := 0
		for _, c := range []byte(m[1 : len(m)-1]) {
			n = n*12 + int(c-0x04)
		}
		if n < len(st) {
			return st[n]
		}
		return m
	})
}

// text scrubs free text: each rule in turn, what one rule wrote kept from the next.
func (a *anonymizer) text(s string) string {
	if s == "" || s == anonymized {
		return s
	}
	var st stash
	s = strings.NewReplacer("\x02", "", "\x03", "").Replace(s)
	s = urlRE.ReplaceAllStringFunc(s, func(m string) string { return st.put(a.url(m)) })
	s = sqliteRE.ReplaceAllStringFunc(s, func(m string) string {
		p := m[len("sqlite:"):]
		if p == ":memory:" {
			return m
		}
		return st.put("sqlite:" + a.path(p))
	})
	s = kvRE.ReplaceAllStringFunc(s, func(m string) string {
		g := kvRE.FindStringSubmatch(m)
		v := strings.Trim(g[3], `'"`)
		return g[1] + g[2] + st.put(a.byKey(g[1], v))
	})
	s = flagRE.ReplaceAllStringFunc(s, func(m string) string {
		g := flagRE.FindStringSubmatch(m)
		return g[1] + g[2] + g[3] + st.put(a.byFlag(g[2], g[4]))
	})
	s = emailRE.ReplaceAllStringFunc(s, func(m string) string {
		g := emailRE.FindStringSubmatch(m)
		return st.put(a.pseudo("user", g[1]) + "@" + a.host(g[2]))
	})
	s = macRE.ReplaceAllStringFunc(s, func(m string) string { return st.put(a.pseudo("mac", strings.ToLower(m))) })
	s = uuidRE.ReplaceAllStringFunc(s, func(m string) string { return st.put(a.uuid(m)) })
	s = ipv4RE.ReplaceAllStringFunc(s, func(m string) string {
		g := ipv4RE.FindStringSubmatch(m)
		if net.ParseIP(g[1]) == nil {
			return m
		}
		out := a.pseudo("ip", g[1])
		if g[2] != "" {
			out += ":" + a.pseudo("port", g[2][1:])
		}
		return st.put(out)
	})
	s = ipv6RE.ReplaceAllStringFunc(s, func(m string) string {
		ip, _, _ := strings.Cut(strings.Trim(m, "[]"), "%")
		if strings.Count(ip, ":") < 2 || net.ParseIP(ip) == nil {
			return m
		}
		return st.put(a.pseudo("ip", strings.ToLower(ip)))
	})
	s = pathRE.ReplaceAllStringFunc(s, func(m string) string {
		g := pathRE.FindStringSubmatch(m)
		if len(g[2]) < 2 {
			return m
		}
		return g[1] + st.put(a.path(g[2]))
	})
	s = domainRE.ReplaceAllStringFunc(s, func(m string) string {
		g := domainRE.FindStringSubmatch(m)
		h := strings.TrimSuffix(m, g[1])
		if g[1] != "" {
			return st.put(a.pseudo("host", h) + ":" + a.pseudo("port", g[1][1:]))
		}
		return st.put(a.pseudo("host", h))
	})
	s = pidRE.ReplaceAllStringFunc(s, func(m string) string {
		g := pidRE.FindStringSubmatch(m)
		return g[1] + g[2] + st.put(a.pseudo("pid", g[3]))
	})
	// A known host name replaced as a word may have had its port after it.
	s = hostPortRE.ReplaceAllStringFunc(a.replaceKnown(s), func(m string) string {
		g := hostPortRE.FindStringSubmatch(m)
		return g[1] + ":" + a.pseudo("port", g[2])
	})
	return st.restore(s)
}

// path is the pseudonym of a path; a home directory's owner is learnt as a user.
func (a *anonymizer) path(p string) string {
	if g := homeRE.FindStringSubmatch(p); g != nil {
		a.learn("user", strings.ToLower(g[1]))
	}
	return a.pseudo("path", p)
}

func (a *anonymizer) uuid(u string) string {
	if a.made[u] {
		return u
	}
	return a.pseudo("uuid", strings.ToLower(u))
}

// url scrubs scheme://[user[:password]@]host[:port][/path][?query].
func (a *anonymizer) url(m string) string {
	g := urlRE.FindStringSubmatch(m)
	scheme, rest := g[1], g[2]
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	var out strings.Builder
	out.WriteString(scheme + "://")
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo := authority[:at]
		authority = authority[at+1:]
		user, _, hasPass := strings.Cut(userinfo, ":")
		if user != "" {
			out.WriteString(a.pseudo("user", user))
		}
		if hasPass {
			out.WriteString(":xxxxx")
		}
		out.WriteString("@")
	}
	for i, hp := range strings.Split(authority, ",") { // libpq takes several hosts
		if i > 0 {
			out.WriteString(",")
		}
		host, port := hp, ""
		if h, p, err := net.SplitHostPort(hp); err == nil {
			host, port = h, p
		}
		out.WriteString(a.host(host))
		if port != "" {
			out.WriteString(":" + a.pseudo("port", port))
		}
	}
	path, query, _ := strings.Cut(tail, "?")
	if p := strings.Trim(path, "/"); p != "" {
		switch strings.ToLower(scheme) {
		case "redis", "rediss", "unix":
			if strings.Trim(p, "0123456789") == "" { // a database number
				out.WriteString("/" + p)
				break
			}
			out.WriteString("/" + a.pseudo("path", p))
		case "postgres", "postgresql", "mysql", "mariadb":
			out.WriteString("/" + a.pseudo("db", p))
		default:
			out.WriteString("/" + a.pseudo("path", p))
		}
	}
	if query != "" {
		out.WriteString("?" + a.text(strings.ReplaceAll(query, "&", " & ")))
	}
	return strings.ReplaceAll(out.String(), " & ", "&")
}

// byKey is the pseudonym of a value named by a key (libpq key=value, settings).
func (a *anonymizer) byKey(key, v string) string {
	k := strings.ToLower(key)
	switch {
	case v == "" || a.made[v]:
		return v
	case k == "password" || k == "passwd" || k == "pwd":
		return "xxxxx"
	case k == "pid":
		return a.pseudo("pid", v)
	case strings.Contains(k, "port"):
		return a.pseudo("port", v)
	case k == "user" || k == "username" || k == "login" || k == "owner":
		return a.pseudo("user", v)
	case k == "dbname" || k == "database" || k == "db":
		if strings.Trim(v, "0123456789") == "" {
			return v // Redis's database number
		}
		return a.pseudo("db", v)
	case k == "service":
		return a.pseudo("name", v)
	case strings.Contains(k, "host") || strings.Contains(k, "addr") || strings.Contains(k, "server") || k == "bind":
		var hs []string
		for h := range strings.SplitSeq(v, ",") {
			hs = append(hs, a.host(strings.TrimSpace(h)))
		}
		return strings.Join(hs, ",")
	}
	return a.path(v)
}

func (a *anonymizer) byFlag(flag, v string) string {
	switch flag {
	case "-h", "--host", "--ssh":
		if u, h, ok := strings.Cut(v, "@"); ok {
			return a.pseudo("user", u) + "@" + a.host(h)
		}
		return a.host(v)
	case "-U", "--user", "--username", "-u":
		if u, _, ok := strings.Cut(v, ":"); ok { // curl -u user:password
			return a.pseudo("user", u) + ":xxxxx"
		}
		return a.pseudo("user", v)
	case "-d", "--dbname", "--database":
		return a.pseudo("db", v)
	case "-p", "--port":
		if strings.Trim(v, "0123456789") != "" {
			return v
		}
		return a.pseudo("port", v)
	}
	return a.path(v)
}

// setting is the pseudonym of a server setting's value: settings that name a path,
// a host or address, a port, a user or a UUID are replaced whole; the others are
// scrubbed as text.
func (a *anonymizer) setting(name, v string) string {
	n := strings.ToLower(name)
	if v == "" {
		return v
	}
	switch {
	case strings.Contains(n, "uuid"):
		return a.uuid(v)
	case strings.Contains(n, "port") && !strings.Contains(n, "report") && !strings.Contains(n, "support"):
		return a.pseudo("port", v)
	case strings.Contains(n, "host") || strings.Contains(n, "addr") || strings.HasSuffix(n, "listen_addresses") || n == "bind_address" || n == "cluster_name":
		return a.byKey("host", v)
	case n == "user" || strings.HasSuffix(n, "_user") || n == "server_id":
		return a.pseudo("user", v)
	case strings.Contains(n, "dir") || strings.Contains(n, "file") || strings.Contains(n, "path") || strings.Contains(n, "socket") ||
		strings.Contains(n, "basename") || strings.HasPrefix(v, "/"):
		if strings.ContainsAny(v, " ,") && !strings.HasPrefix(v, "/") {
			return a.text(v)
		}
		return a.path(v)
	}
	return a.text(v)
}

// label scrubs a label's value: labels that name a person or a machine are replaced
// whole, a person as the user of the same name anywhere else.
func (a *anonymizer) label(k, v string) string {
	switch {
	case v == "":
		return v
	case personKey.MatchString(k):
		if u, h, ok := strings.Cut(v, "@"); ok { // an e-mail address
			return a.pseudo("user", u) + "@" + a.host(h)
		}
		return a.pseudo("user", v)
	case machineKey.MatchString(k):
		return a.host(v)
	}
	return a.text(v)
}

// json scrubs the strings of a JSON document (object keys and numbers stay).
func (a *anonymizer) json(raw json.RawMessage, f func(string) string) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(fmt.Sprintf("%q", f(string(raw))))
	}
	changed := false
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if y := f(x); y != x {
				changed = true
				return y
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				if personKey.MatchString(k) || machineKey.MatchString(k) {
					if s, ok := x[k].(string); ok && s != "" {
						if y := a.label(k, s); y != s {
							x[k], changed = y, true
						}
						continue
					}
				}
				x[k] = walk(x[k])
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func (a *anonymizer) texts(ss []string) {
	for i := range ss {
		ss[i] = a.text(ss[i])
	}
}

// run anonymizes a run record in place; numbers (intervals, histograms, samples,
// stalls' figures) are left as they are.
func (a *anonymizer) run(rec *store.RunRecord) {
	r := &rec.Run
	r.UUID = a.uuid(r.UUID)
	r.Host.Hostname = a.host(r.Host.Hostname)
	if !a.keepHW {
		r.Host.Kernel = a.pseudo("kernel", r.Host.Kernel)
		r.Host.CPUModel = a.pseudo("cpu", r.Host.CPUModel)
	}
	r.PID = 0
	r.Target = a.text(r.Target)
	r.Command = a.text(r.Command)
	r.Workload = a.text(r.Workload)
	r.ServerVersion = a.text(r.ServerVersion)
	r.Reason = a.text(r.Reason)
	a.texts(r.Warnings)
	for k, v := range r.Options {
		r.Options[k] = a.text(v)
	}
	for k, v := range r.Settings {
		r.Settings[k] = a.setting(k, v)
	}
	for k, v := range r.Labels {
		r.Labels[k] = a.label(k, v)
	}
	r.Summary = a.json(r.Summary, a.text)
	rec.StallParams = a.json(rec.StallParams, a.text)
	if s := rec.Source; s != nil {
		s.Server.DataDir = a.path(s.Server.DataDir)
		s.Server.PID = 0
		for i, d := range s.Server.Devices {
			s.Server.Devices[i] = a.pseudo("dev", d)
		}
		for k, v := range s.Server.Settings {
			s.Server.Settings[k] = a.setting(k, v)
		}
		a.texts(s.Server.Notes)
		s.Server.VersionString = a.text(s.Server.VersionString)
	}
	for i := range rec.Samples {
		rec.Samples[i].Error = a.text(rec.Samples[i].Error)
	}
	for i := range rec.Stalls {
		st := &rec.Stalls[i]
		st.Title, st.Explanation = a.text(st.Title), a.text(st.Explanation)
		for j := range st.Settings {
			st.Settings[j].Value = a.setting(st.Settings[j].Name, st.Settings[j].Value)
			st.Settings[j].Hint = a.text(st.Settings[j].Hint)
		}
	}
}

// experiment anonymizes an experiment record in place. Its axis values, cell keys
// and parameters go through the same scrubbing, so they stay consistent.
func (a *anonymizer) experiment(rec *store.ExperimentRecord) {
	e := &rec.Experiment
	e.UUID = a.uuid(e.UUID)
	e.Host = a.host(e.Host)
	e.PID = 0
	e.Target = a.text(e.Target)
	e.Name = a.text(e.Name)
	e.Description = a.text(e.Description)
	e.PlanPath = a.text(baseName(e.PlanPath))
	e.PlanDir = a.path(e.PlanDir)
	e.Plan = a.text(e.Plan)
	e.Reason = a.text(e.Reason)
	for i := range e.Axes {
		a.texts(e.Axes[i].Values)
		e.Axes[i].Baseline = a.text(e.Axes[i].Baseline)
	}
	for i := range rec.Cells {
		c := &rec.Cells[i]
		c.Key = a.text(c.Key)
		for j := range c.Coords {
			c.Coords[j].Value = a.text(c.Coords[j].Value)
		}
		c.Params = a.json(c.Params, a.text)
	}
	for i := range rec.Slots {
		s := &rec.Slots[i]
		s.Reason, s.Change = a.text(s.Reason), a.text(s.Change)
		s.Effective = a.json(s.Effective, a.text)
	}
	for i := range rec.Links {
		rec.Links[i].RunUUID = a.uuid(rec.Links[i].RunUUID)
	}
	for i := range rec.Hooks {
		h := &rec.Hooks[i]
		h.Command, h.Server, h.Error = a.text(h.Command), a.text(h.Server), a.text(h.Error)
		if h.Phase == "restart" {
			h.Output = string(a.json(json.RawMessage(h.Output), a.text)) // the restart's figures (store.RestartFacts)
		} else {
			h.Output = a.text(h.Output)
		}
	}
}

func baseName(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}
