package journal_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentc.dev/agentc/internal/leaf/flock"
	"agentc.dev/agentc/runtime/journal"
)

func needFlock(t *testing.T) {
	if !flock.Supported {
		t.Skip("no flock: the lock excludes nothing here")
	}
}

// locked checks that err is a *LockedError naming path and pid.
func locked(t *testing.T, what string, err error, path string, pid int) {
	t.Helper()
	var le *journal.LockedError
	if !errors.As(err, &le) || le.Path != path || le.PID != pid {
		t.Fatalf("%s: %v; want the journal locked by process %d", what, err, pid)
	}
	if want := fmt.Sprintf("journal %s is being recorded by process %d", path, pid); err.Error() != want {
		t.Errorf("%s: %q, want %q", what, err, want)
	}
}

// TestLock: while one holder has a journal's lock — taken alone, or by
// the Writer of Create or Resume — every other writer and reader of it is
// refused at once, naming the holder; released, the lock file is gone and
// the next holder takes it.
func TestLock(t *testing.T) {
	needFlock(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	pid := os.Getpid()
	l, err := journal.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = journal.Acquire(path)
	locked(t, "Acquire", err, path, pid)
	_, err = journal.Create(path, testHeader())
	locked(t, "Create", err, path, pid)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused Create wrote the journal: %v", err)
	}
	w, err := l.Create(testHeader())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = journal.Resume(path)
	locked(t, "Resume", err, path, pid)
	_, err = journal.OpenShared(path)
	locked(t, "OpenShared", err, path, pid)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journal.LockFile(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left after Close: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("a second release: %v", err)
	}
	if _, err := journal.OpenShared(path); err != nil {
		t.Fatal(err)
	}
	_, w, err = journal.Resume(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = journal.Create(path, testHeader())
	locked(t, "Create while resumed", err, path, pid)
	w.Close()
}

// TestStaleLock: a lock file left by a process that died holds no lock:
// the next holder takes it over and names itself in it.
func TestStaleLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(journal.LockFile(path), []byte("999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := journal.Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(journal.LockFile(path))
	if got, want := string(data), fmt.Sprintf("agentc %d\n", os.Getpid()); got != want {
		t.Errorf("lock file holds %q, want %s", got, want)
	}
	w.Close()
}

// TestConcurrentCreate: of many writers racing to create one new journal,
// one wins; every other is refused, and the journal reads back whole.
func TestConcurrentCreate(t *testing.T) {
	needFlock(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		writers []*journal.Writer
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := journal.Create(path, testHeader())
			var le *journal.LockedError
			if err != nil && !errors.As(err, &le) {
				t.Error(err)
			}
			if err == nil {
				mu.Lock()
				writers = append(writers, w)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Those that won one after another each hold a journal of their own,
	// each complete; never two at once.
	if len(writers) == 0 {
		t.Fatal("no writer won")
	}
	for _, w := range writers[:len(writers)-1] {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}
	last := writers[len(writers)-1]
	if err := last.Append(modelEntry(t, journal.Key{Round: 1}, modelRequest(1, 1))); err != nil {
		t.Fatal(err)
	}
	last.Close()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != 1 {
		t.Errorf("%d entries, want 1", len(j.Entries))
	}
}

// TestLockOtherProcess: a journal another process records is refused at
// once, naming that process; once it ends, the journal is free.
func TestLockOtherProcess(t *testing.T) {
	if path := os.Getenv("JOURNAL_TEST_HOLD"); path != "" {
		// The other process: hold the lock until standard input closes.
		l, err := journal.Acquire(path)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		l.Release()
		os.Exit(0)
	}
	needFlock(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockOtherProcess$")
	cmd.Env = append(os.Environ(), "JOURNAL_TEST_HOLD="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the other process: %q", line)
	}
	_, err = journal.Create(path, testHeader())
	locked(t, "Create", err, path, cmd.Process.Pid)
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	w, err := journal.Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// TestLockedErrorUnknownHolder: a holder that has not named itself in the
// lock file yet is "another process".
func TestLockedErrorUnknownHolder(t *testing.T) {
	err := &journal.LockedError{Path: "run.jsonl"}
	if got, want := err.Error(), "journal run.jsonl is being recorded by another process"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestReleaseLockFileGone: a lock file removed while held is reported on
// Release, and on the Close of a Writer that holds it: another process
// may have taken a lock of its own meanwhile.
func TestReleaseLockFileGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	l, err := journal.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.jsonl")
	w := create(t, other)
	for _, name := range []string{journal.LockFile(path), journal.LockFile(other)} {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	for what, release := range map[string]func() error{"Release": l.Release, "Close": w.Close} {
		err := release()
		if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "journal: releasing the lock of ") {
			t.Errorf("%s: %v, want the lock file missing", what, err)
		}
		if err := release(); err != nil {
			t.Errorf("a second %s: %v", what, err)
		}
	}
}

// TestLockFileNotTakenOver: a journal named through a link leads its lock
// file where the link leads; a file found there that is not a lock file
// (Cargo.lock, beside a journal named through a link to Cargo) is not
// taken over, emptied or removed: the lock is refused, naming it.
func TestLockFileNotTakenOver(t *testing.T) {
	dir := t.TempDir()
	proj, runs := filepath.Join(dir, "proj"), filepath.Join(dir, "runs")
	for _, d := range []string{proj, runs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(proj, "Cargo.lock")
	const content = "version = 3\n\n[[package]]\nname = \"x\"\n"
	if err := os.WriteFile(victim, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	journalPath := filepath.Join(runs, "batch")
	if err := os.Symlink("../proj/Cargo", journalPath); err != nil {
		t.Fatal(err)
	}
	l, err := journal.Acquire(journalPath)
	if err == nil {
		l.Release()
	}
	if err == nil || !strings.Contains(err.Error(), "its lock file "+victim+" holds ") || !strings.Contains(err.Error(), "not taken over") {
		t.Errorf("Acquire through a link to Cargo: %v; want the lock refused, naming %s", err, victim)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != content {
		t.Errorf("Cargo.lock after: %q, %v; want it as it was", b, err)
	}
	// A lock file of another program's, unlocked, that holds the id of
	// a process that is running (shadow-utils keeps its passwd.lock so)
	// is not taken over either, nor removed: the lock is refused, naming
	// it and the process.
	live := fmt.Sprintf("%d", os.Getppid())
	if err := os.WriteFile(victim, []byte(live), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = journal.Acquire(journalPath)
	if err == nil {
		l.Release()
	}
	if err == nil || !strings.Contains(err.Error(), "its lock file "+victim+" holds the id of process "+live+", which is running") {
		t.Errorf("Acquire through a link beside a live process's lock file: %v; want the lock refused, naming it and process %s", err, live)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != live {
		t.Errorf("the live process's lock file after: %q, %v; want it as it was", b, err)
	}
	// A lock file a run left holds no lock: one with agentc's stamp, its
	// process running or not (a process id is used again), one without
	// it (as agentc wrote them before) whose process is gone, and one a
	// run died before it wrote is taken over.
	for _, left := range []string{"agentc " + live + "\n", "agentc 999999999\n", "999999999\n", ""} {
		if err := os.WriteFile(victim, []byte(left), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := journal.Acquire(journalPath)
		if err != nil {
			t.Fatalf("a lock file left holding %q: %v", left, err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeReplacedJournal: a journal replaced after its lock was taken
// (as a resume reads it) by a link to another file, or by another file,
// is not resumed: the other file, another run's journal here, is neither
// cut nor written.
func TestResumeReplacedJournal(t *testing.T) {
	for _, how := range []string{"link", "file"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "run.jsonl")
			if err := create(t, path).Close(); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(dir, "other.jsonl")
			if err := create(t, victim).Close(); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(victim)
			if err != nil {
				t.Fatal(err)
			}
			l, err := journal.Acquire(path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			swapped := filepath.Join(dir, "swapped")
			if how == "link" {
				err = os.Symlink(victim, swapped)
			} else {
				err = os.Link(victim, swapped)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(swapped, path); err != nil {
				t.Fatal(err)
			}
			if _, w, err := l.Resume(); err == nil {
				w.Append(journal.Entry{})
				w.Close()
				t.Errorf("a journal replaced by a %s was resumed", how)
			}
			if after, err := os.ReadFile(victim); err != nil || string(after) != string(before) {
				t.Errorf("the other journal after: %q, %v; want it as it was", after, err)
			}
		})
	}
}
