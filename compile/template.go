package compile

import (
	"fmt"
	"slices"
	"strings"
	"text/template/parse"

	"agentc.dev/agentc/plan"
)

// templateRef is a field a template reads, as a chain of names from the
// data it is rendered with, and where in the template it stands.
type templateRef struct {
	fields []string
	line   int // 1-based, within the template text
}

// checkTemplate parses a template and checks every field it reads against
// the schema of the data it is rendered with. It returns problems as
// (code, message) pairs; schema may be nil when there is no data.
func checkTemplate(name, text string, schema any, dataName string) []templateProblem {
	t, err := plan.ParseTemplate(name, text)
	if err != nil {
		return []templateProblem{{CodeTemplateSyntax, strings.TrimPrefix(err.Error(), "template: ")}}
	}
	var out []templateProblem
	for _, ref := range templateRefs(t.Tree, text) {
		if schema == nil {
			out = append(out, templateProblem{CodeTemplateRef, fmt.Sprintf("%s line %d: .%s refers to the %s, but the agent declares no %s schema",
				name, ref.line, strings.Join(ref.fields, "."), dataName, dataName)})
			continue
		}
		if missing, ok := resolve(schema, ref.fields); !ok {
			out = append(out, templateProblem{CodeTemplateRef, fmt.Sprintf("%s line %d: .%s: the %s schema declares no property %q",
				name, ref.line, strings.Join(ref.fields, "."), dataName, missing)})
		}
	}
	return out
}

type templateProblem struct {
	code, msg string
}

// templateRefs lists the fields read from the root data: .a.b and $.a.b.
// Inside range and with, the dot is something else, so only $ references
// are checked there.
func templateRefs(tree *parse.Tree, text string) []templateRef {
	var refs []templateRef
	line := func(pos parse.Pos) int { return 1 + strings.Count(text[:min(int(pos), len(text))], "\n") }
	var visit func(n parse.Node, rootDot bool)
	visitPipe := func(p *parse.PipeNode, rootDot bool) {
		if p == nil {
			return
		}
		for _, c := range p.Cmds {
			for _, a := range c.Args {
				visit(a, rootDot)
			}
		}
	}
	visit = func(n parse.Node, rootDot bool) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				visit(c, rootDot)
			}
		case *parse.ActionNode:
			visitPipe(n.Pipe, rootDot)
		case *parse.FieldNode:
			if rootDot {
				refs = append(refs, templateRef{fields: n.Ident, line: line(n.Pos)})
			}
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				refs = append(refs, templateRef{fields: n.Ident[1:], line: line(n.Pos)})
			}
		case *parse.ChainNode:
			visit(n.Node, rootDot)
		case *parse.PipeNode:
			visitPipe(n, rootDot)
		case *parse.IfNode:
			visitPipe(n.Pipe, rootDot)
			visit(n.List, rootDot)
			visit(n.ElseList, rootDot)
		case *parse.RangeNode:
			visitPipe(n.Pipe, rootDot)
			visit(n.List, false)
			visit(n.ElseList, rootDot)
		case *parse.WithNode:
			visitPipe(n.Pipe, rootDot)
			visit(n.List, false)
			visit(n.ElseList, rootDot)
		case *parse.TemplateNode:
			visitPipe(n.Pipe, rootDot)
		}
	}
	visit(tree.Root, true)
	return refs
}

// resolve follows a chain of field names through a schema's properties.
// It fails, naming the field, only where the schema says for certain that
// the field is not there: an object level that declares properties and
// lists none by that name. Where the schema cannot tell (no properties,
// combinators, references), the reference is accepted.
func resolve(schema any, fields []string) (missing string, ok bool) {
	cur := schema
	for _, f := range fields {
		m, isObj := cur.(map[string]any)
		if !isObj {
			return "", true
		}
		props, hasProps := m["properties"].(map[string]any)
		if !hasProps {
			return "", true
		}
		next, found := props[f]
		if !found {
			if _, open := m["patternProperties"]; open {
				return "", true
			}
			if ap, set := m["additionalProperties"]; set && ap != false {
				return "", true
			}
			return f, false
		}
		cur = next
	}
	return "", true
}

// pathCalls are what a template's calls of file, output_file and env may
// name: file gives an exec tool's program the path of a run's file input
// (one of files), output_file a path to write one of the tool's output
// files (one of outputs); only an exec tool's argv may call them (exec is
// true there), each with a literal name. used collects the output files
// named. env is below.
type pathCalls struct {
	files, outputs []string
	exec           bool
	used           map[string]bool
	// envs are the variables an http tool declares (its env), which its
	// header values may read with env NAME; header is true in a header
	// value, the one place env may be called.
	envs   []string
	header bool
}

// checkFileCalls checks a template's calls of file, output_file and env.
func checkFileCalls(name, text string, pc *pathCalls) []templateProblem {
	t, err := plan.ParseTemplate(name, text)
	if err != nil {
		return nil // checkTemplate reports it
	}
	line := func(pos parse.Pos) int { return 1 + strings.Count(text[:min(int(pos), len(text))], "\n") }
	var out []templateProblem
	var visit func(n parse.Node)
	visit = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					visit(c)
				}
			}
		case *parse.ActionNode:
			visit(n.Pipe)
		case *parse.IfNode:
			visit(n.Pipe)
			visit(n.List)
			visit(n.ElseList)
		case *parse.RangeNode:
			visit(n.Pipe)
			visit(n.List)
			visit(n.ElseList)
		case *parse.WithNode:
			visit(n.Pipe)
			visit(n.List)
			visit(n.ElseList)
		case *parse.TemplateNode:
			visit(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				visit(c)
			}
		case *parse.CommandNode:
			for i, a := range n.Args {
				if id, ok := a.(*parse.IdentifierNode); ok && i == 0 && (id.Ident == "file" || id.Ident == "output_file") {
					out = append(out, pc.call(id.Ident, name, line(n.Position()), n.Args[1:])...)
				}
				if id, ok := a.(*parse.IdentifierNode); ok && i == 0 && id.Ident == "env" {
					out = append(out, pc.envCall(name, line(n.Position()), n.Args[1:])...)
				}
				visit(a)
			}
		}
	}
	if t.Tree != nil {
		visit(t.Tree.Root)
	}
	return out
}

// call checks one call of fn (file or output_file).
func (pc *pathCalls) call(fn, name string, line int, args []parse.Node) []templateProblem {
	what, owner, names, kind, example := "gives a run's file input to an exec tool's program, by path", "the agent", pc.files, "file input", `file "document"`
	if fn == "output_file" {
		what, owner, names, kind, example = "gives an exec tool's program a path to write one of its output files", "the tool", pc.outputs, "output file", `output_file "chart"`
	}
	if !pc.exec {
		return []templateProblem{{CodeTemplateRef, fmt.Sprintf("%s line %d: %s %s, and is called only in an exec tool's argv", name, line, fn, what)}}
	}
	var lit *parse.StringNode
	if len(args) == 1 {
		lit, _ = args[0].(*parse.StringNode)
	}
	switch {
	case lit == nil:
		return []templateProblem{{CodeTemplateRef, fmt.Sprintf("%s line %d: %s takes the name of one of %s's %ss, written as a literal (%s), never a value of the call", name, line, fn, owner, kind, example)}}
	case !slices.Contains(names, lit.Text):
		return []templateProblem{{CodeTemplateRef, fmt.Sprintf("%s line %d: %s %q: %s has no %s %q (it has %s)", name, line, fn, lit.Text, owner, kind, lit.Text, listOrNone(names))}}
	}
	if fn == "output_file" {
		if pc.used == nil {
			pc.used = map[string]bool{}
		}
		pc.used[lit.Text] = true
	}
	return nil
}

// envCall checks one call of env: only in an http tool's header value,
// with the literal name of a variable the tool's env declares, so that
// the plan says which variables a tool reads and each value joins the
// run's secrets.
func (pc *pathCalls) envCall(name string, line int, args []parse.Node) []templateProblem {
	if !pc.header {
		return []templateProblem{{CodeTemplateRef, fmt.Sprintf("%s line %d: env gives a variable's value to an http tool's header values (a credential, say), and is called only there", name, line)}}
	}
	var lit *parse.StringNode
	if len(args) == 1 {
		lit, _ = args[0].(*parse.StringNode)
	}
	switch {
	case lit == nil:
		return []templateProblem{{CodeTemplateRef, fmt.Sprintf("%s line %d: env takes the name of a variable the tool's env lists, written as a literal (env \"API_TOKEN\"), never a value of the call", name, line)}}
	case !slices.Contains(pc.envs, lit.Text):
		return []templateProblem{{CodeTemplateRef, fmt.Sprintf("%s line %d: env %q: the tool's env does not list it (it lists %s)", name, line, lit.Text, listOrNone(pc.envs))}}
	}
	return nil
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
