package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/provider/openai"
)

// TestPoolReserve: a reservation that fits is granted at once; one that
// does not waits for a call in flight to settle; one that cannot fit even
// if everything in flight used nothing is refused at once.
func TestPoolReserve(t *testing.T) {
	ctx := context.Background()
	p := agentrt.NewPool(1000)
	waits := agentrt.PoolWaits(p)
	a, err := p.Reserve(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reserve(ctx, 1001); !isPoolError(err, 1001, 1000) {
		t.Fatalf("a reservation past the pool: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		b, err := p.Reserve(ctx, 500)
		if err == nil {
			b.Settle(400)
		}
		got <- err
	}()
	waiting(t, waits, got, "500 tokens with 600 of 1000 held")
	a.Settle(450) // 550 left, none held: the waiter fits
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if p.Remaining() != 150 || p.Spent() != 850 || p.Reserved() != 0 {
		t.Errorf("remaining %d, spent %d, reserved %d; want 150, 850, 0", p.Remaining(), p.Spent(), p.Reserved())
	}
	a.Settle(1000) // a second settle changes nothing
	if p.Remaining() != 150 {
		t.Errorf("a second Settle charged the pool: %d left", p.Remaining())
	}
}

// TestPoolWaiterRefused: a call waiting for room is refused once the
// calls in flight have settled and what is left cannot hold it.
func TestPoolWaiterRefused(t *testing.T) {
	ctx := context.Background()
	p := agentrt.NewPool(1000)
	waits := agentrt.PoolWaits(p)
	a, _ := p.Reserve(ctx, 700)
	got := make(chan error, 1)
	go func() { _, err := p.Reserve(ctx, 500); got <- err }()
	waiting(t, waits, got, "500 tokens with 700 of 1000 held")
	a.Settle(700)
	if err := <-got; !isPoolError(err, 500, 300) {
		t.Fatalf("got %v, want a refusal of 500 with 300 left", err)
	}
}

// TestPoolRest: a call without an output bound waits for every call in
// flight and then holds everything left, so the calls behind it wait too
// (first come, first served: it is not starved by small ones).
func TestPoolRest(t *testing.T) {
	ctx := context.Background()
	p := agentrt.NewPool(1000)
	waits := agentrt.PoolWaits(p)
	a, _ := p.Reserve(ctx, 100)
	rest := make(chan *agentrt.Reservation, 1)
	go func() {
		r, err := p.ReserveRest(ctx, 50)
		if err != nil {
			t.Error(err)
		}
		rest <- r
	}()
	waiting(t, waits, rest, "the rest while a call is in flight")
	small := make(chan error, 1)
	go func() {
		r, err := p.Reserve(ctx, 10)
		if err == nil {
			r.Settle(10)
		}
		small <- err
	}()
	waiting(t, waits, small, "a small call behind the rest")
	a.Settle(100)
	r := <-rest
	if r.Tokens() != 900 {
		t.Errorf("the rest holds %d, want 900", r.Tokens())
	}
	// The settle granted, under the pool's lock, all it would: the small
	// call waits still.
	if s := p.State(); s.InFlight != 1 || s.Held != 900 {
		t.Fatalf("a call was granted while the rest was held: %+v", s)
	}
	r.Settle(300)
	if err := <-small; err != nil {
		t.Fatal(err)
	}
	if p.Remaining() != 590 {
		t.Errorf("%d left, want 590", p.Remaining())
	}
}

// TestPoolCancel: a waiting reservation ends with its context, and the
// reservations behind it are served.
func TestPoolCancel(t *testing.T) {
	p := agentrt.NewPool(1000)
	waits := agentrt.PoolWaits(p)
	a, _ := p.Reserve(context.Background(), 900)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { _, err := p.Reserve(ctx, 500); got <- err }()
	waiting(t, waits, got, "500 tokens with 900 of 1000 held")
	after := make(chan error, 1)
	go func() {
		r, err := p.Reserve(context.Background(), 50)
		if err == nil {
			r.Settle(0)
		}
		after <- err
	}()
	waiting(t, waits, after, "50 tokens behind a waiting call")
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if err := <-after; err != nil {
		t.Fatalf("the reservation behind a cancelled one: %v", err)
	}
	a.Settle(0)
	if p.Reserved() != 0 || p.Remaining() != 1000 {
		t.Errorf("reserved %d, remaining %d; want 0, 1000", p.Reserved(), p.Remaining())
	}
}

// TestPoolConcurrentNeverOverspent: many goroutines reserving and settling
// at random never hold more than the pool, and the pool ends at or above
// zero (run with -race).
func TestPoolConcurrentNeverOverspent(t *testing.T) {
	p := agentrt.NewPool(10000)
	var wg sync.WaitGroup
	var refused atomic.Int64
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				n := int64(50 + (g*7+i*13)%400)
				r, err := p.Reserve(context.Background(), n)
				if err != nil {
					var pe *agentrt.PoolError
					if !errors.As(err, &pe) {
						t.Error(err)
					}
					refused.Add(1)
					return
				}
				if s := p.State(); s.Held > s.Limit-s.Spent {
					t.Errorf("%d reserved with %d left", s.Held, s.Limit-s.Spent)
				}
				r.Settle(int(n) / 2)
			}
		}()
	}
	wg.Wait()
	if p.Remaining() < 0 || refused.Load() == 0 {
		t.Errorf("remaining %d, %d refused; want >= 0 and some refused", p.Remaining(), refused.Load())
	}
}

// TestPoolOverReportedNeverOverspent: calls settling at many times what
// they held, from many goroutines, charge the pool what they held and no
// more, so it never goes below zero (run with -race).
func TestPoolOverReportedNeverOverspent(t *testing.T) {
	p := agentrt.NewPool(10000)
	var wg sync.WaitGroup
	var charged atomic.Int64
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				n := int64(100 + (g*11+i*17)%300)
				r, err := p.Reserve(context.Background(), n)
				if err != nil {
					return
				}
				charged.Add(n)
				r.Settle(int(n)*100 + i) // a provider over-reporting
				if s := p.State(); s.Spent > s.Limit || s.Held > s.Limit-s.Spent {
					t.Errorf("pool overspent: %+v", s)
				}
			}
		}()
	}
	wg.Wait()
	s := p.State()
	if s.Spent != charged.Load() || s.Spent > s.Limit || s.Held != 0 || s.InFlight != 0 {
		t.Errorf("pool %+v; want %d spent (what the calls held), at most the limit, nothing held", s, charged.Load())
	}
	// A negative report charges nothing.
	p = agentrt.NewPool(100)
	r, _ := p.Reserve(context.Background(), 50)
	r.Settle(-1 << 40)
	if p.Spent() != 0 || p.Remaining() != 100 {
		t.Errorf("a negative report: %d spent, %d left", p.Spent(), p.Remaining())
	}
}

// waiting waits until a reservation starts to wait in the pool, and fails
// if the goroutine making it reports first: it was granted or refused.
func waiting[T any](t *testing.T, waits <-chan struct{}, reported <-chan T, what string) {
	t.Helper()
	select {
	case <-waits:
	case v := <-reported:
		t.Fatalf("%s did not wait: %v", what, v)
	}
}

func isPoolError(err error, need, left int64) bool {
	var pe *agentrt.PoolError
	return errors.As(err, &pe) && pe.Need == need && pe.Left == left
}

// TestPoolRunsNeverOverspend: 8 runs at once on a 1,200-token pool,
// against a server speaking the Chat Completions wire format, whose calls
// each report 150 tokens of input and up to max_output_tokens of output:
// the pool ends at or above zero (it used to end at -800), the runs that
// did not fit end with the token_budget bound, and the requests the
// server saw add up to what the pool was charged.
func TestPoolRunsNeverOverspend(t *testing.T) {
	var charged atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages   []json.RawMessage `json:"messages"`
			ToolChoice struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_choice"`
			MaxTokens int `json:"max_completion_tokens"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.ToolChoice.Function.Name == "" {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		time.Sleep(10 * time.Millisecond) // calls overlap
		in, out := 150, req.MaxTokens
		charged.Add(int64(in + out))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m1",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":"{\"label\":\"bug\"}"}}]}}],
"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, req.ToolChoice.Function.Name, in, out, in+out)
	}))
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	p := agent(t, func(a *plan.Agent) { a.Model.Provider = "openai"; a.Model.MaxOutputTokens = 100 })
	pool := agentrt.NewPool(1200)
	r, err := agentrt.New(p, agentrt.Options{Model: m, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	ok := runAtOnce(t, r, 8)
	if pool.Remaining() < 0 || pool.Spent() != charged.Load() || ok == 0 || ok == 8 {
		t.Errorf("pool: %d left, %d spent, the server charged %d, %d of 8 runs answered", pool.Remaining(), pool.Spent(), charged.Load(), ok)
	}
}

// TestPoolAdmitsByCount: 8 runs of a gpt-4o-mini agent at once on a pool
// with 850 tokens left, each call using 92 and reserving its
// input's count (o200k_base) and its 40 tokens of output, not a token a
// byte and 512 more: all but at most one are admitted (a call used to
// reserve 996 tokens, and every run was refused), each call holds less
// than 200, and the pool still never overspends.
func TestPoolAdmitsByCount(t *testing.T) {
	var charged, maxHold atomic.Int64
	var pool *agentrt.Pool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ToolChoice struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_choice"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.ToolChoice.Function.Name == "" {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, 400)
			return
		}
		if s := pool.State(); s.InFlight > 0 {
			for h := s.Held / int64(s.InFlight); ; {
				m := maxHold.Load()
				if h <= m || maxHold.CompareAndSwap(m, h) {
					break
				}
			}
		}
		in, out := 80, 12
		charged.Add(int64(in + out))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
"tool_calls":[{"id":"call_1","type":"function","function":{"name":%q,"arguments":"{\"label\":\"bug\"}"}}]}}],
"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, req.ToolChoice.Function.Name, in, out, in+out)
	}))
	defer srv.Close()
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	p := agent(t, func(a *plan.Agent) {
		a.Model = plan.Model{Provider: "openai", Name: "gpt-4o-mini", MaxOutputTokens: 40}
		a.Prompt = "Issue: the export button does nothing on Firefox."
	})
	pool = agentrt.NewPool(850)
	r, err := agentrt.New(p, agentrt.Options{Model: m, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	ok := runAtOnce(t, r, 8)
	if h := maxHold.Load(); ok < 7 || h >= 200 || h < 100 {
		t.Errorf("%d of 8 runs admitted, a call held up to %d tokens; want at least 7, and between 100 (what a call used) and 200", ok, h)
	}
	if pool.Remaining() < 0 || pool.Spent() != charged.Load() {
		t.Errorf("pool: %d left, %d spent, the server charged %d", pool.Remaining(), pool.Spent(), charged.Load())
	}
}

// runAtOnce runs r n times at once and returns how many runs answered;
// a run may otherwise only be refused by the pool, saying so.
func runAtOnce(t *testing.T, r *agentrt.Runner, n int) int {
	t.Helper()
	reps := make([]*agentrt.Report, n)
	var wg sync.WaitGroup
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], _ = r.Run(context.Background(), nil)
		}()
	}
	wg.Wait()
	ok := 0
	for _, rep := range reps {
		switch {
		case rep.Outcome == "ok" && rep.Bound == "none":
			ok++
		case rep.Bound == "token_budget" && strings.Contains(rep.Error, "tokens left, fewer than the call may use"):
		default:
			t.Errorf("a run ended %s/%s: %s", rep.Outcome, rep.Bound, rep.Error)
		}
	}
	return ok
}
