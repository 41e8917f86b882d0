package spec

import "github.com/fathom-lab/fathom/internal/yamlfile"

// Error and the collector of problems are shared with the other files fathom reads
// (package yamlfile).
type (
	Error    = yamlfile.Error
	problems = yamlfile.List
)
