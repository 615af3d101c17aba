//go:build !race

package exec

// renewCalls is how many calls TestConfinedConcurrentRenew makes at once,
// and each in turn.
const renewCalls, renewRounds = 8, 40
