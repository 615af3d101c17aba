package runtime

import (
	"encoding/json"
	"fmt"
)

// EstimateUsage is a local estimate of a turn's tokens: a quarter of the
// bytes of the JSON sent (messages and tools) and received (the
// message), at least 1 each. It is what the test model reports, and what
// a run counts when a provider reports usage that cannot be right.
func EstimateUsage(req *Request, msg Message) Usage {
	size := func(v any) int {
		b, err := json.Marshal(v)
		if err != nil {
			return 0 // nothing in a Request fails to encode but a raw schema already checked
		}
		return len(b)
	}
	in := size(req.Messages) + size(req.Tools)
	if req.Answer != nil {
		in += len(req.Answer.Schema)
	}
	return Usage{Input: tokens(in), Output: tokens(size(msg))}
}

func tokens(bytes int) int { return max(1, (bytes+3)/4) }

// maxPlausible is more tokens than any one call has used: a count past it
// is an overflow or garbage.
const maxPlausible = 1 << 32

// plausibleShare is how far below the local estimate a count may fall:
// tokenisers vary, but not by a factor of eight.
const plausibleShare = 8

// counted is the usage a run is charged for a turn: what the provider
// reported where it is plausible, and else the local estimate, so that a
// provider reporting nothing (or zero, a negative number, an overflow)
// cannot keep a token budget from ever running out. why says what was
// replaced, empty when nothing was.
func counted(req *Request, resp *Response) (u Usage, why string) {
	est := EstimateUsage(req, resp.Message)
	u = resp.Usage
	var odd []string
	check := func(name string, got *int, want int) {
		if *got < 0 || *got > maxPlausible || *got < want/plausibleShare {
			odd = append(odd, fmt.Sprintf("%s %d", name, *got))
			*got = want
		}
	}
	check("input", &u.Input, est.Input)
	check("output", &u.Output, est.Output)
	if u.Cached < 0 || u.Cached > u.Input {
		u.Cached = 0
	}
	if len(odd) == 0 {
		return u, ""
	}
	why = "the provider reported implausible usage ("
	if resp.Usage == (Usage{}) {
		why = "the provider reported no usage ("
	}
	for i, s := range odd {
		if i > 0 {
			why += ", "
		}
		why += s
	}
	return u, why + fmt.Sprintf("); counted from the request and response size: %d in, %d out", u.Input, u.Output)
}
