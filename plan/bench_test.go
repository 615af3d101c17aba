package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// bigSchema returns an object schema of about size bytes: many properties,
// each with a description, bounds and an enum.
func bigSchema(size int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field_%05d":{"type":"string","description":"Field %d of the record, as printed on the form.","minLength":1,"maxLength":%d,"enum":["a%d","b%d","c%d"]}`, i, i, 10+i%90, i, i, i)
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

// BenchmarkSeal1MiBSchema computes both digests of a plan whose output
// schema is 1 MiB.
func BenchmarkSeal1MiBSchema(b *testing.B) {
	schema := bigSchema(1 << 20)
	p := &Plan{Agent: Agent{Name: "big", Model: Model{Provider: "test", Name: "test"}, Instructions: "x",
		Output: &Output{Name: "answer", Description: "x", Schema: schema, Mode: "auto", Enforce: "local"}}}
	b.SetBytes(int64(len(schema)))
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Seal(); err != nil {
			b.Fatal(err)
		}
	}
}

// answerSchema is a realistic contract: an extracted invoice, with nested
// objects, an array of line items, formats, bounds, enums and optional
// fields; answer is a valid answer to it, and loweredAnswer the same answer
// as a strict provider writes it, nulls for the absent optional fields.
const (
	answerSchema = `{"type":"object","additionalProperties":false,"required":["number","issued","vendor","currency","total","lines"],
	"properties":{
	  "number":{"type":"string","pattern":"^[A-Z0-9-]{1,32}$"},
	  "issued":{"type":"string","format":"date"},
	  "due":{"type":"string","format":"date"},
	  "vendor":{"type":"object","additionalProperties":false,"required":["name"],"properties":{
	    "name":{"type":"string","minLength":1,"maxLength":200},"vat_id":{"type":"string"},"email":{"type":"string","format":"email"}}},
	  "currency":{"enum":["EUR","USD","GBP","CHF"]},
	  "total":{"type":"number","minimum":0},
	  "lines":{"type":"array","minItems":1,"maxItems":200,"items":{"type":"object","additionalProperties":false,
	    "required":["description","amount"],"properties":{"description":{"type":"string","maxLength":500},"quantity":{"type":"integer","minimum":1},"amount":{"type":"number"}}}}}}`
	answer        = `{"number":"INV-2041","issued":"2026-11-02","vendor":{"name":"ACME GmbH","email":"billing@acme.example"},"currency":"EUR","total":120,"lines":[{"description":"Widgets","quantity":4,"amount":100},{"description":"Shipping","amount":20}]}`
	loweredAnswer = `{"number":"INV-2041","issued":"2026-11-02","due":null,"vendor":{"name":"ACME GmbH","vat_id":null,"email":"billing@acme.example"},"currency":"EUR","total":120,"lines":[{"description":"Widgets","quantity":4,"amount":100},{"description":"Shipping","quantity":null,"amount":20}]}`
)

// BenchmarkValidateAnswer is the local validation of one answer against a
// compiled contract: decoding it into the validator's value form and
// validating it (Validate), as the runtime does for every answer.
func BenchmarkValidateAnswer(b *testing.B) {
	s, err := CompileSchemaJSON([]byte(answerSchema))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := UnmarshalJSONValue([]byte(answer))
		if err != nil {
			b.Fatal(err)
		}
		if err := Validate(s, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRaise is turning an answer a strict provider wrote (nulls for
// absent optional properties) back into the contract's shape.
func BenchmarkRaise(b *testing.B) {
	lowered := json.RawMessage(`{"type":"object","additionalProperties":false,"required":["number","issued","due","vendor","currency","total","lines"],
	"properties":{"number":{"type":"string"},"issued":{"type":"string"},"due":{"type":["string","null"]},
	  "vendor":{"type":"object","additionalProperties":false,"required":["name","vat_id","email"],"properties":{"name":{"type":"string"},"vat_id":{"type":["string","null"]},"email":{"type":["string","null"]}}},
	  "currency":{"enum":["EUR","USD","GBP","CHF"]},"total":{"type":"number"},
	  "lines":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["description","quantity","amount"],
	    "properties":{"description":{"type":"string"},"quantity":{"type":["integer","null"]},"amount":{"type":"number"}}}}}}`)
	nullable := []string{"/properties/due", "/properties/vendor/properties/vat_id", "/properties/vendor/properties/email", "/properties/lines/items/properties/quantity"}
	b.ReportAllocs()
	for b.Loop() {
		if out := Raise(lowered, nullable, json.RawMessage(loweredAnswer)); len(out) == len(loweredAnswer) {
			b.Fatal("nothing raised")
		}
	}
}

// BenchmarkValidatePatterns validates an answer whose strings are mostly
// checked by patterns: 100 records of four patterned fields, as a
// contract for extracted identifiers would hold, so that the cost of the
// regular-expression engine dominates.
func BenchmarkValidatePatterns(b *testing.B) {
	schema := `{"type":"array","items":{"type":"object","required":["id","sku","phone","slug"],"properties":{
	  "id":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4,8}$"},
	  "sku":{"type":"string","pattern":"^[a-z0-9]+(?:-[a-z0-9]+)*$"},
	  "phone":{"type":"string","pattern":"^\\+?[0-9 ()-]{7,20}$"},
	  "slug":{"type":"string","pattern":"[a-z]"}}}}`
	var a strings.Builder
	a.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			a.WriteByte(',')
		}
		fmt.Fprintf(&a, `{"id":"INV-%06d","sku":"widget-%d-blue","phone":"+49 (30) 555-%04d","slug":"Part number %d of the order"}`, i, i, i, i)
	}
	a.WriteByte(']')
	s, err := CompileSchemaJSON([]byte(schema))
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(a.String())
	b.ReportAllocs()
	for b.Loop() {
		v, err := UnmarshalJSONValue(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRaiseDeep is raising a model's value 900 levels deep, with a
// list of 1,000 items at the bottom, under a recursive schema
// (TestRaiseDeepAndWide).
func BenchmarkRaiseDeep(b *testing.B) {
	lowered, nullable, val, _ := deepRecursive(900, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if out := Raise(lowered, nullable, val); len(out) == len(val) {
			b.Fatal("nothing raised")
		}
	}
}

// BenchmarkRefuseDoubling is refusing a value of a schema whose parts
// refer twice to the next, 60 deep: the count of applications spends its
// budget (MaxValidationWork) and stops, where validating would not end.
func BenchmarkRefuseDoubling(b *testing.B) {
	s, err := CompileSchemaJSON([]byte(doubling(60, "q")))
	if err != nil {
		b.Fatal(err)
	}
	v := map[string]any{"q": "x"}
	var we *WorkError
	for b.Loop() {
		if err := Validate(s, v); !errors.As(err, &we) {
			b.Fatal(err)
		}
	}
}
