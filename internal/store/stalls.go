package store

import (
	"time"
)

// Stall is a stretch of intervals where throughput fell well below the run's rolling
// median, with what changed most unusually meanwhile and, where the pattern is known,
// its name and the settings that usually govern it. Package analyze finds them.
type Stall struct {
	Number int `json:"number"`
	// FirstInterval..LastInterval are the report intervals it covers; Start and End
	// are on the run's clock (the intervals' own bounds).
	FirstInterval int           `json:"first_interval"`
	LastInterval  int           `json:"last_interval"`
	Start         time.Duration `json:"start_ns"`
	End           time.Duration `json:"end_ns"`
	// Throughput is what was measured: "tps" (the client's transactions per second)
	// or a server rate for watch sessions ("pg.xact_commit", "mysql.Questions").
	Throughput string `json:"throughput"`
	// Baseline is the median throughput of the healthy intervals around the stall
	// (averaged over it), Mean and Min the
	// throughput during it; Depth = 1 - Mean/Baseline.
	Baseline float64 `json:"baseline"`
	Mean     float64 `json:"mean"`
	Min      float64 `json:"min"`
	Depth    float64 `json:"depth"`
	// Lost is the work not done against the baseline (transactions, or the server
	// rate's units).
	Lost float64 `json:"lost"`
	// Cause is the best matching known pattern's key ("server_unresponsive",
	// "restart", "lock_waits", "checkpoint", "innodb_checkpoint", "binlog_rotation",
	// "os_writeback", "autovacuum", "wal_flush", "client_host"), or "" when none
	// matches.
	Cause string `json:"cause,omitempty"`
	// Title names the cause in plain words; Explanation says what happened and why.
	Title       string `json:"title,omitempty"`
	Explanation string `json:"explanation,omitempty"`
	// Settings are the settings that usually govern the cause, with their values.
	Settings []StallSetting `json:"settings,omitempty"`
	// Causes are every pattern that matched, best first (Cause is the first).
	Causes []StallCause `json:"causes,omitempty"`
	// Evidence are the metrics that changed most unusually during the stall (against
	// the run's own baseline), most unusual first.
	Evidence []StallEvidence `json:"evidence"`
}

// StallSetting is a setting that governs a stall's cause.
type StallSetting struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"` // as recorded for the run; "" when unknown
	Hint  string `json:"hint,omitempty"`
}

// StallCause is one known pattern that matched a stall.
type StallCause struct {
	Key   string  `json:"key"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	// Metrics are the evidence metrics that made the pattern match.
	Metrics []string `json:"metrics"`
}

// StallEvidence is one metric's behaviour during a stall against the baseline.
type StallEvidence struct {
	Metric string `json:"metric"`
	Kind   string `json:"kind"` // counter (rates compared) or gauge
	Unit   string `json:"unit,omitempty"`
	// Baseline is the metric's median outside stalls; During its mean over the stall
	// (and the interval before it, where causes often begin).
	Baseline float64 `json:"baseline"`
	During   float64 `json:"during"`
	Peak     float64 `json:"peak"`
	// Score is the robust z-score (distance from the baseline median in MADs).
	Score float64 `json:"score"`
	// Reset: the metric's counter restarted during the stall.
	Reset bool `json:"reset,omitempty"`
}
