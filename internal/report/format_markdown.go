package report

import "io"

// markdownFormat is for pasting into a pull request, an issue or a wiki.
var markdownFormat = Format{
	Name: "markdown", Aliases: []string{"md"}, MediaType: "text/markdown; charset=utf-8", Ext: ".md",
	Render: map[Kind]Renderer{
		KindComparison: plain(func(w io.Writer, c *comparison) error { return c.writeMarkdown(w, "##") }),
		kindReport:     method((*Report).writeMarkdown),
	},
}
