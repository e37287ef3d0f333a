package prompt

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Field types of an MCP form (the flat primitive subset of JSON Schema MCP allows).
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeBoolean = "boolean"
	TypeEnum    = "enum"  // single choice among options
	TypeMulti   = "multi" // array of choices
)

// maxFields bounds how many properties a form shows; a schema with more is hostile or
// broken, and the rest are left out.
const maxFields = 100

// Field is one input of an MCP form, built from one property of requestedSchema.
type Field struct {
	// Name is the property name: the content key the verdict carries.
	Name        string
	Label       string
	Description string
	Type        string
	// InputType is the HTML input type for strings and numbers (text, email, url,
	// date, number).
	InputType string
	Format    string
	Required  bool
	// MinLength, MaxLength, Min, Max and Step are HTML attribute values ("" = none).
	MinLength, MaxLength string
	Min, Max, Step       string
	MinItems, MaxItems   int // -1 = none
	Options              []Choice
	// Value is the current text of a string or number field (the default, or what was
	// typed before a failed submit); Checked is a boolean's state.
	Value   string
	Checked bool
	// Hint describes the constraints in words ("3 to 40 characters").
	Hint  string
	Error string
	index int
}

// InputName is the field's form name. Property names are arbitrary strings, so they
// are prefixed to never clash with the form's own controls.
func (f Field) InputName() string { return "field." + f.Name }

// ID is a safe, unique element id for the field.
func (f Field) ID() string { return fmt.Sprintf("field-%d", f.index) }

// UseRadios reports whether a single choice renders as radios (short lists) rather
// than a select.
func (f Field) UseRadios() bool { return f.Type == TypeEnum && len(f.Options) <= 5 }

// parseFields builds the form's fields in the order the server listed its properties
// (order, from ParamPropertyOrder), falling back to name order for the rest.
func parseFields(schema map[string]any, order []any) []Field {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	required := map[string]bool{}
	if list, ok := schema["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	names := propertyNames(props, order)
	if len(names) > maxFields {
		names = names[:maxFields]
	}
	out := make([]Field, 0, len(names))
	for _, name := range names {
		def, _ := props[name].(map[string]any)
		if def == nil {
			def = map[string]any{}
		}
		f := parseField(name, def)
		f.Required = required[name]
		f.index = len(out)
		f.Hint = hint(f)
		out = append(out, f)
	}
	return out
}

func parseField(name string, def map[string]any) Field {
	f := Field{Name: name, Label: str(def["title"]), Description: str(def["description"]),
		Type: str(def["type"]), Format: str(def["format"]), MinItems: -1, MaxItems: -1}
	if f.Label == "" {
		f.Label = name
	}
	if opts := choices(def); len(opts) > 0 && f.Type != "array" {
		f.Type = TypeEnum
		f.Options = opts
		if d, ok := def["default"].(string); ok {
			f.Value = d
			markSelected(f.Options, []string{d})
		}
		return f
	}
	switch f.Type {
	case "array":
		items, _ := def["items"].(map[string]any)
		f.Type = TypeMulti
		f.Options = choices(items)
		f.MinItems, f.MaxItems = intOr(def["minItems"], -1), intOr(def["maxItems"], -1)
		if d, ok := def["default"].([]any); ok {
			var sel []string
			for _, v := range d {
				if s, ok := v.(string); ok {
					sel = append(sel, s)
				}
			}
			markSelected(f.Options, sel)
		}
	case TypeBoolean:
		f.Checked, _ = def["default"].(bool)
	case TypeNumber, TypeInteger:
		f.InputType = "number"
		f.Step = "any"
		if f.Type == TypeInteger {
			f.Step = "1"
		}
		f.Min, f.Max = numAttr(def["minimum"]), numAttr(def["maximum"])
		if d, ok := def["default"].(float64); ok {
			f.Value = formatNumber(d)
		}
	default:
		f.Type = TypeString
		f.InputType = "text"
		switch f.Format {
		case "email":
			f.InputType = "email"
		case "uri", "url":
			f.InputType = "url"
		case "date":
			f.InputType = "date"
		}
		f.MinLength, f.MaxLength = numAttr(def["minLength"]), numAttr(def["maxLength"])
		if d, ok := def["default"].(string); ok {
			f.Value = d
		}
	}
	return f
}

// choices reads the options of a select: enum (with legacy enumNames as labels),
// oneOf/anyOf of {const, title}.
func choices(def map[string]any) []Choice {
	if def == nil {
		return nil
	}
	var out []Choice
	if list, ok := def["enum"].([]any); ok {
		names, _ := def["enumNames"].([]any)
		for i, v := range list {
			val := scalarText(v)
			label := val
			if i < len(names) {
				if s, ok := names[i].(string); ok && s != "" {
					label = s
				}
			}
			out = append(out, Choice{Value: val, Label: label, raw: v})
		}
		return out
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		list, ok := def[key].([]any)
		if !ok {
			continue
		}
		for _, v := range list {
			m, _ := v.(map[string]any)
			c, ok := m["const"]
			if !ok {
				continue
			}
			val := scalarText(c)
			label := str(m["title"])
			if label == "" {
				label = val
			}
			out = append(out, Choice{Value: val, Label: label, Description: str(m["description"]), raw: c})
		}
		if len(out) > 0 {
			return out
		}
	}
	return out
}

func markSelected(opts []Choice, vals []string) {
	for i := range opts {
		opts[i].Selected = contains(vals, opts[i].Value)
	}
}

func scalarText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return formatNumber(t)
	case bool:
		return strconv.FormatBool(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func numAttr(v any) string {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return formatNumber(f)
}

func intOr(v any, def int) int {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1e6 {
		return def
	}
	return int(f)
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// hint says a field's constraints in words.
func hint(f Field) string {
	var parts []string
	switch f.Type {
	case TypeString:
		switch {
		case f.MinLength != "" && f.MaxLength != "":
			parts = append(parts, f.MinLength+" to "+f.MaxLength+" characters")
		case f.MinLength != "":
			parts = append(parts, "at least "+f.MinLength+" characters")
		case f.MaxLength != "":
			parts = append(parts, "at most "+f.MaxLength+" characters")
		}
		switch f.Format {
		case "date-time":
			parts = append(parts, "a date and time like 2026-01-31T09:30:00Z")
		case "date":
			parts = append(parts, "a date like 2026-01-31")
		case "email":
			parts = append(parts, "an email address")
		case "uri", "url":
			parts = append(parts, "a full URL like https://example.com")
		}
	case TypeNumber, TypeInteger:
		noun := "a number"
		if f.Type == TypeInteger {
			noun = "a whole number"
		}
		switch {
		case f.Min != "" && f.Max != "":
			parts = append(parts, noun+" from "+f.Min+" to "+f.Max)
		case f.Min != "":
			parts = append(parts, noun+" of at least "+f.Min)
		case f.Max != "":
			parts = append(parts, noun+" of at most "+f.Max)
		default:
			parts = append(parts, noun)
		}
	case TypeMulti:
		switch {
		case f.MinItems > 0 && f.MaxItems >= 0:
			parts = append(parts, fmt.Sprintf("choose %d to %d", f.MinItems, f.MaxItems))
		case f.MinItems > 0:
			parts = append(parts, fmt.Sprintf("choose at least %d", f.MinItems))
		case f.MaxItems >= 0:
			parts = append(parts, fmt.Sprintf("choose at most %d", f.MaxItems))
		}
	}
	s := strings.Join(parts, "; ")
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:] + "."
	}
	return s
}

// bind reads the field's submitted value into f (for re-rendering) and returns the
// content value to send: ok=false with f.Error set when the text is not even the right
// type; present=false when the field was left empty and is omitted.
func (f *Field) bind(values map[string][]string) (val any, present, ok bool) {
	raw := values[f.InputName()]
	switch f.Type {
	case TypeBoolean:
		f.Checked = first(raw) == "true"
		return f.Checked, true, true
	case TypeMulti:
		markSelected(f.Options, raw)
		sel := make([]string, 0, len(raw))
		for _, o := range f.Options {
			if o.Selected {
				sel = append(sel, o.Value)
			}
		}
		if len(sel) != len(raw) {
			f.Error = "Choose among the listed options."
			return nil, false, false
		}
		if len(sel) == 0 && !f.Required {
			return nil, false, true
		}
		return sel, true, true
	case TypeEnum:
		f.Value = first(raw)
		markSelected(f.Options, []string{f.Value})
		if f.Value == "" {
			return nil, false, true
		}
		for _, o := range f.Options {
			if o.Value == f.Value {
				return contentValue(o.raw), true, true
			}
		}
		f.Error = "Choose one of the listed options."
		return nil, false, false
	case TypeNumber, TypeInteger:
		f.Value = strings.TrimSpace(first(raw))
		if f.Value == "" {
			return nil, false, true
		}
		if f.Type == TypeInteger {
			n, err := strconv.ParseInt(f.Value, 10, 64)
			if err != nil {
				f.Error = "Enter a whole number."
				return nil, false, false
			}
			return json.Number(strconv.FormatInt(n, 10)), true, true
		}
		x, err := strconv.ParseFloat(f.Value, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			f.Error = "Enter a number."
			return nil, false, false
		}
		return json.Number(formatNumber(x)), true, true
	default:
		f.Value = first(raw)
		if f.Value == "" {
			return nil, false, true
		}
		return f.Value, true, true
	}
}

// contentValue converts an option's JSON value to an ElicitationResult content value.
func contentValue(v any) any {
	switch t := v.(type) {
	case float64:
		return json.Number(formatNumber(t))
	case bool, string:
		return t
	}
	return scalarText(v)
}
