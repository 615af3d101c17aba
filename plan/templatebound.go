package plan

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Bounds on one rendering of a template. Whoever writes a manifest writes
// its templates, and the model writes the arguments a tool's templates
// range over; neither may make a rendering run or grow without end.
const (
	// MaxTemplateSteps bounds the work of one rendering: each node walked
	// (an action, a text, a range's body at each iteration) is a step, and
	// so are the keys a range sorts, each JSON value a function's output is
	// weighed by, and each KiB of strings compared.
	MaxTemplateSteps = 10_000_000
	// MaxTemplateOutput bounds what a template renders unless it is given
	// a smaller bound (Template.Bounded): 8 MiB, the most agentc takes as
	// a run's input (runcmd.MaxInput), which bounds a prompt.
	MaxTemplateOutput = 8 << 20
	// madeFactor bounds the text a rendering's functions make (print,
	// printf, json, html, js, urlquery), results kept in variables
	// included, to this many times what it may render.
	madeFactor = 8
)

// budget is what one rendering has left, shared by the templates it
// calls.
type budget struct {
	ctx           context.Context // nil: never cancelled
	steps, check  int             // steps taken; when ctx is looked at next
	out, maxOut   int
	made, maxMade int
}

func (t *Template) newBudget() *budget {
	max := t.maxOut
	if max <= 0 || max > MaxTemplateOutput {
		max = MaxTemplateOutput
	}
	return &budget{ctx: t.ctx, maxOut: max, maxMade: madeFactor * max}
}

// Bounded returns t made to render at most max bytes (at most
// MaxTemplateOutput, the bound when none is given).
func (t *Template) Bounded(max int) *Template {
	c := *t
	c.maxOut = max
	return &c
}

// WithContext returns t whose renderings stop, with an error, once ctx is
// done.
func (t *Template) WithContext(ctx context.Context) *Template {
	c := *t
	c.ctx = ctx
	return &c
}

// step counts n steps of the rendering, and stops it past
// MaxTemplateSteps or once its context is done (looked at every 1,024
// steps).
func (s *state) step(n int) {
	b := s.b
	b.steps += n
	if b.steps > MaxTemplateSteps {
		s.fail("rendering takes more than %d steps (each action, text and iteration counts); a template must render within that bound", MaxTemplateSteps)
	}
	if b.ctx != nil && b.steps >= b.check {
		b.check = b.steps + 1024
		if err := b.ctx.Err(); err != nil {
			s.fail("rendering stopped: %v", context.Cause(b.ctx))
		}
	}
}

// writeBounded writes str, if the template may render that much more.
func (s *state) writeBounded(str string) {
	if len(str) > s.b.maxOut-s.b.out {
		s.fail("the rendering is longer than %d bytes, the most this template may render", s.b.maxOut)
	}
	s.b.out += len(str)
	s.write(str)
}

// makes reports whether a builtin makes text, which is weighed before it
// is made and counted after.
func makes(name string) bool {
	switch name {
	case "print", "println", "printf", "html", "js", "urlquery", "json":
		return true
	}
	return false
}

// compares reports whether a builtin compares its arguments, whose strings
// cost a step a KiB.
func compares(name string) bool {
	switch name {
	case "eq", "ne", "lt", "le", "gt", "ge":
		return true
	}
	return false
}

// beforeMaking refuses a call of the builtin name whose text could pass
// what the rendering's functions may still make. The bound is weighed
// from the arguments, never by making the text: one printf of a short
// format that names one large argument a thousand times ("%[1]v%[1]v…")
// or pads each member of an array to a million characters would hold
// gigabytes before its length could be looked at.
func (s *state) beforeMaking(name string, args []reflect.Value) {
	left := s.b.maxMade - s.b.made
	vals := interfaces(args)
	var n int
	switch name {
	case "printf":
		n = s.printfSize(vals[0].(string), vals[1:], left)
	case "json":
		n = s.sizeOf('q', 0, vals[0], left)
	default:
		for _, v := range vals {
			n += s.sizeOf('v', 0, v, left) + 1
		}
		if name != "print" && name != "println" {
			n *= 6 // the longest escape of one byte: js's \u003C
		}
	}
	if n > left {
		s.fail("error calling %s: its text could be longer than the %d bytes this template's functions may still make (%d in all, %d times what it may render)", name, left, s.b.maxMade, madeFactor)
	}
}

// made counts the text a builtin made.
func (s *state) made(v reflect.Value) {
	if v.Kind() == reflect.String {
		s.b.made += v.Len()
	}
}

// printfSize is at most the length of what printf makes of format and
// args (and at least limit+1 once it is past limit). Each verb is weighed
// with the largest of the arguments, which it may print: its width and
// precision pad each value inside an array or object, and an argument
// left over is printed after %!(EXTRA.
func (s *state) printfSize(format string, args []any, limit int) int {
	n := len(format)
	for _, a := range args {
		n += 64 + s.sizeOf('v', 0, a, limit)
	}
	for i := 0; i < len(format) && n <= limit; i++ {
		if format[i] != '%' {
			continue
		}
		pad, num, sharp := 0, 0, false
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '#':
				sharp = true
			case c >= '0' && c <= '9':
				num = min(num*10+int(c-'0'), 1_000_000) // fmt refuses wider
			case c == '*':
				pad += 1_000_000 // read from an argument, at most this
			case strings.IndexByte("+- .[]", c) >= 0:
				pad, num = pad+num, 0
			default:
				goto verb
			}
		}
	verb:
		pad += num
		if i >= len(format) {
			break
		}
		verb, size := utf8.DecodeRuneInString(format[i:])
		i += size - 1
		switch {
		case verb == '%':
		case verb == 'T' || verb == 'p':
			n += 64 + pad
		default:
			if sharp {
				verb = 'q' // %#v quotes strings, as %q does
			}
			most := 0
			for _, a := range args {
				most = max(most, s.sizeOf(verb, pad, a, limit))
			}
			n += 64 + pad + most
		}
	}
	return n
}

// sizeOf is at most the length of v, a JSON value, printed with verb and
// padded to pad (and at least limit+1 once it is past limit): a string
// printed with %v or %s is itself, and any other way at most six times
// its length (json's \u003c, %q's \x00) and a little; an array's and an
// object's members are each printed so, with their separators. Each value
// it looks at is a step, as is each value the printing would.
func (s *state) sizeOf(verb rune, pad int, v any, limit int) int {
	plain := verb == 'v' || verb == 's'
	var n int
	var walk func(v any)
	str := func(l int) {
		if plain {
			n += l + pad
		} else {
			n += 6*l + 32 + pad
		}
	}
	walk = func(v any) {
		if n > limit {
			return
		}
		switch v := v.(type) {
		case string:
			str(len(v))
		case json.Number:
			str(len(v))
		case TemplateFile:
			str(len(v.Name) + 16)
		case []any:
			s.step(len(v))
			n += 32 + 2*len(v)
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			s.step(len(v))
			n += 32 + 4*len(v)
			for k, e := range v {
				str(len(k))
				walk(e)
			}
		default: // a number, a bool, nil
			if verb == 'f' || verb == 'F' {
				n += 330 + pad // %f of 1e308
			} else {
				n += 64 + pad
			}
		}
	}
	walk(v)
	return n
}
