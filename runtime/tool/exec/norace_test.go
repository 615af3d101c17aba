//go:build !race

package exec

// renewCalls is how many calls TestConfinedConcurrentRenew makes at once,
// and each in turn.
const renewCalls, renewRounds = 8, 40

// swapCalls is how many calls each of TestConfinedProgramSwapped's two
// callers starts while the program's link flips.
const swapCalls = 60
