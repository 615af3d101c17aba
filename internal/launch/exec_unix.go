//go:build unix

package launch

import (
	"fmt"
	"os"
	"syscall"
)

// Exec replaces the running program with the program at path, with args:
// the same process, so its standard streams, signals and exit code are
// the program's own. The program is given its path as its name, so that
// it finds the programs beside it first. It returns only on failure.
func Exec(path string, args []string) error {
	argv := append([]string{path}, args...)
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("%w %s: %v", ErrNotStarted, path, err)
	}
	return nil
}
