package report

import "io"

// csvFormat is for spreadsheets and scripts: one row per interval, command or metric,
// in base units (tx/s, ms, %).
var csvFormat = Format{
	Name: "csv", MediaType: "text/csv; charset=utf-8", Ext: ".csv",
	Render: map[Kind]Renderer{
		KindIntervals: plain(func(w io.Writer, v *runView) error { return writeIntervalsCSV(w, intervalRows(v.Run, v.Intervals)) }),
		KindCommands:  plain(func(w io.Writer, v *runView) error { return writeCommands(w, v.Run, v.Summary, "csv") }),
		KindComparison: plain(func(w io.Writer, c *comparison) error {
			return writeCompareCSV(w, []*comparison{c})
		}),
	},
}
