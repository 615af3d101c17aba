package runcmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"agentc.dev/agentc/digest"
	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/journal"
	"agentc.dev/agentc/runtime/tool"
)

// headerTools is what a journal's header records of the tools a run saw
// when it started: the tool sets of its mcp servers, by server path.
type headerTools struct {
	Servers map[string]tool.ServerRecord `json:"servers,omitempty"`
}

// serversSeen collects the tool set each mcp server a run started offered
// (tool.Env.OnServer, which servers call as they start), for the
// journal's header.
type serversSeen struct {
	mu sync.Mutex
	m  map[string]tool.ServerRecord
}

func (s *serversSeen) add(path string, rec tool.ServerRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]tool.ServerRecord{}
	}
	s.m[path] = rec
}

// header returns what a journal's header records of them.
func (s *serversSeen) header() (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Marshal(headerTools{Servers: s.m})
}

// runJournal is the journal of one agentc run: recording afresh, resuming
// an interrupted record, replaying, or none.
type runJournal struct {
	rt      *agentrt.Journal
	servers map[string]tool.ServerRecord
	// lock is a record's, held from the start of the run to its end;
	// fresh says the journal is new, created by start.
	lock  *journal.Lock
	fresh bool
	seen  serversSeen // mcp servers started
}

// openJournal opens the run's journal: a record takes its lock first,
// before it decides to create or resume it; a replay reads it unless a
// run is recording it.
func openJournal(e Env, p *plan.Plan, f Flags) (*runJournal, error) {
	jn := &runJournal{}
	file, replay := f.record, false
	if f.replay != "" {
		file, replay = f.replay, true
	}
	if file == "" {
		return jn, nil
	}
	var j *journal.Journal
	var w *journal.Writer
	var err error
	switch {
	case replay:
		j, err = journal.OpenShared(file)
		var pe *fs.PathError
		if errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe) {
			// A path that names nothing is the command line's error, as
			// for a manifest, --input @FILE or --lock.
			return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("--replay: %w", pe)}
		}
	default:
		if jn.lock, err = journal.Acquire(file); err != nil {
			return nil, &ExitError{Code: ExitFindings, Err: err}
		}
		// An empty regular file is no journal agentc wrote (it writes the
		// header before the file takes its name): one a script made to
		// record into (mktemp), recorded afresh.
		if fi, statErr := os.Stat(file); errors.Is(statErr, fs.ErrNotExist) || statErr == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			jn.fresh = true
			jn.rt = &agentrt.Journal{}
			return jn, nil
		}
		j, w, err = jn.lock.Resume()
	}
	if err != nil {
		jn.close(e)
		return nil, &ExitError{Code: ExitFindings, Err: err}
	}
	jn.rt = &agentrt.Journal{Recorded: j, Writer: w, Replay: replay}
	if len(j.Header.Tools) > 0 {
		var ht headerTools
		if err := json.Unmarshal(j.Header.Tools, &ht); err != nil {
			jn.close(e)
			return nil, &ExitError{Code: ExitFindings, Err: fmt.Errorf("%s: the header's tools: %v", file, err)}
		}
		jn.servers = ht.Servers
	}
	verb := "resuming"
	if replay {
		verb = "replaying"
	}
	// The run's id is the journal's to say (a workflow's id, a served
	// run's; any text in a journal someone else wrote): shown cut.
	run := j.Header.Run
	if len(run) > maxShownRun {
		run = fmt.Sprintf("%s… (%d bytes in all)", strings.ToValidUTF8(run[:maxShownRun], ""), len(run))
	}
	effects := "effects"
	if len(j.Entries) == 1 {
		effects = "effect"
	}
	if !f.quiet {
		// Progress, as the events are: --quiet prints neither.
		fmt.Fprintf(e.Stderr, "agentc: %s %s: run %s, %d %s recorded\n", verb, file, run, len(j.Entries), effects)
	}
	if j.Truncated {
		fmt.Fprintf(e.Stderr, "agentc: %s: %s\n", file, j.CutShort())
	}
	if j.Header.Plan != string(p.Digests.Plan) {
		fmt.Fprintf(e.Stderr, "agentc: the plan changed since the journal was recorded (plan %s then, %s now); each call is compared with its record\n",
			shortDigest(j.Header.Plan), p.Digests.Plan.Short())
	}
	return jn, nil
}

func shortDigest(d string) string {
	if pd, err := digest.Parse(d); err == nil {
		return pd.Short()
	}
	return d
}

// maxShownRun bounds the run id a journal's header gives, as shown: a
// Temporal workflow's id is at most 1,000 bytes by default.
const maxShownRun = 256

// start creates a new record's file, once the tools are built: its header
// records the tool sets their servers offered, and whether the run counts
// its calls with the model's tokeniser (exact: it reserves them in a pool).
func (jn *runJournal) start(p *plan.Plan, exact bool) error {
	if !jn.fresh {
		return nil
	}
	ht, err := jn.seen.header()
	if err != nil {
		return err
	}
	h := journal.Header{Plan: string(p.Digests.Plan), Run: newRunID(), OutputSuffix: p.OutputSuffix(), Agent: p.Agent.Name,
		Started: time.Now().UTC(), Tools: ht, CalleeBudget: true, ExactUsage: exact}
	w, err := jn.lock.Create(h)
	if err != nil {
		return &ExitError{Code: ExitFindings, Err: err}
	}
	jn.rt.Writer = w
	return nil
}

// close closes the journal's writer, if any, and releases its lock.
func (jn *runJournal) close(e Env) {
	if jn.rt != nil && jn.rt.Writer != nil {
		if err := jn.rt.Writer.Close(); err != nil {
			fmt.Fprintf(e.Stderr, "agentc: closing the journal: %v\n", err)
		}
	}
	if jn.lock != nil {
		if err := jn.lock.Release(); err != nil {
			fmt.Fprintf(e.Stderr, "agentc: %v\n", err)
		}
	}
}

func newRunID() string { return randomHex(8) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// offlineModel answers nothing: in a replay every model call is served
// from the journal, and one the journal lacks is a divergence before the
// model is asked.
type offlineModel struct{}

func (offlineModel) Complete(context.Context, *agentrt.Request) (*agentrt.Response, error) {
	return nil, errors.New("a replay makes no model call")
}
