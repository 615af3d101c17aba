package runtime

import "agentc.dev/agentc/runtime/internal/replylimit"

// ReplySize is the bytes of a reply that the output tokens its request
// allowed bound (replylimit.ReplyBound): its text, each tool call's ID,
// name and arguments (replylimit.CallBytes at least), and the provider's
// state. A conversation holds them, and sends them again every round.
func ReplySize(msg *Message) int64 {
	n := int64(len(msg.Content))
	for _, c := range msg.ToolCalls {
		n += int64(max(len(c.ID)+len(c.Name)+len(c.Arguments), replylimit.CallBytes))
	}
	for _, p := range msg.Parts {
		n += int64(len(p.Text))
	}
	if msg.State != nil {
		n += int64(len(msg.State.Provider) + len(msg.State.Data))
	}
	return n
}

// CheckReply returns a *replylimit.ReplyError when msg is larger than a
// reply to a request that allowed maxTokens output tokens can be. A
// provider holds the replies of its server to it, and a replay the
// replies its journal recorded.
func CheckReply(maxTokens int64, msg *Message) error {
	bound := replylimit.ReplyBound(maxTokens)
	if n := ReplySize(msg); bound > 0 && n > bound {
		return &replylimit.ReplyError{Tokens: maxTokens, Bound: bound, Size: n}
	}
	return nil
}
