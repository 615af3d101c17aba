package a2a_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"agentc.dev/agentc/internal/leaf/bodyrate"
	"agentc.dev/agentc/serve"
	a2aserve "agentc.dev/agentc/serve/a2a"
	"agentc.dev/agentc/serve/internal/servetest"
)

// rpc posts body to the agent's JSON-RPC endpoint with the token and
// returns the answer's body.
func rpc(t *testing.T, srv *httptest.Server, agent, body string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+a2aserve.Prefix+agent, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return ""
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%d %.300s", resp.StatusCode, out)
	}
	return string(out)
}

// sendWith is a message/send of a data part {"title": "x"}, more parts
// after it, and the message's metadata.
func sendWith(more, meta string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user",` +
		`"metadata":` + meta + `,"parts":[{"kind":"data","data":{"title":"x"}}` + more + `]}}}`
}

// dense is a JSON array of about n bytes of empty objects.
func dense(n int) string { return "[" + strings.Repeat("{},", n/3) + "{}]" }

// TestA2ADenseMessage: a request of more JSON values than a request to
// an agent may hold (a second data part, or the message's metadata, of
// empty objects near the body's 8 MiB), or nesting deeper than it may,
// is refused with a JSON-RPC error naming the bound before the SDK
// decodes any of it: no task exists, and four such requests at once
// allocate a few times their bytes, where the SDK's decoding and copies
// of one held 1.6 GB.
func TestA2ADenseMessage(t *testing.T) {
	var reached atomic.Int32
	a2aserve.OnReached(t, func() { reached.Add(1) })
	srv, _, _ := served(t, labeler(t))
	size := serve.MaxBodyBytes - 1<<10
	bodies := map[string]string{
		"a second data part": sendWith(`,{"kind":"data","data":{"j":`+dense(size)+`}}`, `{}`),
		"the metadata":       sendWith(``, `{"agentc/budgets":{"tokens":-1},"j":`+dense(size)+`}`),
		"values just past":   sendWith(`,{"kind":"data","data":{"j":`+dense(3*a2aserve.MaxValues)+`}}`, `{}`),
		"nesting":            sendWith(`,{"kind":"data","data":{"j":`+strings.Repeat("[", a2aserve.MaxDepth)+strings.Repeat("]", a2aserve.MaxDepth)+`}}`, `{}`),
	}
	for name, body := range bodies {
		if len(body) > serve.MaxBodyBytes {
			t.Fatalf("%s: the body is %d bytes, past the bound on bodies", name, len(body))
		}
		var ans struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		out := rpc(t, srv, "labeler", body)
		if err := json.Unmarshal([]byte(out), &ans); err != nil {
			t.Fatalf("%s: %v: %.300s", name, err, out)
		}
		bound := fmt.Sprintf("more than the %d a request to agent labeler may hold", a2aserve.MaxValues)
		if name == "nesting" {
			bound = fmt.Sprintf("deeper than the %d a request to agent labeler may", a2aserve.MaxDepth)
		}
		if ans.Result != nil || ans.Error.Code != -32602 || !strings.Contains(ans.Error.Message, bound) || !strings.Contains(ans.Error.Message, "text part") || ans.ID != 7.0 {
			t.Errorf("%s: %.300s", name, out)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d dense requests reached the SDK", n)
	}

	// Four at once.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if out := rpc(t, srv, "labeler", bodies["a second data part"]); !strings.Contains(out, `"code":-32602`) {
				t.Errorf("%.300s", out)
			}
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*8*serve.MaxBodyBytes {
		t.Errorf("four dense requests allocated %d MB", grew>>20)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d dense requests reached the SDK", n)
	}

	// Just within the bounds, the request reaches the SDK; its task is
	// rejected (tokens -1), and tasks/get finds it.
	within := sendWith(`,{"kind":"data","data":{"j":`+dense(3*(a2aserve.MaxValues-40))+`}}`, `{"agentc/budgets":{"tokens":-1}}`)
	out := rpc(t, srv, "labeler", within)
	if !strings.Contains(out, `"state":"rejected"`) || reached.Load() != 1 {
		t.Errorf("a request within the bounds: %.300s", out)
	}
}

// TestA2AGetBounded: tasks/get decodes a stored task, and the SDK encodes
// it, within the bound on reading, weighed by the task's values: with
// all but a megabyte of the bound taken, a get of a dense task waits
// for the task's weight, seven more at once wait too, none answered,
// and each is answered whole once the bound is given back.
func TestA2AGetBounded(t *testing.T) {
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, _, _ := servedBy(t, labeler(t), runs)
	kept := rpc(t, srv, "labeler", sendWith(`,{"kind":"data","data":{"j":`+dense(3*(a2aserve.MaxValues-40))+`}}`, `{"agentc/budgets":{"tokens":-1}}`))
	var task struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(kept), &task); err != nil || task.Result.ID == "" {
		t.Fatalf("%v: %.300s", err, kept)
	}
	release, err := runs.Reading(t.Context(), serve.MaxReading-1<<20)
	if err != nil {
		t.Fatal(err)
	}
	waits := make(chan int64, 8)
	a2aserve.OnHoldWait(t, func(n int64) { waits <- n })
	answers := make(chan string, 8)
	get := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":%q}}`, task.Result.ID)
	for i := range 8 {
		go func() { answers <- rpc(t, srv, "labeler", get) }()
		select {
		case out := <-answers:
			t.Fatalf("a get was answered with the bound taken: %.300s", out)
		case n := <-waits:
			// The first waits with its request read, for the task;
			// the others may wait behind it.
			if i == 0 && n < serve.MaxBodyBytes*3/4 {
				t.Errorf("a get of a task of %d values waited for %d bytes of the bound", a2aserve.MaxValues, n)
			}
		}
	}
	release()
	for range 8 {
		if out := <-answers; !strings.Contains(out, task.Result.ID) || len(out) < 3*(a2aserve.MaxValues-40) {
			t.Errorf("a get: %.300s", out)
		}
	}
}

// TestA2AHistoryAsSent: an ended task's history holds the message as it
// was sent: an empty array stays one (the SDK's copies of a task at each
// of its status changes make it null, an input the contract may refuse).
func TestA2AHistoryAsSent(t *testing.T) {
	_, _, client := served(t, labeler(t))
	ctx := t.Context()
	res, err := client.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"title": "x", "tags": []any{}}})})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("the answer is a %T", res)
	}
	got, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateCompleted || len(got.History) == 0 || len(got.History[0].Parts) == 0 {
		t.Fatalf("the task: %s %+v", got.Status.State, got.History)
	}
	d, ok := got.History[0].Parts[0].(a2a.DataPart)
	if tags, isArray := d.Data["tags"].([]any); !ok || !isArray || tags == nil || len(tags) != 0 {
		t.Errorf("the history's data part: %#v", got.History[0].Parts[0])
	}
}

// TestA2ABodyReadBounded: a request's body is read within the bound on
// reading, as much of it as the body may be taken before a byte of it is
// read: with the bound taken, a request whose body has not come yet
// waits (many requests at once cannot each hold a body they have read
// before they are measured), and is answered once the bound is given
// back.
func TestA2ABodyReadBounded(t *testing.T) {
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, _, _ := servedBy(t, labeler(t), runs)
	release, err := runs.Reading(t.Context(), serve.MaxReading)
	if err != nil {
		t.Fatal(err)
	}
	waits := make(chan int64, 4)
	a2aserve.OnHoldWait(t, func(n int64) { waits <- n })
	// A body of no length said, sent once the request has waited.
	pr, pw := io.Pipe()
	answers := make(chan string, 1)
	sendTo(t, srv.URL, pr, answers)
	select {
	case out := <-answers:
		t.Fatalf("answered with the bound taken and no body sent: %.300s", out)
	case n := <-waits:
		if n < serve.MaxBodyBytes {
			t.Errorf("a body of no length said waited for %d bytes of the bound, less than it may be", n)
		}
	}
	release()
	if _, err := io.WriteString(pw, sendWith("", "{}")); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if out := <-answers; !strings.Contains(out, `"result"`) {
		t.Errorf("the request once the bound was given back: %.300s", out)
	}
}

// TestA2ABodyHeldWithinBound: a request's body stays within the bound on
// reading from before it is read until its run has checked its input: it
// takes, before reading it, as much as an input drawn from a body of its
// length may weigh (serve.BodyWeight), which covers the message's own
// weight, and holds it on. With the bound taken, eight messages of 60,000
// small values (each weighing 7.7 MB) each wait once, their bodies unread;
// once it is given back, none waits again: each had taken its body's
// bytes, and, once it was read, given them back and waited for its weight,
// holding its body outside the bound.
func TestA2ABodyHeldWithinBound(t *testing.T) {
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runs.Stop(); runs.Wait() })
	srv, _, _ := servedBy(t, labeler(t), runs)
	release, err := runs.Reading(t.Context(), serve.MaxReading)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sync.OnceFunc(release))
	var waits atomic.Int32
	waited := make(chan struct{}, 64)
	a2aserve.OnHoldWait(t, func(int64) {
		waits.Add(1)
		waited <- struct{}{}
	})
	body := sendWith("", `{"n":[`+strings.Repeat("0,", 60000)+`0]}`)
	if w := serve.Weight([]byte(body)); w <= serve.MaxReading/5 || w > serve.MaxReading/4 {
		t.Fatalf("the message weighs %d: four at once must fit the bound, five not", w)
	}
	const n = 8
	answers := make(chan string, n)
	for range n {
		sendTo(t, srv.URL, strings.NewReader(body), answers)
	}
	for range n {
		select {
		case out := <-answers:
			t.Fatalf("answered with the bound taken: %.300s", out)
		case <-waited:
		}
	}
	release()
	for range n {
		if out := <-answers; !strings.Contains(out, `"result"`) {
			t.Errorf("a message once the bound was given back: %.300s", out)
		}
	}
	if w := waits.Load(); w != n {
		t.Errorf("%d waits for the bound, want %d: a request waited again, its body read", w, n)
	}
}

// sendTo posts body to the labeler's A2A endpoint at url, with the token,
// and puts the answer's body (or the request's error) on answers once it
// comes.
func sendTo(t *testing.T, url string, body io.Reader, answers chan<- string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+a2aserve.Prefix+"labeler", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answers <- err.Error()
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		answers <- string(out)
	}()
}

// TestA2ASlowBody: a client that sends the head of a request of more than
// 512 KiB (its share the whole bound on reading) and then nothing is
// answered 408 once its body's time is out (serve.BoundReads), before the
// SDK sees it, and its share is given back at once: another client's
// message, which waited on it, is then answered. Before, the other
// message waited as long as the body's sender liked.
func TestA2ASlowBody(t *testing.T) {
	runs, err := serve.NewRuns("", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runs.Stop(); runs.Wait() })
	clk := &bodyrate.Manual{}
	runs.SetClock(clk)
	var reached atomic.Int32
	a2aserve.OnReached(t, func() { reached.Add(1) })
	srv, _, _ := servedBy(t, labeler(t), runs)
	waits := make(chan int64, 4)
	a2aserve.OnHoldWait(t, func(n int64) { waits <- n })

	st := servetest.Stalled(t, srv.URL+a2aserve.Prefix+"labeler", token, http.Header{"Content-Type": {"application/json"}}, `{"jsonrpc":"2.0","id":7,"method":"message/send","params":`)
	answers := make(chan string, 1)
	sendTo(t, srv.URL, strings.NewReader(sendWith("", "{}")), answers)
	<-waits // for the bound, which the body holds
	clk.Advance(serve.BodyWait + time.Second)
	if status, body, closed := st.Answer(t); status != http.StatusRequestTimeout || !regexp.MustCompile(`^the body came too slowly: \d+ bytes in 10(\.\d+)?s`).MatchString(body) || !closed {
		t.Errorf("answered %d %q, the connection closed: %v; want 408 saying the body came too slowly, closed", status, body, closed)
	}
	if out := <-answers; !strings.Contains(out, `"result"`) || !strings.Contains(out, `"completed"`) {
		t.Errorf("another client's message, once the body was given up: %.300s", out)
	}
	if n := reached.Load(); n != 1 {
		t.Errorf("%d requests reached the SDK, want the other client's", n)
	}
}

// TestA2ARecordReadBounded: a task an earlier server kept is settled by
// its run's record, which a server that did not resume the run reads
// back from the journal directory, within the bound on reading, as the
// HTTP API's GET /v1/runs/ID reads it: tasks/get of a task whose run the
// stop interrupted, and a message to a task whose run another server
// runs, each read the record whole outside it (here one of 8 MiB: a
// record holds its input and its report, the tools' results among it,
// and may be larger than its task, up to 64 MiB). With all but 4 MiB of
// the bound taken, eight gets, and the message, each wait, none
// answered, and each is answered once the bound is given back.
func TestA2ARecordReadBounded(t *testing.T) {
	for _, c := range []struct {
		name, state, want string
		requests          int
	}{
		{"tasks/get", "interrupted", "the server stopped before the run ended", 8},
		{"message/send", "running", "is running in another server on the journal directory", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ag := labeler(t)
			var last *a2a.TaskStatusUpdateEvent
			if c.name == "tasks/get" {
				runs, err := serve.NewRuns(dir, 0, false)
				if err != nil {
					t.Fatal(err)
				}
				last = interruptedTask(t, ag, runs)
			} else {
				last = diedMidRun(t, ag, dir)
			}
			editJSON(t, filepath.Join(dir, "*.json"), func(r map[string]any) {
				r["state"] = c.state
				r["input"] = map[string]any{"title": strings.Repeat("a", 8<<20)}
			})
			later, err := serve.NewRuns(dir, 0, false) // not resuming the run
			if err != nil {
				t.Fatal(err)
			}
			srv, _, _ := servedBy(t, ag, later)
			held, err := later.Reading(t.Context(), serve.MaxReading-4<<20)
			if err != nil {
				t.Fatal(err)
			}
			release := sync.OnceFunc(held)
			t.Cleanup(release)
			waits := make(chan int64, 2*c.requests)
			a2aserve.OnHoldWait(t, func(n int64) { waits <- n })
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":%q}}`, last.TaskID)
			if c.name == "message/send" {
				body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","taskId":%q,"contextId":%q,"parts":[{"kind":"data","data":{"title":"again"}}]}}}`, last.TaskID, last.ContextID)
			}
			answers := make(chan string, c.requests)
			for range c.requests {
				sendTo(t, srv.URL, strings.NewReader(body), answers)
				select {
				case out := <-answers:
					t.Fatalf("answered with the bound taken: %.300s", out)
				case <-waits:
				}
			}
			release()
			for range c.requests {
				if out := <-answers; !strings.Contains(out, `"state":"failed"`) || !strings.Contains(out, c.want) {
					t.Errorf("once the bound was given back: %.300s", out)
				}
			}
		})
	}
}
