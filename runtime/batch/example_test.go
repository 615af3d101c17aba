package batch_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
)

// A Go host runs a plan over JSON lines, a few runs at once, all drawing
// on one token pool; results come back in input order, a line that is not
// an input among them.
func Example() {
	ctx := context.Background()
	p, _, err := plan.ReadFile("../testdata/example/label.plan.json")
	if err != nil {
		log.Fatal(err)
	}
	pool := agentrt.NewPool(1_000_000)
	tools, closeTools, err := tool.Build(ctx, p, tool.Env{BaseDir: "../testdata/example", Pool: pool})
	if err != nil {
		log.Fatal(err)
	}
	defer closeTools()
	r, err := agentrt.New(p, agentrt.Options{Model: testmodel.Model{}, Tools: tools, Pool: pool})
	if err != nil {
		log.Fatal(err)
	}
	in := strings.NewReader(`{"title": "Crash on start"}
{"title": "Dark mode, please"}
{"body": "no title"}
`)
	sum, err := batch.New(r, batch.Options{Parallel: 2}).Run(ctx, in, func(res batch.Result) error {
		if res.Error != "" {
			fmt.Println(res.Line, res.Outcome+":", res.Error)
		} else {
			fmt.Println(res.Line, res.Outcome, string(res.Answer))
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.Done, "done,", sum.Failed, "failed,", sum.BadLines, "bad line,", pool.Spent(), "tokens")
	// Output:
	// 1 ok {"label":"bug"}
	// 2 ok {"label":"bug"}
	// 3 error: line 3: input: at /: missing property 'title'; at /: additional properties 'body' not allowed
	// 3 done, 1 failed, 1 bad line, 1294 tokens
}
