package prompt

import (
	"bytes"
	"encoding/json"
	"sort"
)

// ParamPropertyOrder is the params key holding the order of requestedSchema's
// properties as the server sent them. A schema is decoded into a Go map and stored as
// JSON (JSONB on Postgres), and neither keeps object key order, so whoever receives
// the raw schema records the order beside it with PropertyOrder; the form then shows
// its fields in the server's order rather than alphabetically.
const ParamPropertyOrder = "property_order"

// PropertyOrder returns the names of a raw JSON schema's properties in the order they
// appear, each once, at most maxFields of them; nil when the schema is not an object
// with a properties object.
func PropertyOrder(schema []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top["properties"]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	for dec.More() && len(names) < maxFields {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		name, _ := tok.(string)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return names
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// propertyNames orders a schema's property names: first as listed in order (names
// the schema has, each once), then any others by name, so the result is stable
// across databases and reloads even without a recorded order.
func propertyNames(props map[string]any, order []any) []string {
	names := make([]string, 0, len(props))
	seen := make(map[string]bool, len(props))
	for _, v := range order {
		name, ok := v.(string)
		if _, in := props[name]; ok && in && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	rest := make([]string, 0, len(props)-len(names))
	for name := range props {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}
