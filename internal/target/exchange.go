package target

// Exchanger is an optional ability of a Stmt whose execution is one request written
// to its connection's socket and one reply read from it, nothing else on the wire in
// between (a prepared statement outside an explicit transaction). A runner can then
// drive many connections from one thread, each statement a small state machine on a
// non-blocking socket, instead of a thread blocked in a read per connection.
//
// The Stmt's Conn must not be used by anything else while the runner does so; its
// other methods (Close, Prepare after a reconnect) work as before once it stops.
type Exchanger interface {
	// Socket returns the descriptor of the statement's connection, ready for direct
	// reads and writes (nothing buffered, no background reader), or false if the
	// connection cannot be driven this way.
	Socket() (fd int, ok bool)
	// AppendRequest appends to dst the bytes that run the statement with args.
	AppendRequest(dst []byte, args []Value) ([]byte, error)
	// ParseReply consumes the reply from src, what has arrived so far, and returns
	// how many bytes it used. done is true once the reply is complete; err is then
	// the statement's error (a *Error), if it failed. A malformed reply is an error
	// of ClassConnection with done true.
	ParseReply(src []byte) (used int, done bool, err error)
	// Lost marks the connection dead after err, a failure of its socket seen by the
	// caller, and returns it as a *Error of ClassConnection.
	Lost(err error) error
}

// Exchanging is an optional ability of a Target: whether the statements it prepares
// are Exchangers whose socket can be used (Socket), as far as its configuration says
// before any connection is made.
type Exchanging interface {
	Exchanges() bool
}

// QueryExchanging is an optional ability of a Conn: a statement's text sent as one
// request whose reply is read as it arrives, as a prepared statement's Exchanger is
// (ok false when the connection cannot, or not for this text). Rows are skipped, not
// kept: for callers that never read them. The Exchanger is valid until the next call.
type QueryExchanging interface {
	QueryExchanger(sql string) (x Exchanger, ok bool)
}

// Batched is an optional ability of an Exchanger whose request holds several
// statements (a Redis pipeline): Statements is how many the next request holds, what
// a runner counts as statements for each try.
type Batched interface {
	Statements() int
}
