package plan

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	tmpl, err := ParseTemplate("prompt", `Ticket {{.id}}: {{json .labels}}`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, map[string]any{"id": json.Number("7"), "labels": []any{"bug", "ui"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `Ticket 7: ["bug","ui"]`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := ParseTemplate("prompt", `{{nosuchfunc .x}}`); err == nil {
		t.Error("a template calling an undefined function parsed")
	}
}

// TestTemplateDepartures: the two places the language departs from
// text/template over the same data. JSON numbers have no methods, and
// slice stops at an array's length even where its capacity goes on.
func TestTemplateDepartures(t *testing.T) {
	xs := make([]any, 3, 8)
	xs[0], xs[1], xs[2] = "a", "b", "c"
	data := map[string]any{"n": json.Number("42"), "xs": xs}
	for _, text := range []string{`{{.n.String}}`, `{{slice .xs 0 4}}`, `{{slice .xs 4}}`} {
		tmpl, err := ParseTemplate("t", text)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := tmpl.Execute(&b, data); err == nil {
			t.Errorf("%s rendered %q; want an error", text, b.String())
		}
	}
	tmpl, err := ParseTemplate("t", `{{slice .xs 1 3}}`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil || b.String() != "[b c]" {
		t.Errorf("slice .xs 1 3: %q, %v", b.String(), err)
	}
}

// TestTemplateErrorForm: a failure while rendering is placed as
// text/template places it, file position and node; a template with nothing
// parsed fails with its name alone.
func TestTemplateErrorForm(t *testing.T) {
	tmpl, err := ParseTemplate("t", "x\n  {{.a.b}}")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	err = tmpl.Execute(&b, map[string]any{"a": json.Number("1")})
	if want := `template: t:2:6: executing "t" at <.a.b>: `; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want one starting %q", err, want)
	}
	err = (&Template{name: "empty"}).Execute(&b, nil)
	if want := `template: empty: "empty" is an incomplete or empty template`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestTemplateNamesProblems: where text/template reports a panic of
// package reflect (an index past the end, len of a missing value),
// ParseTemplate names the problem.
func TestTemplateNamesProblems(t *testing.T) {
	data := map[string]any{"xs": []any{json.Number("1"), json.Number("2"), json.Number("3")}, "ea": []any{}}
	for _, tt := range []struct{ text, want string }{
		{`{{index .xs 3}}`, `template: t:1:2: executing "t" at <index .xs 3>: error calling index: index out of range: 3`},
		{`{{index .ea 0}}`, `template: t:1:2: executing "t" at <index .ea 0>: error calling index: index out of range: 0`},
		{`{{len .missing}}`, `template: t:1:2: executing "t" at <len .missing>: error calling len: len of no value`},
	} {
		tmpl, err := ParseTemplate("t", tt.text)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := tmpl.Execute(&b, data); err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %s", tt.text, err, tt.want)
		}
	}
}
