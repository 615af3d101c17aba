package temporal

import (
	"context"
	"fmt"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// searchSet is the set of agentc's search attributes a run sets: those
// its worker found registered, as Keywords, on its namespace.
type searchSet []string

// upsert sets the search attributes of pairs (name, value, name, value,
// ...) that are in the set and have a value.
func (s searchSet) upsert(ctx workflow.Context, pairs ...string) error {
	var ups []sdktemporal.SearchAttributeUpdate
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" && slices.Contains(s, pairs[i]) {
			ups = append(ups, sdktemporal.NewSearchAttributeKeyKeyword(pairs[i]).ValueSet(pairs[i+1]))
		}
	}
	if len(ups) == 0 {
		return nil
	}
	return workflow.UpsertTypedSearchAttributes(ctx, ups...)
}

// registered returns the search attributes the worker found registered:
// none until CheckSearchAttributes found them.
func (w *Worker) registered() searchSet {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.search)
}

// MissingSearchAttribute is one of agentc's search attributes that a
// namespace lacks, or holds with another type than Keyword.
type MissingSearchAttribute struct {
	Name string
	// Type is the type it is registered with; "" when it is not.
	Type string
}

func (m MissingSearchAttribute) String() string {
	if m.Type == "" {
		return m.Name
	}
	return fmt.Sprintf("%s (a %s, not a Keyword)", m.Name, m.Type)
}

// CheckSearchAttributes asks the server which of agentc's search
// attributes (SearchAttributes) namespace has, as Keywords: the runs this
// worker starts from then on set those, and no other, since setting one
// the namespace does not have would fail the run's workflow task. It
// returns those missing; an error means the server did not say (the
// worker's credentials may not read them), and runs then set none. Until
// it is called a worker's runs set none.
//
// It registers nothing: registering a search attribute takes an
// operator's rights on the cluster (temporal operator search-attribute
// create), which a worker should not hold.
func (w *Worker) CheckSearchAttributes(ctx context.Context, namespace string) ([]MissingSearchAttribute, error) {
	resp, err := w.client.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("temporal: reading the search attributes of namespace %s: %w", namespace, err)
	}
	var found searchSet
	var missing []MissingSearchAttribute
	for _, name := range SearchAttributes() {
		t, ok := resp.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing = append(missing, MissingSearchAttribute{Name: name})
		case t != enumspb.INDEXED_VALUE_TYPE_KEYWORD:
			missing = append(missing, MissingSearchAttribute{Name: name, Type: typeName(t)})
		default:
			found = append(found, name)
		}
	}
	w.mu.Lock()
	w.search = found
	w.mu.Unlock()
	return missing, nil
}

// typeName is a search attribute type as the temporal command names it.
func typeName(t enumspb.IndexedValueType) string {
	switch t {
	case enumspb.INDEXED_VALUE_TYPE_TEXT:
		return "Text"
	case enumspb.INDEXED_VALUE_TYPE_INT:
		return "Int"
	case enumspb.INDEXED_VALUE_TYPE_DOUBLE:
		return "Double"
	case enumspb.INDEXED_VALUE_TYPE_BOOL:
		return "Bool"
	case enumspb.INDEXED_VALUE_TYPE_DATETIME:
		return "Datetime"
	case enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST:
		return "KeywordList"
	}
	return t.String()
}

// RegisterCommand is the temporal command an operator runs to register
// the search attributes missing from namespace.
func RegisterCommand(namespace string, missing []MissingSearchAttribute) string {
	cmd := "temporal operator search-attribute create --namespace " + namespace + " --type Keyword"
	for _, m := range missing {
		cmd += " --name " + m.Name
	}
	return cmd
}
