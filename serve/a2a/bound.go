package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"agentc.dev/agentc/internal/leaf/jsonshape"
	"agentc.dev/agentc/serve"
)

// maxValues bounds the JSON values a request to an agent's endpoint may
// hold, all its parts and metadata together. The SDK decodes a message
// into maps and slices and copies the task that holds it (a gob round
// trip) at each of its status changes, each value costing hundreds of
// bytes where it took two or three in the body: an 8 MiB message of
// 2.8 million empty objects held 1.6 GB. At 2^16 values a message holds
// what an 8 MiB input read over the HTTP API holds, order of magnitude:
// tens of megabytes. A larger structured input goes, as JSON, in a text
// part, which is held as one string and read as the API reads a body.
// Weighed on the bound on reading as the API's inputs are (serve.Weight),
// the densest request weighs what a body of serve.MaxBodyBytes does.
const maxValues = 1 << 16

// maxDepth bounds how deep a request's arrays and objects nest: each
// level is a frame of recursion in each of the SDK's copies and agentc's
// walks of the input. No contract's input nests near it; a text part's
// JSON nests as deep as the API takes (10,000).
const maxDepth = 1000

// hold is what a request to an agent's endpoint holds of the bound on
// reading (serve.Runs.Reserve): as much as an input drawn from its body
// may weigh, from before its body is read until the agent's run takes it
// on to check its input under (serve.WithShare), or the request ends; or,
// once a stored task is read for it, that task's weight, until the
// answer is written. It holds one weight at a time, and gives it back
// before it takes another, so that no request waits for the bound while
// holding some of it.
type hold struct {
	runs  *serve.Runs
	mu    sync.Mutex
	sh    *serve.Share
	ended bool
}

type holdKey struct{}

// holdOf is the hold of the request ctx is of; nil, which holds nothing,
// for none.
func holdOf(ctx context.Context) *hold {
	h, _ := ctx.Value(holdKey{}).(*hold)
	return h
}

// take gives back what h holds and takes n bytes of the bound in its
// place, until the request ends or h is given back; a request that has
// ended takes nothing.
func (h *hold) take(ctx context.Context, n int64) error {
	if h == nil {
		return nil
	}
	h.give()
	sh, ok := h.runs.TryReserve(n)
	if !ok {
		if holdWaits != nil {
			holdWaits(n)
		}
		var err error
		if sh, err = h.runs.Reserve(ctx, n); err != nil {
			return err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sh.Release() // taken meanwhile, by another of the request's goroutines
	h.sh = sh
	if h.ended {
		h.sh.Release()
	}
	return nil
}

// fit holds n bytes of the bound: what h holds, shrunk to n, where that
// is as much, else n in its place (take).
func (h *hold) fit(ctx context.Context, n int64) error {
	h.mu.Lock()
	if h.sh.Held() >= n {
		h.sh.Shrink(n)
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	return h.take(ctx, n)
}

// atLeast holds at least n bytes of the bound: what h holds, where that
// is as much, else n in its place (take).
func (h *hold) atLeast(ctx context.Context, n int64) error {
	if h.held() >= n {
		return nil
	}
	return h.take(ctx, n)
}

// held is how much of the bound h holds.
func (h *hold) held() int64 {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sh.Held()
}

// record is run's record (nil when runs has none), read within the bound
// on reading: the request that reads it (ctx's) holds, besides what it
// held, the record's weight (serve.Runs.GetWithin) until it ends. A
// record read back from the journal directory is decoded whole, up to
// 64 MiB, and may be larger than the task it settles.
func record(ctx context.Context, runs *serve.Runs, run string) (*serve.Record, error) {
	h := holdOf(ctx)
	before := h.held()
	return runs.GetWithin(ctx, run, func(n int64) error { return h.atLeast(ctx, before+n) })
}

// share is what h holds, for the run the request makes to take on
// (serve.WithShare): once it has, h holds nothing.
func (h *hold) share() *serve.Share {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sh
}

// give gives back what h holds.
func (h *hold) give() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sh.Release()
}

// end gives back what h holds, for good: the request has ended.
func (h *hold) end() {
	h.mu.Lock()
	h.ended = true
	h.mu.Unlock()
	h.give()
}

// holdWaits, when set (by tests), hears each hold that waits for n bytes
// of the bound on reading.
var holdWaits func(n int64)

// measured serves h, the SDK's JSON-RPC endpoint of agent name, each
// request whose body is within limit bytes, maxValues values and
// maxDepth deep, read whole and measured before the SDK decodes any of
// it; a body past limit is refused 413, one past the others with a
// JSON-RPC error saying so, before any task exists. The SDK's decoding
// and its copies of the message are within the bound on reading (hold).
func measured(name string, limit int64, runs *serve.Runs, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tooLarge := func() {
			http.Error(w, fmt.Sprintf("the body is larger than the %d bytes a request to agent %s may be", limit, name), http.StatusRequestEntityTooLarge)
		}
		if r.ContentLength > limit {
			tooLarge()
			return
		}
		// The body is read within the bound on reading too, as much of
		// it taken as an input drawn from a body of its length (where it
		// says) may weigh (serve.BodyWeight), so that many requests at
		// once cannot hold more than the bound before they are measured,
		// nor while they wait for their runs to check their inputs.
		hd := &hold{runs: runs}
		defer hd.end()
		size := limit
		if r.ContentLength >= 0 {
			size = r.ContentLength
		}
		if err := hd.take(r.Context(), serve.BodyWeight(size)); err != nil {
			return // its client went while it waited
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		var past *http.MaxBytesError
		var slow *serve.SlowBodyError
		switch {
		case errors.As(err, &past):
			tooLarge()
			return
		case errors.As(err, &slow):
			// The share goes back before the answer is written, and the
			// rest of the body is not read.
			hd.end()
			w.Header().Set("Connection", "close")
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		case err != nil:
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		switch values, depth := jsonshape.Measure(body); {
		case values > maxValues:
			refuse(w, body, fmt.Sprintf("the request holds %d JSON values, more than the %d a request to agent %s may hold: a large structured input goes, as JSON, in a text part", values, maxValues, name))
			return
		case depth > maxDepth:
			refuse(w, body, fmt.Sprintf("the request nests arrays and objects %d deep, deeper than the %d a request to agent %s may: a deep structured input goes, as JSON, in a text part", depth, maxDepth, name))
			return
		}
		// Held while the SDK decodes the message (its weight), and on
		// until the run checks its input under it: an input drawn from a
		// text part is denser than the message (one string), so as much
		// as an input of the body's length may weigh. Given back and
		// taken again, the body was held outside the bound in between;
		// only a body that is not JSON, which the SDK refuses, may weigh
		// more than was taken for it.
		need := min(max(serve.Weight(body), serve.BodyWeight(int64(len(body)))), serve.MaxReading)
		if err := hd.fit(r.Context(), need); err != nil {
			return // its client went while it waited
		}
		if reached != nil {
			reached()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holdKey{}, hd)))
	})
}

// reached, when set (by tests), hears each request that reaches the SDK.
var reached func()

// refuse answers the JSON-RPC request body with an invalid-params error
// saying msg. Its id is echoed where it is a string or a number.
func refuse(w http.ResponseWriter, body []byte, msg string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	id := json.RawMessage("null")
	if json.Unmarshal(body, &req) == nil && len(req.ID) > 0 && bytes.IndexByte([]byte(`"-0123456789`), req.ID[0]) >= 0 {
		id = req.ID
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{-32602, msg}})
}
