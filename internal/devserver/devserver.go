// Package devserver starts Temporal's development server for tests: the
// real server, from the Temporal command-line program, on loopback ports
// of its own, with its state in memory.
//
// The program is found at $AGENTC_TEMPORAL_CLI, else as temporal on the
// PATH (scripts/install-temporal.sh installs it). Where neither is there
// a test that needs the server is skipped with a loud message, unless
// AGENTC_REQUIRE_TEMPORAL is set (the test script sets it), which makes
// it fail.
package devserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// SearchAttributes are the search attributes a server has registered on
// its default namespace: those of package temporal, which a test there
// holds to this list.
var SearchAttributes = []string{"AgentcAgent", "AgentcPlan", "AgentcContract", "AgentcOutcome", "AgentcBound"}

// Server is a running dev server.
type Server struct {
	// HostPort is the address of its front end, for clients and workers.
	HostPort string
	cmd      *exec.Cmd
	out      *syncBuffer
	exited   chan struct{} // closed once the process is waited for
}

// Program returns the path of the temporal program, or "" with the
// reason it is not there.
func Program() (string, string) {
	if p := os.Getenv("AGENTC_TEMPORAL_CLI"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("AGENTC_TEMPORAL_CLI names %s: %v", p, err)
		}
		return p, ""
	}
	p, err := exec.LookPath("temporal")
	if err != nil {
		return "", "the temporal program is not on the PATH and AGENTC_TEMPORAL_CLI is not set; install it with scripts/install-temporal.sh"
	}
	return p, ""
}

// Start starts a dev server for t, stopped when t ends; it skips t (or
// fails it, with AGENTC_REQUIRE_TEMPORAL set) when the program is
// missing.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		if s == nil && os.Getenv("AGENTC_REQUIRE_TEMPORAL") == "" {
			t.Skipf("SKIPPED: no Temporal dev server: %v", err)
		}
		t.Fatalf("the Temporal dev server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// New starts a server; the caller stops it. On an error, a nil Server
// means the program is missing.
func New() (*Server, error) { return start() }

// start starts a server; on an error, a nil Server means the program is
// missing. The ports are chosen free just before the server takes them,
// so another process may take one in between: a server that exits saying
// an address is in use is started again on other ports, up to three
// times.
func start() (*Server, error) {
	prog, why := Program()
	if prog == "" {
		return nil, fmt.Errorf("%s", why)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var s *Server
		var again bool
		if s, again, err = startOnce(prog); err == nil || !again {
			return s, err
		}
	}
	return &Server{}, err
}

// startOnce starts a server on free ports and waits until it answers;
// again says it exited because a port was taken.
func startOnce(prog string) (*Server, bool, error) {
	port, err := freePort()
	if err != nil {
		return &Server{}, false, err
	}
	httpPort, err := freePort()
	if err != nil {
		return &Server{}, false, err
	}
	s := &Server{HostPort: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: &syncBuffer{}}
	// The default poll rate makes each round trip of a workflow take about
	// 250 ms; this makes it tens.
	args := []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--http-port", strconv.Itoa(httpPort),
		"--log-level", "error", "--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
		// Activities dispatched eagerly: the worker that completes a workflow
		// task gets the activity it scheduled in the reply, without a poll.
		"--dynamic-config-value", "system.enableActivityEagerExecution=true"}
	// The search attributes agentc's runs set (temporal.SearchAttributes),
	// registered on the default namespace as an operator registers them.
	for _, name := range SearchAttributes {
		args = append(args, "--search-attribute", name+"=Keyword")
	}
	s.cmd = exec.Command(prog, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	ownGroup(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return &Server{}, false, err
	}
	exited := make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(exited)
	}()
	s.exited = exited
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		c, err := client.DialContext(ctx, client.Options{HostPort: s.HostPort, Logger: quiet{}})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return s, false, nil
			}
		}
		select {
		case <-exited:
			out := s.out.String()
			return &Server{}, strings.Contains(out, "address already in use"), fmt.Errorf("it exited before it answered on %s: %v\n%s", s.HostPort, err, out)
		case <-ctx.Done():
			s.Stop()
			return &Server{}, false, fmt.Errorf("it did not answer on %s within a minute: %v\n%s", s.HostPort, err, s.out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// syncBuffer is the server's output, written by the process's copier
// and read when it fails.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Stop stops the server and waits for it.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	killGroup(s.cmd)
	<-s.exited
	s.cmd = nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// quiet drops the SDK's log lines while the server starts.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
