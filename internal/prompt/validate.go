package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL is the in-memory location the requested schema is compiled under.
const schemaURL = "mem:///requested-schema.json"

// errNoLoading refuses every external reference: a requested schema comes from an
// agent or an MCP server and must never make the server fetch anything.
var errNoLoading = errors.New("external schema references are not allowed")

type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, errNoLoading }

// validate checks content against the requested schema and returns a message per
// property (key "" for errors about the whole object). A schema that cannot be
// compiled (broken, or referring elsewhere) falls back to checking the required list,
// since the form was built from the properties anyway.
func validate(schema map[string]any, content map[string]any) map[string]string {
	out := map[string]string{}
	inst, err := jsonNative(content)
	if err != nil {
		out[""] = "The answers could not be encoded."
		return out
	}
	sch, err := compile(schema)
	if err != nil {
		for _, name := range requiredList(schema) {
			if _, ok := content[name]; !ok {
				out[name] = "This field is required."
			}
		}
		return out
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(inst); errors.As(err, &ve) {
		collect(ve, out)
		if len(out) == 0 {
			out[""] = "The answers do not match what was asked."
		}
	} else if err != nil {
		out[""] = "The answers could not be checked."
	}
	return out
}

func compile(schema map[string]any) (*jsonschema.Schema, error) {
	doc, err := jsonNative(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// jsonNative round-trips v through JSON so the validator sees JSON types ([]any,
// json.Number) rather than Go ones ([]string).
func jsonNative(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

func requiredList(schema map[string]any) []string {
	var out []string
	list, _ := schema["required"].([]any)
	for _, r := range list {
		if s, ok := r.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// collect walks the error tree and keeps the first friendly message per property.
func collect(ve *jsonschema.ValidationError, out map[string]string) {
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		if len(ve.InstanceLocation) == 0 {
			for _, m := range k.Missing {
				setOnce(out, m, "This field is required.")
			}
			return
		}
	case *kind.Group, *kind.Reference, *kind.Schema, *kind.AllOf:
		for _, c := range ve.Causes {
			collect(c, out)
		}
		return
	}
	if len(ve.Causes) > 0 {
		before := len(out)
		for _, c := range ve.Causes {
			collect(c, out)
		}
		if len(out) > before {
			return
		}
	}
	field := ""
	if len(ve.InstanceLocation) > 0 {
		field = ve.InstanceLocation[0]
	}
	setOnce(out, field, friendly(ve.ErrorKind))
}

func setOnce(out map[string]string, k, msg string) {
	if _, ok := out[k]; !ok {
		out[k] = msg
	}
}

// friendly words a validation error for the person filling the form.
func friendly(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.MinLength:
		return fmt.Sprintf("Use at least %d characters.", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("Use at most %d characters.", k.Want)
	case *kind.Minimum:
		return "Must be at least " + ratText(k.Want) + "."
	case *kind.Maximum:
		return "Must be at most " + ratText(k.Want) + "."
	case *kind.ExclusiveMinimum:
		return "Must be more than " + ratText(k.Want) + "."
	case *kind.ExclusiveMaximum:
		return "Must be less than " + ratText(k.Want) + "."
	case *kind.MinItems:
		return fmt.Sprintf("Choose at least %d.", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("Choose at most %d.", k.Want)
	case *kind.Enum, *kind.Const:
		return "Choose one of the listed options."
	case *kind.Type:
		return "Enter a " + strings.Join(k.Want, " or ") + "."
	case *kind.Format:
		switch k.Want {
		case "email":
			return "Enter an email address like name@example.com."
		case "uri", "iri", "uri-reference":
			return "Enter a full URL like https://example.com."
		case "date":
			return "Enter a date like 2026-01-31."
		case "date-time":
			return "Enter a date and time like 2026-01-31T09:30:00Z."
		case "time":
			return "Enter a time like 09:30:00Z."
		}
		return "Enter a valid " + k.Want + "."
	case *kind.Required:
		return "Fill in " + strings.Join(k.Missing, ", ") + "."
	}
	return strings.TrimSpace(k.LocalizedString(message.NewPrinter(language.English)))
}

// ratText prints a schema bound the way a person would write it (5, 2.5).
func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	f, _ := r.Float64()
	return formatNumber(f)
}
