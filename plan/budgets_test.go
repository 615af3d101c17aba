package plan

import (
	"strings"
	"testing"
	"time"
)

func TestBudgetDefaults(t *testing.T) {
	if got := (Budgets{}).RoundLimit(); got != DefaultRounds {
		t.Errorf("rounds %d, want the default %d", got, DefaultRounds)
	}
	if got := (Budgets{Rounds: 7}).RoundLimit(); got != 7 {
		t.Errorf("rounds %d, want the declared 7", got)
	}
	if got := (Budgets{}).AnswerTurnLimit(); got != DefaultAnswerTurns {
		t.Errorf("answer turns %d, want the default %d", got, DefaultAnswerTurns)
	}
	if got := (Budgets{AnswerTurns: 1}).AnswerTurnLimit(); got != 1 {
		t.Errorf("answer turns %d, want the declared 1", got)
	}
	tests := []struct {
		b                 Budgets
		tokens, maxOutput int
		want              int
	}{
		{Budgets{}, 0, 4000, 0},                         // no token budget, no reserve
		{Budgets{AnswerReserve: 500}, 0, 0, 0},          // not even a declared one
		{Budgets{AnswerReserve: 500}, 10000, 4000, 500}, // declared
		{Budgets{}, 10000, 4000, 4000},                  // one answering turn's output
		{Budgets{}, 10000, 9999, 9999},                  // still below the budget
		{Budgets{}, 10000, 10000, 5000},                 // not below it: half
		{Budgets{}, 100000, 0, DefaultAnswerReserve},    // neither declared
		{Budgets{}, 2000, 0, 500},                       // a quarter of a small budget
	}
	for _, tt := range tests {
		if got := tt.b.Reserve(tt.tokens, tt.maxOutput); got != tt.want {
			t.Errorf("%+v.Reserve(%d, %d) = %d, want %d", tt.b, tt.tokens, tt.maxOutput, got, tt.want)
		}
	}
}

// TestDeadlineLimit: no deadline is 0; one declared is its duration; one
// no run can take (not a duration, zero, negative) is refused, naming it.
func TestDeadlineLimit(t *testing.T) {
	for _, tt := range []struct {
		deadline string
		want     time.Duration
		err      bool
	}{{"", 0, false}, {"90s", 90 * time.Second, false}, {"1m30s", 90 * time.Second, false}, {"0s", 0, true}, {"-5s", 0, true}, {"soon", 0, true}, {"5", 0, true}} {
		d, err := (Budgets{Deadline: tt.deadline}).DeadlineLimit()
		if d != tt.want || (err != nil) != tt.err || err != nil && !strings.HasPrefix(err.Error(), `budgets.deadline: "`+tt.deadline+`" is not a duration above zero`) {
			t.Errorf("%q: got %v, %v", tt.deadline, d, err)
		}
	}
}
