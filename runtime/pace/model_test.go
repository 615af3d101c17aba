package pace_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/pace"
	"agentc.dev/agentc/runtime/provider/openai"
)

// answer writes a chat completion in OpenAI's wire format.
func answer(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`, model)
}

// refuse writes OpenAI's refusal for rate: 429, Retry-After-Ms and its
// error body.
func refuse(w http.ResponseWriter, wait time.Duration) {
	ms := max(wait.Milliseconds(), 1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After-Ms", strconv.FormatInt(ms, 10))
	w.WriteHeader(http.StatusTooManyRequests)
	fmt.Fprintf(w, `{"error":{"message":"Rate limit reached for gpt-4o in organization org-test on requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in %dms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, ms)
}

func client(t *testing.T, url string) agentrt.Model {
	m, err := openai.New(openai.Config{APIKey: "sk-test-not-a-secret", BaseURL: url + "/v1/", Stall: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func request() *agentrt.Request {
	return &agentrt.Request{Model: "gpt-4o", MaxOutputTokens: 10, Messages: []agentrt.Message{{Role: agentrt.User, Content: "hi"}}}
}

// TestRefusalHoldsEveryone: one 429 with a Retry-After holds every other
// caller of the model, with no limit set. Eight calls are in flight when
// the first meets a 429 that closes the server for a second; the other
// seven then fail with 503 and are retried (after half a second at most,
// by retry.Default), which without the hold would land in the closed
// second and be refused too. With it, the server refuses one request.
func TestRefusalHoldsEveryone(t *testing.T) {
	const callers = 8
	const closed = time.Second
	var mu sync.Mutex
	var n, refused, answered int
	var closedUntil time.Time
	released := false
	arrived, release := make(chan struct{}, callers), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		n++
		first, rel := n == 1, released
		mu.Unlock()
		switch {
		case first:
			// Refused once every other caller's request is in flight.
			for range callers - 1 {
				<-arrived
			}
			mu.Lock()
			closedUntil, refused = time.Now().Add(closed), refused+1
			mu.Unlock()
			refuse(w, closed)
		case !rel:
			arrived <- struct{}{}
			<-release
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"The server is overloaded.","type":"server_error","param":null,"code":null}}`)
		default:
			mu.Lock()
			shut := time.Now().Before(closedUntil)
			if shut {
				refused++
			} else {
				answered++
			}
			mu.Unlock()
			if shut {
				refuse(w, time.Until(closedUntil))
				return
			}
			answer(w, "gpt-4o")
		}
	}))
	defer srv.Close()
	events := make(chan agentrt.Event, 100)
	m := pace.Model(client(t, srv.URL), "openai", pace.NewSet(), func(ev agentrt.Event) { events <- ev })
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := m.Complete(context.Background(), request())
			errs <- err
		}()
	}
	// The 429 is heard, and holds the model, before the others fail.
	for ev := range events {
		if ev.Type == agentrt.EventModelPaced && strings.Contains(ev.Message, "refused a call for rate (429)") {
			break
		}
	}
	mu.Lock()
	released = true
	mu.Unlock()
	close(release)
	for range callers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if refused != 1 || answered != callers {
		t.Errorf("the server refused %d requests and answered %d; want 1 refused and %d answered", refused, answered, callers)
	}
}

// TestThousandCalls: a thousand calls, 32 at once, paced to 300 requests a
// second against a server that answers at most 250 in any half second
// (500 a second) and refuses the rest with 429: it refuses none. In any
// half second a pace of one request every 3.3 ms sends at most 151, so
// requests may reach the server up to a third of a second late and still
// fit.
func TestThousandCalls(t *testing.T) {
	const calls, workers = 1000, 32
	var mu sync.Mutex
	var admitted []time.Time
	refused, answered := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		now := time.Now()
		mu.Lock()
		for len(admitted) > 0 && now.Sub(admitted[0]) >= 500*time.Millisecond {
			admitted = admitted[1:]
		}
		ok := len(admitted) < 250
		var wait time.Duration
		if ok {
			admitted = append(admitted, now)
			answered++
		} else {
			wait = admitted[0].Add(500 * time.Millisecond).Sub(now)
			refused++
		}
		mu.Unlock()
		if !ok {
			refuse(w, wait)
			return
		}
		answer(w, "gpt-4o")
	}))
	defer srv.Close()
	set := pace.NewSet(pace.Limits{"openai:gpt-4o": {RPM: 300 * 60, TPM: 100_000_000}})
	m := pace.Model(client(t, srv.URL), "openai", set, nil)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				if _, err := m.Complete(context.Background(), request()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := range calls {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if refused != 0 || answered != calls {
		t.Errorf("the server refused %d requests and answered %d; want none refused and %d answered", refused, answered, calls)
	}
}

// TestSettleUnreported: a call is settled to what it spent, as the run
// charges it, when its provider does not say: a reply that reports no
// usage (an OpenAI-compatible server that sends none) is settled to the
// local estimate, and a call that fails after a reply the provider bills
// (cut at the token limit) to the usage reported of it. Both were settled
// to nothing, every token they took given back, so that a limit of
// tokens a minute held none of them.
func TestSettleUnreported(t *testing.T) {
	prompt := strings.Repeat("the quick brown fox jumps over the lazy dog ", 400) // 17,600 bytes
	for _, tc := range []struct {
		name, body string
		fails      bool
		least      float64 // the tokens the call must leave spent
	}{
		{"no usage", `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`,
			false, 4000},
		{"cut at the limit", `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"ok ok ok ok ok"}}],"usage":{"prompt_tokens":3600,"completion_tokens":10,"total_tokens":3610}}`,
			true, 3610},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := newClock()
			set := pace.NewSet(pace.Limits{"openai": {TPM: 100_000}})
			set.SetClock(c.now)
			m := pace.Model(client(t, srv.URL), "openai", set, nil)
			req := request()
			req.Messages[0].Content = prompt
			_, err := m.Complete(context.Background(), req)
			if (err != nil) != tc.fails {
				t.Fatalf("the call: %v", err)
			}
			if left := set.For("openai", "gpt-4o").TokensAt(c.now()); left > 100_000-tc.least {
				t.Errorf("after the call the bucket holds %v of 100000: the call was settled to %v tokens, want %v at least", left, 100_000-left, tc.least)
			}
		})
	}
}
