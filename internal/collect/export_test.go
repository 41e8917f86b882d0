package collect

import (
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// What the external tests (kinds_test.go, which see every kind through internal/db)
// read of this package's internals.
var (
	SourceCollectors = sourceCollectors
	HostKeyMetrics   = hostKeyMetrics
)

// DeclaredCollectors lists the host's collectors that metrics are declared for here
// (a kind's collectors carry their declarations).
func DeclaredCollectors() []string {
	var out []string
	for n := range hostDeclared {
		out = append(out, n)
	}
	return out
}

// More internals the external tests read or set.
var (
	HostFactsOf = hostFacts
	OpenProcfs  = openProcfs
)

// SetServer sets what a sampler learnt about its server.
func SetServer(s *Sampler, srv *sample.Server) { s.srv = srv }

// SamplerConn is a sampler's own connection.
func SamplerConn(s *Sampler) target.Conn { return s.conn }
