//go:build race

package exec

// renewCalls is how many calls TestConfinedConcurrentRenew makes at once,
// and each in turn: under the race detector each starts a program built
// with it, many times slower, so fewer.
const renewCalls, renewRounds = 4, 10

// swapCalls is how many calls each of TestConfinedProgramSwapped's two
// callers starts while the program's link flips: fewer, as above.
const swapCalls = 10
