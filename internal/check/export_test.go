package check

import "github.com/fathom-lab/fathom/internal/target"

// Internals the external tests (which get each kind's dialect through internal/db)
// read.
var FileName = fileName

type StateFile = stateFile

const KeepSamples = keepSamples

// RunnerServer is the server key a runner's state and cache files are named by.
func RunnerServer(r *Runner) string { return r.server }

// RunnerConn is a runner's connection (nil when closed).
func RunnerConn(r *Runner) target.Conn { return r.conn }
