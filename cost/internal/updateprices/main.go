// Command updateprices regenerates agentc's embedded price table
// (cost/prices.json) from genai-prices' data (Pydantic, MIT) and the
// context windows and output limits agentc keeps by hand
// (cost/limits.json). The data is the npm package's tarball
// (@pydantic/genai-prices, as npm pack downloads it), or the repository's
// data file (pydantic/genai-prices: prices/new_data/v2/data.json, or its
// data_slim.json). It is run by hand, from the module's root, after
// downloading either; nothing runs it at build or run time:
//
//	npm pack @pydantic/genai-prices
//	go run ./cost/internal/updateprices -from pydantic-genai-prices-0.1.8.tgz -date 2026-09-23
//
// The same inputs give the same table, byte for byte. See docs/cost.md for
// how tiered and dated prices are reduced to what agentc's table holds.
package main

import (
	"bytes"
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
	from := fs.String("from", "", "the npm package's tarball (.tgz), or genai-prices' data file (data.json or data_slim.json, format v2)")
	date := fs.String("date", "", "the data's own date, YYYY-MM-DD: when the package was published, or the data file last changed")
	origin := fs.String("origin", "", "where the data came from (for a data file: repository, path and commit; a tarball's is its package and version)")
	limits := fs.String("limits", "cost/limits.json", "the context windows and output limits kept by hand")
	out := fs.String("o", "cost/prices.json", "the table to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *date == "" {
		return errors.New("-from and -date are required")
	}
	if _, err := time.Parse(time.DateOnly, *date); err != nil {
		return fmt.Errorf("-date %q: want YYYY-MM-DD", *date)
	}
	data, err := os.ReadFile(*from)
	if err != nil {
		return err
	}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) { // gzip: the npm package
		var version string
		if data, version, err = readTarball(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("%s: %v", *from, err)
		}
		if *origin == "" {
			*origin = "the npm package " + npmName + " " + version
		}
	}
	if *origin == "" {
		return errors.New("-origin is required for a data file")
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
