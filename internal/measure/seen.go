package measure

// SeenError is one distinct error a run met: distinct by class, code and message. A run
// keeps the first few (KeptErrors) in the order they first happened, each with how
// often it happened; the rest are only counted (Summary.ErrorsUnlisted). Messages come
// from the targets, which mask passwords.
type SeenError struct {
	Class   string `json:"class"`          // serialization, constraint, other …
	Code    string `json:"code,omitempty"` // SQLSTATE, errno or SQLite result code
	Message string `json:"message"`
	// Txn is the transaction type (a pgbench script's name) that first met it, Where
	// the statement or script line when the workload knows it.
	Txn   string `json:"transaction,omitempty"`
	Where string `json:"where,omitempty"`
	// Client is the client that first met it, AtNs when (nanoseconds from the run's
	// start, the origin of its intervals).
	Client int   `json:"client"`
	AtNs   int64 `json:"at_ns"`
	// Count is how often it happened in the measured intervals, the same occurrences
	// the summary's errors count (every failed attempt, retried or not); Warmup how
	// often during the warm-up.
	Count  int64 `json:"count"`
	Warmup int64 `json:"warmup_count,omitempty"`
	// Aborted: it stopped the client that met it (workload.AbortError), as pgbench
	// aborts a client.
	Aborted bool `json:"aborted,omitempty"`
}

// KeptErrors is how many distinct errors a run keeps.
const KeptErrors = 5

// Same reports whether e and o are the same error (class, code and message).
func (e *SeenError) Same(o *SeenError) bool {
	return e.Class == o.Class && e.Code == o.Code && e.Message == o.Message
}
