package expreport

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"html"
	"slices"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Markdown renders the table's rows as a Markdown table (tablewriter, as package report does).
func (t Table) Markdown() (string, error) {
	var buf bytes.Buffer
	tb := tablewriter.NewTable(&buf, tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off))
	tb.Header(mdCells(t.Header)...)
	for _, r := range t.Rows {
		if err := tb.Append(mdCells(r)...); err != nil {
			return "", err
		}
	}
	if err := tb.Render(); err != nil {
		return "", err
	}
	return strings.TrimRight(buf.String(), "\n") + "\n", nil
}

// mdCells escapes the pipes that would end a cell early, and keeps empty cells' columns.
func mdCells(row []string) []any {
	out := make([]any, len(row))
	for i, c := range row {
		out[i] = strings.ReplaceAll(oneLine(c), "|", `\|`)
	}
	return out
}

// CSV renders the table as CSV: a header line, then the rows. It stays ASCII: "±" is written
// "+/-".
func (t Table) CSV() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	ascii := func(r []string) []string {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = strings.ReplaceAll(c, "±", "+/-")
		}
		return out
	}
	if err := w.Write(ascii(t.Header)); err != nil {
		return nil, err
	}
	for _, r := range t.Rows {
		if err := w.Write(ascii(r)); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// headerItems are the report's opening facts, as label and text (code marks a flag list).
type headerItem struct {
	label, text string
	code        bool
}

func (r *Report) headerItems() []headerItem {
	s := r.Spec
	var arms []string
	for _, a := range s.Arms {
		t := a.Name
		if a.About != "" {
			t += " (" + a.About + ")"
		}
		if len(a.Tasks) > 0 {
			t += " on " + strings.Join(a.Tasks, ", ")
		}
		arms = append(arms, t)
	}
	var seeds []string
	for _, sd := range r.Seeds {
		seeds = append(seeds, fmt.Sprint(sd))
	}
	noData := "none"
	if len(r.NoData) > 0 {
		noData = strings.Join(r.NoData, ", ")
	}
	var status []string
	for _, st := range append([]string{"done"}, statusOrder...) {
		if r.Status[st] > 0 {
			status = append(status, fmt.Sprintf("%d %s", r.Status[st], st))
		}
	}
	for _, st := range sortedKeys(r.Status) {
		if st != "done" && !slices.Contains(statusOrder, st) {
			status = append(status, fmt.Sprintf("%d %s", r.Status[st], st))
		}
	}
	items := []headerItem{
		{"Tasks", fmt.Sprintf("%d: %s", len(r.Tasks), strings.Join(r.Tasks, ", ")), false},
		{"Tasks without data", noData, false},
		{"Arms", strings.Join(arms, "; "), false},
		{"Seeds", strings.Join(seeds, ", "), false},
		{"Budget (settings of every cell)", s.Run.String(), true},
	}
	if len(r.TaskSettings) > 0 {
		var ts []string
		for _, task := range sortedKeys(r.TaskSettings) {
			ts = append(ts, task+": "+r.TaskSettings[task])
		}
		items = append(items, headerItem{"Task settings (each task spec's run: section, under the experiment's)", strings.Join(ts, "; "), false})
	}
	if s.PassRule.Arm != "" {
		items = append(items, headerItem{"Pass rule (fixed before the runs)", ruleText(s.PassRule, len(r.Seeds)), false})
	}
	items = append(items, headerItem{"Cells", strings.Join(status, ", "), false})
	if r.Sandbox != "" {
		items = append(items, headerItem{"Sandbox", r.Sandbox, false})
	}
	if r.Machine != "" {
		items = append(items, headerItem{"Machine", r.Machine, false})
	}
	return items
}

// Markdown renders report.md: the header, the protocol, every table and the figures as image
// links (to the PNGs beside it).
func (r *Report) Markdown() (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Experiment report: %s\n\n", r.Spec.Name)
	if r.Spec.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", r.Spec.Description)
	}
	for _, it := range r.headerItems() {
		text := it.text
		if it.code && text != "" {
			text = "`" + text + "`"
		}
		fmt.Fprintf(&b, "- **%s**: %s\n", it.label, text)
	}
	fmt.Fprintf(&b, "\n## Protocol\n\n%s\n", Protocol)
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "\n## %s\n\n", t.Title)
		if t.Skip != "" {
			fmt.Fprintf(&b, "Skipped: %s.\n", t.Skip)
			continue
		}
		md, err := t.Markdown()
		if err != nil {
			return "", fmt.Errorf("table %s: %w", t.Name, err)
		}
		fmt.Fprintf(&b, "%s\n\n%s\n[%s.csv](%s.csv)\n", t.Caption, md, t.Name, t.Name)
	}
	b.WriteString("\n## Figures\n")
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "\n### %s\n\n", f.Title)
		if f.Skip != "" {
			fmt.Fprintf(&b, "Skipped: %s.\n", f.Skip)
			continue
		}
		fmt.Fprintf(&b, "![%s](%s.png)\n\n%s\n", f.Title, f.Name, f.Caption)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String(), nil
}

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1.1em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
td{white-space:nowrap}td.long{white-space:normal;min-width:16em}
th{background:#f2f2f2}tr:nth-child(even) td{background:#fafafa}
td.pass{color:#075;font-weight:bold}td.fail{color:#a20;font-weight:bold}
.caption{color:#444;font-size:.9em;max-width:70em}.skip{color:#a20}
img{max-width:100%;height:auto;border:1px solid #eee}code{background:#f4f4f4;padding:0 .2em}`

const checkScript = `window.addEventListener("load", function () {
  var broken = [];
  document.querySelectorAll("img").forEach(function (im) {
    if (!(im.complete && im.naturalWidth > 0)) { broken.push(im.id || im.alt); }
  });
  document.body.dataset.rendered = broken.length ? "broken: " + broken.join(" ") : "ok";
});`

// HTML renders index.html: one self-contained page with the same content as report.md, the
// figures embedded from pngs (by figure name) as data: URIs.
func (r *Report) HTML(pngs map[string][]byte) string {
	var b strings.Builder
	e := html.EscapeString
	title := "Experiment report: " + r.Spec.Name
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", e(title), css)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", e(title))
	if r.Spec.Description != "" {
		fmt.Fprintf(&b, "<p>%s</p>\n", e(r.Spec.Description))
	}
	b.WriteString("<ul>\n")
	for _, it := range r.headerItems() {
		text := e(it.text)
		if it.code && text != "" {
			text = "<code>" + text + "</code>"
		}
		fmt.Fprintf(&b, "<li><strong>%s</strong>: %s</li>\n", e(it.label), text)
	}
	b.WriteString("</ul>\n")
	fmt.Fprintf(&b, "<h2 id=\"protocol\">Protocol</h2>\n<p>%s</p>\n", e(Protocol))
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", e(t.Title))
		if t.Skip != "" {
			fmt.Fprintf(&b, "<p class=\"skip\" id=\"skip-table-%s\">Skipped: %s.</p>\n", e(t.Name), e(t.Skip))
			continue
		}
		fmt.Fprintf(&b, "<p class=\"caption\">%s</p>\n<table id=\"table-%s\">\n<thead><tr>", e(t.Caption), e(t.Name))
		for _, h := range t.Header {
			fmt.Fprintf(&b, "<th>%s</th>", e(h))
		}
		b.WriteString("</tr></thead>\n<tbody>\n")
		for _, row := range t.Rows {
			b.WriteString("<tr>")
			for _, c := range row {
				class := ""
				switch {
				case c == "PASS":
					class = ` class="pass"`
				case c == "FAIL":
					class = ` class="fail"`
				case len(c) > 40:
					class = ` class="long"`
				}
				fmt.Fprintf(&b, "<td%s>%s</td>", class, e(c))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	b.WriteString("<h2>Figures</h2>\n")
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "<h3>%s</h3>\n", e(f.Title))
		png, ok := pngs[f.Name]
		if f.Skip != "" || !ok {
			why := f.Skip
			if why == "" {
				why = "not drawn"
			}
			fmt.Fprintf(&b, "<p class=\"skip\" id=\"skip-fig-%s\">Skipped: %s.</p>\n", e(f.Name), e(why))
			continue
		}
		fmt.Fprintf(&b, "<figure>\n<img id=\"fig-%s\" alt=\"%s\" src=\"data:image/png;base64,%s\">\n<figcaption class=\"caption\">%s</figcaption>\n</figure>\n",
			e(f.Name), e(f.Title), base64.StdEncoding.EncodeToString(png), e(f.Caption))
	}
	if len(r.Notes) > 0 {
		b.WriteString("<h2>Notes</h2>\n<ul>\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "<li>%s</li>\n", e(n))
		}
		b.WriteString("</ul>\n")
	}
	fmt.Fprintf(&b, "<script>\n%s\n</script>\n</body>\n</html>\n", checkScript)
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
