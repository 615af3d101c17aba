package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"agentc.dev/agentc/plan"
	agentrt "agentc.dev/agentc/runtime"
)

// checkFiles refuses an input whose file inputs are not their bytes in
// base64, as the contract has them: a client never names a file by its
// digest, which would reach the files other clients' runs put in the
// server's store.
func checkFiles(files []plan.FileField, input json.RawMessage) error {
	if len(files) == 0 || len(input) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		return nil // the input contract says why
	}
	for _, f := range files {
		v, ok := obj[f.Name]
		if !ok {
			continue
		}
		if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '"' {
			return &agentrt.InputError{Msg: fmt.Sprintf("file input %s: give the file's bytes in base64, as the contract says (a reference to a stored file is not taken here)", f.Name)}
		}
	}
	return nil
}

// MaxRequestBytes bounds a request that runs agent p with its input as
// JSON (an A2A message, say): MaxBodyBytes, or, for an agent that takes
// files, room for its files in base64 beside the input.
func MaxRequestBytes(p *plan.Plan) int64 {
	files := fileFieldsOf(p)
	if len(files) == 0 {
		return MaxBodyBytes
	}
	return maxMultipartBytes(files)*4/3 + 4
}

// maxMultipartBytes bounds a multipart request: the run's files together,
// past which the run would refuse them anyway, and the input beside them.
func maxMultipartBytes(files []plan.FileField) int64 {
	var n int64
	for _, f := range files {
		n += f.MaxBytes
	}
	return min(n, plan.DefaultMaxRunFileBytes) + MaxBodyBytes
}

// multipartInput reads a multipart/form-data request as a run's input:
// the part named "input" is the input's JSON (an object; none is {}),
// and each part named as one of the agent's file inputs is that file,
// which goes into the input in base64, as the contract has it; the
// part's file name, where it has one, is returned by input (names). Any
// other part, a part given twice, or a file the input also gives, is
// refused.
func multipartInput(r *http.Request, files []plan.FileField) (json.RawMessage, map[string]string, int, error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, nil, http.StatusBadRequest, errors.New("a multipart body needs a boundary in its Content-Type")
	}
	byName := map[string]plan.FileField{}
	for _, f := range files {
		byName[f.Name] = f
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	obj := map[string]json.RawMessage{}
	names := map[string]string{}
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, statusOf(err), fmt.Errorf("reading the multipart body: %v", err)
		}
		name := part.FormName()
		if seen[name] {
			return nil, nil, http.StatusBadRequest, fmt.Errorf("part %q is given twice", name)
		}
		seen[name] = true
		switch f, isFile := byName[name]; {
		case name == "input":
			b, err := io.ReadAll(io.LimitReader(part, MaxBodyBytes+1))
			if err != nil {
				return nil, nil, statusOf(err), fmt.Errorf("reading part input: %v", err)
			}
			if len(b) > MaxBodyBytes {
				return nil, nil, http.StatusRequestEntityTooLarge, fmt.Errorf("part input is larger than %d bytes", MaxBodyBytes)
			}
			var in map[string]json.RawMessage
			if err := json.Unmarshal(b, &in); err != nil || in == nil {
				return nil, nil, http.StatusBadRequest, errors.New("part input is not a JSON object: a run's input with files is an object")
			}
			for k, v := range in {
				if _, dup := obj[k]; dup {
					return nil, nil, http.StatusBadRequest, fmt.Errorf("file input %s is given both as a part and in the input", k)
				}
				obj[k] = v
			}
		case isFile:
			if _, dup := obj[name]; dup {
				return nil, nil, http.StatusBadRequest, fmt.Errorf("file input %s is given both as a part and in the input", name)
			}
			var buf bytes.Buffer
			enc := base64.NewEncoder(base64.StdEncoding, &buf)
			n, err := io.Copy(enc, io.LimitReader(part, f.MaxBytes+1))
			enc.Close()
			if err != nil {
				return nil, nil, statusOf(err), fmt.Errorf("reading file %s: %v", name, err)
			}
			if n > f.MaxBytes {
				return nil, nil, http.StatusRequestEntityTooLarge, fmt.Errorf("file %s is larger than the %d bytes input %s takes", name, f.MaxBytes, name)
			}
			s, _ := json.Marshal(buf.String())
			obj[name] = s
			if n := part.FileName(); n != "" {
				names[name] = n
			}
		default:
			return nil, nil, http.StatusBadRequest, fmt.Errorf("part %q is neither input nor one of the agent's file inputs", name)
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, http.StatusBadRequest, err
	}
	return b, names, 0, nil
}

// statusOf is a read error's status: 413 for a body past its bound, 408
// for one that came too slowly (BoundReads).
func statusOf(err error) int {
	var tooLarge *http.MaxBytesError
	var slow *SlowBodyError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &slow):
		return http.StatusRequestTimeout
	}
	return http.StatusBadRequest
}
