package store

import (
	"encoding/json"
	"time"
)

// Host describes the machine a run was driven from.
type Host struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel,omitempty"`
	CPUModel    string `json:"cpu_model,omitempty"`
	CPUs        int    `json:"cpus"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
	// Sockets is how fathom's connections read their sockets: "blocking" (system
	// calls, Linux), "poller" (Go's network poller: other systems, FATHOM_PORTABLE=1)
	// or "mixed: …"; empty for SQLite and runs recorded before it was kept.
	Sockets string `json:"sockets,omitempty"`
	// Transport is how fathom's connections reached the server: "tcp", "unix"
	// (a Unix-domain socket), either with "+tls" when encrypted, or "mixed: …"
	// (target.Transporter); empty for SQLite and runs recorded before it was kept.
	Transport string `json:"transport,omitempty"`
	// OSMetrics is where OS metrics came from: "procfs" (Linux's /proc) or
	// "unsupported" (other systems, FATHOM_PORTABLE=1); empty before it was kept.
	OSMetrics string `json:"os_metrics,omitempty"`
	// Runtime is how fathom set up the Go runtime for the run's clients.
	Runtime string `json:"runtime,omitempty"`
}

// Run is one stored run and its provenance.
type Run struct {
	ID            int64             `json:"id"`
	UUID          string            `json:"uuid"`
	ToolVersion   string            `json:"tool_version"`
	Command       string            `json:"command"`
	Workload      string            `json:"workload"`
	Options       map[string]string `json:"options"`
	Seed          uint64            `json:"seed"`
	TargetKind    string            `json:"target_kind"`
	Target        string            `json:"target"`
	ServerVersion string            `json:"server_version"`
	Settings      map[string]string `json:"settings"`
	Host          Host              `json:"host"`
	Labels        map[string]string `json:"labels"`
	Clients       int               `json:"clients"`
	Rate          float64           `json:"rate"`
	Duration      time.Duration     `json:"duration_ns"`
	Transactions  int64             `json:"transactions"`
	Warmup        time.Duration     `json:"warmup_ns"`
	Interval      time.Duration     `json:"interval_ns"`
	TxnTypes      []string          `json:"txn_types"`
	StartedAt     time.Time         `json:"started_at"`
	EndedAt       time.Time         `json:"ended_at"`
	Status        string            `json:"status"`
	Reason        string            `json:"reason,omitempty"`
	Summary       json.RawMessage   `json:"summary,omitempty"`
	// QueryMode (prepared or simple), MaxTries and LatencyLimit (open loop, -L) are
	// empty or 0 for runs recorded before they were kept.
	QueryMode    string        `json:"query_mode,omitempty"`
	MaxTries     int           `json:"max_tries,omitempty"`
	LatencyLimit time.Duration `json:"latency_limit_ns,omitempty"`
	// Warnings are one-line notes about the run's conditions (e.g. an unfinished
	// prepare of its tables), stored with it when it starts.
	Warnings []string `json:"warnings,omitempty"`
	// PID is the process writing the run, on Host.Hostname.
	PID int `json:"pid,omitempty"`
	// Gone is set by reads when the run was left "running" by a process that no longer
	// exists: Status then reads interrupted and Reason ProcessGone.
	Gone bool `json:"process_gone,omitempty"`
}

// RunFilter selects runs.
type RunFilter struct {
	Limit    int // 0 = all
	Labels   map[string]string
	Workload string
	Status   string
}
