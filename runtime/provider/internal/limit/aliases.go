package limit

import (
	agentrt "agentc.dev/agentc/runtime"
	"agentc.dev/agentc/runtime/internal/replylimit"
)

// The bounds of a reply are package replylimit's, and its size the
// runtime's, which holds a reply served from a journal to them as well:
// one rule for a reply however it comes.
const (
	MaxResponse    = replylimit.MaxResponse
	BytesPerToken  = replylimit.BytesPerToken
	ReplySlack     = replylimit.ReplySlack
	CallBytes      = replylimit.CallBytes
	EscapeFactor   = replylimit.EscapeFactor
	ValuesPerToken = replylimit.ValuesPerToken
	ValueSlack     = replylimit.ValueSlack
)

// ReplyError is a reply larger than its request's output limit allows.
type ReplyError = replylimit.ReplyError

var (
	ReplyBound = replylimit.ReplyBound
	BodyBound  = replylimit.BodyBound
	ValueBound = replylimit.ValueBound
	ReplySize  = agentrt.ReplySize
	CheckReply = agentrt.CheckReply
)
