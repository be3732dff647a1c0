package chart

import (
	"html/template"
	"io"
)

// Fact is one name/value line of a page's summary.
type Fact struct{ Name, Value string }

// Table is a plain table under the charts.
type Table struct {
	Title string
	Head  []string
	Rows  [][]string
}

// Page is one self-contained HTML report.
type Page struct {
	Title  string
	Facts  []Fact
	Charts []Chart
	Tables []Table
	Notes  []string // paragraphs at the end
}

// Write writes the page as one HTML document. Every string is escaped by
// html/template.
func (p *Page) Write(w io.Writer) error {
	views := make([]svgView, len(p.Charts))
	for i, c := range p.Charts {
		views[i] = c.view()
	}
	return pageTemplate.Execute(w, struct {
		*Page
		Views []svgView
	}{p, views})
}

// pageTemplate draws the page. The style is inline and the CSP forbids
// every fetch; the SVG carries its own sizes (viewBox) and scales to the
// page width.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 800px; padding: 0 1em; color: #222; background: #fff; }
h1 { font-size: 1.3em; word-break: break-all; }
table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; }
td, th { padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
th { border-bottom: 1px solid #999; }
table.facts td:first-child { color: #555; white-space: nowrap; }
table.facts td { word-break: break-word; }
div.wide { overflow-x: auto; }
div.wide td, div.wide th { white-space: nowrap; }
svg.chart { width: 100%; height: auto; margin: 1em 0; }
svg .grid { stroke: #e4e4e4; stroke-width: 1; }
svg .axis { stroke: #555; stroke-width: 1; }
svg .ref { stroke: #d55e00; stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .tick { font-size: 11px; fill: #333; }
svg .label { font-size: 12px; fill: #333; }
svg .title { font-size: 14px; font-weight: 600; fill: #222; }
svg polyline { fill: none; stroke-width: 2; stroke-linejoin: round; }
p.note { color: #444; font-size: 13px; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{with .Facts}}<table class="facts">
{{range .}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>
{{end}}</table>{{end}}
{{range .Views}}<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{.W}} {{.H}}" width="{{.W}}" height="{{.H}}" role="img">
<title>{{.Title}}</title>
{{range .Lines}}<line class="{{.Class}}" x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}"/>
{{end}}{{range .Rects}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Color}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Polys}}<polyline class="series" stroke="{{.Color}}" points="{{.Points}}"><title>{{.Name}}</title></polyline>
{{end}}{{range .Legend}}<rect x="{{.X}}" y="{{.Y}}" width="10" height="10" fill="{{.Color}}"/><text class="tick" x="{{.X}}" y="{{.Y}}" dx="14" dy="9">{{.Name}}</text>
{{end}}{{range .Texts}}<text class="{{.Class}}" x="{{.X}}" y="{{.Y}}" text-anchor="{{.Anchor}}"{{if .Rotate}} transform="rotate(-90 {{.X}} {{.Y}})"{{end}}>{{.Text}}</text>
{{end}}</svg>
{{end}}{{range .Tables}}{{if .Title}}<h2>{{.Title}}</h2>{{end}}<div class="wide"><table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>
{{end}}{{range .Notes}}<p class="note">{{.}}</p>
{{end}}</body>
</html>
`))
