package elicit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// ParseVerdict decodes and validates a verdict, an MCP ElicitationResult. Anything
// that is not exactly that shape — another action, a missing action, content values
// other than string, number, boolean or list of strings — is a ValidationError (422).
func ParseVerdict(raw []byte) (models.Verdict, error) {
	var probe map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&probe); err != nil || probe == nil {
		return models.Verdict{}, errs.Validation("", "body must be a JSON object {\"action\":\"accept|decline|cancel\",\"content\"?:{…}}")
	}
	return verdictFromFields(probe)
}

// VerdictFromMap validates an already-decoded verdict object.
func VerdictFromMap(m map[string]json.RawMessage) (models.Verdict, error) {
	return verdictFromFields(m)
}

func verdictFromFields(probe map[string]json.RawMessage) (models.Verdict, error) {
	var r models.Verdict
	rawAction, ok := probe["action"]
	if !ok {
		return r, errs.Validation("action", "is required")
	}
	if err := json.Unmarshal(rawAction, &r.Action); err != nil {
		return r, errs.Validation("action", "must be a string")
	}
	switch r.Action {
	case models.ActionAccept, models.ActionDecline, models.ActionCancel:
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
func checkStorable(content map[string]any) error {
	for k, v := range content {
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
			if err := checkStorable(t); err != nil {
				return errs.Validation("content."+k, "must not contain NUL")
			}
		}
	}
	return nil
}
