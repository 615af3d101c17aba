package failure

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"agentc.dev/agentc/runtime/internal/origin"
	"agentc.dev/agentc/runtime/provider/internal/limit"
)

func TestTransient(t *testing.T) {
	post := func(err error) error { return &url.Error{Op: "Post", URL: "https://api.example/v1", Err: err} }
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", post(dial), true},
		{"connection reset", post(fmt.Errorf("read: %w", syscall.ECONNRESET)), true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"closed before the response", post(io.EOF), true},
		{"body cut short", fmt.Errorf("reading the body: %w", io.ErrUnexpectedEOF), true},
		{"timeout", post(&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}), true},
		{"attempt deadline", fmt.Errorf("attempt: %w", context.DeadlineExceeded), true},
		{"stalled", fmt.Errorf("reading: %w", &limit.StalledError{Provider: "p", After: time.Second}), true},
		{"certificate refused", post(x509.UnknownAuthorityError{}), false},
		{"unknown scheme", post(errors.New(`unsupported protocol scheme "ftp"`)), false},
		{"redirect refused", post(fmt.Errorf("redirect: %w", origin.ErrRedirect)), false},
		{"cancelled", fmt.Errorf("call: %w", context.Canceled), false},
		{"anything else", errors.New("the response is not JSON"), false},
	} {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestRedacted(t *testing.T) {
	inner := fmt.Errorf("call: %w", context.DeadlineExceeded)
	var err error = &Redacted{Msg: "provider: [redacted] timed out", Err: inner}
	if err.Error() != "provider: [redacted] timed out" {
		t.Errorf("message %q", err.Error())
	}
	if !errors.Is(err, context.DeadlineExceeded) || errors.Unwrap(err) != inner {
		t.Errorf("%v does not unwrap to %v", err, inner)
	}
}
