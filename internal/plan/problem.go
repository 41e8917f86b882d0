package plan

import "github.com/fathom-lab/fathom/internal/problem"

// Problem, Error and the collector of problems are shared with the other files fathom
// reads (package problem).
type (
	Problem  = problem.Problem
	Error    = problem.Error
	problems = problem.List
)
