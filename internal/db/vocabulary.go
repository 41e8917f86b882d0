package db

import (
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/collect"
)

// Vocabulary is the metric declarations of the host's collectors and of every
// registered kind's.
func Vocabulary() (*collect.Vocabulary, error) { return collect.NewVocabulary(CollectAll()...) }

// Undeclared checks that what the kind named name refers to by metric name (its
// default report charts, watch columns, key metrics and stall vocabulary) names metrics its own or the
// host's collectors declare: a renamed metric fails here instead of silently emptying
// a chart. The error lists every undeclared reference; nil when all are declared (or
// there is no such kind).
func Undeclared(name string) error {
	k := registry[name]
	if k == nil {
		return nil
	}
	v, err := collect.NewVocabulary(CollectOf(name))
	if err != nil {
		return err
	}
	var bad []string
	ref := func(what, n string) {
		if !v.Declared(n) {
			bad = append(bad, fmt.Sprintf("%s: %s", what, n))
		}
	}
	for _, c := range ChartsOf(name) {
		for _, n := range c.Metrics {
			ref(fmt.Sprintf("chart %q", c.Title), n)
		}
	}
	for _, c := range WatchColumnsOf(name) {
		for _, n := range c.Metrics {
			ref(fmt.Sprintf("watch column %q", c.Head), n)
		}
	}
	for _, n := range collect.KeyMetrics(CollectOf(name)) {
		ref("key metric", n)
	}
	for _, n := range StallOf(name).Vocabulary.Names() {
		ref("stall vocabulary", n)
	}
	if len(bad) > 0 {
		return fmt.Errorf("kind %s refers to undeclared metrics: %s", name, strings.Join(bad, "; "))
	}
	return nil
}
