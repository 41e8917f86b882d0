package report

// htmlFormat is the self-contained page of `fathom report` (index.html), and a
// series' history as a page of its own (`fathom history SERIES -f html`).
var htmlFormat = Format{
	Name: "html", MediaType: "text/html; charset=utf-8", Ext: ".html",
	Render: map[Kind]Renderer{
		kindReport:  method((*Report).writeHTML),
		KindHistory: method((*History).writeHTMLFile),
	},
}
