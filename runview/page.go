package runview

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"
	textmessage "golang.org/x/text/message"

	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/internal/termtext"
	agentrt "agentc.dev/agentc/runtime"
)

var (
	//go:embed page.html.tmpl
	pageText string
	//go:embed page.js
	script string
	//go:embed page.css
	style string

	// page is parsed on first use, not in every start of the program
	// (0.4 ms and 2,200 allocations, GODEBUG=inittrace=1).
	page = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("page").Funcs(template.FuncMap{
			"ms":       formatMS,
			"size":     userfile.About,
			"tokens":   formatTokens,
			"heldMark": func() template.HTML { return heldMark },
			"cost":     formatCostOf,
			"time":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") },
			"count":    func(n int) string { return printer.Sprintf("%d", n) },
			"maxCalls": func() int { return MaxCalls },
			"maxRows":  func() int { return MaxRows },
			"indent":   func(depth int) string { return strconv.FormatFloat(float64(depth)*1.25, 'f', 2, 64) },
			// A report marks a cost it estimated.
			"reportCost": func(c agentrt.Cost) string {
				if c.Estimated {
					return formatCost(c) + ", estimated"
				}
				return formatCost(c)
			},
		}).Parse(pageText))
	})
)

// The page's content security policy lets nothing load and no script
// run but its own, named by its digest: were a value from the journal
// ever to escape its escaping, it still could not run. Inline styles are
// allowed (the bars of the timeline are placed by them); with nothing
// allowed to load, a style cannot send anything anywhere. Images may be
// data: URLs only, the page's own bytes: the files a run was given, shown
// from the store beside the journal.
var policy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-" + digest(script) + "'"

func digest(s string) string {
	d := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(d[:])
}

// Write writes the page: one HTML document that needs nothing else. It
// writes nothing when the page fails to render. Every character in it
// that a terminal would act on or not show (ESC, C1 controls, bidi
// overrides; termtext.HTML), which html/template passes through, is a
// character reference: the page goes to standard output, or is printed
// later, and what a tool wrote must not drive the terminal.
func (p *Page) Write(w io.Writer) error {
	var buf bytes.Buffer
	err := page().Execute(&buf, struct {
		*Page
		Policy string
		Script template.JS
		Style  template.CSS
	}{p, policy, template.JS(script), template.CSS(style)})
	if err != nil {
		return fmt.Errorf("the page: %w", err)
	}
	_, err = io.WriteString(w, termtext.HTML(buf.String()))
	return err
}

func formatMS(v float64) string {
	switch {
	case v >= 60000:
		return fmt.Sprintf("%.1f min", v/60000)
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	default:
		return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) + " ms"
	}
}

// heldMark follows token counts some of which were held: the journal
// gave counts no call has, which the page, as a run, does not add as
// they are (2^62 twice would wrap round below zero).
const heldMark template.HTML = `<abbr class="held" title="the journal gives counts no call has (below zero, past 4294967296 tokens, or more cached than input): they are held within what a call can count">held</abbr>`

// formatTokens says what a Usage or *Usage holds; nothing for nil.
func formatTokens(v any) string {
	var u agentrt.Usage
	switch v := v.(type) {
	case agentrt.Usage:
		u = v
	case *agentrt.Usage:
		if v == nil {
			return ""
		}
		u = *v
	default:
		return ""
	}
	s := fmt.Sprintf("%d in, %d out", u.Input, u.Output)
	switch {
	case u.Cached > 0 && u.CacheWrite > 0:
		s += fmt.Sprintf(" (%d cached, %d cache writes)", u.Cached, u.CacheWrite)
	case u.Cached > 0:
		s += fmt.Sprintf(" (%d cached)", u.Cached)
	case u.CacheWrite > 0:
		s += fmt.Sprintf(" (%d cache writes)", u.CacheWrite)
	}
	return s
}

var printer = textmessage.NewPrinter(language.English)

// formatUSD says an amount of dollars as agentc estimate does, to four
// decimals; an amount too small to show so is "<$0.0001".
func formatUSD(usd float64) string {
	if usd > 0 && usd < 0.0001 {
		return "<$0.0001"
	}
	return printer.Sprintf("$%.4f", usd)
}

// formatCost says what a cost is: dollars, or, where a model has no
// price, "unpriced" and the model, after the dollars of those priced.
func formatCost(c agentrt.Cost) string {
	if len(c.Unpriced) == 0 {
		return formatUSD(c.USD)
	}
	u := "unpriced (" + strings.Join(c.Unpriced, ", ") + ")"
	if c.USD > 0 {
		return formatUSD(c.USD) + " + " + u
	}
	return u
}

// formatCostOf says what a Cost or *Cost is; nothing for nil.
func formatCostOf(v any) string {
	switch v := v.(type) {
	case agentrt.Cost:
		return formatCost(v)
	case *agentrt.Cost:
		if v != nil {
			return formatCost(*v)
		}
	}
	return ""
}
