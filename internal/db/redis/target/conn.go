package redis

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/redis/rueidis"

	"github.com/fathom-lab/fathom/internal/target"
)

// Conn is one dedicated connection to Redis. Besides target.Conn, whose "SQL" is a
// command line (SET ? ?, HSET user:? name ?: each ? takes the next argument, also
// inside a word), it sends Batches: several commands in one round trip.
type Conn struct {
	t       *redisTarget
	dc      rueidis.DedicatedClient
	release func()
	nc      net.Conn
	id      int64
	cancel  target.Canceler
	dead    bool
	inTx    bool
	batch   batch // for Exec, Query and Stmt.Run
	closed  bool
}

var _ target.Conn = (*Conn)(nil)

func (c *Conn) interrupt() {
	if c.nc != nil {
		_ = c.nc.Close()
	}
}

// ID is the server's CLIENT ID for this connection.
func (c *Conn) ID() int64 { return c.id }

// Alive reports whether the connection can still be used after an error.
func (c *Conn) Alive() bool { return !c.dead && !c.closed }

// Close closes the connection: its socket first, then rueidis's pipe. rueidis's Close
// alone would send a PING through its pipelining goroutines and wait for the reply:
// 10,000 round trips and 20,000 goroutines at the end of a 10,000-client run, and a
// reply the run left unread (a request cancelled by the stop, on the multiplexed
// path, which reads the socket itself) reached those goroutines as a reply to
// nothing, which rueidis takes for its own bug and panics (seen in
// TestIntervalsHonestAt10000Clients). With the socket closed the pipe's goroutines
// end at once.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.cancel.Stop()
	if c.nc != nil {
		_ = c.nc.Close()
	}
	c.dc.Close()
	return nil
}

// bg is the context rueidis sees: no Done channel, so it reads and writes on the
// calling goroutine (see the package comment); the caller's context is watched by
// c.cancel instead.
var bg = context.Background()

// done turns the outcome of a call into the error to return: the context's when the
// call was interrupted, else the classified one. A connection error marks the
// connection dead.
func (c *Conn) done(ctx context.Context, err error) error {
	if c.cancel.Disarm() {
		c.dead = true
		if e := ctx.Err(); e != nil {
			return ctxError(e)
		}
	}
	if err == nil {
		return nil
	}
	e := classify(err, "", c.t.d.password)
	if e.Class == target.ClassConnection || e.Class == target.ClassCanceled {
		c.dead = true
	}
	return e
}

// Send sends the batch's commands in one round trip (one command: Do; more: a
// pipeline) and returns the first error reply or failure. Nil replies (a missing key)
// are not errors; b.Nils counts them. The batch is empty again afterwards.
func (c *Conn) Send(ctx context.Context, b target.Batch) error {
	err := c.SendKeep(ctx, b)
	b.Reset()
	return err
}

// SendKeep is Send that keeps the batch, to send the same commands again (a retry)
// until Reset.
func (c *Conn) SendKeep(ctx context.Context, tb target.Batch) error {
	b, err := batchOf(tb)
	if err != nil {
		return err
	}
	if !c.cancel.Arm(ctx) {
		return ctxError(ctx.Err())
	}
	// rueidis recycles a command once sent, so the commands are built anew from the
	// words each time (no allocation: they go into its pooled slices).
	b.cmds = b.cmds[:0]
	start := 0
	for _, end := range b.ends {
		b.cmds = append(b.cmds, b.b.Arbitrary(b.words[start:end]...).Build())
		start = end
	}
	var first error
	b.Nils = 0
	switch len(b.cmds) {
	case 0:
	case 1:
		first = b.check(c.dc.Do(bg, b.cmds[0]))
	default:
		for _, r := range c.dc.DoMulti(bg, b.cmds...) {
			if err := b.check(r); err != nil && first == nil {
				first = err
			}
		}
	}
	clear(b.cmds)
	return c.done(ctx, first)
}

// SendEach sends a batch of one command whose reply is an array (ZRANGEBYLEX …) and
// calls f with each element's text, which stays valid after the call (it is the
// reply's own string, not a copy). The batch is kept, as with SendKeep.
func (c *Conn) SendEach(ctx context.Context, tb target.Batch, f func(string)) error {
	b, err := batchOf(tb)
	if err != nil {
		return err
	}
	if b.Len() != 1 {
		return target.Errorf(target.ClassOther, "", "SendEach sends one command, not %d", b.Len())
	}
	if !c.cancel.Arm(ctx) {
		return ctxError(ctx.Err())
	}
	b.Nils = 0
	cmd := b.b.Arbitrary(b.words...).Build()
	r := c.dc.Do(bg, cmd)
	err = b.check(r)
	if err == nil && b.Nils == 0 {
		var arr []rueidis.RedisMessage
		if arr, err = r.ToArray(); err == nil {
			for i := range arr {
				s, serr := arr[i].ToString()
				if serr != nil {
					err = serr
					break
				}
				f(s)
			}
		}
	}
	return c.done(ctx, err)
}

// NewBatch returns an empty batch for this connection's commands (a *Batch).
func (c *Conn) NewBatch() target.Batch { return c.newBatch() }

func (c *Conn) newBatch() *batch { return &batch{b: c.dc.B()} }

// batchOf is tb as this kind's batch: one made by a Redis connection's NewBatch.
func batchOf(tb target.Batch) (*batch, error) {
	if b, ok := tb.(*batch); ok {
		return b, nil
	}
	return nil, target.Errorf(target.ClassOther, "", "a batch of another kind (%T) sent to Redis", tb)
}

var _ target.Batcher = (*Conn)(nil)

// batch is a reusable list of commands to send in one round trip. Build each command
// with Cmd, then its arguments, then End; argument bytes given to Bytes must stay
// unchanged until the batch is Reset.
type batch struct {
	b     rueidis.Builder
	cmds  rueidis.Commands
	words []string // every command's words, one after the other
	ends  []int    // where each command's words end
	arena []byte
	// Nils counts the nil replies of the last Send (GET of a missing key …).
	Nils int
}

// Reset empties the batch.
func (b *batch) Reset() {
	b.words = b.words[:0]
	b.ends = b.ends[:0]
	b.arena = b.arena[:0]
}

// Len is the number of commands in the batch.
func (b *batch) Len() int { return len(b.ends) }

// Cmd starts a command; name should be upper case (no allocation then).
func (b *batch) Cmd(name string) target.Batch { b.words = append(b.words, name); return b }

// Arg adds a string argument.
func (b *batch) Arg(s string) target.Batch { b.words = append(b.words, s); return b }

// Bytes adds an argument without copying it.
func (b *batch) Bytes(p []byte) target.Batch { return b.bytes(p) }

func (b *batch) bytes(p []byte) *batch {
	b.words = append(b.words, unsafe.String(unsafe.SliceData(p), len(p)))
	return b
}

// arg adds the arena's bytes from start as an argument. The arena only grows until
// Reset, and a grown arena leaves the earlier arguments in the old array, which they
// keep alive.
func (b *batch) arg(start int) *batch { return b.bytes(b.arena[start:]) }

// Int adds an integer argument.
func (b *batch) Int(n int64) target.Batch {
	start := len(b.arena)
	b.arena = strconv.AppendInt(b.arena, n, 10)
	return b.arg(start)
}

// Concat adds one argument made of prefix and n (a key such as "fathom:kv:42").
func (b *batch) Concat(prefix string, n int64) target.Batch {
	start := len(b.arena)
	b.arena = append(b.arena, prefix...)
	b.arena = strconv.AppendInt(b.arena, n, 10)
	return b.arg(start)
}

// value adds a target.Value as an argument.
func (b *batch) value(v target.Value) *batch {
	if v.Kind == target.KindText {
		return b.bytes(v.Text)
	}
	start := len(b.arena)
	b.arena = appendValue(b.arena, v)
	return b.arg(start)
}

// End finishes the command started with Cmd.
func (b *batch) End() { b.ends = append(b.ends, len(b.words)) }

func (b *batch) check(r rueidis.RedisResult) error {
	err := r.Error()
	if err == nil {
		return nil
	}
	if rueidis.IsRedisNil(err) {
		b.Nils++
		return nil
	}
	return err
}

// template is a parsed command line: words, and where each ? argument goes.
type template struct {
	words []string
	holes []hole // in order of the arguments
	// simple: every hole is a whole word
	simple bool
}

type hole struct {
	word   int
	prefix string // text of the word before the ?
	suffix string // text after it, only for the last ? of a word
	whole  bool
}

// parseCommand splits a command line into words: spaces separate, "…" and '…' quote
// (with \" and \\ inside double quotes).
func parseCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' || ch == '\'':
			q := ch
			in = true
			i++
			for ; i < len(s) && s[i] != q; i++ {
				if q == '"' && s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, target.Errorf(target.ClassOther, "", "unbalanced quote in Redis command %q", s)
			}
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			in = true
			cur.WriteByte(ch)
		}
	}
	if in {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, target.Errorf(target.ClassOther, "", "empty Redis command")
	}
	words[0] = strings.ToUpper(words[0])
	return words, nil
}

func parseTemplate(s string) (*template, error) {
	words, err := parseCommand(s)
	if err != nil {
		return nil, err
	}
	t := &template{words: words, simple: true}
	for i, w := range words {
		if w == "?" {
			t.holes = append(t.holes, hole{word: i, whole: true})
			continue
		}
		rest := w
		for {
			j := strings.IndexByte(rest, '?')
			if j < 0 {
				break
			}
			t.simple = false
			h := hole{word: i, prefix: rest[:j]}
			rest = rest[j+1:]
			if !strings.Contains(rest, "?") {
				h.suffix = rest
			}
			t.holes = append(t.holes, h)
		}
	}
	return t, nil
}

// build adds the template with args to b.
func (t *template) build(b *batch, args []target.Value) error {
	if len(args) != len(t.holes) {
		return target.Errorf(target.ClassOther, "", "Redis command %s takes %d arguments, got %d", t.words[0], len(t.holes), len(args))
	}
	b.Reset()
	b.Cmd(t.words[0])
	h := 0
	for i := 1; i < len(t.words); i++ {
		if h >= len(t.holes) || t.holes[h].word != i {
			b.Arg(t.words[i])
			continue
		}
		if t.holes[h].whole {
			b.value(args[h])
			h++
			continue
		}
		start := len(b.arena)
		for ; h < len(t.holes) && t.holes[h].word == i; h++ {
			b.arena = append(b.arena, t.holes[h].prefix...)
			b.arena = appendValue(b.arena, args[h])
			b.arena = append(b.arena, t.holes[h].suffix...)
		}
		b.arg(start)
	}
	b.End()
	return nil
}

func appendValue(dst []byte, v target.Value) []byte {
	switch v.Kind {
	case target.KindInt:
		return strconv.AppendInt(dst, v.Int, 10)
	case target.KindFloat:
		return strconv.AppendFloat(dst, v.Float, 'g', -1, 64)
	case target.KindText:
		return append(dst, v.Text...)
	case target.KindTime:
		return v.Time.AppendFormat(dst, "2006-01-02T15:04:05.999999999Z07:00")
	}
	return dst
}

// do sends one command and returns its reply.
func (c *Conn) do(ctx context.Context, t *template, args []target.Value) (rueidis.RedisMessage, error) {
	if err := t.build(&c.batch, args); err != nil {
		c.batch.Reset()
		return rueidis.RedisMessage{}, err
	}
	if !c.cancel.Arm(ctx) {
		c.batch.Reset()
		return rueidis.RedisMessage{}, ctxError(ctx.Err())
	}
	r := c.dc.Do(bg, c.batch.b.Arbitrary(c.batch.words...).Build())
	c.batch.Reset()
	msg, err := r.ToMessage()
	if rueidis.IsRedisNil(err) {
		err = nil
	}
	return msg, c.done(ctx, err)
}

// Exec runs one command line without arguments.
func (c *Conn) Exec(ctx context.Context, cmd string) error {
	t, err := parseTemplate(cmd)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, t, nil)
	return err
}

// Begin starts a MULTI transaction: the commands until Commit are queued.
func (c *Conn) Begin(ctx context.Context) error {
	if err := c.Exec(ctx, "MULTI"); err != nil {
		return err
	}
	c.inTx = true
	return nil
}

var execTemplate = &template{words: []string{"EXEC"}, simple: true}

// Commit runs EXEC. A transaction aborted by WATCH is ClassSerialization (retryable);
// the first error among the queued commands' replies is returned.
func (c *Conn) Commit(ctx context.Context) error {
	if !c.inTx {
		return nil
	}
	c.inTx = false
	msg, err := c.do(ctx, execTemplate, nil)
	if err != nil {
		return err
	}
	if msg.IsNil() {
		return errWatch
	}
	arr, _ := msg.ToArray()
	for i := range arr {
		if e := arr[i].Error(); e != nil {
			return classify(e, "", c.t.d.password)
		}
	}
	return nil
}

// Rollback runs DISCARD inside a transaction.
func (c *Conn) Rollback(ctx context.Context) error {
	if !c.inTx || c.dead {
		c.inTx = false
		return nil
	}
	c.inTx = false
	return c.Exec(ctx, "DISCARD")
}

// Load is not available: Redis has no tables; workloads load keys with Batches.
func (c *Conn) Load(context.Context, string, []string, func([]target.Value) bool) (int64, error) {
	return 0, target.Errorf(target.ClassOther, "", "Redis has no tables to load: use a Redis workload (redis-kv, redis-bench, redis-ycsb)")
}

// Query runs a command line with arguments and returns its reply as rows: a scalar is
// one row of one column, an array one row per element (an element that is itself an
// array gives the columns), a map one row per entry (key, value) in key order.
func (c *Conn) Query(ctx context.Context, cmd string, args ...target.Value) ([][]string, error) {
	t, err := parseTemplate(cmd)
	if err != nil {
		return nil, err
	}
	msg, err := c.do(ctx, t, args)
	if err != nil {
		return nil, err
	}
	return rows(&msg), nil
}

func flat(m *rueidis.RedisMessage) []string {
	if m.IsArray() {
		arr, _ := m.ToArray()
		out := make([]string, 0, len(arr))
		for i := range arr {
			out = append(out, flat(&arr[i])...)
		}
		return out
	}
	if m.IsNil() {
		return []string{""}
	}
	if m.IsInt64() {
		n, _ := m.AsInt64()
		return []string{strconv.FormatInt(n, 10)}
	}
	if s, err := m.ToString(); err == nil {
		return []string{s}
	}
	if v, err := m.ToAny(); err == nil {
		return []string{anyString(v)}
	}
	return []string{""}
}

func anyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case nil:
		return ""
	}
	return ""
}

func rows(m *rueidis.RedisMessage) [][]string {
	switch {
	case m.IsNil():
		return nil
	case m.IsMap():
		mm, _ := m.ToMap()
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range mm {
				if !yield(k) {
					return
				}
			}
		})
		out := make([][]string, 0, len(keys))
		for _, k := range keys {
			v := mm[k]
			out = append(out, append([]string{k}, flat(&v)...))
		}
		return out
	case m.IsArray():
		arr, _ := m.ToArray()
		out := make([][]string, 0, len(arr))
		for i := range arr {
			out = append(out, flat(&arr[i]))
		}
		return out
	}
	return [][]string{flat(m)}
}

// Prepare parses a command line with ? arguments; nothing is sent to the server.
func (c *Conn) Prepare(_ context.Context, cmd string) (target.Stmt, error) {
	t, err := parseTemplate(cmd)
	if err != nil {
		return nil, err
	}
	return &stmt{c: c, t: t}, nil
}

// stmt is a command line with ? arguments bound to a Conn.
type stmt struct {
	c *Conn
	t *template
}

// Run sends the command. An integer reply is RowsAffected; a string reply is one row,
// nil none, an array one row per element; with res.Keep the first row's value is kept.
func (s *stmt) Run(ctx context.Context, args []target.Value, res *target.Result) error {
	msg, err := s.c.do(ctx, s.t, args)
	if err != nil || res == nil {
		return err
	}
	res.RowsAffected, res.Rows = 0, 0
	switch {
	case msg.IsNil():
	case msg.IsInt64():
		n, _ := msg.AsInt64()
		res.RowsAffected, res.Rows = n, 1
		if res.Keep {
			f := res.Row(1)
			f[0] = target.Int64(n)
		}
	case msg.IsArray() || msg.IsMap():
		arr, _ := msg.ToArray()
		res.Rows = int64(len(arr))
		if res.Keep && len(arr) > 0 {
			f := res.Row(1)
			sv, _ := arr[0].ToString()
			f[0] = target.Value{Kind: target.KindText, Text: append(f[0].Text[:0], sv...)}
		}
	default:
		res.Rows = 1
		if res.Keep {
			f := res.Row(1)
			sv, _ := msg.ToString()
			f[0] = target.Value{Kind: target.KindText, Text: append(f[0].Text[:0], sv...)}
		}
	}
	return nil
}

// Close does nothing: the statement holds nothing on the server.
func (s *stmt) Close() error { return nil }

// infoFields runs INFO section and returns its name:value fields.
func (c *Conn) infoFields(ctx context.Context, section string) (map[string]string, error) {
	rs, err := c.Query(ctx, "INFO "+section)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range rs {
		for _, text := range r {
			for line := range strings.SplitSeq(text, "\n") {
				line = strings.TrimRight(line, "\r")
				if line == "" || line[0] == '#' {
					continue
				}
				if k, v, ok := strings.Cut(line, ":"); ok {
					out[k] = v
				}
			}
		}
	}
	return out, nil
}

// secretSettings are never read back: CONFIG GET would return the password.
var secretSettings = map[string]bool{"requirepass": true, "masterauth": true, "masteruser": true}

// ConfigGet returns the named settings the server has (CONFIG GET, one name at a time
// so that servers before 7.0 answer too). Secrets are never returned.
func (c *Conn) ConfigGet(ctx context.Context, names ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		if secretSettings[strings.ToLower(n)] || strings.ContainsAny(n, "*?[") {
			continue
		}
		rs, err := c.Query(ctx, "CONFIG GET ?", target.Text([]byte(n)))
		if err != nil {
			return nil, err
		}
		// RESP3 gives a map (rows of key, value); RESP2 a flat array.
		if len(rs) > 0 && len(rs[0]) == 2 {
			for _, r := range rs {
				out[r[0]] = r[1]
			}
			continue
		}
		for i := 0; i+1 < len(rs); i += 2 {
			out[rs[i][0]] = rs[i+1][0]
		}
	}
	return out, nil
}
