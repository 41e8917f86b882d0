package plan

import "github.com/fathom-lab/fathom/internal/yamlfile"

// Problem, Error and the collector of problems are shared with the other files fathom
// reads (package yamlfile).
type (
	problem  = yamlfile.Problem
	Error    = yamlfile.Error
	problems = yamlfile.List
)
