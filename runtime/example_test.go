package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/testmodel"
	"agentc.dev/agentc/runtime/tool"
)

// A Go host runs a compiled plan (agentc compile label.cue -o
// label.plan.json): it builds the plan's tools, picks a model (here the
// offline test model; openai.New or anthropic.New for a provider), and
// runs it with its own strategy over the manifest's and a token pool
// shared by every run it starts.
func Example() {
	ctx := context.Background()
	p, _, err := plan.ReadFile("testdata/example/label.plan.json")
	if err != nil {
		log.Fatal(err)
	}
	pool := agentrt.NewPool(100_000)
	tools, closeTools, err := tool.Build(ctx, p, tool.Env{BaseDir: "testdata/example", Pool: pool})
	if err != nil {
		log.Fatal(err)
	}
	defer closeTools()
	builtin := agentrt.Builtin(&p.Agent)
	r, err := agentrt.New(p, agentrt.Options{
		Model: testmodel.Model{},
		Tools: tools,
		Pool:  pool,
		Strategy: agentrt.StrategyFunc(func(ctx context.Context, s *agentrt.State) agentrt.Decision {
			d := builtin.Decide(ctx, s)
			fmt.Printf("round %d, %s: %s\n", s.Round, s.Boundary, d.Action)
			return d
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	rep, err := r.Run(ctx, json.RawMessage(`{"title": "Crash on start"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Outcome, string(rep.Answer), len(rep.Rounds), "rounds,", rep.ToolCalls, "tool call,", pool.Spent(), "tokens")
	// Output:
	// round 1, after_tool_results: continue
	// round 2, after_prose: continue
	// ok {"label":"bug"} 3 rounds, 1 tool call, 646 tokens
}
