// Package plan defines what a compiled agent is made of at run time. It
// owns the template language of prompts and tool arguments, shared by the
// compiler, which checks templates, and the runtime, which renders them.
package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"text/template/parse"
	"unicode"
	"unicode/utf8"
)

// A Template is a manifest template: Go's text/template language, parsed
// by text/template/parse, rendered over a JSON value (as encoding/json
// decodes one: nil, bool, string, json.Number or float64, map[string]any,
// []any). Its built-in functions are text/template's, plus json.
//
// It is rendered here rather than by text/template: that package can call
// any method of the data by name, which makes the linker keep every
// exported method of every type in a program that links it, and doubles
// the size of the runtime. JSON data has no methods worth calling, so
// nothing is lost; a field named like a method of json.Number (.n.String)
// is an error here, as any field of a number is. And slice bounds an
// array by its length, where text/template bounds it by its capacity
// (and so shows what lies past the end). Everything else renders as
// text/template renders it, which a differential test checks.
type Template struct {
	name string
	// Tree is the parsed template, for checks that walk it.
	Tree       *parse.Tree
	trees      map[string]*parse.Tree // every template it defines, by name
	missingKey bool                   // a missing map key is an error
	maxOut     int                    // the most it renders; 0: MaxTemplateOutput
	ctx        context.Context        // stops a rendering when done; nil: none
}

// funcs are the names of the functions a template may call, for the parser.
var funcs = func() map[string]any {
	m := map[string]any{}
	for name := range builtins {
		m[name] = true
	}
	return m
}()

// ParseTemplate parses a manifest template.
func ParseTemplate(name, text string) (*Template, error) {
	trees, err := parse.Parse(name, text, "", "", funcs)
	if err != nil {
		return nil, err
	}
	return &Template{name: name, Tree: trees[name], trees: trees}, nil
}

// Name is the template's name, as errors give it.
func (t *Template) Name() string { return t.name }

// MissingKeyError returns t made to fail on a missing map key rather than
// render "<no value>" (text/template's missingkey=error).
func (t *Template) MissingKeyError() *Template {
	c := *t
	c.missingKey = true
	return &c
}

// maxDepth bounds {{template}} calls within calls, as text/template does.
const maxDepth = 100000

// TemplateFile is a file input in a template's data: printing it places
// the file where the action is (see ExecuteFiles), not text.
type TemplateFile struct{ Name string }

// Execute renders t over data, writing to w.
func (t *Template) Execute(w io.Writer, data any) error {
	return t.ExecuteFiles(w, data, nil)
}

// Paths are what the functions that give an exec tool's program paths
// return: file NAME, the path of the run's file input NAME (File), and
// output_file NAME, the path where the program writes its output file
// NAME (OutputFile).
type Paths struct {
	File       func(name string) (string, error)
	OutputFile func(name string) (string, error)
}

// ExecutePaths renders t over data, writing to w, where the functions
// file and output_file give the paths p returns: an exec tool's argument
// vector. Elsewhere, or where p has no such func, they are an error.
func (t *Template) ExecutePaths(w io.Writer, data any, p Paths) (err error) {
	return t.execute(&state{t: t, w: w, tree: t.Tree, paths: p}, data)
}

// ExecuteFiles renders t over data, writing to w, and calls file where an
// action prints a TemplateFile of data, in order with the writes; with no
// file func, printing one is an error.
func (t *Template) ExecuteFiles(w io.Writer, data any, file func(name string) error) (err error) {
	return t.execute(&state{t: t, w: w, tree: t.Tree, file: file}, data)
}

// ExecuteEnv renders t over data, writing to w, where env NAME is the
// value env gives for the variable NAME: an http tool's header values.
// Elsewhere env is an error.
func (t *Template) ExecuteEnv(w io.Writer, data any, env func(name string) (string, error)) (err error) {
	return t.execute(&state{t: t, w: w, tree: t.Tree, env: env}, data)
}

func (t *Template) execute(s *state, data any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(execError)
			if !ok {
				// A case the evaluator does not handle is the
				// template's failure, never the program's.
				e = execError{fmt.Errorf("template: %s: internal error: %v", t.name, r)}
			}
			err = e.err
		}
	}()
	if t.Tree == nil || t.Tree.Root == nil {
		s.fail("%q is an incomplete or empty template", t.name)
	}
	s.b = t.newBudget()
	dot := reflect.ValueOf(data)
	s.vars = []variable{{"$", dot}}
	s.walk(dot, t.Tree.Root)
	return nil
}

// execError carries an error out of the walk.
type execError struct{ err error }

// loop control, carried out of a range body.
type (
	breakLoop    struct{}
	continueLoop struct{}
)

type variable struct {
	name  string
	value reflect.Value
}

// state is one rendering.
type state struct {
	t     *Template
	tree  *parse.Tree // the template being walked, for positions
	w     io.Writer
	node  parse.Node // where the walk is, for errors
	vars  []variable
	depth int
	file  func(name string) error
	paths Paths
	env   func(name string) (string, error)
	b     *budget // shared with the templates it calls
}

func (s *state) at(n parse.Node) { s.node = n }

// fail stops the rendering with an error at the current node, in
// text/template's form: template: name:line:col: executing "name" at
// <node>: message.
func (s *state) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	name := s.t.name
	if s.tree != nil {
		name = s.tree.ParseName
	}
	if s.node == nil || s.tree == nil {
		panic(execError{fmt.Errorf("template: %s: %s", name, msg)})
	}
	loc, ctx := s.tree.ErrorContext(s.node)
	panic(execError{fmt.Errorf("template: %s: executing %q at <%s>: %s", loc, s.tree.Name, ctx, msg)})
}

func (s *state) write(str string) {
	if _, err := io.WriteString(s.w, str); err != nil {
		panic(execError{err})
	}
}

func (s *state) mark() int { return len(s.vars) }

func (s *state) pop(mark int) { s.vars = s.vars[:mark] }

func (s *state) push(name string, v reflect.Value) { s.vars = append(s.vars, variable{name, v}) }

func (s *state) setTop(n int, v reflect.Value) { s.vars[len(s.vars)-n].value = v }

func (s *state) set(name string, v reflect.Value) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return
		}
	}
	s.fail("undefined variable: %s", name)
}

func (s *state) lookup(name string) reflect.Value {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value
		}
	}
	s.fail("undefined variable: %s", name)
	return reflect.Value{}
}

func (s *state) walk(dot reflect.Value, n parse.Node) {
	s.at(n)
	if _, list := n.(*parse.ListNode); !list { // a range counts its iterations
		s.step(1)
	}
	switch n := n.(type) {
	case *parse.ActionNode:
		v := s.pipeline(dot, n.Pipe)
		if len(n.Pipe.Decl) == 0 {
			s.print(n, v)
		}
	case *parse.BreakNode:
		panic(breakLoop{})
	case *parse.ContinueNode:
		panic(continueLoop{})
	case *parse.CommentNode:
	case *parse.IfNode:
		s.ifOrWith(false, dot, n.Pipe, n.List, n.ElseList)
	case *parse.WithNode:
		s.ifOrWith(true, dot, n.Pipe, n.List, n.ElseList)
	case *parse.ListNode:
		for _, c := range n.Nodes {
			s.walk(dot, c)
		}
	case *parse.RangeNode:
		s.rangeOver(dot, n)
	case *parse.TemplateNode:
		s.callTemplate(dot, n)
	case *parse.TextNode:
		s.writeBounded(string(n.Text))
	default:
		s.fail("unknown node: %s", n)
	}
}

func (s *state) ifOrWith(with bool, dot reflect.Value, pipe *parse.PipeNode, list, elseList *parse.ListNode) {
	defer s.pop(s.mark())
	v := s.pipeline(dot, pipe)
	t, ok := truth(elem(v))
	if !ok {
		s.fail("if/with can't use %v", v)
	}
	switch {
	case t && with:
		s.walk(v, list)
	case t:
		s.walk(dot, list)
	case elseList != nil:
		s.walk(dot, elseList)
	}
}

func (s *state) rangeOver(dot reflect.Value, r *parse.RangeNode) {
	s.at(r)
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(breakLoop); !ok {
				panic(p)
			}
		}
	}()
	defer s.pop(s.mark())
	v, _ := indirect(s.pipeline(dot, r.Pipe))
	mark := s.mark()
	decl := r.Pipe.Decl
	one := func(index, value reflect.Value) {
		at := s.node
		s.at(r)
		s.step(1)
		s.at(at)
		if len(decl) > 0 {
			switch {
			case r.Pipe.IsAssign && len(decl) > 1:
				s.set(decl[0].Ident[0], index)
				s.set(decl[1].Ident[0], value)
			case r.Pipe.IsAssign:
				s.set(decl[0].Ident[0], value)
			case len(decl) > 1:
				s.setTop(1, value)
				s.setTop(2, index)
			default:
				s.setTop(1, value)
			}
		}
		defer s.pop(mark)
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(continueLoop); !ok {
					panic(p)
				}
			}
		}()
		s.walk(value, r.List)
	}
	switch v.Kind() {
	case reflect.Array, reflect.Slice:
		if v.Len() > 0 {
			for i := 0; i < v.Len(); i++ {
				one(reflect.ValueOf(i), v.Index(i))
			}
			return
		}
	case reflect.Map:
		if v.Len() > 0 {
			s.step(v.Len()) // the keys sorted
			for _, k := range sortedKeys(v) {
				one(k, v.MapIndex(k))
			}
			return
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		// An integer n ranges over 0..n-1, each of n's type; there is no
		// index.
		if len(decl) > 1 {
			s.fail("can't use %v to iterate over more than one variable", v)
		}
		var n uint64
		if v.CanInt() {
			n = uint64(max(v.Int(), 0))
		} else {
			n = v.Uint()
		}
		if n > 0 {
			for i := range n {
				one(reflect.Value{}, reflect.ValueOf(i).Convert(v.Type()))
			}
			return
		}
	case reflect.Invalid:
		// nothing to range over, as with a missing value
	default:
		s.fail("range can't iterate over %v", v)
	}
	if r.ElseList != nil {
		s.walk(dot, r.ElseList)
	}
}

// sortedKeys returns a JSON object's keys (strings) in order.
func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

func (s *state) callTemplate(dot reflect.Value, n *parse.TemplateNode) {
	s.at(n)
	tree := s.t.trees[n.Name]
	if tree == nil {
		s.fail("template %q not defined", n.Name)
	}
	if s.depth == maxDepth {
		s.fail("exceeded maximum template depth (%v)", maxDepth)
	}
	dot = s.pipeline(dot, n.Pipe)
	sub := *s
	sub.depth++
	sub.tree = tree
	// A called template sees none of the caller's variables.
	sub.vars = []variable{{"$", dot}}
	sub.walk(dot, tree.Root)
}

// pipeline evaluates a pipeline; its variables are declared or assigned.
func (s *state) pipeline(dot reflect.Value, pipe *parse.PipeNode) reflect.Value {
	if pipe == nil {
		return reflect.Value{}
	}
	s.at(pipe)
	v := missing // the first command has no value before it
	for _, cmd := range pipe.Cmds {
		v = s.command(dot, cmd, v) // the value so far is the command's last argument
		// A value held in an interface is taken out of it.
		if v.Kind() == reflect.Interface && v.Type().NumMethod() == 0 {
			v = reflect.ValueOf(v.Interface())
		}
	}
	for _, d := range pipe.Decl {
		if pipe.IsAssign {
			s.set(d.Ident[0], v)
		} else {
			s.push(d.Ident[0], v)
		}
	}
	return v
}

// missing stands for "no final argument" to a command.
var missing = reflect.ValueOf(missingType{})

type missingType struct{}

func isMissing(v reflect.Value) bool { return v.IsValid() && v.Type() == missing.Type() }

func (s *state) command(dot reflect.Value, cmd *parse.CommandNode, final reflect.Value) reflect.Value {
	first := cmd.Args[0]
	switch n := first.(type) {
	case *parse.FieldNode:
		return s.fieldChain(dot, dot, n, n.Ident, cmd.Args, final)
	case *parse.ChainNode:
		return s.chain(dot, n, cmd.Args, final)
	case *parse.IdentifierNode:
		return s.call(dot, n, cmd, cmd.Args, final)
	case *parse.PipeNode:
		s.notAFunction(cmd.Args, final)
		return s.pipeline(dot, n)
	case *parse.VariableNode:
		return s.variable(dot, n, cmd.Args, final)
	}
	s.at(first)
	s.notAFunction(cmd.Args, final)
	switch first.(type) {
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		s.fail("nil is not a command")
	}
	if v, ok := s.literal(first); ok {
		return v
	}
	s.fail("can't evaluate command %q", first)
	return reflect.Value{}
}

// literal is the value of a constant written in the template: a bool, a
// number or a string.
func (s *state) literal(n parse.Node) (reflect.Value, bool) {
	switch n := n.(type) {
	case *parse.BoolNode:
		return reflect.ValueOf(n.True), true
	case *parse.NumberNode:
		return s.constant(n), true
	case *parse.StringNode:
		return reflect.ValueOf(n.Text), true
	}
	return reflect.Value{}, false
}

func (s *state) notAFunction(args []parse.Node, final reflect.Value) {
	if len(args) > 1 || !isMissing(final) {
		s.fail("can't give argument to non-function %s", args[0])
	}
}

// constant is a number written in the template: an int where it is an
// integer, a float64 where it is written as one, complex128 with an i.
func (s *state) constant(n *parse.NumberNode) reflect.Value {
	s.at(n)
	hex := len(n.Text) > 2 && n.Text[0] == '0' && (n.Text[1] == 'x' || n.Text[1] == 'X') && !strings.ContainsAny(n.Text, "pP")
	char := n.Text != "" && n.Text[0] == '\''
	switch {
	case n.IsComplex:
		return reflect.ValueOf(n.Complex128)
	case n.IsFloat && !hex && !char && strings.ContainsAny(n.Text, ".eEpP"):
		return reflect.ValueOf(n.Float64)
	case n.IsInt:
		i := int(n.Int64)
		if int64(i) != n.Int64 {
			s.fail("%s overflows int", n.Text)
		}
		return reflect.ValueOf(i)
	case n.IsUint:
		s.fail("%s overflows int", n.Text)
	}
	return reflect.Value{}
}

func (s *state) variable(dot reflect.Value, n *parse.VariableNode, args []parse.Node, final reflect.Value) reflect.Value {
	s.at(n)
	v := s.lookup(n.Ident[0])
	if len(n.Ident) == 1 {
		s.notAFunction(args, final)
		return v
	}
	return s.fieldChain(dot, v, n, n.Ident[1:], args, final)
}

func (s *state) chain(dot reflect.Value, n *parse.ChainNode, args []parse.Node, final reflect.Value) reflect.Value {
	if len(n.Field) == 0 {
		s.fail("internal error: no fields in chain")
	}
	if n.Node.Type() == parse.NodeNil {
		s.fail("indirection through explicit nil in %s", n)
	}
	v := s.arg(dot, anyParam, n.Node)
	return s.fieldChain(dot, v, n, n.Field, args, final)
}

func (s *state) fieldChain(dot, receiver reflect.Value, n parse.Node, idents []string, args []parse.Node, final reflect.Value) reflect.Value {
	last := len(idents) - 1
	for _, id := range idents[:last] {
		receiver = s.field(id, n, nil, missing, receiver)
	}
	return s.field(idents[last], n, args, final, receiver)
}

// field is .name of receiver: a key of a JSON object.
func (s *state) field(name string, n parse.Node, args []parse.Node, final, receiver reflect.Value) reflect.Value {
	s.at(n)
	if !receiver.IsValid() {
		if s.t.missingKey {
			s.fail("nil data; no entry for key %q", name)
		}
		return reflect.Value{}
	}
	typ := receiver.Type()
	receiver, isNil := indirect(receiver)
	if receiver.Kind() == reflect.Interface && isNil {
		s.fail("nil pointer evaluating %s.%s", typ, name)
	}
	if receiver.Kind() == reflect.Map && receiver.Type().Key().Kind() == reflect.String {
		if len(args) > 1 || !isMissing(final) {
			s.fail("%s is not a method but has arguments", name)
		}
		v := receiver.MapIndex(reflect.ValueOf(name).Convert(receiver.Type().Key()))
		if !v.IsValid() && s.t.missingKey {
			s.fail("map has no entry for key %q", name)
		}
		return v
	}
	s.fail("can't evaluate field %s in type %s", name, typ)
	return reflect.Value{}
}

// indirect takes a value out of its pointers and interfaces; isNil says
// it stopped at a nil one.
func indirect(v reflect.Value) (reflect.Value, bool) {
	for ; v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface; v = v.Elem() {
		if v.IsNil() {
			return v, true
		}
	}
	return v, false
}

// elem takes a value out of an interface, if it is in one.
func elem(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Interface {
		return v.Elem()
	}
	return v
}

// truth is a value's truth in if, with, and, or and not.
func truth(v reflect.Value) (t, ok bool) {
	if !v.IsValid() {
		return false, true
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0, true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Complex64, reflect.Complex128:
		return v.Complex() != 0, true
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !v.IsNil(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != 0, true
	case reflect.Float32, reflect.Float64:
		return v.Float() != 0, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != 0, true
	case reflect.Struct:
		return true, true
	}
	return false, false
}

// print writes an action's value as fmt prints it.
func (s *state) print(n parse.Node, v reflect.Value) {
	s.at(n)
	if f, ok := fileOf(v); ok {
		if s.file == nil {
			s.fail("file %q cannot be printed here", f.Name)
		}
		if err := s.file(f.Name); err != nil {
			panic(execError{err})
		}
		return
	}
	p, ok := printable(v)
	if !ok {
		s.fail("can't print %s of type %s", n, v.Type())
	}
	s.writeBounded(fmt.Sprint(p))
}

func fileOf(v reflect.Value) (TemplateFile, bool) {
	if v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		v, _ = indirect(v)
	}
	if !v.IsValid() || !v.CanInterface() {
		return TemplateFile{}, false
	}
	f, ok := v.Interface().(TemplateFile)
	return f, ok
}

func printable(v reflect.Value) (any, bool) {
	if v.Kind() == reflect.Pointer {
		v, _ = indirect(v)
	}
	if !v.IsValid() {
		return "<no value>", true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func:
		return nil, false
	}
	return v.Interface(), true
}

// param is what a function's parameter takes, which decides how an
// argument is checked: a value of any kind, missing ones included
// (valueParam); anything, missing as nil (anyParam); or a string.
type param int

const (
	valueParam param = iota
	anyParam
	stringParam
)

// builtin is a function a template may call.
type builtin struct {
	fixed    []param
	variadic *param // the type of the rest, if it takes more
	fn       func(s *state, args []reflect.Value) (reflect.Value, error)
}

var (
	pValue = valueParam
	pAny   = anyParam
)

var builtins = newBuiltins()

func newBuiltins() map[string]builtin {
	str := func(f func(args []any) string) func(*state, []reflect.Value) (reflect.Value, error) {
		return func(_ *state, args []reflect.Value) (reflect.Value, error) {
			return reflect.ValueOf(f(interfaces(args))), nil
		}
	}
	compare := func(f func(a, b reflect.Value) (bool, error)) builtin {
		return builtin{fixed: []param{valueParam, valueParam}, fn: func(_ *state, args []reflect.Value) (reflect.Value, error) {
			t, err := f(args[0], args[1])
			return reflect.ValueOf(t), err
		}}
	}
	return map[string]builtin{
		"and": {fixed: []param{valueParam}, variadic: &pValue},
		"or":  {fixed: []param{valueParam}, variadic: &pValue},
		"not": {fixed: []param{valueParam}, fn: func(_ *state, args []reflect.Value) (reflect.Value, error) {
			t, _ := truth(elem(args[0]))
			return reflect.ValueOf(!t), nil
		}},
		"file": {fixed: []param{stringParam}, fn: func(s *state, args []reflect.Value) (reflect.Value, error) {
			name := args[0].String()
			if s.paths.File == nil {
				return reflect.Value{}, fmt.Errorf("file %q: a run's files are given by path only to an exec tool's arguments", name)
			}
			p, err := s.paths.File(name)
			return reflect.ValueOf(p), err
		}},
		"output_file": {fixed: []param{stringParam}, fn: func(s *state, args []reflect.Value) (reflect.Value, error) {
			name := args[0].String()
			if s.paths.OutputFile == nil {
				return reflect.Value{}, fmt.Errorf("output_file %q: a path to write a file is given only to an exec tool's program, in its arguments", name)
			}
			p, err := s.paths.OutputFile(name)
			return reflect.ValueOf(p), err
		}},
		"env": {fixed: []param{stringParam}, fn: func(s *state, args []reflect.Value) (reflect.Value, error) {
			name := args[0].String()
			if s.env == nil {
				return reflect.Value{}, fmt.Errorf("env %q: a variable's value is given only to an http tool's header values", name)
			}
			v, err := s.env(name)
			return reflect.ValueOf(v), err
		}},
		"len":      {fixed: []param{valueParam}, fn: length},
		"index":    {fixed: []param{valueParam}, variadic: &pValue, fn: index},
		"slice":    {fixed: []param{valueParam}, variadic: &pValue, fn: slice},
		"call":     {fixed: []param{valueParam}, variadic: &pValue, fn: call},
		"print":    {variadic: &pAny, fn: str(func(a []any) string { return fmt.Sprint(a...) })},
		"println":  {variadic: &pAny, fn: str(func(a []any) string { return fmt.Sprintln(a...) })},
		"html":     {variadic: &pAny, fn: str(func(a []any) string { return htmlEscape(printArgs(a)) })},
		"js":       {variadic: &pAny, fn: str(func(a []any) string { return jsEscape(printArgs(a)) })},
		"urlquery": {variadic: &pAny, fn: str(func(a []any) string { return url.QueryEscape(printArgs(a)) })},
		"printf": {fixed: []param{stringParam}, variadic: &pAny, fn: func(_ *state, args []reflect.Value) (reflect.Value, error) {
			a := interfaces(args)
			return reflect.ValueOf(fmt.Sprintf(a[0].(string), a[1:]...)), nil
		}},
		"eq": {fixed: []param{valueParam}, variadic: &pValue, fn: func(_ *state, args []reflect.Value) (reflect.Value, error) {
			t, err := eq(args[0], args[1:]...)
			return reflect.ValueOf(t), err
		}},
		"ne": compare(func(a, b reflect.Value) (bool, error) { t, err := eq(a, b); return !t, err }),
		"lt": compare(lt),
		"le": compare(func(a, b reflect.Value) (bool, error) {
			t, err := lt(a, b)
			if t || err != nil {
				return t, err
			}
			return eq(a, b)
		}),
		"gt": compare(func(a, b reflect.Value) (bool, error) {
			t, err := lt(a, b)
			if err != nil {
				return false, err
			}
			if t {
				return false, nil
			}
			e, err := eq(a, b)
			return !e, err
		}),
		"ge": compare(func(a, b reflect.Value) (bool, error) { t, err := lt(a, b); return !t, err }),
		// json renders a value as compact JSON, for passing structured
		// input to a model verbatim.
		"json": {fixed: []param{anyParam}, fn: func(_ *state, args []reflect.Value) (reflect.Value, error) {
			b, err := json.Marshal(interfaces(args)[0])
			return reflect.ValueOf(string(b)), err
		}},
	}
}

// interfaces turns checked arguments into Go values: nil for a missing
// one.
func interfaces(args []reflect.Value) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if a.IsValid() {
			out[i] = a.Interface()
		}
	}
	return out
}

// call evaluates a function call: its arguments, then the function.
func (s *state) call(dot reflect.Value, id *parse.IdentifierNode, cmd parse.Node, args []parse.Node, final reflect.Value) reflect.Value {
	s.at(id)
	name := id.Ident
	b, ok := builtins[name]
	if !ok {
		s.fail("%q is not a defined function", name)
	}
	if args != nil {
		args = args[1:] // the first is the function's name
	}
	n := len(args)
	if !isMissing(final) {
		n++
	}
	if b.variadic != nil {
		if n < len(b.fixed) {
			s.fail("wrong number of args for %s: want at least %d got %d", name, len(b.fixed), len(args))
		}
	} else if n != len(b.fixed) {
		s.fail("wrong number of args for %s: want %d got %d", name, len(b.fixed), n)
	}
	paramOf := func(i int) param {
		if i < len(b.fixed) {
			return b.fixed[i]
		}
		return *b.variadic
	}
	if name == "and" || name == "or" {
		// They stop at the first argument that decides, and return it.
		var v reflect.Value
		for _, a := range args {
			v = s.arg(dot, valueParam, a)
			if t, _ := truth(elem(v)); t == (name == "or") {
				return v
			}
		}
		if !isMissing(final) {
			v = s.check(final, valueParam)
		}
		return v
	}
	argv := make([]reflect.Value, 0, n)
	for i, a := range args {
		argv = append(argv, s.arg(dot, paramOf(i), a))
	}
	if !isMissing(final) {
		argv = append(argv, s.check(final, paramOf(len(args))))
	}
	switch {
	case makes(name):
		at := s.node
		s.at(cmd)
		s.beforeMaking(name, argv)
		s.at(at)
	case compares(name):
		for _, a := range argv {
			if a = elem(a); a.Kind() == reflect.String {
				s.step(a.Len() >> 10)
			}
		}
	}
	v, err := b.fn(s, argv)
	if err != nil {
		s.at(cmd)
		s.fail("error calling %s: %v", name, err)
	}
	if makes(name) {
		s.made(v)
	}
	return v
}

// arg evaluates an argument for a parameter of kind p.
func (s *state) arg(dot reflect.Value, p param, n parse.Node) reflect.Value {
	s.at(n)
	switch n := n.(type) {
	case *parse.DotNode:
		return s.check(dot, p)
	case *parse.NilNode:
		switch p {
		case valueParam, anyParam:
			return reflect.Value{}
		}
		s.fail("cannot assign nil to string")
	case *parse.FieldNode:
		return s.check(s.fieldChain(dot, dot, n, n.Ident, []parse.Node{n}, missing), p)
	case *parse.VariableNode:
		return s.check(s.variable(dot, n, nil, missing), p)
	case *parse.PipeNode:
		return s.check(s.pipeline(dot, n), p)
	case *parse.IdentifierNode:
		return s.check(s.call(dot, n, n, nil, missing), p)
	case *parse.ChainNode:
		return s.check(s.chain(dot, n, nil, missing), p)
	}
	if p == stringParam {
		if str, ok := n.(*parse.StringNode); ok {
			return reflect.ValueOf(str.Text)
		}
		s.fail("expected string; found %s", n)
	}
	if v, ok := s.literal(n); ok {
		return v
	}
	s.fail("can't handle %s for arg", n)
	return reflect.Value{}
}

// check checks an evaluated argument against its parameter.
func (s *state) check(v reflect.Value, p param) reflect.Value {
	switch p {
	case valueParam:
		return v
	case anyParam:
		return v
	}
	if !v.IsValid() {
		s.fail("invalid value; expected string")
	}
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Type() != reflect.TypeFor[string]() {
		s.fail("wrong type for value; expected string; got %s", v.Type())
	}
	return v
}

// printArgs is what html, js and urlquery escape: one string as it is,
// else the arguments printed as print prints them, a missing value as
// "<no value>".
func printArgs(args []any) string {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return s
		}
	}
	for i, a := range args {
		if p, ok := printable(reflect.ValueOf(a)); ok {
			args[i] = p
		}
	}
	return fmt.Sprint(args...)
}

// htmlEscape and jsEscape write what text/template's HTMLEscapeString
// and JSEscapeString write (TestEscapersMatchTextTemplate and FuzzEscapers compare them). They
// are not called from there: a program that links text/template keeps every
// exported method of every type, since templates call methods by name, and
// the runtime program must stay free of it (its deps_test).
func htmlEscape(s string) string {
	if !strings.ContainsAny(s, "\x00\"'&<>") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString("\uFFFD")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func jsEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\'':
				b.WriteString(`\'`)
			case c == '"':
				b.WriteString(`\"`)
			case c == '<':
				b.WriteString(`\u003C`)
			case c == '>':
				b.WriteString(`\u003E`)
			case c == '&':
				b.WriteString(`\u0026`)
			case c == '=':
				b.WriteString(`\u003D`)
			case c < ' ':
				fmt.Fprintf(&b, `\u00%02X`, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsPrint(r) {
			b.WriteString(s[i : i+size])
		} else {
			fmt.Fprintf(&b, `\u%04X`, r)
		}
		i += size
	}
	return b.String()
}

// Comparison, as text/template compares: by basic kind, integers across
// signedness, anything against a missing value in eq.

type basic int

const (
	invalidKind basic = iota
	boolKind
	complexKind
	intKind
	floatKind
	stringKind
	uintKind
)

var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errNoComparison      = errors.New("missing argument for comparison")
)

func basicKind(v reflect.Value) (basic, error) {
	switch v.Kind() {
	case reflect.Bool:
		return boolKind, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKind, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKind, nil
	case reflect.Float32, reflect.Float64:
		return floatKind, nil
	case reflect.Complex64, reflect.Complex128:
		return complexKind, nil
	case reflect.String:
		return stringKind, nil
	}
	return invalidKind, errBadComparisonType
}

func isNilValue(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

func eq(a reflect.Value, bs ...reflect.Value) (bool, error) {
	a = elem(a)
	if len(bs) == 0 {
		return false, errNoComparison
	}
	ka, _ := basicKind(a)
	for _, b := range bs {
		b = elem(b)
		kb, _ := basicKind(b)
		t := false
		switch {
		case ka == intKind && kb == uintKind:
			t = a.Int() >= 0 && uint64(a.Int()) == b.Uint()
		case ka == uintKind && kb == intKind:
			t = b.Int() >= 0 && a.Uint() == uint64(b.Int())
		case ka != kb:
			if a.IsValid() && b.IsValid() {
				return false, fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
			}
		case ka == boolKind:
			t = a.Bool() == b.Bool()
		case ka == complexKind:
			t = a.Complex() == b.Complex()
		case ka == floatKind:
			t = a.Float() == b.Float()
		case ka == intKind:
			t = a.Int() == b.Int()
		case ka == stringKind:
			t = a.String() == b.String()
		case ka == uintKind:
			t = a.Uint() == b.Uint()
		default:
			// Neither is a basic kind: nil against nil, or values of
			// one comparable type.
			if a.IsValid() && b.IsValid() && a.Kind() != b.Kind() {
				return false, fmt.Errorf("non-comparable types %s: %v, %s: %v", a, a.Type(), b.Type(), b)
			}
			if isNilValue(a) || isNilValue(b) {
				t = isNilValue(a) == isNilValue(b)
			} else {
				if !b.Type().Comparable() {
					return false, fmt.Errorf("non-comparable type %s: %v", b, b.Type())
				}
				t = a.Interface() == b.Interface()
			}
		}
		if t {
			return true, nil
		}
	}
	return false, nil
}

func lt(a, b reflect.Value) (bool, error) {
	a = elem(a)
	ka, err := basicKind(a)
	if err != nil {
		return false, err
	}
	b = elem(b)
	kb, err := basicKind(b)
	if err != nil {
		return false, err
	}
	switch {
	case ka == intKind && kb == uintKind:
		return a.Int() < 0 || uint64(a.Int()) < b.Uint(), nil
	case ka == uintKind && kb == intKind:
		return b.Int() >= 0 && a.Uint() < uint64(b.Int()), nil
	case ka != kb:
		return false, fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
	case ka == boolKind, ka == complexKind:
		return false, errBadComparisonType
	case ka == floatKind:
		return a.Float() < b.Float(), nil
	case ka == intKind:
		return a.Int() < b.Int(), nil
	case ka == stringKind:
		return a.String() < b.String(), nil
	}
	return a.Uint() < b.Uint(), nil
}

func length(_ *state, args []reflect.Value) (reflect.Value, error) {
	v, isNil := indirect(args[0])
	if isNil {
		return reflect.Value{}, errors.New("len of nil pointer")
	}
	switch v.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return reflect.ValueOf(v.Len()), nil
	case reflect.Invalid:
		return reflect.Value{}, errors.New("len of no value")
	}
	return reflect.Value{}, fmt.Errorf("len of type %s", v.Type())
}

// position reads an index argument of index or slice, at most max.
func position(v reflect.Value, max int) (int, error) {
	var x int64
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x = v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x = int64(v.Uint())
	case reflect.Invalid:
		return 0, errors.New("cannot index slice/array with nil")
	default:
		return 0, fmt.Errorf("cannot index slice/array with type %s", v.Type())
	}
	if x < 0 || int(x) < 0 || int(x) > max {
		return 0, fmt.Errorf("index out of range: %d", x)
	}
	return int(x), nil
}

func index(_ *state, args []reflect.Value) (reflect.Value, error) {
	item := elem(args[0])
	if !item.IsValid() {
		return reflect.Value{}, errors.New("index of untyped nil")
	}
	for _, i := range args[1:] {
		i = elem(i)
		var isNil bool
		if item, isNil = indirect(item); isNil {
			return reflect.Value{}, errors.New("index of nil pointer")
		}
		switch item.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			x, err := position(i, item.Len()-1)
			if err != nil {
				return reflect.Value{}, err
			}
			item = item.Index(x)
		case reflect.Map:
			key, err := mapKey(i, item.Type().Key())
			if err != nil {
				return reflect.Value{}, err
			}
			if x := item.MapIndex(key); x.IsValid() {
				item = x
			} else {
				item = reflect.Zero(item.Type().Elem())
			}
		default:
			return reflect.Value{}, fmt.Errorf("can't index item of type %s", item.Type())
		}
	}
	return item, nil
}

// mapKey converts an index argument to a map's key type.
func mapKey(v reflect.Value, key reflect.Type) (reflect.Value, error) {
	if !v.IsValid() {
		return reflect.Value{}, fmt.Errorf("value is nil; should be of type %s", key)
	}
	if !v.Type().AssignableTo(key) {
		return reflect.Value{}, fmt.Errorf("value has type %s; should be %s", v.Type(), key)
	}
	return v, nil
}

func slice(_ *state, args []reflect.Value) (reflect.Value, error) {
	item := elem(args[0])
	if !item.IsValid() {
		return reflect.Value{}, errors.New("slice of untyped nil")
	}
	var isNil bool
	if item, isNil = indirect(item); isNil {
		return reflect.Value{}, errors.New("slice of nil pointer")
	}
	idx := args[1:]
	if len(idx) > 3 {
		return reflect.Value{}, fmt.Errorf("too many slice indexes: %d", len(idx))
	}
	var max int
	switch item.Kind() {
	case reflect.String:
		if len(idx) == 3 {
			return reflect.Value{}, errors.New("cannot 3-index slice a string")
		}
		max = item.Len()
	case reflect.Array, reflect.Slice:
		// Bounded by the length: text/template's bound, the capacity,
		// would show elements past the end.
		max = item.Len()
	default:
		return reflect.Value{}, fmt.Errorf("can't slice item of type %s", item.Type())
	}
	x := [3]int{0, item.Len()}
	for i, v := range idx {
		n, err := position(v, max)
		if err != nil {
			return reflect.Value{}, err
		}
		x[i] = n
	}
	if x[0] > x[1] {
		return reflect.Value{}, fmt.Errorf("invalid slice index: %d > %d", x[0], x[1])
	}
	if len(idx) < 3 {
		return item.Slice(x[0], x[1]), nil
	}
	if x[1] > x[2] {
		return reflect.Value{}, fmt.Errorf("invalid slice index: %d > %d", x[1], x[2])
	}
	return item.Slice3(x[0], x[1], x[2]), nil
}

// call calls a function held in the data; JSON data holds none.
func call(_ *state, args []reflect.Value) (reflect.Value, error) {
	fn := elem(args[0])
	if !fn.IsValid() {
		return reflect.Value{}, errors.New("call of nil")
	}
	return reflect.Value{}, fmt.Errorf("non-function of type %s", fn.Type())
}
