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
