package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// chain is a template that calls the one before it twice, n deep: 2^n
// calls of the first, with no range.
func chain(n int, first string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{{define "t0"}}%s{{end}}`, first)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{{define "t%d"}}{{template "t%d"}}{{template "t%d"}}{{end}}`, i, i-1, i-1)
	}
	fmt.Fprintf(&b, `{{template "t%d"}}`, n)
	return b.String()
}

// TestTemplateBounded: a template that would render for hours, or hold
// gigabytes, fails within its bounds, naming the template and the bound.
func TestTemplateBounded(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	arr := make([]any, 1000)
	for i := range arr {
		arr[i] = json.Number("1")
	}
	data := map[string]any{"big": big, "arr": arr, "n": json.Number("3")}
	for _, tt := range []struct {
		name, text string
		max        int
		want       string
	}{
		{"range", `{{range 100000000000000}}{{end}}hi`, 0, "more than 10000000 steps"},
		{"range output", `{{range 100000000000}}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{end}}`, 0, "longer than 8388608 bytes"},
		{"define chain", chain(40, ""), 0, "more than 10000000 steps"},
		{"define chain output", chain(40, strings.Repeat("x", 64)), 0, "longer than 8388608 bytes"},
		{"output bound", `{{.big}}{{.big}}`, 1 << 20, "longer than 1048576 bytes"},
		{"printed value", `{{range 100}}{{$.arr}}{{end}}`, 1 << 10, "longer than 1024 bytes"},
		// A model's array of 1,000 members, nested three deep: 10^9
		// iterations.
		{"nested ranges", `{{range .arr}}{{range $.arr}}{{range $.arr}}{{end}}{{end}}{{end}}`, 0, "more than 10000000 steps"},
		{"doubling", `{{$x := .big}}{{range 40}}{{$x = print $x $x}}{{end}}{{len $x}}`, 0, "error calling print: its text could be longer"},
		{"printf repeats", `{{printf "` + strings.Repeat("%[1]v", 1000) + `" .big}}`, 0, "error calling printf: its text could be longer"},
		{"printf pads", `{{printf "%1000000v" .arr}}`, 0, "error calling printf: its text could be longer"},
		{"printf star", `{{printf "%*v" 1000000 .arr}}`, 0, "error calling printf: its text could be longer"},
		{"made in a loop", `{{range 1000}}{{$x := json $.big}}{{end}}`, 0, "error calling json: its text could be longer"},
		{"comparing", `{{range 10000000}}{{if eq $.big $.big}}{{end}}{{end}}`, 0, "more than 10000000 steps"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := ParseTemplate("prompt", tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if tt.max > 0 {
				tmpl = tmpl.Bounded(tt.max)
			}
			var w countingWriter
			start := time.Now()
			err = tmpl.Execute(&w, data)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "template: prompt") {
				t.Fatalf("error %v; want one naming the template and %q", err, tt.want)
			}
			if w.n > MaxTemplateOutput {
				t.Errorf("%d bytes written", w.n)
			}
			t.Logf("%v in %v", err, time.Since(start))
		})
	}
	// What a template needs within the bounds renders.
	tmpl, _ := ParseTemplate("prompt", `{{printf "%s %v %5.2f" .big .arr 1.5 | len}} {{json .big | len}} {{html .big | len}}`)
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil || b.String() != "1050584 1048578 1048576" {
		t.Errorf("%q, %v", b.String(), err)
	}
}

// TestTemplateContext: a rendering stops once its context is done.
func TestTemplateContext(t *testing.T) {
	tmpl, _ := ParseTemplate("prompt", `{{range 100000000000000}}{{end}}`)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted"))
	err := tmpl.WithContext(ctx).Execute(io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "rendering stopped: interrupted") {
		t.Errorf("error %v; want the rendering stopped", err)
	}
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
