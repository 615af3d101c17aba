// Command updateprices regenerates agentc's embedded price table
// (cost/prices.json) from a copy of genai-prices' data file
// (pydantic/genai-prices, MIT: prices/new_data/v2/data.json, or its
// data_slim.json) and the context windows and output limits agentc keeps by
// hand (cost/limits.json). It is run by hand, from the module's root, after
// downloading the data file; nothing runs it at build or run time:
//
//	go run ./cost/internal/updateprices -from data.json -date 2026-08-21 \
//		-origin 'pydantic/genai-prices prices/new_data/v2/data.json at commit 47df840'
//
// The same inputs give the same table, byte for byte. See docs/cost.md for
// how tiered and dated prices are reduced to what agentc's table holds.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "updateprices:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("updateprices", flag.ContinueOnError)
	from := fs.String("from", "", "genai-prices' data file (data.json or data_slim.json, format v2)")
	date := fs.String("date", "", "the data's own date, YYYY-MM-DD: when the data file was last changed")
	origin := fs.String("origin", "", "where the data file came from: repository, path and commit, or package and version")
	limits := fs.String("limits", "cost/limits.json", "the context windows and output limits kept by hand")
	out := fs.String("o", "cost/prices.json", "the table to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *date == "" || *origin == "" {
		return errors.New("-from, -date and -origin are required")
	}
	if _, err := time.Parse(time.DateOnly, *date); err != nil {
		return fmt.Errorf("-date %q: want YYYY-MM-DD", *date)
	}
	data, err := os.ReadFile(*from)
	if err != nil {
		return err
	}
	lim, err := os.ReadFile(*limits)
	if err != nil {
		return err
	}
	table, err := Generate(data, lim, *date, *origin)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, table, 0o644)
}
