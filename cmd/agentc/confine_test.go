package main

import (
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	tooling "agentc.dev/agentc/runtime/tool"
)

// confineCondition answers [landlock] (the kernel has Landlock),
// [landlocktcp] (its Landlock rules TCP, ABI 4) and [userns] (it makes
// new user, PID and network namespaces), saying on standard error why a
// script that needs them skips.
func confineCondition(cond string) bool {
	abi, ns := tooling.Confinement()
	switch {
	case cond == "landlock" && abi < 1:
		fmt.Fprintln(os.Stderr, "SKIPPED: scripts that need Landlock: this kernel has none")
		return false
	case cond == "landlocktcp" && abi < 4:
		fmt.Fprintf(os.Stderr, "SKIPPED: the parts of scripts that need Landlock to rule TCP: this kernel's ABI is %d, not 4 or later\n", abi)
		return false
	case cond == "userns" && !ns:
		fmt.Fprintln(os.Stderr, "SKIPPED: scripts that need user namespaces: this kernel refuses them")
		return false
	}
	return true
}

// tcpConnect is the program tcpconnect ADDR: it connects to ADDR over TCP
// and says whether it could.
func tcpConnect() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tcpconnect ADDR")
		os.Exit(2)
	}
	c, err := net.DialTimeout("tcp", os.Args[1], 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tcpconnect:", err)
		os.Exit(1)
	}
	c.Close()
	fmt.Println("connected")
}

var listeners sync.Map // *testscript.TestScript → *net.TCPListener

// tcpListen is the script command tcplisten: it listens on the loopback
// interface and sets $LISTEN to the address. [!] tcpaccepted then says
// whether a connection came, without waiting: run it once the program
// that would connect has ended, when the kernel has queued its connection.
func tcpListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: tcplisten")
	}
	l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		ts.Fatalf("listening: %v", err)
	}
	listeners.Store(ts, l)
	ts.Defer(func() { l.Close(); listeners.Delete(ts) })
	ts.Setenv("LISTEN", l.Addr().String())
}

func tcpAccepted(ts *testscript.TestScript, neg bool, args []string) {
	v, ok := listeners.Load(ts)
	if !ok || len(args) != 0 {
		ts.Fatalf("usage: tcpaccepted, after tcplisten")
	}
	err := acceptNow(v.(*net.TCPListener))
	switch {
	case neg && err == nil:
		ts.Fatalf("the listener saw a connection")
	case !neg && err != nil:
		ts.Fatalf("the listener saw no connection: %v", err)
	}
}
