package target

import "context"

// Batch is a reusable list of commands sent in one round trip, for a kind whose
// connections take commands rather than SQL (Redis). Build each command with Cmd,
// then its arguments, then End; bytes given to Bytes must stay unchanged until Reset.
// Building one allocates nothing once its buffers have grown.
type Batch interface {
	// Reset empties the batch.
	Reset()
	// Len is the number of commands in the batch.
	Len() int
	// Cmd starts a command (upper case: no allocation then).
	Cmd(name string) Batch
	// Arg adds a string argument; Bytes one without copying it; Int an integer;
	// Concat one made of prefix and n ("fathom:kv:42").
	Arg(s string) Batch
	Bytes(p []byte) Batch
	Int(n int64) Batch
	Concat(prefix string, n int64) Batch
	// End finishes the command started with Cmd.
	End()
}

// Batcher is a Conn that sends Batches (found by type assertion): what key-value
// workloads need of a kind, so that they never name the kind's own types.
type Batcher interface {
	// NewBatch returns an empty batch for this connection's commands.
	NewBatch() Batch
	// Send sends the batch's commands in one round trip and returns the first error
	// reply or failure (a nil reply is no error); the batch is empty afterwards.
	Send(ctx context.Context, b Batch) error
	// SendKeep is Send that keeps the batch, to send it again (a retry).
	SendKeep(ctx context.Context, b Batch) error
	// SendEach sends a batch of one command whose reply is an array and calls f with
	// each element's text; the batch is kept.
	SendEach(ctx context.Context, b Batch, f func(string)) error
	// Exchange is b as a statement the runner may multiplex (an Exchanger).
	Exchange(b Batch) Stmt
}
