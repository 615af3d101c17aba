// Package toolio holds what the tool kinds share: decoding a call's
// arguments, and telling why an operating system call failed without
// naming a host path.
package toolio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Arguments decodes a call's arguments: one JSON object, numbers kept as
// written (json.Number), so templates render integers exactly.
func Arguments(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("arguments are empty; want a JSON object")
		}
		return nil, fmt.Errorf("arguments are not valid JSON (%v); want a JSON object", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("arguments have data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, not %s", kind(v))
	}
	return m, nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// Cause unwraps the path, link and syscall errors of package os, which
// carry host paths, down to their cause.
func Cause(err error) error {
	for {
		var pe *os.PathError
		var le *os.LinkError
		var se *os.SyscallError
		switch {
		case errors.As(err, &pe):
			err = pe.Err
		case errors.As(err, &le):
			err = le.Err
		case errors.As(err, &se):
			err = se.Err
		default:
			return err
		}
	}
}

// Reason says why an operation failed, without the path.
func Reason(err error) string {
	err = Cause(err)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}
