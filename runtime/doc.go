// Package runtime runs compiled agents: the round loop, budgets and bounds,
// strategies, the output tool and local validation of every answer. It
// talks to models and tools through the interfaces in this package and
// imports neither CUE nor the compiler, so a Go service that runs agents
// links only what running needs. Callers alias it (agentrt), since its
// name shadows the standard library's.
//
// A host runs an agent in four steps (see the example):
//
//   - read the plan that agentc compile wrote, with plan.ReadFile or
//     plan.Read, which verify its digests;
//   - build its tools with package runtime/tool (tool.Build), and pick a
//     Model: package runtime/provider/openai or runtime/provider/anthropic
//     for a provider, runtime/testmodel to run offline;
//   - make a Runner with New and Options: the model and tools, and as the
//     host needs them a Pool of tokens shared by many runs, a
//     RoundStrategy of its own (StrategyFunc wraps a function; Builtin is
//     the manifest's), an Events callback, a Journal to record or replay,
//     the Secrets to redact, and for a durable engine a Clock and an
//     Effector;
//   - call Runner.Run, any number of times and concurrently, with each
//     input, and read the Report: Outcome and Bound say how the run
//     ended, Answer is the validated answer, Usage and Cost what it spent.
//
// Run returns an error only when the run could not start (an input the
// input schema refuses is an *InputError); everything that happens once
// it has started, a failed model call included, is in the report. Package
// runtime/batch runs a Runner over many inputs.
package runtime
