package plan

import (
	"encoding/json"
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
