package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/zeebo/blake3"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/batch"
)

// NewBatchID returns a batch ID for a plan's agent: its runs' workflow
// IDs start with it.
func NewBatchID(agent string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "agentc-" + agent + "-batch-" + hex.EncodeToString(b)
}

// ItemID is the workflow ID of a batch's item: the batch's ID, the item's
// index and a digest of its input, so that the same batch submitted again
// names the same runs, and an input that changed names another.
func ItemID(batchID string, index int, input []byte) string {
	sum := blake3.Sum256(input)
	return fmt.Sprintf("%s/%06d-%s", batchID, index, hex.EncodeToString(sum[:8]))
}

// BatchRunner returns the function that runs each item of a batch of the
// plan file data as a run of its own on Temporal (workflow ID ItemID) and
// waits for its report. A run of that ID that already exists is not
// started again: a running one is waited for, a finished one's report is
// read from its history, so a batch submitted again after its client
// stopped pays for nothing twice. When ctx ends, the runs go on; the
// item's report then says it was not waited for.
//
// With poolTokens above zero, the batch's runs share a token pool of
// that many tokens, a workflow of its own (PoolWorkflow, ID BATCH/pool)
// that lives until close is called; a batch submitted again while its
// pool still runs shares it. close returns what the pool holds at the end
// (nil without a pool).
func BatchRunner(ctx context.Context, c client.Client, data []byte, base RunInput, opts SubmitOptions, batchID string, poolTokens int64) (run batch.RunFunc, close func() (*PoolState, error), err error) {
	p, err := plan.Read("plan", data)
	if err != nil {
		return nil, nil, err
	}
	base.Plan, base.Digest = data, string(p.Digests.Plan)
	queue := opts.TaskQueue
	if queue == "" {
		queue = DefaultTaskQueue
	}
	close = func() (*PoolState, error) { return nil, nil }
	if poolTokens > 0 {
		base.Pool = batchID + "/pool"
		pool, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: base.Pool, TaskQueue: queue}, PoolWorkflow, PoolInput{Tokens: poolTokens})
		if err != nil {
			return nil, nil, fmt.Errorf("temporal: starting the batch's token pool: %w", err)
		}
		close = func() (*PoolState, error) {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
			defer cancel()
			if err := c.SignalWorkflow(cctx, pool.GetID(), pool.GetRunID(), poolClose, nil); err != nil {
				return nil, fmt.Errorf("temporal: closing the batch's token pool: %w", err)
			}
			var st PoolState
			if err := pool.Get(cctx, &st); err != nil {
				return nil, fmt.Errorf("temporal: the batch's token pool: %w", err)
			}
			return &st, nil
		}
	}
	return func(ctx context.Context, index, line int, input json.RawMessage) (*agentrt.Report, error) {
		in := base
		in.Input = input
		id := ItemID(batchID, index, input)
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue,
			WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			WorkflowExecutionErrorWhenAlreadyStarted: true}, Workflow, in)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		before := errors.As(err, &started)
		switch {
		case before:
			run = c.GetWorkflow(ctx, id, "") // it ran before: its report is in its history
		case err != nil && ctx.Err() != nil:
			return notWaited(id), nil
		case err != nil:
			return nil, fmt.Errorf("temporal: starting run %s: %w", id, err)
		}
		var rep agentrt.Report
		err = run.Get(ctx, &rep)
		var app *sdktemporal.ApplicationError
		switch {
		case err == nil && before:
			// Paid for when it ran, not by this batch.
			rep.UsagePaid, rep.UsageReplayed = agentrt.Usage{}, rep.Usage
			return &rep, nil
		case err == nil:
			return &rep, nil
		case ctx.Err() != nil:
			return notWaited(id), nil
		case errors.As(err, &app) && app.Type() == ErrInput:
			return nil, &agentrt.InputError{Msg: strings.TrimPrefix(app.Message(), "input: ")}
		}
		return nil, fmt.Errorf("temporal: run %s: %w", id, err)
	}, close, nil
}

// notWaited is the report of an item whose run the batch stopped waiting
// for: it goes on on the workers.
func notWaited(id string) *agentrt.Report {
	return &agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundNone, Interrupted: true,
		Error: fmt.Sprintf("interrupted: run %s goes on on the workers; submit the batch again to collect it", id)}
}
