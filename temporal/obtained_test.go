package temporal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentc.dev/agentc/internal/devserver"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/temporal"
)

// obtainedToken is a credential a model obtains while it serves, as a
// provider obtains an OAuth access token.
const obtainedToken = "ya29.obtained-by-the-worker-0123456789"

// obtaining is a provider's model that obtains a credential as it makes
// a call, adding it to the secrets it was made with, and answers with it,
// as a server that echoes it would.
type obtaining struct{ secrets *redact.Set }

func (m obtaining) Complete(_ context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	m.secrets.Add(obtainedToken)
	args, _ := json.Marshal(map[string]string{"label": "seen " + obtainedToken})
	return &agentrt.Response{Message: agentrt.Message{Content: "I was sent " + obtainedToken,
		ToolCalls: []agentrt.ToolCall{{ID: "a1", Name: req.OutputTool, Arguments: args}}}, Usage: agentrt.Usage{Input: 10, Output: 2}}, nil
}

// TestObtainedCredentialsRedacted: a worker makes each model with the
// secret set its calls' results are redacted with (WorkerOptions.ModelFor),
// so a credential the model obtains while it serves, added to that set,
// is redacted from what the call returns: neither the report nor the
// workflow's history holds it.
func TestObtainedCredentialsRedacted(t *testing.T) {
	s := devserver.Start(t)
	c := dial(t, s)
	data := labeller(t, `{"type":"object","properties":{"label":{"type":"string"}},"required":["label"],"additionalProperties":false}`)
	models := func(c temporal.ModelCall) (agentrt.Model, error) {
		secrets := c.Secrets
		if secrets == nil {
			t.Error("the worker made a model without its secrets")
			secrets = &redact.Set{}
		}
		return obtaining{secrets: secrets}, nil
	}
	w, err := temporal.NewWorker(c, temporal.WorkerOptions{ModelFor: models, Dir: t.TempDir(), Allowed: digests(t, data)})
	if err != nil {
		t.Fatal(err)
	}
	serveQueue(t, c, "obtained", w)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, data, temporal.RunInput{}, temporal.SubmitOptions{TaskQueue: "obtained", WorkflowID: "obtained-ok"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := temporal.Wait(ctx, c, run)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != agentrt.OutcomeOK || string(rep.Answer) != `{"label":"seen [redacted]"}` {
		t.Errorf("outcome %s (%s), answer %s; want the answer, the credential redacted", rep.Outcome, rep.Error, rep.Answer)
	}
	if b, _ := json.Marshal(rep); bytes.Contains(b, []byte(obtainedToken)) || strings.Contains(rep.Error, obtainedToken) {
		t.Errorf("the report holds the credential: %s", b)
	}
	noSecretInHistory(t, ctx, c, "obtained-ok", obtainedToken)
}
