//go:build unix

package launch

import (
	"fmt"
	"os"
	"syscall"
)

// Exec replaces the running program with the program at path, named name,
// with args: the same process, so its standard streams, signals and exit
// code are the program's own. It returns only on failure.
func Exec(path, name string, args []string) error {
	argv := append([]string{name}, args...)
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("%w %s: %v", ErrNotStarted, path, err)
	}
	return nil
}
