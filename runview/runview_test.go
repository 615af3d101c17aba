package runview

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"golang.org/x/net/html"

	"agentc.dev/agentc/cost"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

var update = flag.Bool("update", os.Getenv("AGENTC_UPDATE") != "", "rewrite the want.txt sections of testdata")

// TestPages builds the page of each case in testdata (a journal, and a
// report where there is one) and compares what it shows, row by row,
// with the case's want.txt. AGENTC_UPDATE=1 rewrites them.
func TestPages(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no cases in testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, page := build(t, ar)
			got := describe(p)
			if *update {
				setFile(ar, "want.txt", got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := section(ar, "want.txt"); got != want {
				t.Errorf("the page shows\n%s\nwant\n%s", got, want)
			}
			checkHTML(t, page)
			for _, r := range p.Rows {
				if r.StandsIn != "" && !strings.Contains(page, ">in place of "+r.StandsIn+"<") {
					t.Errorf("row %s names %s, but the page does not say it is in place of %s", r.Key, r.Name, r.StandsIn)
				}
			}
		})
	}
}

func build(t *testing.T, ar *txtar.Archive) (*Page, string) {
	t.Helper()
	j, err := journal.Read(strings.NewReader(section(ar, "journal.jsonl")))
	if err != nil {
		t.Fatal(err)
	}
	var rep *agentrt.Report
	if r := section(ar, "report.json"); r != "" {
		rep = new(agentrt.Report)
		if err := json.Unmarshal([]byte(r), rep); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Build(j, rep, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return p, buf.String()
}

// checkHTML holds what every page must: its elements are the template's
// own, it has one script, the page's, which its content security policy
// names by digest and which loads nothing, no handler attribute, no link
// but to a place on the page, and no image but one the page holds, a
// data: URL of an image type, which its policy allows and no other.
func checkHTML(t *testing.T, page string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, tag := range strings.Fields("html head meta title style body header h1 h2 h3 h4 dl dt dd code p main section a ul li pre div span button details summary script img") {
		allowed[tag] = true
	}
	z := html.NewTokenizer(strings.NewReader(page))
	scripts, policy, inScript := 0, "", false
	var script string
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			if !allowed[tok.Data] {
				t.Errorf("the page has a <%s> element", tok.Data)
			}
			for _, a := range tok.Attr {
				switch {
				case tok.Data == "img" && a.Key == "src" && dataImage.MatchString(a.Val):
				case strings.HasPrefix(a.Key, "on"), a.Key == "src", a.Key == "srcset":
					t.Errorf("<%s> has an attribute %s=%q", tok.Data, a.Key, a.Val)
				case a.Key == "href" && !strings.HasPrefix(a.Val, "#"):
					t.Errorf("<%s> links to %q", tok.Data, a.Val)
				case tok.Data == "meta" && a.Key == "content" && strings.Contains(a.Val, "script-src"):
					policy = a.Val
				}
			}
			if tok.Data == "script" {
				scripts++
				inScript = true
			}
		case html.TextToken:
			if inScript {
				script += tok.Data
			}
		case html.EndTagToken:
			inScript = false
		}
	}
	if scripts != 1 {
		t.Errorf("the page has %d script elements, want 1 (its own)", scripts)
	}
	d := sha256.Sum256([]byte(script))
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-" + base64.StdEncoding.EncodeToString(d[:]) + "'", "img-src data:;"} {
		if !strings.Contains(policy, want) {
			t.Errorf("the page's policy %q lacks %q", policy, want)
		}
	}
	if strings.Count(policy, "img-src") != 1 || strings.Count(policy, "data:") != 1 {
		t.Errorf("the page's policy %q lets images come from elsewhere than the page", policy)
	}
}

// dataImage is an image the page holds.
var dataImage = regexp.MustCompile(`^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}$`)

// TestInjection: markup in a tool's result is text on the page.
func TestInjection(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/injection.txtar")
	if err != nil {
		t.Fatal(err)
	}
	_, page := build(t, ar)
	const escaped = `&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;&lt;img src=x onerror=&#34;document.title=&#39;pwned&#39;&#34;&gt;&lt;/pre&gt;&lt;/details&gt;`
	if !strings.Contains(page, escaped) {
		t.Errorf("the tool's result is not on the page as text:\n%s", page)
	}
	if !strings.Contains(page, "&lt;b&gt;yes&lt;/b&gt;") {
		t.Error("the answer's markup is not on the page as text")
	}
}

// TestWidth: a bar is never thinner than can be seen, nor runs past the
// end of the timeline.
func TestWidth(t *testing.T) {
	for _, c := range []struct {
		start, dur, span float64
		left, width      float64
	}{
		{0, 0, 100, 0, 1},
		{50, 25, 100, 50, 25},
		{100, 0, 100, 99, 1},
		{0, 100, 100, 0, 100},
		{99.9, 0.1, 100, 99, 1},
		{10, 200, 100, 0, 100},
	} {
		r := &Row{StartMS: c.start, DurationMS: c.dur}
		if l, w := r.Left(c.span), r.Width(c.span); l != c.left || w != c.width {
			t.Errorf("start %v, duration %v of %v: left %v, width %v; want %v, %v", c.start, c.dur, c.span, l, w, c.left, c.width)
		}
	}
}

// describe renders what the page shows as text, one line a row.
func describe(p *Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %s, run %s, %d effects, tokens %s, cost %s\n", p.Agent, p.Run, p.Effects, formatTokens(p.Usage), formatCost(p.Cost))
	if p.Approved+p.Denied > 0 {
		fmt.Fprintf(&b, "approvals: %d approved, %d denied\n", p.Approved, p.Denied)
	}
	if r := p.Report; r != nil {
		fmt.Fprintf(&b, "report: outcome %s, bound %s, plan changed %v, cost %s", r.Outcome, r.Bound, r.PlanChanged, formatCostOf(r.Cost))
		if r.Cost.Estimated {
			b.WriteString(" estimated")
		}
		if r.CostDiffers {
			b.WriteString(", not the page's")
		}
		b.WriteString("\n")
		if d := r.Divergence; d != nil {
			fmt.Fprintf(&b, "divergence at %q: %s\n", d.Effect, d.Reason)
		}
	}
	for _, r := range p.Rows {
		fmt.Fprintf(&b, "%s%s %s %s @%s+%s", strings.Repeat("  ", r.Depth), r.Kind, r.Key, r.Name,
			msText(r.StartMS), msText(r.DurationMS))
		if r.StandsIn != "" {
			fmt.Fprintf(&b, " (in place of %s)", r.StandsIn)
		}
		if r.Usage != nil {
			fmt.Fprintf(&b, " [%s]", formatTokens(r.Usage))
		}
		if r.Cost != nil {
			fmt.Fprintf(&b, " %s", formatCost(*r.Cost))
		}
		if d := r.Approval; d != nil {
			verdict := "approved"
			if !d.Approved {
				verdict = "denied"
			}
			fmt.Fprintf(&b, " %s by %s", verdict, d.By)
			if d.ForRun {
				b.WriteString(" for the run")
			}
			if d.Reason != "" {
				fmt.Fprintf(&b, ": %s", d.Reason)
			}
			if r.Kind == "approval" {
				fmt.Fprintf(&b, " (%s)", d.Why)
			} else {
				fmt.Fprintf(&b, " at %s", d.Key)
			}
		}
		if r.Denied {
			b.WriteString(" NOT MADE")
		}
		if r.Raw != "" {
			b.WriteString(" RAW")
		}
		if r.Kind == "model" {
			fmt.Fprintf(&b, " %d new message(s)", len(r.Messages))
			if r.Reply != nil {
				fmt.Fprintf(&b, ", reply with %d call(s)", len(r.Reply.Calls))
			}
		}
		if r.Arguments != "" {
			fmt.Fprintf(&b, " args %s", oneLine(r.Arguments))
		}
		if r.Result != "" {
			fmt.Fprintf(&b, " -> %s", oneLine(r.Result))
		}
		if r.Error != "" {
			fmt.Fprintf(&b, " ERROR %s", oneLine(r.Error))
		}
		if r.Diverged {
			fmt.Fprintf(&b, " DIVERGED %s", strings.Join(r.Changes, "; "))
		}
		b.WriteString("\n")
	}
	if a := p.Answer; a != nil {
		fmt.Fprintf(&b, "answer from %q: %s, contract %q %s\n", a.Key, oneLine(a.JSON), a.Contract, strings.Join(a.Errors, "; "))
	} else {
		b.WriteString("no answer\n")
	}
	for _, a := range p.Attempts {
		fmt.Fprintf(&b, "sent back from %s: %s: %s\n", a.Key, oneLine(a.Arguments), a.Reason)
	}
	return b.String()
}

// msText is milliseconds to the microsecond.
func msText(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }

func oneLine(s string) string {
	var out bytes.Buffer
	if json.Compact(&out, []byte(s)) == nil {
		return out.String()
	}
	return strings.Join(strings.Fields(s), " ")
}

func section(ar *txtar.Archive, name string) string {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	return ""
}

func setFile(ar *txtar.Archive, name, data string) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(data)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
}

// FuzzPage: every journal the reader accepts makes a page, without a
// panic, whose only script is its own.
func FuzzPage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(section(ar, "journal.jsonl"))
	}
	f.Fuzz(func(t *testing.T, data string) {
		j, err := journal.Read(strings.NewReader(data))
		if err != nil {
			return
		}
		p, err := Build(j, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		checkHTML(t, buf.String())
	})
}

// TestFormatCost: dollars as agentc estimate prints them, to four
// decimals; less than can be shown so is "<$0.0001", never $0; a model
// with no price is named, after what the priced ones cost.
func TestFormatCost(t *testing.T) {
	for _, c := range []struct {
		cost agentrt.Cost
		want string
	}{
		{agentrt.Cost{}, "$0.0000"},
		{agentrt.Cost{USD: 0.00004}, "<$0.0001"},
		{agentrt.Cost{USD: 0.0000999}, "<$0.0001"},
		{agentrt.Cost{USD: 0.0001}, "$0.0001"},
		{agentrt.Cost{USD: 0.123456}, "$0.1235"},
		{agentrt.Cost{USD: 1234.5}, "$1,234.5000"},
		{agentrt.Cost{Estimated: true, Unpriced: []string{"openai/m1"}}, "unpriced (openai/m1)"},
		{agentrt.Cost{USD: 0.02, Estimated: true, Unpriced: []string{"openai/m1", "anthropic/m2"}}, "$0.0200 + unpriced (openai/m1, anthropic/m2)"},
		{agentrt.Cost{USD: 0.00001, Estimated: true, Unpriced: []string{"openai/m1"}}, "<$0.0001 + unpriced (openai/m1)"},
	} {
		if got := formatCost(c.cost); got != c.want {
			t.Errorf("formatCost(%+v) = %q, want %q", c.cost, got, c.want)
		}
	}
}

// TestFormatTokens: cache reads and writes are said when there are any.
func TestFormatTokens(t *testing.T) {
	for _, c := range []struct {
		u    agentrt.Usage
		want string
	}{
		{agentrt.Usage{Input: 1000, Output: 200}, "1000 in, 200 out"},
		{agentrt.Usage{Input: 1000, Output: 200, Cached: 400}, "1000 in, 200 out (400 cached)"},
		{agentrt.Usage{Input: 1000, Output: 200, CacheWrite: 900}, "1000 in, 200 out (900 cache writes)"},
		{agentrt.Usage{Input: 1000, Output: 200, Cached: 700, CacheWrite: 250}, "1000 in, 200 out (700 cached, 250 cache writes)"},
	} {
		if got := formatTokens(c.u); got != c.want {
			t.Errorf("formatTokens(%+v) = %q, want %q", c.u, got, c.want)
		}
	}
}

// TestPriceCacheWrites: a call is priced with its cache writes at their
// rate, and the page says that rate where it is not the input's.
func TestPriceCacheWrites(t *testing.T) {
	tab, err := cost.Parse("prices.json", []byte(`{"as_of": "2026-01-01", "models": {"anthropic": {
		"claude-test": {"input": 3, "cached_input": 0.3, "cache_write": 3.75, "output": 15},
		"claude-plain": {"input": 3, "cached_input": 0.3, "output": 15}}}}`), "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{page: &Page{}, prices: tab}
	// 20 × $3 + 380 × $0.30 + 100 × $3.75 + 20 × $15 per million.
	c, how := b.price("anthropic", "claude-test", agentrt.Usage{Input: 500, Cached: 380, CacheWrite: 100, Output: 20})
	if math.Abs(c.USD-0.000849) > 1e-12 || how != "Priced as anthropic/claude-test (prices.json, as of 2026-01-01): $3 input, $0.3 cached input, $3.75 cache writes, $15 output per million tokens." {
		t.Errorf("priced $%v: %s", c.USD, how)
	}
	if _, how := b.price("anthropic", "claude-plain", agentrt.Usage{Input: 500, Output: 20}); strings.Contains(how, "cache writes") {
		t.Errorf("a cache write at the input's price is said: %s", how)
	}
}
