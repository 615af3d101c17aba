package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/sync/semaphore"

	"agentc.dev/agentc/internal/leaf/atomicfile"
	"agentc.dev/agentc/internal/leaf/bodyrate"
	"agentc.dev/agentc/internal/leaf/diskfree"
	"agentc.dev/agentc/internal/leaf/jsonshape"
	"agentc.dev/agentc/internal/leaf/userfile"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
)

// The states of a served run.
const (
	StateRunning = "running"
	StateDone    = "done" // ended; its result's outcome says how
	// StateInterrupted: the server stopped before the run ended. With a
	// journal directory, the run is resumed, from its journal, when a
	// server starts again on that directory.
	StateInterrupted = "interrupted"
	// StateCancelled: its client went away before it ended (a closed
	// connection, a cancelled MCP call). It is not resumed.
	StateCancelled = "cancelled"
)

// Record is what a server keeps of a run: GET /v1/runs/{id}'s body, and,
// with a journal directory, DIR/ID.json beside its journal DIR/ID.jsonl.
type Record struct {
	ID      string     `json:"id"`
	Agent   string     `json:"agent"`
	Plan    string     `json:"plan"` // the plan digest it ran
	State   string     `json:"state"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Workflow is the run's workflow ID, for a run on Temporal (agentc
	// serve --temporal).
	Workflow string `json:"workflow,omitempty"`
	// Resumed counts the times a server resumed the run from its journal.
	Resumed int `json:"resumed,omitempty"`
	// Input is the run's input, as its client gave it but for its files,
	// which it names by digest in the server's store: a resumed run
	// starts from it again.
	Input json.RawMessage `json:"input,omitempty"`
	// Budgets are the bounds the client asked of the run, which narrowed
	// the agent's; a resumed run keeps them.
	Budgets *Budgets        `json:"budgets,omitempty"`
	Result  *RunResult      `json:"result,omitempty"`
	Report  *agentrt.Report `json:"report,omitempty"`
}

// DefaultKeep is how many ended runs a server keeps in memory.
const DefaultKeep = 1024

// DefaultKeepBytes bounds the ended runs' records a server keeps in
// memory by their size as JSON (their inputs, answers and reports): the
// oldest go first past it, as past DefaultKeep. A client may send inputs
// of up to MaxBodyBytes each; a thousand of them must not be held.
const DefaultKeepBytes = 64 << 20

// Runs keeps the runs a server makes, each under an id of its own: while
// they run, and once they end, their records (the last Keep in memory;
// every one on disk with a journal directory). It holds the calls they
// wait on for a person's approval (see Ask), and ends the runs still in
// flight when the server stops (Stop). Its methods are safe for
// concurrent use. A nil *Runs keeps nothing: each run still gets an id.
type Runs struct {
	dir       string
	keep      int
	keepBytes int64
	// api says pending approvals are listed and decided over the HTTP API.
	api bool

	stopCtx context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup

	onPending func(*Pending)
	onRun     func(context.Context) func(agentrt.Event)
	exitOf    func(*agentrt.Report) int
	log       func(string)

	schemas sync.Map // compiled input schemas, by plan digest

	// reading bounds the inputs being read at once, weighed by their
	// bytes (see read).
	reading *semaphore.Weighted
	// clock times request bodies (BoundReads); nil is the system's.
	clock bodyrate.Clock

	mu        sync.Mutex
	byID      map[string]*Record
	ended     []endedRun // ended runs in memory, oldest first
	heldBytes int64      // their records' size together
	pending   map[string]*Pending
	going     map[string]*inFlight // the runs in flight here
	// lentShares are the shares of the bound on reading MCP requests'
	// bodies were read under, by id (lend).
	lentShares map[string]*Share
	// perClient bounds the runs one token's clients have going at once
	// (0: none); active counts them, by the token's user (grant.user).
	perClient int
	active    map[string]int

	// minFree is the room a run must find on the file systems of
	// roomDirs to start (SetMinFree); lastShort is when a run was last
	// refused for it, so that the log says so once a minute at most.
	minFree   uint64
	roomDirs  []string
	lastShort time.Time
}

// DefaultRunsPerToken is how many runs the clients of one token may have
// going at once on a server over HTTP: each holds model calls, perhaps
// tool processes, and the provider's rate limit, and one client's loop
// must not start a thousand.
const DefaultRunsPerToken = 64

// SetRunsPerToken bounds the runs the clients of one token (a request's
// bearer token, over HTTP) have going at once: past it, a request that
// would start another is refused with a *BusyError before anything of it
// runs. Zero or less is no bound; runs over standard input and output,
// whose one client is the person's own, are never bounded. Set it before
// the server serves.
func (rs *Runs) SetRunsPerToken(n int) { rs.perClient = max(n, 0) }

// BusyError is a run refused because its client's token has as many runs
// going as the server allows (Runs.SetRunsPerToken). Another may start
// once one of them ends.
type BusyError struct{ Limit int }

func (e *BusyError) Error() string {
	return fmt.Sprintf("the clients of this token have as many runs going as the server allows at once (%d): start another when one ends", e.Limit)
}

// admit counts a run of the clients of the token whose user is who, or
// refuses it past the bound; release uncounts it.
func (rs *Runs) admit(who string) (release func(), err error) {
	if rs == nil || rs.perClient == 0 || who == "" {
		return func() {}, nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.active[who] >= rs.perClient {
		return nil, &BusyError{Limit: rs.perClient}
	}
	rs.active[who]++
	var once sync.Once
	return func() {
		once.Do(func() {
			rs.mu.Lock()
			defer rs.mu.Unlock()
			if rs.active[who]--; rs.active[who] == 0 {
				delete(rs.active, who)
			}
		})
	}, nil
}

// starting counts a run of the token the request ctx is of came with
// (Authorized put it in the context every front runs from), whose runs
// are bounded together (admit), and refuses it short of disk (roomy);
// release uncounts it.
func (rs *Runs) starting(ctx context.Context) (release func(), err error) {
	who := ""
	if g := grantOf(ctx); g != nil {
		who = g.user
	}
	if release, err = rs.admit(who); err != nil {
		return nil, err
	}
	if err := rs.roomy(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// DefaultMinFree is the room a served run must find on the disks where
// the server keeps runs to start: a client whose runs cost nothing (a
// deadline of a nanosecond) still has its input, files and journal kept,
// and must not fill the disk under the server and whatever shares it.
const DefaultMinFree = 1 << 30

// SetMinFree makes a run start only while the file system of each of
// dirs (the journal directory, the file store) has at least n bytes free
// for the server's user; past it, a request that would start a run is
// refused with a *StorageError before anything of it is read or kept. 0
// is no bound. Set it before the server serves.
func (rs *Runs) SetMinFree(n uint64, dirs ...string) {
	rs.minFree = n
	rs.roomDirs = nil
	for _, d := range dirs {
		if d != "" {
			rs.roomDirs = append(rs.roomDirs, d)
		}
	}
}

// StorageError is a run refused because a disk where the server keeps
// runs has less room than it needs (Runs.SetMinFree). It names no path:
// a client is told the server is short of room, the server's log where.
type StorageError struct{}

func (e *StorageError) Error() string {
	return "the server is short of disk space where it keeps runs, and starts none until some is freed"
}

// roomy refuses a run with a *StorageError when a disk where runs are
// kept has less room than the bound; the log says which, once a minute.
// A disk whose room cannot be read does not refuse runs: the write that
// fails says why.
func (rs *Runs) roomy() error {
	if rs == nil || rs.minFree == 0 {
		return nil
	}
	for _, d := range rs.roomDirs {
		free, ok, err := diskfree.Free(d)
		if !ok || err != nil || free >= rs.minFree {
			continue
		}
		rs.mu.Lock()
		say := time.Since(rs.lastShort) >= time.Minute
		if say {
			rs.lastShort = time.Now()
		}
		rs.mu.Unlock()
		if say {
			rs.logLine(fmt.Sprintf("refusing runs: %s has %s free, under the %s the server keeps free (--min-free)", d, userfile.About(int64(min(free, math.MaxInt64))), userfile.About(int64(min(rs.minFree, math.MaxInt64)))))
		}
		return &StorageError{}
	}
	return nil
}

// endedRun is an ended run kept in memory, and its record's size.
type endedRun struct {
	id   string
	size int64
}

// SetKeepBytes bounds the ended runs' records kept in memory by their
// size as JSON (DefaultKeepBytes unless set); the run that ended last is
// kept whatever its size.
func (rs *Runs) SetKeepBytes(n int64) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.keepBytes = n
}

// inFlight is a run in flight here.
type inFlight struct {
	ended     chan struct{}      // closed when it has ended, its record kept
	cancel    context.CancelFunc // ends it as cancelled; nil until it starts
	cancelled bool               // Cancel came before it started
}

// NewRuns returns the runs of a server. dir, when not empty, is the
// journal directory: each run is journaled into DIR/ID.jsonl, as agentc
// run --record journals, and its record kept in DIR/ID.json, so that any
// served run can be replayed, viewed and exported, and one the server's
// stop interrupted is resumed (Resume). keep bounds the ended runs kept
// in memory (0: DefaultKeep). api says the HTTP API is served, where
// pending approvals are listed and decided.
func NewRuns(dir string, keep int, api bool) (*Runs, error) {
	if keep <= 0 {
		keep = DefaultKeep
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("the journal directory: %w", err)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Runs{reading: semaphore.NewWeighted(MaxReading), dir: dir, keep: keep, keepBytes: DefaultKeepBytes, api: api, stopCtx: ctx, stop: stop, byID: map[string]*Record{}, pending: map[string]*Pending{}, going: map[string]*inFlight{}, lentShares: map[string]*Share{}, active: map[string]int{}}, nil
}

// OnPending sets what hears each call that comes to wait for approval
// over the API, once it can be decided (the server says so on standard
// error). Set it before the server serves.
func (rs *Runs) OnPending(f func(*Pending)) { rs.onPending = f }

// OnRun sets what makes, for each run, a second sink of its events, given
// the context the run is made in (an HTTP request's, with its span):
// telemetry records each run so. Set it before the server serves.
func (rs *Runs) OnRun(f func(context.Context) func(agentrt.Event)) { rs.onRun = f }

// SetLog sets where the server's own failures are told in full (see
// Public): its operator's log, not its clients; without it, the standard
// library's logger. Set it before the server serves.
func (rs *Runs) SetLog(f func(line string)) { rs.log = f }

// InternalError is what a client is told of a run the server failed for
// its own reasons (its journal directory, its file store, a run
// elsewhere it could not start or wait on): a reference to the whole
// error in the server's log, not the error, which can name the server's
// paths and hosts.
type InternalError struct {
	Ref string
	Err error
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("the server failed to run it; its log says why, under reference %s", e.Ref)
}

func (e *InternalError) Unwrap() error { return e.Err }

// Public returns what a client may be told of err, an error of Run: err
// itself where it is the client's (an input its contract refuses, an
// *agentrt.InputError; budgets it cannot narrow, a *BudgetsError; a run
// past its token's bound, a *BusyError; one refused for want of disk, a
// *StorageError), else an *InternalError, err told in full to the log SetLog set.
func (rs *Runs) Public(err error) error {
	var ie *agentrt.InputError
	var be *BudgetsError
	var in *InternalError
	var busy *BusyError
	var short *StorageError
	if err == nil || errors.As(err, &ie) || errors.As(err, &be) || errors.As(err, &in) || errors.As(err, &busy) || errors.As(err, &short) {
		return err
	}
	in = &InternalError{Ref: newID()[:12], Err: err}
	rs.logLine(fmt.Sprintf("a run failed (reference %s): %v", in.Ref, err))
	return in
}

// logLine tells the server's log (SetLog) a line.
func (rs *Runs) logLine(line string) {
	if rs != nil && rs.log != nil {
		rs.log(line)
	} else {
		log.Print(line) // no log set: the process's standard logger
	}
}

// SetExitCodes sets what gives a run's result the exit code agentc run
// would have ended it with. Set it before the server serves.
func (rs *Runs) SetExitCodes(f func(*agentrt.Report) int) { rs.exitOf = f }

// exit is a report's exit code, where the server knows its codes.
func (rs *Runs) exit(rep *agentrt.Report) *int {
	if rs == nil || rs.exitOf == nil || rep == nil {
		return nil
	}
	n := rs.exitOf(rep)
	return &n
}

// Stop ends the runs in flight (they end interrupted, each journal holding
// what completed), and Wait waits until each has kept its record.
func (rs *Runs) Stop() {
	if rs != nil {
		rs.stop()
	}
}

// Wait waits for the runs in flight, and those resumed, to end.
func (rs *Runs) Wait() {
	if rs != nil {
		rs.wg.Wait()
	}
}

// idPattern is what a run's id is: 32 lowercase hex digits. A request's
// id is checked against it before it names a file.
var idPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// runInfo is what a run's context carries for the approvals it asks: the
// run's id and agent, where its events go, and the MCP call it serves.
type runInfo struct {
	id, agent string
	notify    func(name string, v any)
	elicit    elicitFunc
}

type runInfoKey struct{}

func infoOf(ctx context.Context) *runInfo {
	ri, _ := ctx.Value(runInfoKey{}).(*runInfo)
	return ri
}

// call is one run's start: what the front (the HTTP API, an MCP call,
// A2A) gives.
type call struct {
	runner *agentrt.Runner
	input  json.RawMessage
	// fileNames holds the name each file the input gives was handed in
	// under, by its file input, where it had one (a multipart part's
	// file name): kept in the file's reference when a.Files stores it.
	fileNames map[string]string
	// started hears the run's id before the run starts.
	started func(id string)
	// notify, when set, hears what the run asks while it runs
	// (approval_pending), for the client's event stream.
	notify func(name string, v any)
	// events, when set, hears a run elsewhere's events (Agent.Remote), for
	// the client's event stream; a run here has its runner's.
	events func(agentrt.Event)
	elicit elicitFunc
	// budgets narrow the run's bounds.
	budgets Budgets
	// admitted says the front counted the run already (starting), before
	// reading its body, and uncounts it once the run has returned.
	admitted bool
}

// Run runs agent a, by c, as a run of its own under a new id: journaled
// and recorded with a journal directory, its record kept. An input the
// agent's input contract refuses is an *agentrt.InputError and leaves
// nothing. The run ends with ctx, as cancelled, or with the server's
// Stop, as interrupted.
func (rs *Runs) run(ctx context.Context, a Agent, c call) (*Record, error) {
	if !c.admitted {
		release, err := rs.starting(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	if a.Remote != nil {
		return rs.runRemote(ctx, a, c)
	}
	runner, err := c.budgets.apply(c.runner)
	if err != nil {
		return nil, err
	}
	sh, err := rs.readHeld(ctx, c.input, func() error {
		files := fileFieldsOf(a.Plan)
		if err := checkFiles(files, c.input); err != nil {
			return err
		}
		if len(files) > 0 {
			// Checked against the contract first, as the run would;
			// then the files go in the runner's store, and the run and
			// its record (kept in memory, and on disk with a journal
			// directory) hold their digests, not their bytes.
			if err := rs.checkInput(a.Plan, c.input); err != nil {
				return err
			}
			if c.input, err = storeFiles(a, files, c.input, c.fileNames); err != nil {
				return err
			}
		}
		// An input the contract refuses leaves nothing, and is refused
		// here, within the bound on reading.
		return validateInput(runner, c.input)
	})
	if err != nil {
		return nil, err
	}
	// The run reads its input again, under the same share; one that
	// never starts gives it back here.
	defer sh.Release()
	runner = runner.WithInputRead(sh.Release)
	id := newID()
	rec := &Record{ID: id, Agent: a.Plan.Agent.Name, Plan: string(a.Plan.Digests.Plan), State: StateRunning, Started: time.Now().UTC(), Input: c.input}
	if !c.budgets.isZero() {
		b := c.budgets
		rec.Budgets = &b
	}
	var w *journal.Writer
	if rs != nil && rs.dir != "" {
		if w, err = rs.create(a, rec); err != nil {
			return nil, err
		}
		runner = runner.WithJournal(&agentrt.Journal{Writer: w})
	}
	if c.started != nil {
		c.started(id)
	}
	return rs.execute(ctx, runner, rec, w, c.notify, c.elicit)
}

// MaxReading is how many bytes of clients' inputs a server reads at once,
// together: decoding a JSON input and checking it against its contract
// holds many times its bytes (an 8 MiB array of zeros, about 670 MB),
// and six clients sending such inputs, each refused, had a server hold
// 4 GB. An input past what is left waits for the ones being read; one
// larger than the bound waits to be read alone.
const MaxReading = 32 << 20

// ValueBytes is what each JSON value of an input weighs on the bound on
// reading, beside its bytes (jsonshape.ValueBytes): an 8 MiB array of
// zeros, 4 million values, weighs the whole bound and is read alone.
const ValueBytes = jsonshape.ValueBytes

// Weight is what the JSON text input weighs on the bound on reading
// (jsonshape.Weight): its bytes, or ValueBytes a value where that is more.
func Weight(input []byte) int64 { return jsonshape.Weight(input) }

// read runs check, the reading of input, within the bound on the inputs
// read at once (MaxReading), as much of it as the input weighs (Weight);
// a request that goes while it waits is its context's error. Where ctx
// carries the share its request took before reading the body that held
// the input (WithShare), check runs under that share, not waiting again:
// a request that gave its share back and waited its turn again held its
// body outside the bound while it waited, and, the bound serving its
// waiters in turn, every body sent at once was read before the first was
// checked (20 bodies of 32 MiB at once held 2.8 GB).
func (rs *Runs) read(ctx context.Context, input []byte, check func() error) error {
	sh, err := rs.readHeld(ctx, input, check)
	sh.Release()
	return err
}

// readHeld is read, and returns the share check ran under, still held,
// where check passed: for a run here, which reads its input again (it
// decodes it, checks it and renders its prompt) before it gives the share
// back (runtime.Runner.WithInputRead). Its reading held as much as the
// check's, outside the bound: 16 runs of dense inputs at once held 16
// times what the bound lets one.
func (rs *Runs) readHeld(ctx context.Context, input []byte, check func() error) (*Share, error) {
	need := min(Weight(input), MaxReading)
	sh := shareOf(ctx).handOver()
	if sh == nil || sh.Held() < need {
		// No share (a run over stdio, a resumed one), or one short of
		// the input's weight (not reached for one BodyWeight bounded):
		// given back before waiting, so that no request waits holding
		// some of the bound.
		sh.Release()
		var err error
		if sh, err = rs.Reserve(ctx, need); err != nil {
			return nil, err
		}
	}
	sh.Shrink(need)
	if err := check(); err != nil {
		sh.Release()
		return nil, err
	}
	return sh, nil
}

// Reading takes n bytes (at most MaxReading) of the bound on the inputs
// read at once, for a reading that costs as an input of n bytes does,
// waiting its turn as an input does, and returns what gives them back; a
// request that goes while it waits is its context's error. A reading
// holding some of the bound must give them back before it takes more:
// two held by one request could wait on each other.
func (rs *Runs) Reading(ctx context.Context, n int64) (release func(), err error) {
	sh, err := rs.Reserve(ctx, n)
	if err != nil {
		return nil, err
	}
	return sh.Release, nil
}

// Reserve is Reading, as a Share: what it holds may be shrunk, and
// handed on to the run the request makes (WithShare).
func (rs *Runs) Reserve(ctx context.Context, n int64) (*Share, error) {
	if sh, ok := rs.TryReserve(n); ok {
		return sh, nil
	}
	if readingWaits != nil {
		readingWaits()
	}
	w := min(max(n, 1), MaxReading)
	if err := rs.reading.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return &Share{rs: rs, n: w}, nil
}

// BodyWeight is the most an input read from a body of n bytes can weigh
// (Weight), at most MaxReading: the share a request takes before reading
// such a body, so that its run checks the input under it with no more to
// wait for (read). Weight is the input's bytes and one, or ValueBytes a
// value; a JSON text of n bytes holds at most (n+1)/2 values (each value
// but the first follows a comma or an opening bracket, and each takes a
// byte: [0,0,0] is 7 bytes, 4 values), so ValueBytes/2 bytes a byte, and
// one, bounds both. The input drawn from the body is no denser: the
// body's own JSON, a value within it (an MCP call's arguments), or a
// multipart form's input part beside its files, which go in as one
// string each, a third larger in base64.
func BodyWeight(n int64) int64 {
	return min(MaxReading, ValueBytes/2*(max(n, 0)+1))
}

// readingBody takes, before a byte of r's body is read, as much of the
// bound on reading as an input read from the body may weigh
// (BodyWeight): of its length, where it says it, else of limit. Read
// before its input was weighed, each request's body was held outside the
// bound: 150 bodies of 8 MiB whose last byte never came held 2.6 GB. The
// share is handed on to the request's run (WithShare), which checks the
// input under it (read).
func (rs *Runs) readingBody(r *http.Request, limit int64) (*Share, error) {
	size := limit
	if r.ContentLength >= 0 {
		size = min(r.ContentLength, limit)
	}
	return rs.Reserve(r.Context(), BodyWeight(size))
}

// TryReading is Reading, without waiting: false when the bound has not
// n bytes left.
func (rs *Runs) TryReading(n int64) (release func(), ok bool) {
	sh, ok := rs.TryReserve(n)
	if !ok {
		return nil, false
	}
	return sh.Release, true
}

// TryReserve is Reserve, without waiting: false when the bound has not
// n bytes left.
func (rs *Runs) TryReserve(n int64) (*Share, bool) {
	if rs == nil || rs.reading == nil {
		return nil, true // a nil *Share holds nothing, and needs to
	}
	w := min(max(n, 1), MaxReading)
	if !rs.reading.TryAcquire(w) {
		return nil, false
	}
	return &Share{rs: rs, n: w}, true
}

// Share is some of the bound on reading, held by one request (Reserve),
// until it is given back (Release) or handed on to the run the request
// makes (WithShare). Its methods are safe for concurrent use; a nil
// *Share holds nothing.
type Share struct {
	rs *Runs
	mu sync.Mutex
	n  int64
}

// Held is how much of the bound s holds.
func (s *Share) Held() int64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Shrink gives back what s holds past n.
func (s *Share) Shrink(n int64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n = max(n, 1); s.n > n {
		s.rs.reading.Release(s.n - n)
		s.n = n
	}
}

// Release gives back what s holds.
func (s *Share) Release() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n > 0 {
		s.rs.reading.Release(s.n)
		s.n = 0
	}
}

// handOver moves what s holds to a new share, which the caller gives
// back, leaving s holding nothing: the one who took s gives it back, to
// no effect, once its run has taken it on.
func (s *Share) handOver() *Share {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &Share{rs: s.rs, n: s.n}
	s.n = 0
	return out
}

type shareKey struct{}

// shareHeader names, in a request the MCP SDK hands on, the share its
// body was read under (Runs.lend): the SDK gives a call's handler the
// request's header, not its context.
const shareHeader = "Agentc-Reading-Share"

// lend keeps sh under a new id, for the MCP call of the request it was
// taken for to take on (lent); unlend drops it, and gives back what it
// holds where no call took it (a message that makes no run).
func (rs *Runs) lend(sh *Share) (id string, unlend func()) {
	if rs == nil || sh == nil {
		return "", func() {}
	}
	id = newID()
	rs.mu.Lock()
	rs.lentShares[id] = sh
	rs.mu.Unlock()
	return id, func() {
		rs.mu.Lock()
		delete(rs.lentShares, id)
		rs.mu.Unlock()
		sh.Release()
	}
}

// lent is the share the request of an MCP call was read under (lend),
// taken on by the call, which gives it back; nil for none.
func (rs *Runs) lent(extra *mcp.RequestExtra) *Share {
	if rs == nil || extra == nil || extra.Header == nil {
		return nil
	}
	id := extra.Header.Get(shareHeader)
	if id == "" {
		return nil
	}
	rs.mu.Lock()
	sh := rs.lentShares[id]
	delete(rs.lentShares, id) // one call takes it: the others of a batch wait their turn
	rs.mu.Unlock()
	return sh.handOver()
}

// WithShare returns ctx carrying sh, the share of the bound on reading
// its request took before reading its body: the run made in ctx (Run)
// checks its input under it, not waiting for the bound again.
func WithShare(ctx context.Context, sh *Share) context.Context {
	return context.WithValue(ctx, shareKey{}, sh)
}

func shareOf(ctx context.Context) *Share {
	sh, _ := ctx.Value(shareKey{}).(*Share)
	return sh
}

// readingWaits, when set (by tests), hears each input that waits for the
// bound on reading.
var readingWaits func()

// storeFiles puts the files an input of agent a gives (at files, its
// file inputs) in a.Files, checked, and returns the input naming them by
// digest (runtime.StoreInputFiles), each with the name it was handed in
// under (names) where it is a plain base name. A local agent without
// Files is handed the input as it is, its runner storing the files
// itself, and the names are not kept.
func storeFiles(a Agent, files []plan.FileField, input json.RawMessage, names map[string]string) (json.RawMessage, error) {
	if len(files) == 0 {
		return input, nil
	}
	if a.Files == nil {
		if a.Remote == nil {
			return input, nil // the runner puts them in its own store
		}
		return nil, fmt.Errorf("agent %s takes files, and the server has no store its workers read", a.Plan.Agent.Name)
	}
	// A client may send a path where a name belongs (a browser on
	// Windows has): its last element is the name.
	base := make(map[string]string, len(names))
	for k, n := range names {
		base[k] = n[strings.LastIndexAny(n, `/\`)+1:]
	}
	return agentrt.StoreInputFiles(a.Files, files, input, 0, base)
}

// validateInput checks an input against the runner's input contract
// before a journal is made for it, so that a refused input leaves no file.
func validateInput(r *agentrt.Runner, input json.RawMessage) error {
	if r.Plan().Agent.Input == nil {
		return r.CheckInput(nil)
	}
	return r.CheckInput(input)
}

// create makes a new run's journal and first record in the directory.
func (rs *Runs) create(a Agent, rec *Record) (*journal.Writer, error) {
	lock, err := journal.Acquire(rs.journalPath(rec.ID))
	if err != nil {
		return nil, err
	}
	w, err := lock.Create(journal.Header{Plan: rec.Plan, Run: rec.ID, OutputSuffix: a.Plan.OutputSuffix(), Agent: rec.Agent, Started: rec.Started, Tools: a.JournalTools, CalleeBudget: true, ExactUsage: a.Runner != nil && a.Runner.ExactUsage()})
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	if err := rs.save(rec); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// track keeps rec among the runs in flight, and ties ctx to the server's
// stop: the context returned ends with either. stopped is the stop's own
// context (nil for a nil Runs), which says, once the run has ended,
// whether the stop ended it. done, called when the run's record is kept,
// lets Wait return.
func (rs *Runs) track(ctx context.Context, rec *Record) (runCtx, stopped context.Context, done func()) {
	if rs == nil {
		return ctx, nil, func() {}
	}
	rs.wg.Add(1)
	runCtx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	unhook := context.AfterFunc(rs.stopCtx, func() { cancelCause(ErrStopped) })
	rs.mu.Lock()
	rs.byID[rec.ID] = rec
	f, ok := rs.going[rec.ID] // made already for a run resumed
	if !ok {
		f = &inFlight{ended: make(chan struct{})}
		rs.going[rec.ID] = f
	}
	f.cancel = cancel
	if f.cancelled {
		cancel()
	}
	rs.mu.Unlock()
	return runCtx, rs.stopCtx, func() {
		unhook()
		cancel()
		rs.mu.Lock()
		delete(rs.going, rec.ID)
		rs.mu.Unlock()
		close(f.ended)
		rs.wg.Done()
	}
}

// ErrStopped is the cause (context.Cause) a run's context ends with
// where the server's stop ended it, not its client: a Remote agent then
// stops waiting for the run, which goes on where it runs.
var ErrStopped = errors.New("the server stopped")

// cancelledText is the error of a run Cancel ended.
const cancelledText = "the run was cancelled (POST /v1/runs/ID/cancel, or its A2A task's tasks/cancel)"

// cancelRequested reports whether Cancel was asked of run id, in flight.
func (rs *Runs) cancelRequested(id string) bool {
	if rs == nil {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	f, ok := rs.going[id]
	return ok && f.cancelled
}

// Cancel ends run id, in flight in this server (a resumed run too), as
// its client's going away ends a run: cancelled, its record saying so.
// It reports whether such a run was in flight.
func (rs *Runs) Cancel(id string) bool {
	if rs == nil {
		return false
	}
	rs.mu.Lock()
	f, ok := rs.going[id]
	var cancel context.CancelFunc
	if ok {
		cancel = f.cancel
		f.cancelled = true // for a resumed run not started yet
	}
	rs.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return ok
}

// Done returns a channel closed when run id, in flight in this server
// (a resumed run too), has ended and its record is kept; nil when no
// such run is in flight.
func (rs *Runs) Done(id string) <-chan struct{} {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if f, ok := rs.going[id]; ok {
		return f.ended
	}
	return nil
}

// execute runs runner with rec's input, keeping rec as it goes.
func (rs *Runs) execute(ctx context.Context, runner *agentrt.Runner, rec *Record, w *journal.Writer, notify func(string, any), elicit elicitFunc) (*Record, error) {
	ctx, stopped, done := rs.track(ctx, rec)
	defer done()
	if rs != nil && rs.onRun != nil {
		if ev := rs.onRun(ctx); ev != nil {
			runner = runner.AlsoEvents(ev)
		}
	}
	ctx = context.WithValue(ctx, runInfoKey{}, &runInfo{id: rec.ID, agent: rec.Agent, notify: notify, elicit: elicit})
	var input json.RawMessage
	if runner.Plan().Agent.Input != nil {
		input = rec.Input
	}
	rep, err := runner.Run(ctx, input)
	var closeErr error
	if w != nil {
		closeErr = w.Close()
	}
	if err != nil {
		if rec.Resumed > 0 {
			// A run resumed from its journal that its agent now refuses
			// (its contract changed while no server ran it): its journal
			// and record hold what it did, and stay, as they were.
			rs.drop(rec)
			return nil, err
		}
		rs.forget(rec) // it never ran: its input or its configuration refused
		return nil, err
	}
	if closeErr != nil {
		// The run ran, its tools too: it is kept and answered, and the
		// server's log says its journal may lack its end.
		rs.logLine(fmt.Sprintf("run %s: closing its journal: %v", rec.ID, closeErr))
	}
	end := time.Now().UTC()
	p := runner.Plan()
	bound := rep.Bound
	if bound == "" {
		bound = agentrt.BoundNone
	}
	res := &RunResult{ID: rec.ID, Agent: rec.Agent, Outcome: rep.Outcome, Bound: bound, Answer: rep.Answer, Error: rep.Error, Usage: rep.Usage, Digests: p.Digests, Exit: rs.exit(rep)}
	state := StateDone
	if rep.Interrupted {
		state = StateCancelled
		switch {
		case rs.cancelRequested(rec.ID):
			// Cancelled, even if the server's stop came too: a run
			// someone ended is not resumed.
			res.Error = cancelledText
		case stopped != nil && stopped.Err() != nil:
			state = StateInterrupted
			res.Error = rs.interruptedText(rec.ID)
		}
	}
	rs.end(rec, func(r *Record) {
		r.State, r.Ended, r.Result, r.Report = state, &end, res, rep
	})
	return rs.get(rec.ID, rec), nil
}

// end changes a run's record, under the lock, and keeps it: on disk, and
// in memory among the last Keep ended.
func (rs *Runs) end(rec *Record, change func(*Record)) {
	if rs == nil {
		change(rec)
		return
	}
	rs.mu.Lock()
	change(rec)
	cp := *rec
	rs.mu.Unlock()
	size := int64(1)
	if b, err := json.Marshal(&cp); err == nil {
		size = int64(len(b))
	}
	rs.mu.Lock()
	rs.ended = append(rs.ended, endedRun{rec.ID, size})
	rs.heldBytes += size
	for len(rs.ended) > rs.keep || len(rs.ended) > 1 && rs.heldBytes > rs.keepBytes {
		delete(rs.byID, rs.ended[0].id)
		rs.heldBytes -= rs.ended[0].size
		rs.ended = rs.ended[1:]
	}
	rs.mu.Unlock()
	if rs.dir != "" {
		if err := rs.save(&cp); err != nil {
			// The run is answered; its file still says it runs, and a
			// server started again on the directory would resume it.
			rs.logLine(fmt.Sprintf("run %s: keeping its record: %v", rec.ID, err))
		}
	}
}

// forget drops a run that never ran (its input refused) and its files.
func (rs *Runs) forget(rec *Record) {
	if rs == nil {
		return
	}
	rs.drop(rec)
	if rs.dir != "" {
		os.Remove(rs.journalPath(rec.ID))
		os.Remove(rs.recordPath(rec.ID))
	}
}

// drop drops a run's record from memory, leaving its files.
func (rs *Runs) drop(rec *Record) {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	delete(rs.byID, rec.ID)
	rs.mu.Unlock()
}

// get returns a copy of run id's record: from memory, else, with a
// journal directory, from its file; rec, when not nil, is the fallback.
func (rs *Runs) get(id string, rec *Record) *Record {
	if rs == nil {
		return rec
	}
	rs.mu.Lock()
	if r, ok := rs.byID[id]; ok {
		cp := *r
		rs.mu.Unlock()
		return &cp
	}
	rs.mu.Unlock()
	if rec != nil {
		return rec
	}
	if rs.dir == "" || !idPattern.MatchString(id) {
		return nil
	}
	r, err := readRecord(rs.recordPath(id), nil)
	if err != nil || r.ID != id {
		return nil
	}
	return r
}

// held is what one request holds of the bound on reading: one weight at
// a time, given back before it takes another (two held at once could
// wait on each other).
type held struct {
	rs      *Runs
	n       int64
	release func()
}

// atLeast holds at least n bytes of the bound: what is held, where that
// is as much, else n in its place; a request that goes while it waits is
// its context's error.
func (h *held) atLeast(ctx context.Context, n int64) error {
	if h.release != nil && n <= h.n {
		return nil
	}
	h.give()
	release, err := h.rs.Reading(ctx, n)
	if err != nil {
		return err
	}
	h.n, h.release = n, release
	return nil
}

// give gives back what h holds.
func (h *held) give() {
	if h.release != nil {
		h.release()
		h.n, h.release = 0, nil
	}
}

// recordSlack is what a record weighs beside its input while its run is
// in flight (its id, agent, plan, times and budgets, as JSON).
const recordSlack = 4 << 10

// getHeld is get for a request that answers with the record: h holds as
// much of the bound on reading as the record weighs before it is copied
// or read back (GetWithin). Hold h until the answer is written: encoding
// a record holds it whole, as does decoding it from its file, and 300
// requests of a record of an 8 MiB input that read none of their answer
// held 4 GB. nil for no such record, or the context's error for a request
// that went while it waited.
func (rs *Runs) getHeld(ctx context.Context, id string, h *held) (*Record, error) {
	return rs.GetWithin(ctx, id, func(n int64) error { return h.atLeast(ctx, n) })
}

// GetWithin is Get for a request that reads the record within the bound
// on reading: hold is called to hold at least n bytes of it (what the
// caller holds may already be as much) before the record is copied or
// read back: its size as JSON, kept for an ended run in memory; its
// input's for one in flight; its file's size, then its Weight once read,
// for one on disk. nil for no such record, or hold's error (the context's,
// for a request that went while it waited).
func (rs *Runs) GetWithin(ctx context.Context, id string, hold func(n int64) error) (*Record, error) {
	if rs == nil {
		return nil, nil
	}
	for {
		rs.mu.Lock()
		size, ok := rs.recordSize(id)
		rs.mu.Unlock()
		if !ok {
			break // none in memory, or no longer
		}
		// Weighed before it is copied: a request that waits holds none
		// of it, and one whose record grew (its run ended) weighs it again.
		if err := hold(size); err != nil {
			return nil, err
		}
		rs.mu.Lock()
		if now, ok := rs.recordSize(id); ok && now <= size {
			cp := *rs.byID[id]
			rs.mu.Unlock()
			return &cp, nil
		}
		rs.mu.Unlock()
	}
	if rs.dir == "" || !idPattern.MatchString(id) {
		return nil, nil
	}
	path := rs.recordPath(id)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil
	}
	if err := hold(min(fi.Size(), maxRecordBytes) + 1); err != nil {
		return nil, err
	}
	var held error
	r, err := readRecord(path, func(b []byte) error { held = hold(Weight(b)); return held })
	if held != nil {
		return nil, held // it went while it waited
	}
	if err != nil || r.ID != id {
		return nil, nil
	}
	return r, nil
}

// recordSize is what run id's record in memory weighs on the bound on
// reading, under rs.mu; false for none in memory.
func (rs *Runs) recordSize(id string) (int64, bool) {
	r, ok := rs.byID[id]
	if !ok {
		return 0, false
	}
	for i := len(rs.ended) - 1; i >= 0; i-- {
		if rs.ended[i].id == id {
			return rs.ended[i].size + 1, true
		}
	}
	return int64(len(r.Input)) + recordSlack, true
}

func (rs *Runs) journalPath(id string) string { return filepath.Join(rs.dir, id+".jsonl") }
func (rs *Runs) recordPath(id string) string  { return filepath.Join(rs.dir, id+".json") }

// save writes a run's record whole, readable by the owner alone: it
// holds the run's input. It is written compact, as the API answers it:
// indenting a client's deeply nested input made its record hundreds of
// times its size (50 KB of brackets, a 250 MB file).
func (rs *Runs) save(rec *Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(rs.recordPath(rec.ID), append(b, '\n'), 0o600)
}

// maxRecordBytes bounds a record read back from the directory.
const maxRecordBytes = 64 << 20

// readRecord reads the record at path; weigh, when not nil, hears its
// bytes before they are decoded, and its error is readRecord's.
func readRecord(path string, weigh func([]byte) error) (*Record, error) {
	b, err := userfile.Read(path, maxRecordBytes, "a run's record") // a FIFO refused, not waited on
	if err != nil {
		return nil, err
	}
	if weigh != nil {
		if err := weigh(b); err != nil {
			return nil, err
		}
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &r, nil
}

// Resume starts again, in the background, every run in the journal
// directory that a server's stop interrupted (or that was running when
// its server died), each from its journal: what completed is served from
// it, and the run goes on live where it ended. agents are the agents
// served; a run of an agent not among them is left, and said so. A run
// another process is resuming is left to it. note hears what is done.
func (rs *Runs) Resume(agents []Agent, note func(string)) error {
	if rs == nil || rs.dir == "" {
		return nil
	}
	entries, err := os.ReadDir(rs.dir)
	if err != nil {
		return fmt.Errorf("the journal directory: %w", err)
	}
	byName := map[string]Agent{}
	for _, a := range agents {
		byName[a.Plan.Agent.Name] = a
	}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !idPattern.MatchString(id) || !e.Type().IsRegular() {
			continue
		}
		rec, err := readRecord(rs.recordPath(id), nil)
		if err != nil {
			note(fmt.Sprintf("left %s: %v", e.Name(), err))
			continue
		}
		if rec.ID != id || (rec.State != StateRunning && rec.State != StateInterrupted) {
			continue
		}
		a, ok := byName[rec.Agent]
		if ok && a.Remote != nil {
			ok = false
		}
		if !ok {
			note(fmt.Sprintf("left run %s: its agent, %s, is not served here", id, rec.Agent))
			continue
		}
		lock, err := journal.Acquire(rs.journalPath(id))
		var le *journal.LockedError
		if errors.As(err, &le) {
			continue
		}
		if err != nil {
			note(fmt.Sprintf("left run %s: %v", id, err))
			continue
		}
		j, w, err := lock.Resume()
		if errors.Is(err, fs.ErrNotExist) {
			// The run's journal was never made whole: the run starts afresh.
			w, err = lock.Create(journal.Header{Plan: string(a.Plan.Digests.Plan), Run: id, OutputSuffix: a.Plan.OutputSuffix(), Agent: rec.Agent, Started: rec.Started, Tools: a.JournalTools, CalleeBudget: true, ExactUsage: a.Runner != nil && a.Runner.ExactUsage()})
		}
		if err != nil {
			_ = lock.Release()
			note(fmt.Sprintf("left run %s: %v", id, err))
			continue
		}
		if rec.Plan != string(a.Plan.Digests.Plan) {
			note(fmt.Sprintf("run %s was made by another plan of %s; each call is compared with its record", id, rec.Agent))
		}
		rec.State, rec.Plan = StateRunning, string(a.Plan.Digests.Plan)
		rec.Resumed++
		n := 0
		if j != nil {
			n = len(j.Entries)
		}
		effects := "effects"
		if n == 1 {
			effects = "effect"
		}
		note(fmt.Sprintf("resuming run %s of %s: %d %s recorded", id, rec.Agent, n, effects))
		runner := a.Runner
		if rec.Budgets != nil {
			if runner, err = rec.Budgets.apply(runner); err != nil {
				_ = w.Close()
				note(fmt.Sprintf("left run %s: %v", id, err))
				continue
			}
		}
		runner = runner.WithJournal(&agentrt.Journal{Recorded: j, Writer: w})
		// In flight from now (Done), before its goroutine starts: a
		// message to its A2A task finds it running here.
		rs.mu.Lock()
		rs.going[id] = &inFlight{ended: make(chan struct{})}
		rs.mu.Unlock()
		rs.wg.Add(1)
		go func() {
			defer rs.wg.Done()
			// Closed by the run, which says where it cannot be.
			_, err := rs.execute(rs.stopCtx, runner, rec, w, nil, nil)
			if err != nil {
				note(fmt.Sprintf("left run %s: %v", id, err))
			}
		}()
	}
	return nil
}

// Pending is a call a run waits on for a person's approval, listed by
// GET /v1/approvals and decided by POST /v1/runs/{run}/approvals/{key}.
type Pending struct {
	Run           string          `json:"run"`
	Agent         string          `json:"agent"`
	Key           string          `json:"key"`
	Tool          string          `json:"tool"`
	Why           string          `json:"why"`
	Mode          string          `json:"mode"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	ArgumentsText *string         `json:"arguments_text,omitempty"`
	Asked         time.Time       `json:"asked"`

	// decided hands the run a decision, unbuffered: a decision is taken
	// only by a run still waiting for it. gone is closed once the run
	// waits no longer, so a decision arriving as the wait ends is told
	// no call waits rather than answered as taken.
	decided chan agentrt.ApprovalDecision
	gone    chan struct{}
}

// Decision is the body of POST /v1/runs/{run}/approvals/{key}.
type Decision struct {
	Approve *bool  `json:"approve"`
	ForRun  bool   `json:"for_run,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// elicitFunc asks the person at an MCP client to decide a call; ok false
// says the client cannot be asked.
type elicitFunc func(ctx context.Context, req *agentrt.ApprovalRequest) (d agentrt.ApprovalDecision, ok bool, err error)

// Ask is the approver of the served runs for the calls that need a
// person: it asks the person at the MCP client that made the call, where
// the client can be asked (MCP elicitation), else lists the call as
// pending over the HTTP API and waits for a decision there, until the
// run's deadline or end; with neither, no one can decide, and the run
// ends on it.
func (rs *Runs) Ask(ctx context.Context, req *agentrt.ApprovalRequest) (agentrt.ApprovalDecision, error) {
	ri := infoOf(ctx)
	if ri != nil && ri.elicit != nil {
		if d, ok, err := ri.elicit(ctx, req); ok || err != nil {
			return d, err
		}
	}
	if rs == nil || !rs.api || ri == nil {
		return agentrt.ApprovalDecision{}, &agentrt.ApprovalRefused{Tool: req.Tool, Key: req.Key,
			Msg: req.Why + "; no one can be asked: the client cannot be asked (MCP elicitation) and no HTTP API is served (--http) to decide it over; serve with --approve yes or --approve no"}
	}
	p := &Pending{Run: ri.id, Agent: ri.agent, Key: req.Key, Tool: req.Tool, Why: req.Why, Mode: req.Mode,
		Arguments: req.Arguments, ArgumentsText: req.ArgumentsText, Asked: time.Now().UTC(),
		decided: make(chan agentrt.ApprovalDecision), gone: make(chan struct{})}
	pk := ri.id + "/" + req.Key
	rs.mu.Lock()
	rs.pending[pk] = p
	rs.mu.Unlock()
	defer func() {
		rs.mu.Lock()
		if rs.pending[pk] == p {
			delete(rs.pending, pk)
		}
		rs.mu.Unlock()
		close(p.gone)
	}()
	if ri.notify != nil {
		ri.notify("approval_pending", p)
	}
	if rs.onPending != nil {
		rs.onPending(p)
	}
	if !req.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, req.Deadline)
		defer cancel()
	}
	select {
	case d := <-p.decided:
		return d, nil
	case <-ctx.Done():
		return agentrt.ApprovalDecision{}, ctx.Err()
	}
}

// Pending lists the calls waiting for approval, oldest first.
func (rs *Runs) Pending() []*Pending {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	out := make([]*Pending, 0, len(rs.pending))
	for _, p := range rs.pending {
		out = append(out, p)
	}
	rs.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Asked.Equal(out[j].Asked) {
			return out[i].Asked.Before(out[j].Asked)
		}
		return out[i].Run+out[i].Key < out[j].Run+out[j].Key
	})
	return out
}

// Decide decides the pending call key of run id; false says no such call
// waits (never asked, or decided already).
func (rs *Runs) Decide(id, key string, d Decision) (*Pending, bool) {
	return rs.decide(id, key, d, nil)
}

// decide is Decide of a call whose run's agent may says the decider may
// reach (nil: any): a call of another agent is as if none waited, and
// stays pending.
func (rs *Runs) decide(id, key string, d Decision, may func(agent string) bool) (*Pending, bool) {
	if rs == nil {
		return nil, false
	}
	rs.mu.Lock()
	p, ok := rs.pending[id+"/"+key]
	if ok && may != nil && !may(p.Agent) {
		ok = false
	}
	if ok {
		// Taken from the list at once: a second decision finds none.
		delete(rs.pending, id+"/"+key)
	}
	rs.mu.Unlock()
	if !ok {
		return nil, false
	}
	dec := agentrt.ApprovalDecision{Approved: *d.Approve, ForRun: d.ForRun && *d.Approve && p.Mode != plan.ApproveAlways, By: agentrt.ByPerson, Reason: d.Reason}
	if !dec.Approved && dec.Reason == "" {
		dec.Reason = "the person deciding over the server's API said no"
	}
	select {
	case p.decided <- dec:
		return p, true
	case <-p.gone:
		// The run stopped waiting (its deadline, its end) as the
		// decision came: it never heard it, and makes no call on it.
		return nil, false
	}
}

// interruptedText says what became of a run the server's stop
// interrupted: where its record is, over HTTP; its id alone over stdio,
// which has no GET /v1/runs.
func (rs *Runs) interruptedText(id string) string {
	if rs != nil && rs.dir != "" {
		if !rs.api {
			return "the server stopped before the run ended; its journal holds what completed, and a server started again on the same journal directory resumes it (run " + id + ")"
		}
		return "the server stopped before the run ended; its journal holds what completed, and a server started again on the same journal directory resumes it (GET /v1/runs/" + id + " then)"
	}
	return "the server stopped before the run ended; it was served without a journal directory (--journal-dir), so it cannot be resumed"
}

// Run runs agent a with input as a served run, under a new id and kept
// as the HTTP API's and MCP's runs are: for fronts of their own (A2A).
// An input the agent's input contract refuses is an *agentrt.InputError.
// started, when not nil, hears the run's id before the run starts.
// fileNames, when not nil, holds the name each file the input gives was
// handed in under, by its file input (an A2A file part's name).
func (rs *Runs) Run(ctx context.Context, a Agent, input json.RawMessage, fileNames map[string]string, b Budgets, started func(id string)) (*Record, error) {
	if a.Plan.Agent.Input == nil {
		input = nil
	}
	return rs.run(ctx, a, call{runner: a.Runner, input: input, fileNames: fileNames, budgets: b, started: started})
}

// Get returns a copy of run id's record, from memory, else, with a
// journal directory, from its file; nil when the server has none.
func (rs *Runs) Get(id string) *Record { return rs.get(id, nil) }

// Dir is the journal directory, "" when there is none.
func (rs *Runs) Dir() string {
	if rs == nil {
		return ""
	}
	return rs.dir
}

// InFlight counts the runs in flight.
func (rs *Runs) InFlight() int {
	if rs == nil {
		return 0
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	n := 0
	for _, r := range rs.byID {
		if r.State == StateRunning {
			n++
		}
	}
	return n
}

// runRemote runs agent a elsewhere (Agent.Remote) under a new id: its
// input checked here first, its record kept as a run made here is, but
// for its journal and events, which are where it runs. The server's stop
// stops the wait, not the run.
func (rs *Runs) runRemote(ctx context.Context, a Agent, c call) (*Record, error) {
	o, err := c.budgets.overrides()
	if err != nil {
		return nil, err
	}
	if err := rs.read(ctx, c.input, func() error {
		if err := rs.checkInput(a.Plan, c.input); err != nil {
			return err
		}
		files := fileFieldsOf(a.Plan)
		if err := checkFiles(files, c.input); err != nil {
			return err
		}
		// The workers read the run's files from their store; the run's
		// input, and its record here, name them by digest.
		c.input, err = storeFiles(a, files, c.input, c.fileNames)
		return err
	}); err != nil {
		return nil, err
	}
	id := newID()
	rec := &Record{ID: id, Agent: a.Plan.Agent.Name, Plan: string(a.Plan.Digests.Plan), State: StateRunning, Started: time.Now().UTC(),
		Input: c.input, Workflow: a.Plan.Agent.Name + "-" + id}
	if !c.budgets.isZero() {
		b := c.budgets
		rec.Budgets = &b
	}
	if c.started != nil {
		c.started(id)
	}
	ctx, stopped, done := rs.track(ctx, rec)
	defer done()
	var input json.RawMessage
	if a.Plan.Agent.Input != nil {
		input = c.input
	}
	rep, err := a.Remote(ctx, rec.Workflow, input, o, c.events)
	var ended *RemoteEnded
	end := time.Now().UTC()
	res := &RunResult{ID: id, Agent: rec.Agent, Digests: a.Plan.Digests, Outcome: agentrt.OutcomeError, Bound: agentrt.BoundNone}
	state := StateDone
	switch {
	case err != nil && ctx.Err() != nil:
		state = StateCancelled
		res.Error = "the client went away; the run goes on as workflow " + rec.Workflow
		if stopped != nil && stopped.Err() != nil && !rs.cancelRequested(rec.ID) {
			state = StateInterrupted
			res.Error = "the server stopped waiting for the run; it goes on as workflow " + rec.Workflow
		}
		// An interrupted run's exit, as a run here stopped under has.
		res.Exit = rs.exit(&agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundNone, Interrupted: true})
	case errors.As(err, &ended):
		// Made, and ended with no report: failed, its record kept and
		// naming its workflow; what Temporal said, which can name the
		// server's hosts, goes to the server's log alone.
		var in *InternalError
		if errors.As(rs.Public(fmt.Errorf("the run elsewhere: %w", ended.Err)), &in) {
			res.Error = fmt.Sprintf("workflow %s ended without a report (terminated, say), or could not be waited on: the server's log says why, under reference %s", rec.Workflow, in.Ref)
		}
		res.Exit = rs.exit(&agentrt.Report{Outcome: agentrt.OutcomeError, Bound: agentrt.BoundNone})
	case err != nil:
		rs.forget(rec)
		return nil, fmt.Errorf("the run elsewhere: %w", err)
	default:
		res.Outcome, res.Answer, res.Error, res.Usage, res.Exit = rep.Outcome, rep.Answer, rep.Error, rep.Usage, rs.exit(rep)
		if rep.Bound != "" {
			res.Bound = rep.Bound
		}
		if rep.Interrupted && ctx.Err() != nil {
			// Its client went away (or cancelled it), which cancelled its
			// workflow: cancelled, as a run here is.
			state = StateCancelled
			if rs.cancelRequested(rec.ID) {
				res.Error = cancelledText
			}
		}
	}
	rs.end(rec, func(r *Record) {
		r.State, r.Ended, r.Result, r.Report = state, &end, res, rep
	})
	return rs.get(rec.ID, rec), nil
}

// checkInput checks an input against an agent's input contract, as a
// runner would, for a run made elsewhere.
func (rs *Runs) checkInput(p *plan.Plan, input json.RawMessage) error {
	if p.Agent.Input == nil {
		return nil
	}
	if len(bytes.TrimSpace(input)) == 0 {
		return &agentrt.InputError{Msg: "the agent declares an input schema, but no input was given"}
	}
	schema, err := rs.inputSchema(p)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return &agentrt.InputError{Msg: err.Error()}
	}
	if err := plan.Validate(schema, v); err != nil {
		return &agentrt.InputError{Msg: agentrt.ValidationText(err)}
	}
	return nil
}

// inputSchema is an agent's input contract, compiled once.
func (rs *Runs) inputSchema(p *plan.Plan) (*jsonschema.Schema, error) {
	key := string(p.Digests.Plan)
	if rs != nil {
		if s, ok := rs.schemas.Load(key); ok {
			return s.(*jsonschema.Schema), nil
		}
	}
	s, err := plan.CompileSchemaJSON(p.Agent.Input.Schema)
	if err != nil {
		return nil, fmt.Errorf("agent %s: input schema: %w", p.Agent.Name, err)
	}
	if rs != nil {
		rs.schemas.Store(key, s)
	}
	return s, nil
}
