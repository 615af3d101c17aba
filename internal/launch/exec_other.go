//go:build !unix

package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
)

// Exec runs the program at path with args, on this program's standard
// streams, and exits with its exit code: a system without exec keeps this
// process as the program's parent. An interrupt reaches both; the program
// decides what it means. It returns only on failure to start.
func Exec(path string, args []string) error {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w %s: %v", ErrNotStarted, path, err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			os.Exit(code)
		}
		os.Exit(1) // ended by a signal
	}
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
	return nil
}
