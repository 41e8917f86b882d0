package target

import (
	"context"
	"fmt"
)

// Pipeliner is an optional ability of a Conn: PostgreSQL's pipeline mode, in which
// statements are sent without waiting for the results of the ones before them, so that
// a batch of them costs one round trip.
type Pipeliner interface {
	// StartPipeline puts the connection in pipeline mode until the Pipeline's End;
	// nothing else may be called on the Conn meanwhile.
	StartPipeline(ctx context.Context) (Pipeline, error)
}

// Pipeline is a connection in pipeline mode. Send and Sync only queue: everything goes
// to the server in one write at End.
type Pipeline interface {
	// Send queues one execution of st (prepared on the same Conn) with args, which
	// are copied.
	Send(st Stmt, args []Value) error
	// Sync queues a synchronisation point: it ends the implicit transaction of the
	// statements before it, and the server resumes there after an error.
	Sync()
	// End queues a last synchronisation point, sends what is queued, reads every
	// result and leaves pipeline mode. It returns how many statements the server ran
	// (a failed one included) and the first statement's error as a *PipelineError;
	// an error that is not a statement's (the connection) is returned as it is.
	End(ctx context.Context) (ran int, err error)
	// Abandon leaves pipeline mode without sending what is queued: the connection is
	// closed, so that none of it runs.
	Abandon()
}

// PipelineError is the first statement of a pipeline that failed.
type PipelineError struct {
	Index   int   // its place among the statements sent, from 0
	Skipped int   // the statements after it, up to the next sync point, that the server did not run
	Failed  int   // statements that failed in all (later sync points' included)
	Err     error // its error, a *Error with its class
}

func (e *PipelineError) Error() string {
	return fmt.Sprintf("statement %d of the pipeline: %v (%d after it skipped)", e.Index+1, e.Err, e.Skipped)
}

func (e *PipelineError) Unwrap() error { return e.Err }
