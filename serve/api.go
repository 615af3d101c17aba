package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/redact"
)

// RunResult is the body of a run the HTTP API made: the run's outcome and
// bound, its answer (valid by the agent's contract) or its error, its
// usage and the digests of the plan that ran.
type RunResult struct {
	// ID is the run's id: GET /v1/runs/{id} returns its record.
	ID      string          `json:"id,omitempty"`
	Agent   string          `json:"agent"`
	Outcome string          `json:"outcome"`
	Bound   string          `json:"bound"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	Error   string          `json:"error,omitempty"`
	Usage   agentrt.Usage   `json:"usage"`
	Digests plan.Digests    `json:"digests"`
	// Exit is the exit code agentc run would have ended the run with
	// (0 answered, 3 deadline, 4 tool budget, 5 token budget or pool, …,
	// 130 interrupted), where the server knows its codes.
	Exit *int `json:"exit,omitempty"`
}

// fileFieldsOf is an agent's file inputs; a plan's contract was checked
// when its server was made.
func fileFieldsOf(p *plan.Plan) []plan.FileField {
	if p.Agent.Input == nil {
		return nil
	}
	files, _ := plan.FileFields(p.Agent.Input.Schema)
	return files
}

// RunIDHeader is the response header that names a run's id, sent before
// the run starts (an event stream's first bytes).
const RunIDHeader = "Agentc-Run-Id"

// apiError is the body of a request the API refused.
type apiError struct {
	Error string `json:"error"`
	// Exit is the exit code of the same refusal on the command line: 2
	// for a request the server refuses (as a usage error), 1 for the
	// server's own failure.
	Exit int `json:"exit"`
}

// API serves the agents over HTTP, to clients that send the bearer token
// (as MCPHandler): POST /v1/agents/{name}/runs runs an agent with the
// request's body, JSON, as its input, and answers with the run
// (RunResult): 200 for a run that was made, whatever its outcome; 400 for
// a body that is not one JSON value, 404 for no such agent, 413 for a body
// past MaxBodyBytes, 422 for an input the agent's input contract refuses
// (nothing ran). GET /v1/agents lists the agents, their digests and
// schemas; GET /openapi.json is an OpenAPI document of the runs, one path
// per agent, its request body the input contract and its answer the
// output contract. A client sees only the agents its token admits to
// (AccessOf): the others, their runs and their calls waiting for approval
// are to it as if they did not exist (404, and left out of every list).
// Serve it under BoundWrites, as MCPHandler's and the A2A handler, so that
// a client that stops reading holds nothing.
func API(agents []Agent, runs *Runs, tokens *Tokens) (http.Handler, error) {
	return APIAt(agents, runs, tokens, "")
}

// APIAt is API for a server its clients reach at public (its URL behind a
// proxy, a path there its prefix), which the OpenAPI document names as its
// server, so that a client made from it calls there; "" names none, and
// the paths are then the document's own server's.
func APIAt(agents []Agent, runs *Runs, tokens *Tokens, public string) (http.Handler, error) {
	byName := map[string]Agent{}
	for _, a := range agents {
		if _, dup := byName[a.Plan.Agent.Name]; dup {
			return nil, fmt.Errorf("two agents are named %s", a.Plan.Agent.Name)
		}
		byName[a.Plan.Agent.Name] = a
	}
	// The OpenAPI document of each set of agents a token admits to.
	docs := map[*Access][]byte{}
	for _, a := range tokens.sets {
		doc, err := openAPI(a.Of(agents), public)
		if err != nil {
			return nil, err
		}
		docs[a] = doc
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agents/{name}/runs", func(w http.ResponseWriter, r *http.Request) {
		a, ok := byName[r.PathValue("name")]
		if !ok || !AccessOf(r.Context()).Allows(a.Plan.Agent.Name) {
			reply(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("no agent is named %q here", r.PathValue("name"))})
			return
		}
		budgets, err := budgetsOfQuery(r.URL.Query())
		if err != nil {
			reply(w, http.StatusBadRequest, apiError{Error: err.Error()})
			return
		}
		files := fileFieldsOf(a.Plan)
		// Files in base64 take a third more than their bytes.
		multi, limit := false, MaxRequestBytes(a.Plan)
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			if len(files) == 0 {
				reply(w, http.StatusUnsupportedMediaType, apiError{Error: fmt.Sprintf("agent %s takes no files: send its input as JSON", a.Plan.Agent.Name)})
				return
			}
			multi, limit = true, maxMultipartBytes(files)
		}
		if r.ContentLength > limit {
			reply(w, http.StatusRequestEntityTooLarge, apiError{Error: fmt.Sprintf("the body is larger than the %d bytes a run's input may be", limit)})
			return
		}
		// The run is counted against its token's (and refused short of
		// disk) before its body is read: a token past its bound is told
		// so without a byte of it held.
		done, err := runs.starting(r.Context())
		if err != nil {
			// Its body left unread, the connection is closed after the
			// answer, not read on (net/http reads up to 256 KiB of it
			// first, waiting on a client that sends it slowly).
			w.Header().Set("Connection", "close")
			reply(w, runStatus(err), apiError{Error: err.Error()})
			return
		}
		defer done()
		// The body is read within the bound on reading, taken before a
		// byte of it is as much as its input may weigh (readingBody), and
		// the run checks the input under the same share (WithShare): the
		// body is never held outside the bound.
		sh, err := runs.readingBody(r, limit)
		if err != nil {
			return // its client went while it waited
		}
		defer sh.Release() // for a request that ends before its run takes it
		body, names, status, err := runInput(w, r, files, multi, limit)
		if err != nil {
			if status == http.StatusRequestTimeout {
				// The share goes back before the answer is written, and
				// the rest of the body is not read.
				sh.Release()
				w.Header().Set("Connection", "close")
			}
			reply(w, status, apiError{Error: err.Error()})
			return
		}
		var input json.RawMessage
		if a.Plan.Agent.Input != nil {
			input = body
		}
		// Read, the body is known: its share need be no more than the
		// input weighs.
		sh.Shrink(min(Weight(input), MaxReading))
		c := call{runner: a.Runner, input: input, fileNames: names, budgets: budgets, admitted: true, started: func(id string) {
			w.Header().Set("Location", "/v1/runs/"+id)
			w.Header().Set(RunIDHeader, id)
		}}
		var events *sseWriter
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			// The run's events as they happen, then the run.
			events = &sseWriter{w: w, secrets: a.Secrets}
			c.events = func(ev agentrt.Event) {
				if a.Events != nil {
					a.Events(ev)
				}
				events.send(ev.Type, ev)
			}
			if c.runner != nil {
				c.runner = c.runner.WithEvents(c.events)
			}
			c.notify = events.send
		}
		rec, err := runs.run(WithShare(r.Context(), sh), a, c)
		if err != nil {
			err = runs.Public(err)
			if events.started() {
				events.send("error", apiError{Error: err.Error(), Exit: 1})
				return
			}
			reply(w, runStatus(err), apiError{Error: err.Error()})
			return
		}
		res := rec.Result
		status = http.StatusOK
		if rec.State == StateInterrupted {
			// The server stopped under the run: 503, as for a request it
			// would not take, with what the run got to.
			status = http.StatusServiceUnavailable
		}
		if events != nil {
			events.send("result", res)
			return
		}
		reply(w, status, res)
	})
	mux.HandleFunc("GET /v1/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		// Encoded within the bound on reading, held until the answer is
		// written.
		h := &held{rs: runs}
		defer h.give()
		if _, rec, ok := keptRun(w, r, runs, h); ok {
			reply(w, http.StatusOK, rec)
		}
	})
	mux.HandleFunc("POST /v1/runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		// Given back before the run is waited on.
		h := &held{rs: runs}
		defer h.give()
		id, rec, ok := keptRun(w, r, runs, h)
		if !ok {
			return
		}
		if rec.Workflow != "" {
			reply(w, http.StatusConflict, apiError{Error: fmt.Sprintf("run %s runs on Temporal, as workflow %s: this server only waits on it; cancel the workflow there", id, rec.Workflow)})
			return
		}
		state := rec.State
		h.give()
		done := runs.Done(id)
		if done == nil || !runs.Cancel(id) {
			reply(w, http.StatusConflict, apiError{Error: fmt.Sprintf("run %s is not in flight here (it is %s)", id, state)})
			return
		}
		// The run stops at its next safe point, its tools' calls ended;
		// its record then says so.
		select {
		case <-done:
		case <-r.Context().Done():
			return
		}
		// Its record as it ended: cancelled, or done where it ended on
		// its own before it came to a point where it stops; encoded
		// within the bound on reading, as GET's.
		ended, err := runs.getHeld(r.Context(), id, h)
		if err != nil {
			return
		}
		if ended == nil {
			reply(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("run %s has ended, and is no longer kept here", id)})
			return
		}
		reply(w, http.StatusOK, ended)
	})
	mux.HandleFunc("GET /v1/approvals", func(w http.ResponseWriter, r *http.Request) {
		access := AccessOf(r.Context())
		out := []*Pending{}
		for _, p := range runs.Pending() {
			if access.Allows(p.Agent) {
				out = append(out, p)
			}
		}
		reply(w, http.StatusOK, map[string]any{"approvals": out})
	})
	mux.HandleFunc("POST /v1/runs/{id}/approvals/{key...}", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		var slow *SlowBodyError
		if errors.As(err, &slow) {
			w.Header().Set("Connection", "close")
			reply(w, http.StatusRequestTimeout, apiError{Error: err.Error()})
			return
		}
		var d Decision
		if err == nil {
			d, err = decisionOfBody(body)
		}
		if err != nil {
			reply(w, http.StatusBadRequest, apiError{Error: `a decision is {"approve": true|false, "for_run": bool, "reason": "..."}: ` + err.Error()})
			return
		}
		p, ok := runs.decide(r.PathValue("id"), r.PathValue("key"), d, AccessOf(r.Context()).Allows)
		if !ok {
			reply(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("no call %s of run %s waits for approval (never asked, or decided already)", r.PathValue("key"), r.PathValue("id"))})
			return
		}
		reply(w, http.StatusOK, map[string]any{"decided": p, "approved": *d.Approve})
	})
	mux.HandleFunc("GET /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		type listed struct {
			Name    string          `json:"name"`
			Digests plan.Digests    `json:"digests"`
			Input   json.RawMessage `json:"input_schema,omitempty"`
			Output  json.RawMessage `json:"output_schema,omitempty"`
		}
		out := []listed{}
		for _, a := range AccessOf(r.Context()).Of(agents) {
			l := listed{Name: a.Plan.Agent.Name, Digests: a.Plan.Digests}
			if in := a.Plan.Agent.Input; in != nil {
				l.Input = in.Schema
			}
			if o := a.Plan.Agent.Output; o != nil {
				l.Output = o.Schema
			}
			out = append(out, l)
		}
		reply(w, http.StatusOK, map[string]any{"agents": out})
	})
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(docs[AccessOf(r.Context())])
	})
	return Authorized(runs.BoundReads(mux), tokens), nil
}

// keptRun reads the record of the run the request's path names, within
// the bound on reading (h holds it: a record read back from its file is
// decoded whole, up to 64 MiB), and answers 404 for an id that is not one
// and for a run not kept or not the token's to see. ok is false when it
// answered, or when the client went while it waited.
func keptRun(w http.ResponseWriter, r *http.Request, runs *Runs, h *held) (id string, rec *Record, ok bool) {
	id = r.PathValue("id")
	if !idPattern.MatchString(id) {
		reply(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("%q is not a run's id (32 hex digits)", id)})
		return id, nil, false
	}
	rec, err := runs.getHeld(r.Context(), id, h)
	if err != nil {
		return id, nil, false
	}
	if rec == nil || !AccessOf(r.Context()).Allows(rec.Agent) {
		reply(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("no run %s is kept here", id)})
		return id, nil, false
	}
	return id, rec, true
}

// budgetParams are the bounds a run's request may narrow.
var budgetParams = []any{
	map[string]any{"name": "deadline", "in": "query", "description": "narrows the agent's deadline: a Go duration, such as 30s", "schema": map[string]any{"type": "string"}},
	map[string]any{"name": "tools", "in": "query", "description": "narrows the agent's tool budget (calls)", "schema": map[string]any{"type": "integer", "minimum": 0}},
	map[string]any{"name": "tokens", "in": "query", "description": "narrows the agent's token budget", "schema": map[string]any{"type": "integer", "minimum": 1}},
	map[string]any{"name": "rounds", "in": "query", "description": "narrows the agent's bound on model calls", "schema": map[string]any{"type": "integer", "minimum": 1}},
}

// openAPI is the OpenAPI 3.1 document of the agents' runs.
func openAPI(agents []Agent, public string) ([]byte, error) {
	paths := map[string]any{}
	for _, a := range agents {
		name := a.Plan.Agent.Name
		in := json.RawMessage(`{}`)
		if a.Plan.Agent.Input != nil {
			in = a.Plan.Agent.Input.Schema
		}
		answer := json.RawMessage(`{"description": "the final text, as a JSON string"}`)
		if o := a.Plan.Agent.Output; o != nil {
			answer = o.Schema
		}
		result := map[string]any{"type": "object", "required": []string{"agent", "outcome", "bound", "usage", "digests"}, "properties": map[string]any{
			"agent":   map[string]any{"const": name},
			"outcome": map[string]any{"enum": []string{agentrt.OutcomeOK, agentrt.OutcomeError}},
			"bound":   map[string]any{"type": "string"},
			"answer":  answer,
			"error":   map[string]any{"type": "string"},
			"exit":    map[string]any{"type": "integer", "description": "the exit code agentc run would have ended the run with"},
			"usage":   map[string]any{"type": "object"},
			"digests": map[string]any{"type": "object", "properties": map[string]any{"contract": map[string]any{"const": string(a.Plan.Digests.Contract)}, "plan": map[string]any{"const": string(a.Plan.Digests.Plan)}}},
		}}
		errBody := map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
		paths["/v1/agents/"+name+"/runs"] = map[string]any{"post": map[string]any{
			"operationId": "run_" + name,
			"parameters":  budgetParams,
			"summary":     "Run " + name,
			"description": a.Plan.Agent.Description,
			"requestBody": map[string]any{"required": a.Plan.Agent.Input != nil, "content": map[string]any{"application/json": map[string]any{"schema": in}}},
			"responses": map[string]any{
				"200": map[string]any{"description": "the run was made; its outcome says how it ended", "content": map[string]any{"application/json": map[string]any{"schema": result}}},
				"400": withDesc(errBody, "the body is not one JSON value"),
				"401": withDesc(errBody, "no bearer token, or another"),
				"408": withDesc(errBody, "the body came too slowly: it must begin within 10 s of the server's reading it, then come at 16 KiB a second at least; nothing ran"),
				"413": withDesc(errBody, "the body is too large"),
				"422": withDesc(errBody, "the input contract refuses the input; nothing ran"),
				"429": withDesc(errBody, "the token's clients have as many runs going as the server allows at once (--runs-per-token); nothing ran"),
			},
			"x-agentc-contract": string(a.Plan.Digests.Contract),
			"x-agentc-plan":     string(a.Plan.Digests.Plan),
		}}
	}
	errBody := map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	idParam := map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string", "pattern": "^[0-9a-f]{32}$"}}
	// record is an answer holding a run's record, in one of states.
	record := func(desc string, states ...string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "required": []string{"id", "agent", "plan", "state", "started"},
			"properties": map[string]any{"state": map[string]any{"enum": states}}}}}}
	}
	paths["/v1/runs/{id}"] = map[string]any{"get": map[string]any{
		"operationId": "get_run",
		"summary":     "A run's record: its state, input, result and report",
		"parameters":  []any{idParam},
		"responses": map[string]any{
			"200": record("the run's record", StateRunning, StateDone, StateInterrupted, StateCancelled),
			"401": withDesc(errBody, "no bearer token, or another"),
			"404": withDesc(errBody, "no such run is kept here"),
		},
	}}
	paths["/v1/runs/{id}/cancel"] = map[string]any{"post": map[string]any{
		"operationId": "cancel_run",
		"summary":     "End a run in flight, as its client's going away ends it; answers once it has ended",
		"parameters":  []any{idParam},
		"responses": map[string]any{
			"200": record("the run's record as it ended: cancelled, or done where it ended on its own first", StateDone, StateCancelled),
			"401": withDesc(errBody, "no bearer token, or another"),
			"404": withDesc(errBody, "no such run is kept here"),
			"409": withDesc(errBody, "the run is not in flight in this server (it has ended, another server runs it, or it runs on Temporal)"),
		},
	}}
	paths["/v1/approvals"] = map[string]any{"get": map[string]any{
		"operationId": "list_approvals",
		"summary":     "The calls waiting for a person's approval",
		"responses": map[string]any{
			"200": map[string]any{"description": "the calls waiting, oldest first", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{"approvals": map[string]any{"type": "array"}}}}}},
			"401": withDesc(errBody, "no bearer token, or another"),
		},
	}}
	paths["/v1/runs/{id}/approvals/{key}"] = map[string]any{"post": map[string]any{
		"operationId": "decide_approval",
		"summary":     "Decide a call waiting for approval",
		"parameters":  []any{idParam, map[string]any{"name": "key", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}},
		"requestBody": map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "required": []string{"approve"}, "additionalProperties": false,
			"properties": map[string]any{"approve": map[string]any{"type": "boolean"}, "for_run": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}}}}}},
		"responses": map[string]any{
			"200": map[string]any{"description": "decided"},
			"400": withDesc(errBody, "the body is not a decision"),
			"401": withDesc(errBody, "no bearer token, or another"),
			"404": withDesc(errBody, "no such call waits (never asked, or decided already)"),
		},
	}}
	doc := map[string]any{
		"openapi":    "3.1.0",
		"info":       map[string]any{"title": "agentc agents", "version": "1"},
		"paths":      paths,
		"components": map[string]any{"schemas": map[string]any{"Error": map[string]any{"type": "object", "required": []string{"error", "exit"}, "properties": map[string]any{"error": map[string]any{"type": "string"}, "exit": map[string]any{"type": "integer", "description": "the exit code of the same refusal on the command line: 2 refused, 1 the server's failure"}}}}, "securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
		"security":   []any{map[string]any{"bearer": []string{}}},
	}
	if public != "" {
		doc["servers"] = []any{map[string]any{"url": public}}
	}
	return json.MarshalIndent(doc, "", "  ")
}

func withDesc(body map[string]any, desc string) map[string]any {
	out := map[string]any{"description": desc}
	for k, v := range body {
		out[k] = v
	}
	return out
}

// sseWriter writes a run's events as server-sent events, each a JSON
// object named by its type, with every secret replaced; the stream's
// status, 200, is sent with its first event.
type sseWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	secrets *redact.Set
	sent    bool
	// broken says a write to the client failed (or, under BoundWrites,
	// took past its wait): the stream is given up, and the run goes on
	// without it.
	broken bool
}

func (s *sseWriter) started() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

func (s *sseWriter) send(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sent {
		s.w.Header().Set("Content-Type", "text/event-stream")
		s.w.Header().Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
		s.sent = true
	}
	if s.broken {
		return
	}
	if s.secrets != nil {
		b = s.secrets.JSON(b)
	}
	// Events are written from the run that makes them: a client that
	// stops reading would hold the run on a write that never ends, but
	// for BoundWrites, whose failed write gives the stream up.
	_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if err == nil {
		if err = http.NewResponseController(s.w).Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil
		}
	}
	if err != nil {
		s.broken = true
	}
}

func reply(w http.ResponseWriter, status int, v any) {
	if e, ok := v.(apiError); ok && e.Exit == 0 {
		e.Exit = 2
		if status >= 500 {
			e.Exit = 1
		}
		v = e
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// runStatus is the status of a run refused with err, a public error
// (Runs.Public).
func runStatus(err error) int {
	var ie *agentrt.InputError
	var be *BudgetsError
	var busy *BusyError
	var short *StorageError
	switch {
	case errors.As(err, &ie):
		return http.StatusUnprocessableEntity
	case errors.As(err, &be):
		return http.StatusBadRequest
	case errors.As(err, &busy):
		return http.StatusTooManyRequests
	case errors.As(err, &short):
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// runInput reads a run's input from r's body, at most limit bytes: JSON,
// or, multi, a multipart form of the input and the agent's files
// (multipartInput). A body it refuses is its status and why.
func runInput(w http.ResponseWriter, r *http.Request, files []plan.FileField, multi bool, limit int64) (json.RawMessage, map[string]string, int, error) {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if multi {
		return multipartInput(r, files)
	}
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the body is larger than the %d bytes a run's input may be", limit)
	case err != nil:
		return nil, nil, statusOf(err), fmt.Errorf("reading the body: %w", err)
	case !json.Valid(body) && len(body) > 0:
		return nil, nil, http.StatusBadRequest, errors.New(notJSON(body))
	}
	return body, nil, 0, nil
}

// decisionOfBody reads the body of a decision: an I-JSON object (a member
// named twice would decide by its last value, where another reader of
// the same decision reads its first) of approve, a boolean, and perhaps
// for_run, a boolean, and reason, a string, each named exactly so.
// encoding/json matches a member to a field ignoring case: read into
// Decision, {"approve": false, "Approve": true} approved, where a client's
// log, or jq, reads a no.
func decisionOfBody(body []byte) (Decision, error) {
	var d Decision
	if err := answerNotIJSON(body); err != nil {
		return d, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return d, errors.New("the body is not a JSON object")
	}
	for name, v := range members {
		ok, want := false, "true or false"
		switch name {
		case "approve":
			var b bool
			ok, d.Approve = isJSON(v, &b), &b
		case "for_run":
			ok = isJSON(v, &d.ForRun)
		case "reason":
			ok, want = isJSON(v, &d.Reason), "a string"
		default:
			return d, fmt.Errorf("member %.100q is not one of a decision's (approve, for_run, reason: named as written here)", name)
		}
		if !ok {
			return d, fmt.Errorf("%s is not %s", name, want)
		}
	}
	if d.Approve == nil {
		return d, errors.New("approve is missing")
	}
	return d, nil
}

// isJSON decodes v into p, and reports whether it was a value of p's
// type: null, which leaves p as it was, is not.
func isJSON(v json.RawMessage, p any) bool {
	return string(bytes.TrimSpace(v)) != "null" && json.Unmarshal(v, p) == nil
}

// notJSON says why body, which json.Valid refused, is not taken: it is
// not JSON, or it is but nests deeper than the decoder follows.
func notJSON(body []byte) string {
	var v json.RawMessage
	if err := json.Unmarshal(body, &v); err != nil && strings.Contains(err.Error(), "exceeded max depth") {
		return "the body nests arrays and objects deeper than the 10,000 levels a run's input may"
	}
	return "the body is not one JSON value: a run's input is JSON"
}
