package serve

import (
	"os"
	"strings"
	"testing"
)

// The experiment page's cell table counts the errors of all of a cell's runs, where the
// static report's cell table gives the median error rate: the header says which (the
// held-out rerun showed "errors 18" on the page and "errors 0.602%" in the report for
// the same cell).
func TestExperimentCellsErrorsHeader(t *testing.T) {
	js, err := os.ReadFile("ui/app.js")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(js), `el("table", { id: "cells" }`)
	if i < 0 {
		t.Fatal("no cell table in app.js")
	}
	head := string(js[i : i+strings.Index(string(js[i:]), "\n")])
	if !strings.Contains(head, `"errors (all runs)"`) {
		t.Errorf("the cell table's errors column does not say it counts all runs: %s", head)
	}
}
