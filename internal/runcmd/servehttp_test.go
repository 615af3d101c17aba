package runcmd

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"agentc.dev/agentc/internal/termtext"
)

// TestHTTPServerIdle: a connection left idle after its request, and one
// that never finishes its header, are closed by the server, whoever holds
// them (the request here has no token): connections nobody uses do not
// pile up. The bounds are shortened for the test; the client waits on the
// server closing the connection, bounded by a deadline far past them.
func TestHTTPServerIdle(t *testing.T) {
	oldHeader, oldIdle := headerTimeout, idleTimeout
	headerTimeout, idleTimeout = 200*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { headerTimeout, idleTimeout = oldHeader, oldIdle })
	ln := serveNoToken(t)

	closed := func(c net.Conn, r *bufio.Reader) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("the server did not close the connection: %v", err)
		}
	}
	// Idle after a request answered: kept alive, then closed.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /v1/agents HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Close {
		t.Fatalf("answered %s, close %v: want a 401 on a connection kept alive", resp.Status, resp.Close)
	}
	closed(c, r)

	// A header never finished.
	c2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := io.WriteString(c2, "GET /v1/agents HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	r2 := bufio.NewReader(c2)
	c2.SetReadDeadline(time.Now().Add(30 * time.Second))
	// The server may answer 408 before closing; either way it closes.
	if resp, err := http.ReadResponse(r2, nil); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("an unfinished header answered %s", resp.Status)
		}
	}
	closed(c2, r2)
}

// TestHTTPServerSlowReader: a client that stops reading an answer holds
// its handler only until a write has waited writeWait (shortened here):
// the write fails, and the handler returns, though the client still
// holds its connection. (Without the bound the handler never returns.)
func TestHTTPServerSlowReader(t *testing.T) {
	old := writeWait
	writeWait = 100 * time.Millisecond
	t.Cleanup(func() { writeWait = old })
	wrote := make(chan error, 1)
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		piece := bytes.Repeat([]byte("x"), 64<<10)
		for range 4096 { // 256 MiB: far more than the connection's buffers hold
			if _, err := w.Write(piece); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}), io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing.
	if err := <-wrote; err == nil {
		t.Error("wrote all 256 MiB to a client that reads nothing")
	}
}

// TestHTTPServerHeaderBound: a header past 64 KiB is refused, 431, before
// the server holds more of it (at Go's default, a megabyte a connection,
// no token needed); one within it is read.
func TestHTTPServerHeaderBound(t *testing.T) {
	ln := serveNoToken(t)
	for _, tc := range []struct {
		size int
		want int
	}{{8 << 10, http.StatusUnauthorized}, {200 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		go io.WriteString(c, "GET /v1/agents HTTP/1.1\r\nHost: x\r\nX-Pad: "+string(bytes.Repeat([]byte("a"), tc.size))+"\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a %d-byte header: %v", tc.size, err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("a %d-byte header answered %s, want %d", tc.size, resp.Status, tc.want)
		}
	}
}

// serveNoToken serves, on loopback, a server of agentc serve --http whose
// every answer is 401, and returns its listener.
func serveNoToken(t *testing.T) net.Listener {
	t.Helper()
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no token", http.StatusUnauthorized)
	}), io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln
}

// TestHTTPServerLog: what net/http itself logs (here a handler's panic
// quoting what the client sent, an escape sequence among it) goes to the
// writer the command gives, escaped there, not to the process's standard
// error as it is.
func TestHTTPServerLog(t *testing.T) {
	var log lockedBuffer
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("client said " + r.URL.Query().Get("q"))
	}), termtext.Writer(&log))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	// The server logs the panic before it closes the connection, which
	// ends this request.
	if resp, err := http.Get("http://" + ln.Addr().String() + "/?q=%1B%5D0%3Bpwned%07"); err == nil {
		resp.Body.Close()
	}
	got := log.String()
	if !strings.Contains(got, "agentc: http: panic serving") || !strings.Contains(got, "client said") {
		t.Fatalf("the handler's panic was not logged to the writer given: %q", got)
	}
	if strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("the log holds a raw control character: %q", got)
	}
}

// lockedBuffer is a buffer written by a server's goroutines and read by
// the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestWriteReady: a server removes its ready file only where it is still
// the file it wrote, saying its URL: one written in its place, with
// another URL or the same, stays; one that is not a regular file is
// written into and stays.
func TestWriteReady(t *testing.T) {
	path := filepath.Join(t.TempDir(), "url.txt")
	const url = "http://127.0.0.1:8080\n"
	for _, next := range []string{"http://127.0.0.1:9090\n", url} {
		remove, err := writeReady(path, url)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		remove()
		if b, err := os.ReadFile(path); err != nil || string(b) != next {
			t.Errorf("the file another server wrote, %q: %q %v", next, b, err)
		}
	}
	remove, err := writeReady(path, url)
	if err != nil {
		t.Fatal(err)
	}
	remove()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("its own file: %v, want it removed", err)
	}
	if runtime.GOOS != "windows" {
		remove, err := writeReady(os.DevNull, url)
		if err != nil {
			t.Fatal(err)
		}
		remove()
		if _, err := os.Stat(os.DevNull); err != nil {
			t.Errorf("%s: %v", os.DevNull, err)
		}
	}
}

// TestListenURL: the URL the server says is one a client on this machine
// reaches, whatever form of every interface --http gave.
func TestListenURL(t *testing.T) {
	for _, c := range []struct {
		asked string
		ip    net.IP
		want  string
		every bool
	}{
		{"127.0.0.1:0", net.IPv4(127, 0, 0, 1), "http://127.0.0.1:8080", false},
		{"localhost:0", net.IPv4(127, 0, 0, 1), "http://localhost:8080", false},
		{"[::1]:0", net.IPv6loopback, "http://[::1]:8080", false},
		{"0.0.0.0:0", net.IPv6unspecified, "http://127.0.0.1:8080", true},
		{":0", net.IPv6unspecified, "http://127.0.0.1:8080", true},
		{"[::]:0", net.IPv6unspecified, "http://[::1]:8080", true},
		{"192.0.2.7:8080", net.IPv4(192, 0, 2, 7), "http://192.0.2.7:8080", false},
	} {
		got, every := listenURL(c.asked, &net.TCPAddr{IP: c.ip, Port: 8080})
		if got != c.want || every != c.every {
			t.Errorf("listenURL(%q) = %q, %v; want %q, %v", c.asked, got, every, c.want, c.every)
		}
	}
}

func TestPublicURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://agents.example.com":        "https://agents.example.com",
		"https://agents.example.com/":       "https://agents.example.com",
		"http://proxy.example:8443/team/x/": "http://proxy.example:8443/team/x",
	} {
		if got, err := publicURL(in); err != nil || got != want {
			t.Errorf("publicURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"agents.example.com", "ftp://agents.example.com", "https://", "mailto:a@b", "https://a.example/#x", "https://a.example/?", "https://u@a.example", "http://[::1"} {
		if got, err := publicURL(in); err == nil {
			t.Errorf("publicURL(%q) = %q, want an error", in, got)
		}
	}
	// A password is never said, whatever is wrong with the URL.
	for _, in := range []string{"https://u:pw-secret@a.example", "https://u:pw-secret@[::1", "https://u:pw-secret@a.example/%zz"} {
		if _, err := publicURL(in); err == nil || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("publicURL(%q): %v", in, err)
		}
	}
}
