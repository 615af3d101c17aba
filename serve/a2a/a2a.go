// Package a2a serves agents over the A2A protocol with the A2A project's
// Go SDK (github.com/a2aproject/a2a-go): an agent card per agent, and its
// JSON-RPC binding, whose message/send runs the agent. It is apart from
// package serve because the SDK links gRPC, which only the agentc program
// carries.
package a2a

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/internal/leaf/jsonpointer"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/serve"
)

// Prefix is where the agents are served: agent NAME's card at
// Prefix+NAME+a2asrv.WellKnownAgentCardPath, its JSON-RPC endpoint at
// Prefix+NAME.
const Prefix = "/a2a/"

// ProtocolVersion is the A2A protocol the SDK speaks (its release 0.3
// implements the protocol's 0.3.0).
const ProtocolVersion = "0.3.0"

// Card is the agent card of an agent served at base (its endpoint's URL):
// one skill, the agent, its input and output modes JSON where its
// contracts are (text otherwise), the bearer scheme every call needs, and
// the contract and plan digests among the skill's tags.
func Card(ag serve.Agent, base string) *a2a.AgentCard {
	a := &ag.Plan.Agent
	desc := a.Description
	if desc == "" {
		desc, _, _ = strings.Cut(strings.TrimSpace(a.Instructions), "\n")
	}
	in, out := []string{"text/plain"}, []string{"text/plain"}
	if a.Input != nil {
		// JSON, and the media types of the files it takes, as file parts.
		in = []string{"application/json"}
		fields, _ := plan.FileFields(a.Input.Schema)
		for _, f := range fields {
			for _, t := range f.MediaTypes {
				if !slices.Contains(in, t) {
					in = append(in, t)
				}
			}
		}
	}
	if a.Output != nil {
		out = []string{"application/json"}
	}
	return &a2a.AgentCard{
		Name: a.Name, Description: desc, URL: base, Version: string(ag.Plan.Digests.Plan),
		ProtocolVersion: ProtocolVersion, PreferredTransport: a2a.TransportProtocolJSONRPC,
		Capabilities:      a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes: in, DefaultOutputModes: out,
		Skills: []a2a.AgentSkill{{ID: a.Name, Name: a.Name, Description: desc, InputModes: in, OutputModes: out,
			Tags: []string{"contract:" + string(ag.Plan.Digests.Contract), "plan:" + string(ag.Plan.Digests.Plan)}}},
		SecuritySchemes: a2a.NamedSecuritySchemes{"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer"}},
		Security:        []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}},
	}
}

// Handler serves each agent's card and JSON-RPC endpoint under Prefix,
// to clients that send one of the bearer tokens (serve.MCPHandler's
// rule); base is the server's URL (http://HOST:PORT), from which the cards
// name their endpoints. A client reaches only the agents its token admits
// to: another's card and endpoint are not found (404), as for an agent
// not served.
func Handler(agents []serve.Agent, runs *serve.Runs, base string, tokens *serve.Tokens) http.Handler {
	mux := http.NewServeMux()
	for _, ag := range agents {
		name := ag.Plan.Agent.Name
		path := Prefix + name
		mux.Handle(path+a2asrv.WellKnownAgentCardPath, admitted(name, a2asrv.NewStaticAgentCardHandler(Card(ag, strings.TrimSuffix(base, "/")+path))))
		ts := newTasks(serve.DefaultKeep, fileInputs(ag))
		if dir := runs.Dir(); dir != "" {
			ts.dir, ts.settle = filepath.Join(dir, "a2a", name), settle(runs)
			ts.logErr = func(err error) { runs.Public(err) } // to the server's log
		}
		mux.Handle(path, admitted(name, measured(name, serve.MaxRequestBytes(ag.Plan), runs, a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(&executor{ag: ag, runs: runs, tasks: ts, cancels: map[a2a.TaskID]*running{}},
			a2asrv.WithTaskStore(ts))))))
	}
	return serve.Authorized(runs.BoundReads(mux), tokens)
}

// admitted serves h to the requests whose token admits to agent name, and
// answers the rest as the mux answers a path it does not serve.
func admitted(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !serve.AccessOf(r.Context()).Allows(name) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// executor runs the agent, as a task, with a message's input: the first
// data part's object, or the first text part's text read as JSON; an
// agent without an input takes none. The task is submitted, then working
// while the run runs, and ends completed, its artifact the answer (a data
// part where it is an object, and its JSON as a text part); rejected, for
// an input or bounds the server refuses before anything runs; failed,
// for a run that ended without a valid answer or on a bound; or
// canceled. The message's metadata may narrow the run's bounds, under
// serve.MetaBudgets.
type executor struct {
	ag    serve.Agent
	runs  *serve.Runs
	tasks *tasks

	mu      sync.Mutex
	cancels map[a2a.TaskID]*running
}

// running is a task's run in flight.
type running struct {
	cancel   context.CancelFunc
	canceled bool
}

func (x *executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	end := func(state a2a.TaskState, text string, meta map[string]any) error {
		ev := a2a.NewStatusUpdateEvent(rc, state, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: text, Metadata: meta}))
		ev.Final = true
		return q.Write(ctx, ev)
	}
	// finish ends the task as its run ended: its answer, then its state.
	finish := func(e ending) error {
		if e.answer != nil {
			art := a2a.NewArtifactEvent(rc, e.answer...)
			art.Artifact.Name = "answer"
			art.Artifact.Metadata = e.info
			if err := q.Write(ctx, art); err != nil {
				return err
			}
		}
		if e.interrupted {
			// Settled again by its run, which a server started again
			// on the journal directory resumes.
			x.tasks.SetInterrupted(rc.TaskID)
		}
		return end(e.state, e.text, e.info)
	}
	if run := x.tasks.RunOf(rc.TaskID); rc.StoredTask != nil && run != "" {
		// A message to a task an earlier server kept, whose run this
		// one resumed (or another server on the journal directory
		// runs): the task is its run's. A second run would run the
		// agent, and its tools, again; so the message waits for the run
		// and the task ends as it does, the message's input unused.
		return x.follow(ctx, rc, q, run, finish)
	}
	var input json.RawMessage
	var names map[string]string
	if x.ag.Plan.Agent.Input != nil {
		var err error
		if input, names, err = inputOf(rc.Message, fileInputs(x.ag)); err != nil {
			return end(a2a.TaskStateRejected, "error: "+err.Error(), nil)
		}
	}
	budgets, err := serve.BudgetsOfMeta(rc.Metadata)
	if err != nil {
		return end(a2a.TaskStateRejected, "error: "+err.Error(), nil)
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	runCtx, r, release := x.cancelable(ctx, rc.TaskID)
	defer release()
	// The run checks its input under what the request holds of the
	// bound on reading, taken before its body was read, and gives it
	// back.
	runCtx = serve.WithShare(runCtx, holdOf(ctx).share())
	started := ""
	rec, err := x.runs.Run(runCtx, x.ag, input, names, budgets, func(id string) {
		// The task names its run, so that a server started again on the
		// journal directory settles the task by the run it resumed.
		started = id
		x.tasks.SetRun(rc.TaskID, id)
	})
	if err != nil && started != "" && x.runs.Get(started) == nil {
		// The run never ran, and left no record: its task leaves
		// nothing on disk either.
		x.tasks.ClearRun(rc.TaskID)
	}
	if x.canceled(r) {
		return nil // Cancel said so
	}
	if err != nil {
		// The server's own failure ends the task failed, naming the
		// reference its log has the error under; the client's, rejected.
		err = x.runs.Public(err)
		var in *serve.InternalError
		if errors.As(err, &in) {
			return end(a2a.TaskStateFailed, "error: "+err.Error(), nil)
		}
		return end(a2a.TaskStateRejected, "error: "+err.Error(), nil)
	}
	e, _ := endOf(rec, rec.ID)
	return finish(e)
}

// cancelable returns ctx, ended by tasks/cancel of task id (canceled
// then says so), and what ends it and stops it being cancelable.
func (x *executor) cancelable(ctx context.Context, id a2a.TaskID) (context.Context, *running, func()) {
	ctx, cancel := context.WithCancel(ctx)
	r := &running{cancel: cancel}
	x.mu.Lock()
	x.cancels[id] = r
	x.mu.Unlock()
	return ctx, r, func() {
		x.mu.Lock()
		delete(x.cancels, id)
		x.mu.Unlock()
		cancel()
	}
}

// canceled reports whether tasks/cancel ended r.
func (x *executor) canceled(r *running) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return r.canceled
}

// follow ends the task of rc, kept by an earlier server, by finish, as its run,
// run, ends: waiting for it while it runs here (tasks/cancel ends the
// run, as it does a run the task made here); at once, failed, to be
// settled again when next asked for, while it runs in another server on
// the journal directory.
func (x *executor) follow(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue, run string, finish func(ending) error) error {
	if done := x.runs.Done(run); done != nil {
		waitCtx, r, release := x.cancelable(ctx, rc.TaskID)
		defer release()
		// Working, and cancelable from here on.
		if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
			return err
		}
		holdOf(ctx).give() // not while the run runs
		select {
		case <-done:
		case <-waitCtx.Done():
			if x.canceled(r) {
				// The task's client ends the task's run, as it would
				// the run the task made here. (A run that ended as the
				// cancel came stands ended; the task is canceled, as
				// Cancel said, as for a run the task made here.)
				x.runs.Cancel(run)
				return nil // Cancel said so
			}
			return ctx.Err()
		}
	}
	rec, err := record(ctx, x.runs, run)
	if err != nil {
		return err
	}
	e, ok := endOf(rec, run)
	if !ok {
		e = ending{state: a2a.TaskStateFailed, info: map[string]any{"run": run}, interrupted: true,
			text: "error: the task's run " + run + " is running in another server on the journal directory; tasks/get gives the task as it ends"}
	}
	return finish(e)
}

// outcome is how the task of run id, which ended, ends by its result:
// completed with its answer, or failed saying why.
func outcome(id string, rep *serve.RunResult) ending {
	info := map[string]any{"outcome": rep.Outcome, "bound": rep.Bound, "run": id}
	if rep.Outcome != agentrt.OutcomeOK || rep.Bound != "" && rep.Bound != agentrt.BoundNone {
		msg := rep.Error
		if msg == "" {
			msg = fmt.Sprintf("the run ended with outcome %s, bound %s", rep.Outcome, rep.Bound)
		}
		return ending{state: a2a.TaskStateFailed, text: "error: " + msg, info: info}
	}
	answer := []a2a.Part{a2a.TextPart{Text: string(rep.Answer)}}
	if data, ok := dataPart(rep.Answer); ok {
		answer = []a2a.Part{data, a2a.TextPart{Text: string(rep.Answer)}}
	}
	return ending{state: a2a.TaskStateCompleted, text: "done", info: info, answer: answer}
}

// dataPart is an answer that is an object as a data part, beside the text
// part that holds it as validated, where the data part reads as the same
// value; false where it would not. Its Data holds doubles, and the SDK
// copies each artifact by a gob round trip, which makes an empty array
// null: {"n":9007199254740993} would be sent as 9007199254740992, and
// {"tags":[]} as {"tags":null}, values the contract may refuse. The same
// round trip is made here, and the data part left out where what it sends
// differs from the answer.
func dataPart(answer json.RawMessage) (a2a.DataPart, bool) {
	var obj map[string]any
	if json.Unmarshal(answer, &obj) != nil || obj == nil {
		return a2a.DataPart{}, false
	}
	part := a2a.DataPart{Data: obj}
	var buf bytes.Buffer
	var copied a2a.DataPart
	if gob.NewEncoder(&buf).Encode(part) != nil || gob.NewDecoder(&buf).Decode(&copied) != nil {
		return a2a.DataPart{}, false
	}
	sent, err := json.Marshal(copied.Data)
	if err != nil {
		return a2a.DataPart{}, false
	}
	want, err1 := digest.CanonicalExact(answer)
	got, err2 := digest.CanonicalExact(sent)
	if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
		return a2a.DataPart{}, false
	}
	return part, true
}

// ending is how a task whose run has ended ends.
type ending struct {
	state  a2a.TaskState
	text   string
	info   map[string]any
	answer []a2a.Part // where it answered, its artifact "answer"'s parts
	// interrupted says the server's stop interrupted the run, which a
	// server started again on the journal directory resumes.
	interrupted bool
}

// endOf is how a task whose run is run (rec its record, nil when the
// server has none) ends, by its record; false while the run is running.
func endOf(rec *serve.Record, run string) (ending, bool) {
	switch {
	case rec == nil:
		return ending{state: a2a.TaskStateFailed, text: "error: the server has no record of the task's run " + run, info: map[string]any{"run": run}}, true
	case rec.State == serve.StateRunning:
		return ending{}, false
	case rec.State == serve.StateDone && rec.Result != nil:
		return outcome(rec.ID, rec.Result), true
	case rec.State == serve.StateInterrupted:
		text := "the server stopped before the run ended"
		if rec.Result != nil && rec.Result.Error != "" {
			text = rec.Result.Error
		}
		// A run here is resumed by a server started again on the
		// journal directory; a run on Temporal is not waited on again.
		return ending{state: a2a.TaskStateFailed, text: "error: " + text, info: map[string]any{"run": rec.ID}, interrupted: rec.Workflow == ""}, true
	}
	if rec.State == serve.StateCancelled {
		text := "the run was cancelled"
		if rec.Result != nil && rec.Result.Error != "" {
			text = rec.Result.Error
		}
		return ending{state: a2a.TaskStateCanceled, text: text, info: map[string]any{"run": rec.ID}}, true
	}
	return ending{state: a2a.TaskStateFailed, text: fmt.Sprintf("error: the task's run %s ended %s, without an answer", rec.ID, rec.State), info: map[string]any{"run": rec.ID}}, true
}

// settle settles a task an earlier server kept, that had not ended when
// it stopped or that ended because the stop interrupted its run, by the
// run it made (run), as runs has it now: a run that ended (a server
// started again on the journal directory resumed it) ends the task as
// it would have; one still running leaves it as it is; one interrupted
// still ends it failed, to be settled again once a server resumes it.
func settle(runs *serve.Runs) func(ctx context.Context, t *a2a.Task, run string) (*a2a.Task, bool, bool, error) {
	return func(ctx context.Context, t *a2a.Task, run string) (*a2a.Task, bool, bool, error) {
		rec, err := record(ctx, runs, run)
		if err != nil {
			return nil, false, false, err
		}
		e, ok := endOf(rec, run)
		switch {
		case !ok:
			// Still running: as it was, and settled again next time.
			return t, false, t.Status.State.Terminal(), nil
		case e.interrupted && t.Status.State.Terminal():
			return t, false, true, nil // as it ended: failed, a resume to come
		}
		c := *t
		now := time.Now().UTC()
		if e.answer != nil {
			c.Artifacts = append(append([]*a2a.Artifact(nil), t.Artifacts...), &a2a.Artifact{ID: a2a.NewArtifactID(), Name: "answer", Parts: e.answer, Metadata: e.info})
		}
		c.Status = a2a.TaskStatus{State: e.state, Timestamp: &now,
			Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, t, a2a.TextPart{Text: e.text, Metadata: e.info})}
		return &c, true, e.interrupted, nil
	}
}

// Cancel ends a task's run in flight; a task no run is making cannot be
// canceled.
func (x *executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	x.mu.Lock()
	r, ok := x.cancels[rc.TaskID]
	if ok {
		r.canceled = true
	}
	x.mu.Unlock()
	if !ok {
		return a2a.ErrTaskNotCancelable
	}
	r.cancel()
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// inexact returns the JSON pointer (below at) of a number in v that a
// data part, decoded into 64-bit floats, cannot have carried exactly: one
// of magnitude 2^53 or more, past which not every integer has a float
// (9007199254740993 arrives as 9007199254740992). "" when there is none.
func inexact(v any, at string) string {
	switch v := v.(type) {
	case float64:
		if math.Abs(v) >= 1<<53 {
			if at == "" {
				return "/"
			}
			return at
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if w := inexact(v[k], at+"/"+jsonpointer.Escape(k)); w != "" {
				return w
			}
		}
	case []any:
		for i, e := range v {
			if w := inexact(e, at+"/"+strconv.Itoa(i)); w != "" {
				return w
			}
		}
	}
	return ""
}

// fileInputs names the agent's file inputs.
func fileInputs(ag serve.Agent) []string {
	if ag.Plan.Agent.Input == nil {
		return nil
	}
	fields, _ := plan.FileFields(ag.Plan.Agent.Input.Schema)
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return names
}

// MetaInput is the key of a file part's metadata that names the file
// input it is (needed where the agent takes more than one).
const MetaInput = "agentc/input"

// inputOf reads a message's input: its first data part, else its first
// text part as JSON (an agent that takes files may have neither: its
// input is then {}), with each file part, its bytes in base64, at the
// file input (of files) its metadata names under MetaInput, or the one
// file input the agent takes. A file by URI is refused: the server
// fetches nothing a client points it at. A file part's name, where it
// has one, is returned by file input (names).
func inputOf(m *a2a.Message, files []string) (json.RawMessage, map[string]string, error) {
	if m == nil {
		return nil, nil, errors.New("the request holds no message")
	}
	var obj map[string]any
	var raw json.RawMessage
	for i, p := range m.Parts {
		if d, ok := p.(a2a.DataPart); ok {
			if where := inexact(d.Data, ""); where != "" {
				return nil, nil, fmt.Errorf("part %d: the number at %s is 2^53 or more in magnitude, which a data part cannot carry exactly (it arrives as a 64-bit float): send the input as JSON in a text part, which is read as written", i, where)
			}
			obj = maps.Clone(d.Data) // the message's own stays as sent
			break
		}
	}
	if obj == nil {
		for _, p := range m.Parts {
			if t, ok := p.(a2a.TextPart); ok {
				if !json.Valid([]byte(t.Text)) {
					return nil, nil, errors.New("the message's text is not JSON: the agent's input is a JSON value, as a data part or a text part")
				}
				raw = json.RawMessage(t.Text)
				break
			}
		}
	}
	given := map[string]string{}
	names := map[string]string{}
	for i, p := range m.Parts {
		fp, ok := p.(a2a.FilePart)
		if !ok {
			continue
		}
		b, ok := fp.File.(a2a.FileBytes)
		if !ok {
			return nil, nil, fmt.Errorf("part %d: a file by URI is not fetched: send its bytes", i)
		}
		name, _ := fp.Metadata[MetaInput].(string)
		switch {
		case name == "" && len(files) == 1:
			name = files[0]
		case name == "" && len(files) == 0:
			return nil, nil, fmt.Errorf("part %d: a file, and the agent takes none", i)
		case name == "":
			return nil, nil, fmt.Errorf("part %d: a file, and the agent takes several (%s): name the one in the part's metadata, %q", i, strings.Join(files, ", "), MetaInput)
		case !slices.Contains(files, name):
			return nil, nil, fmt.Errorf("part %d: the agent has no file input %q (it has %s)", i, name, strings.Join(files, ", "))
		}
		if _, twice := given[name]; twice {
			return nil, nil, fmt.Errorf("part %d: file input %s is given twice", i, name)
		}
		given[name] = b.Bytes
		if b.Name != "" {
			names[name] = b.Name
		}
	}
	if len(given) == 0 {
		if obj != nil {
			b, err := json.Marshal(obj)
			return b, nil, err
		}
		if raw == nil {
			return nil, nil, errors.New("the message holds no data part and no text part: the agent's input goes in one")
		}
		return raw, nil, nil
	}
	if obj == nil {
		obj = map[string]any{}
		// null, which decodes to no map, is not an object either: its
		// file parts went into a nil map, a panic that left the task
		// submitted, in memory, for good.
		if raw != nil && (json.Unmarshal(raw, &obj) != nil || obj == nil) {
			return nil, nil, errors.New("the message's text is not a JSON object, and its file parts go in one")
		}
	}
	for name, b64 := range given {
		if _, both := obj[name]; both {
			return nil, nil, fmt.Errorf("file input %s is given both as a file part and in the input", name)
		}
		obj[name] = b64
	}
	b, err := json.Marshal(obj)
	return b, names, err
}
