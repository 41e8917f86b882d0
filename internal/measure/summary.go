package measure

import (
	"math"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fathom-lab/fathom/internal/target"
)

// Latency is a latency distribution summarised in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// LatencyOf summarises h; all zero for an empty histogram.
func LatencyOf(h *hdr.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(ns int64) float64 { return round3(float64(ns) / 1e6) }
	return Latency{
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P95:  ms(h.ValueAtQuantile(95)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
		Mean: round3(h.Mean() / 1e6),
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// TypeSummary is one transaction type's (or all types') totals.
type TypeSummary struct {
	Transactions int64            `json:"transactions"`
	TPS          float64          `json:"tps"`
	Statements   int64            `json:"statements"`
	QPS          float64          `json:"qps"`
	Errors       int64            `json:"errors"`
	Failed       int64            `json:"failed"`
	Retries      int64            `json:"retries"`
	Late         int64            `json:"late,omitempty"`
	Dropped      int64            `json:"dropped,omitempty"`
	ErrorsBy     map[string]int64 `json:"errors_by_class,omitempty"`
	Latency      Latency          `json:"latency_ms"`
	Service      *Latency         `json:"service_ms,omitempty"`
}

// Summary totals the measured (non warm-up) intervals of a run.
type Summary struct {
	RunID      int64   `json:"run_id"`
	Status     string  `json:"status"`
	Reason     string  `json:"reason,omitempty"`
	Workload   string  `json:"workload"`
	Target     string  `json:"target"`
	Clients    int     `json:"clients"`
	Rate       float64 `json:"rate,omitempty"`
	QueryMode  string  `json:"query_mode,omitempty"` // the protocol: simple, extended or prepared
	Seconds    float64 `json:"seconds"`
	Intervals  int     `json:"intervals"`
	Reconnects int64   `json:"reconnects"`
	// Warnings about the numbers (e.g. the machine could not keep the interval).
	Warnings []string `json:"warnings,omitempty"`
	// ErrorRate is the failed transactions in percent of the transactions that ended
	// (succeeded or failed) in the measured intervals; MaxErrorRate the limit the run
	// was given (nil: none).
	ErrorRate    float64  `json:"error_rate_pct,omitempty"`
	MaxErrorRate *float64 `json:"max_error_rate_pct,omitempty"`
	// FirstErrors are the run's first distinct errors (at most KeptErrors), in the
	// order first met, each with how often it happened; ErrorsUnlisted counts the
	// measured errors that are none of them.
	FirstErrors    []SeenError `json:"first_errors,omitempty"`
	ErrorsUnlisted int64       `json:"errors_unlisted,omitempty"`
	// ClientsAborted is how many clients stopped on a mistake of the workload (a
	// script's error, as pgbench aborts a client); the others went on.
	ClientsAborted int `json:"clients_aborted,omitempty"`
	// NOPM and TPM are given for runs with a transaction type named NewOrderType
	// (tpcc): committed New-Orders per minute, as HammerDB reports NOPM, and every
	// transaction completed per minute (committed, or rolled back as TPC-C asks of 1%
	// of New-Orders) as the client counted it. HammerDB's TPM is the server's commit
	// and rollback counters, which also count other sessions' transactions.
	NOPM float64 `json:"nopm,omitempty"`
	TPM  float64 `json:"tpm,omitempty"`
	// ServerTPM is HammerDB's TPM: the server's count of transactions ended
	// (committed or rolled back, by every session: ServerTPMSource says what was read)
	// per minute over the measured intervals. 0 when the target has no such counter.
	ServerTPM       float64 `json:"server_tpm,omitempty"`
	ServerTPMSource string  `json:"server_tpm_source,omitempty"`
	// Thresholds are the run's --threshold bars, checked at its end (threshold.go).
	Thresholds []thresholdResult `json:"thresholds,omitempty"`
	TypeSummary
	ByTxn map[string]TypeSummary `json:"by_transaction"`
	// ByGroup totals the types of each client group ("writers" for "writers/insert"
	// and "writers/update"), percentiles from the merged histograms; nil when the
	// workload has no groups.
	ByGroup map[string]TypeSummary `json:"by_group,omitempty"`
	// Statements: each statement's latency, for workloads that time them (pgbench -r).
	PerCommand []StatementLatency `json:"per_command,omitempty"`
	// PerCommandWindow says which part of the run PerCommand covers.
	PerCommandWindow string `json:"per_command_window,omitempty"`
}

// CommandLatencies fills the counts and latencies of the named commands from their
// histograms (by index, as in Interval.Commands).
func CommandLatencies(named []StatementLatency, hs []*hdr.Histogram) []StatementLatency {
	out := slices.Clone(named)
	for i := range out {
		if i < len(hs) && hs[i] != nil {
			out[i].Count = hs[i].TotalCount()
			out[i].Latency = LatencyOf(hs[i])
		}
	}
	return out
}

// StatementLatency is one statement's (or meta-command's) latency over a run, in
// milliseconds, from an HDR histogram merged over the clients.
type StatementLatency struct {
	Txn     string  `json:"transaction"`
	Line    int     `json:"line"`
	Text    string  `json:"text"`
	Count   int64   `json:"count"`
	Latency Latency `json:"latency_ms"`
}

func typeSummary(t *TypeInterval, secs float64) TypeSummary {
	s := TypeSummary{
		Transactions: t.OK,
		Statements:   t.Statements,
		Errors:       t.ErrorTotal(),
		Failed:       t.Failed,
		Retries:      t.Retries,
		Late:         t.Late,
		Dropped:      t.Dropped,
		Latency:      LatencyOf(t.Latency),
	}
	if secs > 0 {
		s.TPS = round2(float64(t.OK) / secs)
		s.QPS = round2(float64(t.Statements) / secs)
	}
	for i, v := range t.Errors {
		if v > 0 && target.Class(i) != target.ClassCanceled {
			if s.ErrorsBy == nil {
				s.ErrorsBy = map[string]int64{}
			}
			s.ErrorsBy[target.Class(i).String()] = v
		}
	}
	if t.Service != nil && t.Service.TotalCount() > 0 {
		l := LatencyOf(t.Service)
		s.Service = &l
	}
	return s
}

// Totals accumulates the measured (non warm-up) intervals of a run as they arrive, in
// constant memory.
type Totals struct {
	acc  *Interval
	secs float64
	n    int
}

// NewTotals returns empty totals for the named transaction types.
func NewTotals(types []string) *Totals { return &Totals{acc: NewInterval(0, types)} }

// Add adds iv unless it is warm-up.
func (t *Totals) Add(iv *Interval) {
	if iv.Warmup {
		return
	}
	t.acc.Add(iv)
	t.secs += iv.Seconds()
	t.n++
}

// Summary returns the totals so far. The identity fields (RunID, Status …) are left to
// the caller.
func (t *Totals) Summary() Summary {
	all := t.acc.Total()
	s := Summary{Seconds: round3(t.secs), Intervals: t.n, Reconnects: t.acc.Reconnects, TypeSummary: typeSummary(&all, t.secs), ByTxn: map[string]TypeSummary{}}
	s.ErrorRate = errorRate(s.Transactions, s.Failed)
	groups := map[string]*TypeInterval{}
	var order []string
	for i := range t.acc.Types {
		ti := &t.acc.Types[i]
		s.ByTxn[ti.Name] = typeSummary(ti, t.secs)
		if g, _, ok := strings.Cut(ti.Name, "/"); ok {
			gi := groups[g]
			if gi == nil {
				gi = &TypeInterval{Name: g, Latency: NewHistogram()}
				groups[g] = gi
				order = append(order, g)
			}
			gi.Counts.Add(&ti.Counts)
			mergeInto(&gi.Latency, ti.Latency)
			mergeInto(&gi.Service, ti.Service)
		}
	}
	for _, g := range order {
		if s.ByGroup == nil {
			s.ByGroup = map[string]TypeSummary{}
		}
		s.ByGroup[g] = typeSummary(groups[g], t.secs)
	}
	s.NOPM, s.TPM = PerMinute(t.acc, t.secs)
	return s
}

// newOrderType is the name of TPC-C's New-Order transaction type (the tpcc
// workload's): a run that has it gets NOPM and TPM.
const newOrderType = "new-order"

// PerMinute returns NOPM and TPM of iv over secs seconds: transactions of type
// NewOrderType, and of every type, that succeeded, per minute, rounded to whole
// transactions.
// Both are 0 when iv has no NewOrderType.
func PerMinute(iv *Interval, secs float64) (nopm, tpm float64) {
	if secs <= 0 {
		return 0, 0
	}
	found := false
	var all int64
	for i := range iv.Types {
		if iv.Types[i].Name == newOrderType {
			found = true
			nopm = math.Round(float64(iv.Types[i].OK) * 60 / secs)
		}
		all += iv.Types[i].OK
	}
	if !found {
		return 0, 0
	}
	return nopm, math.Round(float64(all) * 60 / secs)
}

// Judged is the summary of what a run is judged by: a client group ("writers"), a
// transaction type, or every transaction (""); ok is false when the run has no such
// group or type.
func (s *Summary) Judged(judge string) (TypeSummary, bool) {
	if judge == "" {
		return s.TypeSummary, true
	}
	if g, ok := s.ByGroup[judge]; ok {
		return g, true
	}
	t, ok := s.ByTxn[judge]
	return t, ok
}

// Summarize totals the intervals that are not warm-up.
func Summarize(types []string, ivs []*Interval) Summary {
	t := NewTotals(types)
	for _, iv := range ivs {
		t.Add(iv)
	}
	return t.Summary()
}

// errorRate is failed transactions in percent of ok+failed, to 3 decimals (0 when
// none ended).
func errorRate(ok, failed int64) float64 {
	if ok+failed == 0 {
		return 0
	}
	return round3(100 * float64(failed) / float64(ok+failed))
}
