package elicit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Actions of an MCP ElicitationResult.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Result is an MCP ElicitationResult: the human's verdict.
type Result struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// ParseResult decodes and validates an ElicitationResult. Anything that is not exactly
// that shape — another action, a missing action, content values other than string,
// number, boolean or list of strings — is a ValidationError (422).
func ParseResult(raw []byte) (Result, error) {
	var probe map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&probe); err != nil || probe == nil {
		return Result{}, errs.Validation("", "body must be a JSON object {\"action\":\"accept|decline|cancel\",\"content\"?:{…}}")
	}
	return resultFromFields(probe)
}

// ResultFromMap validates an already-decoded ElicitationResult object.
func ResultFromMap(m map[string]json.RawMessage) (Result, error) { return resultFromFields(m) }

func resultFromFields(probe map[string]json.RawMessage) (Result, error) {
	var r Result
	rawAction, ok := probe["action"]
	if !ok {
		return r, errs.Validation("action", "is required")
	}
	if err := json.Unmarshal(rawAction, &r.Action); err != nil {
		return r, errs.Validation("action", "must be a string")
	}
	switch r.Action {
	case ActionAccept, ActionDecline, ActionCancel:
	default:
		return r, errs.Validation("action", "must be accept, decline or cancel, not %q", r.Action)
	}
	rawContent, ok := probe["content"]
	if !ok || string(rawContent) == "null" {
		return r, nil
	}
	var content map[string]json.RawMessage
	if err := json.Unmarshal(rawContent, &content); err != nil {
		return r, errs.Validation("content", "must be an object")
	}
	r.Content = make(map[string]any, len(content))
	for k, v := range content {
		if k == models.RememberKey {
			val, err := rememberValue(v)
			if err != nil {
				return r, err
			}
			r.Content[k] = val
			continue
		}
		val, err := primitive(v)
		if err != nil {
			return r, errs.Validation("content."+k, "%s", err.Error())
		}
		r.Content[k] = val
	}
	return r, nil
}

// primitive decodes one content value: string, number, boolean or list of strings.
func primitive(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("is not valid JSON")
	}
	switch t := v.(type) {
	case string, bool, json.Number:
		return t, nil
	case []any:
		out := make([]string, 0, len(t))
		for _, item := range t {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("lists may hold only strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a string, number, boolean or list of strings")
}

// rememberValue decodes content.remember: a boolean, or the object naming one of the
// prompt's suggestions (see models.RememberKey) — the one content value that is not a
// primitive, kept in its normalized form.
func rememberValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errs.Validation("content."+models.RememberKey, "is not valid JSON")
	}
	rem, ok, err := models.RememberOf(map[string]any{models.RememberKey: v})
	if fe, isField := err.(*models.FieldError); isField {
		return nil, errs.Validation(fe.Field, "%s", fe.Msg)
	}
	if _, isObject := v.(map[string]any); !isObject {
		return ok, nil
	}
	return rem.Value(), nil
}

// checkStorable refuses content the databases cannot store alike: Postgres cannot hold
// U+0000 in TEXT or JSONB while SQLite can. The JSON API refuses such bodies before
// parsing; verdicts built from form posts (approval page, inbox) reach Resolve directly,
// so the one resolver checks too — a 422, never a 500 on one database only.
func (r Result) checkStorable() error {
	for k, v := range r.Content {
		if strings.ContainsRune(k, 0) {
			return errs.Validation("content", "keys must not contain NUL")
		}
		switch t := v.(type) {
		case string:
			if strings.ContainsRune(t, 0) {
				return errs.Validation("content."+k, "must not contain NUL")
			}
		case []string:
			for _, item := range t {
				if strings.ContainsRune(item, 0) {
					return errs.Validation("content."+k, "must not contain NUL")
				}
			}
		case map[string]any: // content.remember
			if err := (Result{Content: t}).checkStorable(); err != nil {
				return errs.Validation("content."+k, "must not contain NUL")
			}
		}
	}
	return nil
}

// Bool reads a boolean flag from content (true only for JSON true).
func (r Result) Bool(key string) bool {
	b, ok := r.Content[key].(bool)
	return ok && b
}

// String reads a string from content.
func (r Result) String(key string) string {
	s, _ := r.Content[key].(string)
	return s
}
