//go:build race

package exec

// renewCalls is how many calls TestConfinedConcurrentRenew makes at once,
// and each in turn: under the race detector each starts a program built
// with it, many times slower, so fewer.
const renewCalls, renewRounds = 4, 10
