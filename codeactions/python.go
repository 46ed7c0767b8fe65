package codeactions

import (
	"embed"
	"fmt"
	"strings"
	"text/template"
)

// Each library's Python lives in templates/<file>.py.tmpl, so it reads, lints and diffs as
// Python; the Go side chooses options and passes them in. A template receives a pyData: the
// checked choice (.C.Opt "slot", .C.Is "slot" "option" ...), the task's schema (.S) and any
// values the library computes (.V).
//
//go:embed templates/*.py.tmpl
var templateFS embed.FS

// pyFuncs are the helpers templates share.
var pyFuncs = template.FuncMap{
	// py quotes a string as a Python literal (Go's %q agrees with Python for the ASCII names
	// and paths programs use).
	"py": func(s string) string { return fmt.Sprintf("%q", s) },
	// pylist writes a list of strings as a Python list literal.
	"pylist": func(ss []string) string {
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	},
	// table is the pandas call that loads one of the task's files (readTable).
	"table": readTable,
	// printf is text/template's own; join and has help with lists.
	"join": strings.Join,
	"has": func(ss []string, s string) bool {
		for _, x := range ss {
			if x == s {
				return true
			}
		}
		return false
	},
}

// pyTemplates holds every library's parsed templates; a template that does not parse is a
// build defect, caught by every test of the package.
var pyTemplates = template.Must(template.New("").Funcs(pyFuncs).ParseFS(templateFS, "templates/*.py.tmpl"))

// pyData is what a program template sees.
type pyData struct {
	C Choice
	S Schema
	V map[string]any
}

// python renders the named template (its file name, e.g. "tabular.py.tmpl") for a choice. A
// template that fails to execute is a bug in the library, so it panics with the template's
// error, which names the file and line.
func python(name string, c Choice, s Schema, v map[string]any) string {
	var b strings.Builder
	if err := pyTemplates.ExecuteTemplate(&b, name, pyData{C: c, S: s, V: v}); err != nil {
		panic("codeactions: rendering " + name + ": " + err.Error())
	}
	return b.String()
}

// snippet renders a shared named template (templates/shared.py.tmpl) with data.
func snippet(name string, data any) string {
	var b strings.Builder
	if err := pyTemplates.ExecuteTemplate(&b, name, data); err != nil {
		panic("codeactions: rendering " + name + ": " + err.Error())
	}
	return b.String()
}

// Load is the loading step shared by the libraries (loadTables) for a template, without its
// final newline: {{.S.Load "input"}}.
func (s Schema) Load(how string) string {
	var b code
	loadTables(&b, how, s)
	return strings.TrimSuffix(b.String(), "\n")
}
