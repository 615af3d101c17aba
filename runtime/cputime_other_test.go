//go:build !unix

package runtime_test

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
