// Package store is fathom's results store as interfaces (RunStore, SampleStore,
// ExperimentStore, StallStore; Store has them all) and the records they keep: runs
// with their provenance and intervals, samples, experiments, stalls. store/sqlite
// implements them in a SQLite file; store/stores opens the one a --store value names.
// The store keeps what collect produced (package sample) and never imports collect.
package store

import "errors"

// ErrNotFound is wrapped by lookups of runs that do not exist.
var ErrNotFound = errors.New("not found")
