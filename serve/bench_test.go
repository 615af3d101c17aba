//go:build unix

package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/serve"
)

// What the server costs per run, against a provider that answers at
// once: BenchmarkRunnerRun is the run alone, BenchmarkAPIRun the same run
// through the HTTP API one request at a time, and
// BenchmarkAPIRun1000InFlight 1,000 requests released together. The
// floor benchmarks make the same requests of a bare net/http handler that
// answers with a run's body without running anything: what the HTTP stack
// and the client (in the same process) cost on their own.

// runInput is the input of every run.
const runInput = `{"title": "Crash on start"}`

// fixedAnswer is the answer the scripted provider gives, valid by
// labelSchema.
var fixedAnswer = json.RawMessage(`{"label":"bug","confidence":0.5}`)

// scripted is a provider that answers every request at once, with no
// work of its own: a call of the output tool with fixedAnswer.
type scripted struct{}

func (scripted) Complete(ctx context.Context, req *agentrt.Request) (*agentrt.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msg := agentrt.Message{Role: agentrt.Assistant, ToolCalls: []agentrt.ToolCall{{ID: "call_1", Name: req.OutputTool, Arguments: fixedAnswer}}}
	return &agentrt.Response{Message: msg, Usage: agentrt.Usage{Input: 10, Output: 5}}, nil
}

// benchAgent is labeler with the scripted provider.
func benchAgent(b testing.TB) serve.Agent {
	ag := labeler(b)
	r, err := agentrt.New(ag.Plan, agentrt.Options{Model: scripted{}})
	if err != nil {
		b.Fatal(err)
	}
	ag.Runner = r
	rep, err := r.Run(context.Background(), json.RawMessage(runInput))
	if err != nil || rep.Outcome != agentrt.OutcomeOK || !bytes.Contains(rep.Answer, []byte(`"label":"bug"`)) {
		b.Fatalf("the scripted run: %v %+v", err, rep)
	}
	return ag
}

// memRuns keeps a server's runs in memory, as agentc serve does without
// a journal directory: the last serve.DefaultKeep ended runs' records.
func memRuns(tb testing.TB) *serve.Runs {
	runs, err := serve.NewRuns("", 0, true)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { runs.Stop(); runs.Wait() })
	return runs
}

// apiServer serves the agent's HTTP API on a loopback port.
func apiServer(b *testing.B) *httptest.Server {
	h, err := serve.API([]serve.Agent{benchAgent(b)}, memRuns(b), serve.AllAgents(apiToken))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv
}

// floorServer answers every request with the body of a run the API
// made, having read the request's body, and runs nothing.
func floorServer(b *testing.B) *httptest.Server {
	api := apiServer(b)
	code, body, err := post(api.Client(), api.URL)
	if err != nil || code != http.StatusOK {
		b.Fatalf("%d %s %v", code, body, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// client is an HTTP/1.1 client that keeps up to conns connections to
// one server, with no limit on how many are open at once.
func client(b *testing.B, conns int) *http.Client {
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConns: 0, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post asks the server for a run of labeler, with the token, and reads
// the whole answer.
func post(c *http.Client, base string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/agents/labeler/runs", strings.NewReader(runInput))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// run is post that wants a run that ended with an answer.
func run(c *http.Client, base string) error {
	code, body, err := post(c, base)
	switch {
	case err != nil:
		return err
	case code != http.StatusOK || !bytes.Contains(body, []byte(`"outcome":"ok"`)):
		return fmt.Errorf("%d %.300s", code, body)
	}
	return nil
}

// BenchmarkRunnerRun runs the agent without a server.
func BenchmarkRunnerRun(b *testing.B) {
	ag := benchAgent(b)
	ctx := context.Background()
	for b.Loop() {
		rep, err := ag.Runner.Run(ctx, json.RawMessage(runInput))
		if err != nil || rep.Outcome != agentrt.OutcomeOK {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

// BenchmarkAPIRun asks the HTTP API for runs one at a time, over one
// kept-alive connection; client and server are both in this process, so
// the time and allocations are both sides'.
func BenchmarkAPIRun(b *testing.B) {
	srv := apiServer(b)
	c := client(b, 1)
	for b.Loop() {
		if err := run(c, srv.URL); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAPIFloor is BenchmarkAPIRun against floorServer.
func BenchmarkAPIFloor(b *testing.B) {
	srv := floorServer(b)
	c := client(b, 1)
	for b.Loop() {
		if err := run(c, srv.URL); err != nil {
			b.Fatal(err)
		}
	}
}

// inFlight is the number of requests released together.
const inFlight = 1000

// BenchmarkAPIRun1000InFlight releases 1,000 requests for runs at once,
// one operation a round of 1,000; see inFlightRounds for what it reports.
func BenchmarkAPIRun1000InFlight(b *testing.B) {
	inFlightRounds(b, apiServer(b))
}

// BenchmarkAPIFloor1000InFlight is BenchmarkAPIRun1000InFlight against
// floorServer.
func BenchmarkAPIFloor1000InFlight(b *testing.B) {
	inFlightRounds(b, floorServer(b))
}

// inFlightRounds makes rounds of inFlight requests of srv: in each, one
// goroutine a request, all waiting on a channel whose closing releases
// them together, each timing its own request. A round before the
// measured ones opens the connections (kept alive between rounds), so
// what is measured is runs, not connection set-up. It reports:
//
//   - p50-ms, p99-ms, max-ms: the latency of a request, from its release
//     to the end of its answer's body, over all rounds;
//   - ms/run-amortised: a round's wall time (release to the last answer)
//     over inFlight;
//   - cpu-ms/run: the process's CPU time (user and system, client and
//     server) over the runs;
//   - peak-heap-MiB: the heap's high-water mark (live objects and garbage
//     not yet swept, sampled every millisecond) and peak-go-MiB, that of
//     all the memory the Go runtime holds from the OS (heap, goroutine
//     stacks, runtime structures), both for client and server together.
func inFlightRounds(b *testing.B, srv *httptest.Server) {
	c := client(b, inFlight)
	if _, err := round(c, srv.URL); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	var wall time.Duration
	rounds := 0
	runtime.GC()
	peak := watchMem()
	cpu0 := cpuTime()
	for b.Loop() {
		t0 := time.Now()
		d, err := round(c, srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0)
		lat = append(lat, d...)
		rounds++
	}
	cpu := cpuTime() - cpu0
	heap, total := peak()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	runs := float64(rounds * inFlight)
	b.ReportMetric(ms(lat[len(lat)*50/100]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(ms(wall)/runs, "ms/run-amortised")
	b.ReportMetric(ms(cpu)/runs, "cpu-ms/run")
	b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(total)/(1<<20), "peak-go-MiB")
}

// BenchmarkAPIRun1000InFlightApart is BenchmarkAPIRun1000InFlight with
// the server in a process of its own (this test binary, running
// TestServeBenchProcess), so that its memory and CPU time are the
// server's alone. Besides the latencies and ms/run-amortised, seen by the
// client, it reports the server process's srv-cpu-ms/run, srv-peak-heap-MiB,
// srv-peak-go-MiB (as inFlightRounds) and srv-peak-rss-MiB, its largest
// resident set (VmHWM, reset when the measured rounds start).
func BenchmarkAPIRun1000InFlightApart(b *testing.B) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeBenchProcess$")
	cmd.Env = append(os.Environ(), serveBenchProcess+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	out := bufio.NewScanner(outPipe)
	if !out.Scan() {
		b.Fatalf("the server process said nothing: %v", out.Err())
	}
	base := "http://" + out.Text()
	ask := func(cmd string) string {
		if _, err := fmt.Fprintln(in, cmd); err != nil {
			b.Fatal(err)
		}
		if !out.Scan() {
			b.Fatalf("the server process did not answer %s: %v", cmd, out.Err())
		}
		return out.Text()
	}

	c := client(b, inFlight)
	if _, err := round(c, base); err != nil {
		b.Fatal(err)
	}
	ask("start")
	var lat []time.Duration
	var wall time.Duration
	rounds := 0
	for b.Loop() {
		t0 := time.Now()
		d, err := round(c, base)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0)
		lat = append(lat, d...)
		rounds++
	}
	var srv struct{ CPU, Heap, Total, RSS int64 }
	if err := json.Unmarshal([]byte(ask("stop")), &srv); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	runs := float64(rounds * inFlight)
	b.ReportMetric(ms(lat[len(lat)*50/100]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(ms(wall)/runs, "ms/run-amortised")
	b.ReportMetric(ms(time.Duration(srv.CPU))/runs, "srv-cpu-ms/run")
	b.ReportMetric(float64(srv.Heap)/(1<<20), "srv-peak-heap-MiB")
	b.ReportMetric(float64(srv.Total)/(1<<20), "srv-peak-go-MiB")
	b.ReportMetric(float64(srv.RSS)/(1<<20), "srv-peak-rss-MiB")
}

// serveBenchProcess names the variable that makes TestServeBenchProcess
// the server of BenchmarkAPIRun1000InFlightApart.
const serveBenchProcess = "AGENTC_SERVE_BENCH_PROCESS"

// TestServeBenchProcess is the server process of
// BenchmarkAPIRun1000InFlightApart, and is skipped otherwise. It serves
// the API on a loopback port, which it writes on its standard output,
// then answers lines on its standard input: "start" begins a measure,
// "stop" ends it and writes its figures, as JSON, on a line. It ends when
// its standard input does.
func TestServeBenchProcess(t *testing.T) {
	if os.Getenv(serveBenchProcess) != "1" {
		t.Skip("the server process of BenchmarkAPIRun1000InFlightApart")
	}
	h, err := serve.API([]serve.Agent{benchAgent(t)}, memRuns(t), serve.AllAgents(apiToken))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = http.Serve(ln, h) }()
	defer ln.Close()
	fmt.Println(ln.Addr())
	var peak func() (uint64, uint64)
	var cpu0 time.Duration
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		switch lines.Text() {
		case "start":
			runtime.GC()
			// Writing 5 resets the process's peak resident set (VmHWM).
			_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
			peak, cpu0 = watchMem(), cpuTime()
			fmt.Println("started")
		case "stop":
			cpu := cpuTime() - cpu0
			heap, total := peak()
			b, _ := json.Marshal(map[string]int64{"CPU": int64(cpu), "Heap": int64(heap), "Total": int64(total), "RSS": peakRSS()})
			fmt.Println(string(b))
		}
	}
}

// peakRSS is the process's peak resident set (VmHWM), in bytes; 0 where
// /proc does not say.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// round makes inFlight requests released together and returns the
// latency of each.
func round(c *http.Client, base string) ([]time.Duration, error) {
	lat := make([]time.Duration, inFlight)
	errs := make([]error, inFlight)
	release := make(chan struct{})
	var ready, done sync.WaitGroup
	ready.Add(inFlight)
	for i := range inFlight {
		done.Go(func() {
			ready.Done()
			<-release
			t0 := time.Now()
			errs[i] = run(c, base)
			lat[i] = time.Since(t0)
		})
	}
	ready.Wait()
	close(release)
	done.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("request %d: %w", i, err)
		}
	}
	return lat, nil
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchMem samples the runtime's memory every millisecond until the
// function it returns is called, which returns the largest heap (live
// objects and garbage not yet swept) and the most memory the runtime held
// from the OS (all it mapped, less what it released).
func watchMem() func() (heap, total uint64) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var heap, total uint64
	read := func() {
		metrics.Read(samples)
		heap = max(heap, samples[0].Value.Uint64())
		total = max(total, samples[1].Value.Uint64()-samples[2].Value.Uint64())
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return func() (uint64, uint64) {
		close(stop)
		<-done
		return heap, total
	}
}
