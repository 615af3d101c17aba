package runcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
	"golang.org/x/net/netutil"

	"agentc.dev/agentc/internal/leaf/atomicfile"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/internal/termtext"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/filestore"
	"agentc.dev/agentc/runtime/redact"
	"agentc.dev/agentc/runtime/tool"
	"agentc.dev/agentc/serve"
	"agentc.dev/agentc/telemetry"
)

// ServeFlags are agentc serve's flags.
type ServeFlags struct {
	model, approve, lock string
	http, tokenFile      string
	journalDir, ready    string
	publicURL            string
	minFree              string
	grace, deadline      time.Duration
	mcpIdle              time.Duration
	mcpSessions          int
	runsPerToken         int
	toolBudget, tokens   int
	rounds               int
	changed              func(string) bool
	remote               Remote
	poolTokens           int64
	rateLimits           []string
	requireLock          bool
	rules                RulesFunc
	retarget             RetargetFunc
	a2a                  A2AFunc
}

// A2AFunc makes the handler that serves agents over A2A under /a2a/ (the
// agentc program's, package serve/a2a), given the server's URL and the
// bearer tokens.
type A2AFunc func(agents []serve.Agent, runs *serve.Runs, base string, tokens *serve.Tokens) http.Handler

// SetA2A sets what serves the agents over A2A beside MCP and the HTTP
// API, under --http; nil serves no A2A.
func (f *ServeFlags) SetA2A(a A2AFunc) { f.a2a = a }

// Register defines the flags on fs.
func (f *ServeFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.model, "model", "", `answer every call with another provider, or "test", the offline test model`)
	fs.StringVar(&f.approve, "approve", approveNo, "tool calls that need approval: no (deny them all; the model reads the denial), yes (approve them all), or ask (the person at the MCP client, where it can be asked, else over the HTTP API: GET /v1/approvals, POST /v1/runs/ID/approvals/KEY)")
	fs.StringVar(&f.journalDir, "journal-dir", "", "journal each run into DIR/ID.jsonl and keep its record in DIR/ID.json (replay, view and export any served run); runs a stop interrupted are resumed when the server starts again on DIR")
	fs.StringVar(&f.minFree, "min-free", "1GiB", "start a run only while the disks where the server keeps runs (--journal-dir, the file store) have this much room free, in bytes or with KiB, MiB, GiB or TiB; past it a request that would start a run is refused (HTTP 507, an MCP call's error, an A2A task rejected); 0 for no bound")
	fs.StringVar(&f.publicURL, "public-url", "", "with --http, the URL clients reach the server at where it is not the address it listens on (behind a proxy, in a container): A2A agent cards name their endpoints under it and the OpenAPI document names it as its server (default: the address it listens on, an unspecified host as loopback; the document names none)")
	fs.StringVar(&f.ready, "ready-file", "", "with --http, once the server listens, write its URL to this file (whole), and remove it when the server stops taking requests: for scripts and supervisors that start it on port 0")
	fs.DurationVar(&f.deadline, "deadline", 0, "override every agent's budgets.deadline; a request may narrow it further")
	fs.IntVar(&f.toolBudget, "tool-budget", 0, "override every agent's budgets.tools")
	fs.IntVar(&f.tokens, "token-budget", 0, "override every agent's budgets.tokens")
	fs.IntVar(&f.rounds, "rounds", 0, "override every agent's budgets.rounds (model calls)")
	fs.Int64Var(&f.poolTokens, "pool-tokens", 0, "one token pool every served run draws on (and agents they call as tools); calls reserve their worst case before they are sent, and a run the pool cannot serve ends on it")
	fs.DurationVar(&f.grace, "grace", 30*time.Second, "on SIGINT or SIGTERM, how long runs in flight may go on before they are interrupted (resumable with --journal-dir)")
	fs.StringVar(&f.lock, "lock", "", "check the agents against this lock file (default: the nearest agentc.sum at or above each agent's directory)")
	fs.BoolVar(&f.requireLock, "require-lock", false, "refuse to serve an agent the lock file does not hold, or without a lock file")
	fs.DurationVar(&f.mcpIdle, "mcp-idle", serve.DefaultSessionIdle, "with --http, close an MCP session that has had no request for this long (its client's next request is 404, and it opens a new session)")
	fs.IntVar(&f.mcpSessions, "mcp-sessions", serve.DefaultSessionsPerToken, "with --http, the most MCP sessions the clients of one token hold open at once; past it, a request that would open another is refused 429")
	fs.IntVar(&f.runsPerToken, "runs-per-token", serve.DefaultRunsPerToken, "with --http, the most runs the clients of one token have going at once, 0 for no bound; past it, a request that would start another is refused (HTTP 429, an MCP call's error, an A2A task rejected)")
	fs.StringVar(&f.http, "http", "", "serve MCP's streamable HTTP transport on HOST:PORT (at /mcp) instead of standard input and output; clients send a token of $"+ServeTokenVar+" or --token-file")
	RegisterRateLimit(fs, &f.rateLimits)
	fs.StringVar(&f.tokenFile, "token-file", "", "with --http, read the bearer tokens clients must send from this file, one a line: TOKEN (every agent) or TOKEN AGENT,AGENT (those agents alone), lines starting with # skipped (default: $"+ServeTokenVar+"'s one token, every agent)")
}

// SetRemote makes the server run each agent elsewhere, with r (agentc's
// Temporal client): the server is then a front for the workers.
func (f *ServeFlags) SetRemote(r Remote) { f.remote = r }

// SetChanged sets what says whether a flag was given.
func (f *ServeFlags) SetChanged(c func(string) bool) { f.changed = c }

// CheckRemote refuses the flags a server whose runs go to Temporal's
// workers leaves to them (SetChanged says which were given): called
// before the server dials Temporal too, so that a usage error is said
// as one whether or not the server can be reached.
func (f *ServeFlags) CheckRemote() error {
	if f.changed == nil {
		return nil
	}
	for _, fl := range []string{"journal-dir", "approve", "model", "rate-limit", "pool-tokens"} {
		if f.changed(fl) {
			return UsageError("--%s does not go with --temporal: the workers run the agents, keep their histories and decide their approvals (agentc approve); pace and pick their models there (agentc worker)", fl)
		}
	}
	return nil
}

// SetApproveRules sets what decides calls by approve_if before --approve.
func (f *ServeFlags) SetApproveRules(r RulesFunc) { f.rules = r }

// SetRetarget sets what makes a plan for the model --model names.
func (f *ServeFlags) SetRetarget(r RetargetFunc) { f.retarget = r }

// Serve serves the agents at paths (manifests, compiled on the fly, or
// plans) as tools of one MCP server on the process's standard input and
// output, until the client closes it or a stop signal comes. Each agent
// is loaded and checked against the lock file, its tools started and its
// model made, before anything is served; one that cannot be is an error,
// and nothing is served. What the runs say goes to standard error.
// version names the server in its handshake.
func Serve(ctx context.Context, e Env, compile LoadFunc, version string, paths []string, f ServeFlags) error {
	secrets := &redact.Set{}
	for _, v := range ProviderSecrets() {
		secrets.Add(v)
	}
	// What the server prints quotes parties it does not trust: a client's
	// or a token holder's denial reason, a provider's error, a
	// collector's answer, a tool's output. As agentc run's, what a
	// terminal would act on in them is shown escaped, after redaction.
	e.Stderr = secrets.Writer(termtext.Writer(e.Stderr))
	// The error it ends with is redacted too, as agentc run's is.
	err := serveAgents(ctx, e, compile, version, paths, f, secrets)
	var xe *ExitError
	if errors.As(err, &xe) && xe.Err != nil {
		return &ExitError{Code: xe.Code, Err: secrets.Error(xe.Err)}
	}
	return secrets.Error(err)
}

func serveAgents(ctx context.Context, e Env, compile LoadFunc, version string, paths []string, f ServeFlags, secrets *redact.Set) error {
	if f.approve != approveNo && f.approve != approveYes && f.approve != approveAsk {
		return UsageError("--approve %q: want no, yes or ask (there is no terminal to ask on: standard input is the client's)", f.approve)
	}
	if f.grace < 0 {
		return UsageError("--grace %s: want a duration of 0 or more", f.grace)
	}
	if f.mcpIdle <= 0 {
		return UsageError("--mcp-idle %s: want a duration above 0", f.mcpIdle)
	}
	if f.mcpSessions <= 0 {
		return UsageError("--mcp-sessions %d: want 1 or more", f.mcpSessions)
	}
	if f.runsPerToken < 0 {
		return UsageError("--runs-per-token %d: want 0 (no bound) or more", f.runsPerToken)
	}
	minFree, err := parseSize(f.minFree)
	if err != nil {
		return UsageError("--min-free %q: %v", f.minFree, err)
	}
	changed := f.changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	if f.remote != nil {
		if err := f.CheckRemote(); err != nil {
			return err
		}
	}
	var pool *agentrt.Pool
	if changed("pool-tokens") {
		if f.poolTokens <= 0 {
			return UsageError("--pool-tokens must be positive")
		}
		pool = agentrt.NewPool(f.poolTokens)
	}
	budgets, err := BudgetOverrides(changed, f.toolBudget, f.tokens, f.rounds)
	if err != nil {
		return err
	}
	if changed("deadline") {
		if f.deadline <= 0 {
			return UsageError("--deadline must be positive")
		}
		budgets.Deadline = &f.deadline
	}
	var tokenLines []tokenLine
	var tokensFrom string
	switch {
	case f.http != "":
		var err error
		if tokenLines, tokensFrom, err = serveTokens(f); err != nil {
			return err
		}
		host, _, err := net.SplitHostPort(f.http)
		if err != nil {
			return UsageError("--http %q: give HOST:PORT (127.0.0.1:8080): %v", f.http, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			fmt.Fprintf(e.Stderr, "agentc: --http %s listens beyond this machine: whoever reaches it with the token runs the agents, on your keys\n", f.http)
		}
		if f.publicURL != "" {
			if f.publicURL, err = publicURL(f.publicURL); err != nil {
				return err
			}
		}
	case f.tokenFile != "":
		return UsageError("--token-file goes with --http")
	case f.ready != "":
		return UsageError("--ready-file goes with --http")
	case f.publicURL != "":
		return UsageError("--public-url goes with --http")
	case changed("mcp-idle"):
		return UsageError("--mcp-idle goes with --http: over stdio the one session lasts as long as its client")
	case changed("mcp-sessions"):
		return UsageError("--mcp-sessions goes with --http: over stdio there is one session, its client's")
	case changed("runs-per-token"):
		return UsageError("--runs-per-token goes with --http: over stdio there are no tokens, and the one client's runs are not bounded")
	}
	hosts, err := keyHosts(os.Getenv(KeyHostsVar))
	if err != nil {
		return err
	}
	does := "stopping the server"
	if f.http != "" {
		does = fmt.Sprintf("stopping the server: it takes no new request, and the runs in flight have %s to end", f.grace)
	}
	ctx, sigs := onStopSignalSaying(ctx, e, does)
	defer sigs.stop()
	runs, err := serve.NewRuns(f.journalDir, 0, f.http != "")
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: fmt.Errorf("--journal-dir: %w", err)}
	}
	runs.SetExitCodes(runExit)
	runs.SetRunsPerToken(f.runsPerToken)
	// What failed the server, in full, is its operator's to read: a
	// client is given a reference to it (serve.Runs.Public).
	runs.SetLog(func(line string) { fmt.Fprintf(e.Stderr, "agentc: %s\n", line) })
	var tel *telemetry.Telemetry
	if e.Telemetry != nil {
		t, flush, err := e.Telemetry(ctx, e.Stderr, secrets)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: secrets.Error(err)}
		}
		defer flush()
		if tel = t; tel != nil {
			runs.OnRun(tel.RunEvents)
		}
	}
	if f.http != "" {
		runs.OnPending(func(p *serve.Pending) {
			fmt.Fprintf(e.Stderr, "agentc: run %s: call %s of tool %s waits for approval: GET /v1/approvals, POST /v1/runs/%s/approvals/%s\n", p.Run, p.Key, p.Tool, p.Run, p.Key)
		})
	}
	rf := Flags{approve: f.approve, rules: f.rules, lock: f.lock, requireLock: f.requireLock, retarget: f.retarget, model: f.model}
	var approve agentrt.Approver
	if f.approve == approveAsk {
		// The person at the client, or the API's: never the terminal.
		approve = runs.Ask
		if f.rules != nil {
			approve = f.rules(approve)
		}
	} else if approve, err = approver(e, rf); err != nil {
		return err
	}
	events := eventPrinter(e.Stderr, nil, secrets)
	ls, err := ReadLimits(f.rateLimits, os.Getenv(RateLimitsVar), nil, KnownProviders(e.Providers))
	if err != nil {
		return err
	}
	limits := ls.Set(e.Stderr)
	// The files the runs are given, and their tools' results carry: beside
	// the journals, else in a directory removed when the server ends;
	// made for the first agent that needs one.
	var store *filestore.Store
	removeStore := func() {}
	defer func() { removeStore() }()
	fileStore := func(p *plan.Plan) (*filestore.Store, error) {
		if store != nil || !takesFiles(p) && !takesToolFiles(p) {
			return store, nil
		}
		if f.journalDir == "" {
			s, done, err := storeFor(Flags{})
			store, removeStore = s, done
			return s, err
		}
		s, err := filestore.Open(filepath.Join(f.journalDir, "files"))
		if err != nil {
			return nil, &ExitError{Code: ExitFindings, Err: fmt.Errorf("--journal-dir: %w", err)}
		}
		store = s
		return s, nil
	}
	var agents []serve.Agent
	from := map[string]string{} // an agent's name: the path it came from
	for _, path := range paths {
		p, dir, err := loadLocked(e, compile, rf, path)
		if err != nil {
			return err
		}
		if err := servedOnce(from, p.Agent.Name, path); err != nil {
			return err
		}
		af := rf
		if p, af, err = retarget(e, p, af); err != nil {
			return err
		}
		if f.remote != nil {
			// Run on the workers: nothing of the agent is made here.
			var workerFiles *filestore.Store
			if takesFiles(p) {
				// A run's files go in the store its workers read, as
				// agentc run --temporal puts them.
				if workerFiles, err = remoteStore(p); err != nil {
					return err
				}
			}
			p := p
			agents = append(agents, serve.Agent{Plan: p, Secrets: secrets, Files: workerFiles, Remote: func(ctx context.Context, id string, input json.RawMessage, o agentrt.Overrides, events func(agentrt.Event)) (*agentrt.Report, error) {
				return f.remote(ctx, p, input, RemoteRun{ID: id, Budgets: narrowBudgets(p, budgets, o), Provider: af.model, Events: events})
			}})
			continue
		}
		modelFor := newModelFor(providerFlags{model: af.model, keyHosts: hosts, extra: e.Providers, pace: limits, log: e.Stderr, secrets: secrets}, os.Getenv, events)
		model, err := modelFor(p)
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		if pool != nil && p.Agent.Model.MaxOutputTokens == 0 {
			fmt.Fprintf(e.Stderr, "agentc: agent %s declares no model.max_output_tokens: each call reserves all the pool has left, so its calls go one at a time, and a reply longer than that could still overspend it\n", p.Agent.Name)
		}
		// What the agent's mcp servers offered, for its runs' journals: a
		// replay reads them there instead of starting the servers.
		var served serversSeen
		tools, closeTools, err := tool.Build(ctx, p, tool.Env{BaseDir: dir, ModelFor: modelFor, Events: events, Pool: pool,
			HTTPTransport: e.HTTPTransport, Provider: af.model, Secrets: secrets,
			OnServer: served.add})
		if err != nil {
			return toolsError(err, sigs, "the agent's tools changed")
		}
		defer closing(e, closeTools)
		files, err := fileStore(p)
		if err != nil {
			return err
		}
		r, err := agentrt.New(p, agentrt.Options{Model: model, FallbackModel: modelFor, Tools: tools, Events: events,
			Provider: af.model, Secrets: secrets, Approver: approve, Budgets: budgets, Content: tel != nil && tel.Content(), Files: files, Pool: pool})
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		journalTools, err := served.header()
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		agents = append(agents, serve.Agent{Plan: p, Runner: r, Files: files, Events: events, Secrets: secrets, JournalTools: journalTools})
	}
	// The disks runs are kept on: the journal directory, and each file
	// store the runs put files in.
	roomDirs := []string{f.journalDir}
	for _, a := range agents {
		if a.Files != nil {
			roomDirs = append(roomDirs, a.Files.Dir())
		}
	}
	runs.SetMinFree(minFree, roomDirs...)
	var tokens *serve.Tokens
	if f.http != "" {
		if tokens, err = serveTokenSet(tokenLines, tokensFrom, agents); err != nil {
			return err
		}
	}
	s, err := serve.MCP(version, agents, runs)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	// Runs a stop interrupted go on where their journals end; whatever
	// ends the server, no run outlives it unrecorded.
	defer func() { runs.Stop(); runs.Wait() }()
	if err := runs.Resume(agents, func(msg string) { fmt.Fprintf(e.Stderr, "agentc: %s\n", msg) }); err != nil {
		return &ExitError{Code: ExitFindings, Err: fmt.Errorf("--journal-dir: %w", err)}
	}
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = a.Plan.Agent.Name
	}
	if f.http != "" {
		api, err := serve.APIAt(agents, runs, tokens, f.publicURL)
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		h, err := serve.MCPHandler(version, agents, runs, tokens, serve.SessionBounds{Idle: f.mcpIdle, PerToken: f.mcpSessions})
		if err != nil {
			return &ExitError{Code: ExitFindings, Err: err}
		}
		var a2a func(base string) http.Handler
		if f.a2a != nil {
			a2a = func(base string) http.Handler { return f.a2a(agents, runs, base, tokens) }
		}
		return serveHTTP(ctx, e, f, h, api, a2a, names, runs, tel, sigs)
	}
	fmt.Fprintf(e.Stderr, "agentc: serving %s over MCP on standard input and output: %v\n", agentsText(len(agents)), names)
	// A stop signal interrupts the runs in flight (resumable with
	// --journal-dir), and the session ends once each call in flight has
	// its result; the client's own end of the session cancels them.
	err = serve.ServeSession(ctx, s, &mcp.IOTransport{Reader: readCloser{e.Stdin}, Writer: writeCloser{e.Stdout}}, runs)
	if c := sigs.code(); c != 0 {
		return &ExitError{Code: c}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	return nil
}

// servedOnce notes that path gives the agent named name, and refuses a
// second agent of that name, naming both paths, before any of its tools
// starts: a served agent's tool, endpoints and card are named by it. The
// usual cause is a plan compiled beside its manifest, in a directory
// served whole.
func servedOnce(from map[string]string, name, path string) error {
	prev, ok := from[name]
	if !ok {
		from[name] = path
		return nil
	}
	return UsageError("two agents are named %s (%s and %s): a served agent's tool, endpoints and card are named by it; serve one of them (where one is a plan compiled from the other, keep plans in a directory of their own)", name, prev, path)
}

// listenURL is the URL a client on this machine reaches a server
// listening at addr on: the host as --http gave it (asked), with the port
// it listens on, and an unspecified host (none, 0.0.0.0, ::) as loopback
// of its family, where Go's listener says [::] for each; every says the
// host was unspecified.
func listenURL(asked string, addr net.Addr) (u string, every bool) {
	host, _, _ := net.SplitHostPort(asked)
	port := 0
	if a, ok := addr.(*net.TCPAddr); ok {
		port = a.Port
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host, every = "127.0.0.1", true
	case ip != nil && ip.IsUnspecified():
		host, every = "127.0.0.1", true
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)), every
}

// publicURL checks what --public-url gives: an absolute http or https URL
// naming a host, with no user, query or fragment (a path is a proxy's
// prefix), and returns it without a trailing slash.
func publicURL(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		// The reason alone: the URL may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", UsageError("--public-url is not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Opaque != "":
		return "", UsageError("--public-url %q: give an http or https URL with a host (https://agents.example.com)", s)
	case u.User != nil:
		// Not quoted: a password is not said.
		return "", UsageError("--public-url holds a user name or password, which every agent card would show; give the URL without them")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", UsageError("--public-url %q: holds a query or fragment; the cards add their paths after it", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// serveHTTP serves h at /mcp, and api at /v1/ and /openapi.json, on addr
// until ctx ends (a stop signal): then
// it takes no more requests, and gives those in flight a grace period.
func serveHTTP(ctx context.Context, e Env, f ServeFlags, h *serve.MCPHTTP, api http.Handler, a2a func(base string) http.Handler, names []string, runs *serve.Runs, tel *telemetry.Telemetry, sigs *signals) error {
	ln, err := net.Listen("tcp", f.http)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: fmt.Errorf("--http: %w", err)}
	}
	base, every := listenURL(f.http, ln.Addr())
	public, at := base, ""
	if every {
		at = " (listening on every interface)"
	}
	if f.publicURL != "" {
		public, at = f.publicURL, at+" (clients at "+f.publicURL+")"
	}
	var stopping atomic.Bool
	mux := serve.Mux(h, api, stopping.Load)
	also := ""
	if a2a != nil {
		mux.Handle("/a2a/", a2a(public))
		also = ", A2A at /a2a/NAME"
	}
	var handler http.Handler = mux
	if tel != nil {
		// Each request a server span, its runs under it.
		handler = tel.Server(mux)
	}
	srv := newHTTPServer(handler, e.Stderr)
	fmt.Fprintf(e.Stderr, "agentc: serving %s at %s%s: MCP at /mcp, runs at /v1/agents/NAME/runs, the OpenAPI document at /openapi.json%s: %v\n", agentsText(len(names)), base, at, also, names)
	// No longer ready once it stops taking requests: the ready file goes
	// then, once.
	unready := func() {}
	if f.ready != "" {
		remove, err := writeReady(f.ready, base+"\n")
		if err != nil {
			ln.Close()
			return &ExitError{Code: ExitFindings, Err: fmt.Errorf("--ready-file: %w", err)}
		}
		unready = sync.OnceFunc(remove)
		defer unready() // where serving failed
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(netutil.LimitListener(ln, maxConns)) }()
	select {
	case err = <-done:
		runs.Stop()
	case <-ctx.Done():
		stopping.Store(true)
		unready() // it takes no new request
		grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.grace)
		defer cancel()
		// No new request is taken; those in flight, and runs resumed in
		// the background, have the grace period to end.
		shut, stopShut := context.WithCancel(context.WithoutCancel(ctx))
		defer stopShut()
		shutdown := make(chan error, 1)
		go func() { shutdown <- srv.Shutdown(shut) }()
		ended := make(chan struct{})
		go func() { runs.Wait(); close(ended) }()
		stopped := false
		select {
		case <-ended:
			// Once the MCP calls are answered, the MCP sessions close,
			// and their event streams (a client's GET, open as long as
			// its session) with them: the shutdown waits for no client
			// to go away. What is still in flight has the rest of the
			// grace period.
			_ = h.Close(grace)
			select {
			case err = <-shutdown:
				stopped = true
			case <-grace.Done():
			}
		case <-grace.Done():
		}
		if !stopped {
			// The grace period is over: the runs still in flight are
			// interrupted, and their clients told so before the
			// connections close, which have a last while to.
			if n := runs.InFlight(); n > 0 {
				runsText := fmt.Sprintf("%d runs", n)
				if n == 1 {
					runsText = "1 run"
				}
				fmt.Fprintf(e.Stderr, "agentc: the grace period (%s) is over: %s in flight interrupted%s\n", f.grace, runsText, resumeNote(f.journalDir, f.remote != nil))
			}
			runs.Stop()
			last, cancelLast := context.WithTimeout(context.WithoutCancel(ctx), lastWhile)
			defer cancelLast()
			_ = h.Close(last)
			select {
			case err = <-shutdown:
			case <-last.Done():
				stopShut()
				<-shutdown
				srv.Close()
				err = nil
			}
		}
	}
	if c := sigs.code(); c != 0 {
		return &ExitError{Code: c}
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	return nil
}

// writeReady writes said to the ready file at path, whole, and returns
// what removes it: only where it is still the file this server wrote,
// holding what it said. A server stops for a while (its grace period,
// and more), and one started in its place with the same file (on the same
// port, its URL the same) may have written it meanwhile: its file stays.
// A ready file that is no regular file (a FIFO, /dev/stdout) is written
// into, and never removed.
func writeReady(path, said string) (remove func(), err error) {
	if err := atomicfile.Write(path, []byte(said), 0o644); err != nil {
		return nil, err
	}
	wrote, err := os.Lstat(path)
	if err != nil || !wrote.Mode().IsRegular() {
		return func() {}, nil
	}
	return func() {
		now, err := os.Lstat(path)
		if err != nil || !os.SameFile(wrote, now) {
			return
		}
		if b, err := userfile.Read(path, int64(len(said)), "the ready file"); err == nil && string(b) == said {
			os.Remove(path)
		}
	}, nil
}

// Connection bounds of agentc serve --http. Anyone who reaches the port
// may open a connection, token or none: a request's header must come
// within headerTimeout, and a connection idle between requests is closed
// after idleTimeout, so that connections nobody uses do not pile up until
// the server has no file descriptor left. A request's body and its answer
// are not bounded in time: a run, and its event stream, take as long as
// the run's own deadline allows; but each write of the answer has
// writeWait (serve.BoundWrites), so a client that stops reading holds
// nothing for long.
var (
	headerTimeout = 10 * time.Second
	idleTimeout   = 2 * time.Minute
	writeWait     = serve.DefaultWriteWait
	// lastWhile is how long a stopping server waits, once its runs have
	// ended, for its connections to close before it closes them.
	lastWhile = 10 * time.Second
)

// maxHeaderBytes bounds a request's header: a bearer token and an MCP
// session's headers take a few hundred bytes. At Go's default, 1 MB, a
// connection whose header never ended held about 2 MB of the server's
// memory, before any token was read.
const maxHeaderBytes = 64 << 10

// maxConns bounds the connections a server holds at once, so that those
// nobody has authenticated cannot hold its memory: past it a connection
// waits to be accepted until another closes (one whose header does not
// come within headerTimeout is closed).
const maxConns = 4096

// newHTTPServer is the server of agentc serve --http, serving handler.
// net/http's own lines (a handler's panic, which may quote what a client
// sent; a failed accept) go to stderr, the command's redacting and
// escaping writer, not to the process's standard error as they are.
func newHTTPServer(handler http.Handler, stderr io.Writer) *http.Server {
	return &http.Server{
		Handler:           serve.BoundWrites(handler, writeWait),
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          log.New(stderr, "agentc: ", 0),
	}
}

// narrowBudgets is what a run elsewhere is bound by, as overrides of its
// plan's budgets: the plan's, overridden by the server's, narrowed by the
// client's where those are tighter.
func narrowBudgets(p *plan.Plan, server, client agentrt.Overrides) agentrt.Overrides {
	out := server
	b := p.Agent.Budgets
	deadline, _ := b.DeadlineLimit() // one no run can take, the runner refuses
	if server.Deadline != nil {
		deadline = *server.Deadline
	}
	if client.Deadline != nil && (deadline == 0 || *client.Deadline < deadline) {
		out.Deadline = client.Deadline
	}
	tools := b.Tools
	if server.Tools != nil {
		tools = server.Tools
	}
	if client.Tools != nil && (tools == nil || *client.Tools < *tools) {
		out.Tools = client.Tools
	}
	tokens := b.Tokens
	if server.Tokens != nil {
		tokens = *server.Tokens
	}
	if client.Tokens != nil && (tokens == 0 || *client.Tokens < tokens) {
		out.Tokens = client.Tokens
	}
	rounds := b.RoundLimit()
	if server.Rounds != nil {
		rounds = *server.Rounds
	}
	if client.Rounds != nil && *client.Rounds < rounds {
		out.Rounds = client.Rounds
	}
	return out
}

// takesFiles reports whether an agent's input holds files.
func takesFiles(p *plan.Plan) bool {
	if p.Agent.Input == nil {
		return false
	}
	files, _ := plan.FileFields(p.Agent.Input.Schema)
	return len(files) > 0
}

// agentsText is "1 agent" or "N agents".
func agentsText(n int) string {
	if n == 1 {
		return "1 agent"
	}
	return fmt.Sprintf("%d agents", n)
}

// resumeNote says what becomes of the runs a stop interrupted.
func resumeNote(dir string, remote bool) string {
	if remote {
		return ": this server no longer waits on them, and they go on as their workflows on Temporal"
	}
	if dir == "" {
		return ", and lost: serve with --journal-dir to keep them resumable"
	}
	return "; each resumes when a server starts again with --journal-dir " + dir
}

// readCloser and writeCloser give the transport the process's standard
// input and output without closing them.
type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }

// parseSize reads a number of bytes, written as a whole number alone or
// followed by KiB, MiB, GiB or TiB (a space between them allowed).
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	shift := 0
	for i, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if rest, ok := strings.CutSuffix(t, u); ok {
			t, shift = strings.TrimSpace(rest), 10*(i+1)
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || t == "" || t[0] == '+' {
		return 0, errors.New("want a whole number of bytes, or one followed by KiB, MiB, GiB or TiB")
	}
	if n > math.MaxUint64>>shift {
		return 0, errors.New("too large")
	}
	return n << shift, nil
}
