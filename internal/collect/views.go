package collect

// Views of the vocabulary that a database kind's bundle declares for its metrics
// (internal/db/KIND): the charts a report draws by default and the columns of the
// live view. The host's own are kept by their consumers (report, run).

// Chart is a default chart of a report's "server and OS metrics" section: metrics of
// one unit and one collector, named exactly or by prefix ("pg.sessions.*").
type Chart struct {
	Title   string
	Metrics []string
}

// WatchColumn is one figure of `fathom watch`'s live view: the sum of some metrics'
// charted values. Unit is how it is shown: "" a number, "bytes", "MB", "events"
// (yes or -), "first%" (the first metric present, as a percentage).
type WatchColumn struct {
	Head    string
	Metrics []string
	Unit    string
}

// Figures is what reports show of one database kind's server metrics: its default
// charts (before the host's) and its key metrics followed by the host's (KeyMetrics).
// Reports take it as data, by kind name, so that they need no kind's code.
type Figures struct {
	Charts     []Chart
	KeyMetrics []string
}
