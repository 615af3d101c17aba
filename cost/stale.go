package cost

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxAge is how many days old a table's date may be before agentc warns
// that its prices may have changed since.
const MaxAge = 120

// EnvMaxAge names the environment variable that sets another bound, in
// days; 0 turns the warning off.
const EnvMaxAge = "AGENTC_PRICES_MAX_AGE"

// maxDays is more days than any date is old (three billion years): a
// bound past it warns of nothing, and is never added to a date, which
// past 2^62 days wraps round to the date itself.
const maxDays = min(1<<40, math.MaxInt)

// Stale warns of the prices that come from a table dated more than maxAge
// days before now, or after tomorrow: one warning for each table, the embedded one first,
// then files in the order of prices. maxAge 0 warns of nothing, and a
// price without a date (the free test model) is never stale.
func Stale(prices []Price, now time.Time, maxAge int) []string {
	if maxAge <= 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, embedded := range []bool{true, false} {
		for _, p := range prices {
			if p.AsOf == "" || (p.From == "") != embedded || seen[p.From] {
				continue
			}
			seen[p.From] = true
			d, err := time.Parse(time.DateOnly, p.AsOf)
			what := "the built-in price table is"
			if p.From != "" {
				what = "the price file " + p.From + " is"
			}
			switch {
			case err != nil:
			case d.After(now.AddDate(0, 0, 1)):
				// A date to come says nothing of when the prices were
				// taken: a file dated 2999 would never be warned of.
				out = append(out, fmt.Sprintf("%s dated %s, a day still to come: its prices may be of any age; give the date they were taken (--prices or %s)", what, p.AsOf, EnvPrices))
			case maxAge < maxDays && now.After(d.AddDate(0, 0, maxAge)):
				out = append(out, fmt.Sprintf("%s dated %s, more than %d days ago: prices may have changed since; update agentc, or give current prices in a price file (--prices or %s)", what, p.AsOf, maxAge, EnvPrices))
			}
		}
	}
	return out
}

// Describe says where the table's prices come from, in one line: the
// built-in table's date and origin, and the files that extend it with
// theirs.
func (t *Table) Describe() string {
	s := "the built-in table"
	if o := t.origin(); o != "" {
		s += " (" + o + ")"
	}
	s += ", as of " + t.AsOf
	for i, f := range t.Files {
		s += ", extended by " + f
		if i < len(t.Dates) {
			s += " (as of " + t.Dates[i] + ")"
		}
	}
	return s
}

// origin is the first clause of the table's source: who keeps the prices.
func (t *Table) origin() string {
	if i := strings.IndexAny(t.Source, ":,("); i >= 0 {
		return strings.TrimSpace(t.Source[:i])
	}
	return t.Source
}
