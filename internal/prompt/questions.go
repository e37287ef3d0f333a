package prompt

import (
	"fmt"
	"strings"
)

// OtherValue is the radio value that stands for "my own answer" on a single-choice
// question.
const OtherValue = "__other__"

// Question is one AskUserQuestion (or Codex requestUserInput) question.
type Question struct {
	Index int
	// Key is what the answer is keyed by in the verdict's content: the question text,
	// which is what Claude Code reads back (falling back to the header, then the id).
	Key    string
	Text   string
	Header string
	Multi  bool
	// Secret asks for a password-style input (Codex isSecret).
	Secret  bool
	Options []Choice
	// AllowOther offers a free-text answer beside the options.
	AllowOther bool
	// Other is the free-text answer typed before a failed submit.
	Other string
	Error string
}

// Choice is one option of a question or a select field.
type Choice struct {
	Value       string
	Label       string
	Description string
	Selected    bool
	// raw is the option's JSON value (enums may list numbers or booleans).
	raw any
}

// Name is the form name of the question's choice inputs.
func (q Question) Name() string { return fmt.Sprintf("q%d", q.Index) }

// OtherName is the form name of the question's free-text input.
func (q Question) OtherName() string { return fmt.Sprintf("q%d_other", q.Index) }

// OtherSelected reports whether the "other" radio should be checked on re-render.
func (q Question) OtherSelected() bool {
	return !q.Multi && q.Other != ""
}

func questionList(params map[string]any) []any {
	auq, _ := params["ask_user_question"].(map[string]any)
	list, _ := auq["questions"].([]any)
	return list
}

func parseQuestions(list []any) []Question {
	out := make([]Question, 0, len(list))
	for _, raw := range list {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		q := Question{Index: len(out), Text: str(m["question"]), Header: str(m["header"])}
		q.Multi, _ = m["multiSelect"].(bool)
		q.Secret, _ = m["isSecret"].(bool)
		for _, k := range []string{q.Text, q.Header, str(m["id"])} {
			if strings.TrimSpace(k) != "" {
				q.Key = k
				break
			}
		}
		if q.Key == "" {
			q.Key = fmt.Sprintf("question %d", q.Index+1)
		}
		if q.Text == "" {
			q.Text = q.Key
		}
		opts, _ := m["options"].([]any)
		for _, o := range opts {
			om, _ := o.(map[string]any)
			label := str(om["label"])
			if label == "" {
				continue
			}
			q.Options = append(q.Options, Choice{Value: label, Label: label, Description: str(om["description"])})
		}
		// Claude Code always lets the user type their own answer; Codex says per
		// question. A question without options can only be answered in text.
		q.AllowOther = true
		if v, ok := m["isOther"].(bool); ok {
			q.AllowOther = v
		}
		if len(q.Options) == 0 {
			q.AllowOther = true
		}
		out = append(out, q)
	}
	return out
}

// answer binds the form values of one question and returns its answer: the chosen
// label, the labels of a multiple choice joined with ", " (as Claude Code expects), or
// the typed text.
func (q *Question) answer(values map[string][]string) (string, bool) {
	chosen := values[q.Name()]
	other := strings.TrimSpace(first(values[q.OtherName()]))
	if q.AllowOther {
		q.Other = other
	}
	valid := map[string]bool{}
	for _, o := range q.Options {
		valid[o.Value] = true
	}
	var picked []string
	for _, c := range chosen {
		if c == OtherValue {
			continue
		}
		if !valid[c] {
			q.Error = "Choose one of the listed options."
			return "", false
		}
		picked = append(picked, c)
		for i := range q.Options {
			if q.Options[i].Value == c {
				q.Options[i].Selected = true
			}
		}
	}
	if !q.Multi && len(picked) > 1 {
		q.Error = "Choose only one option."
		return "", false
	}
	if other != "" && q.AllowOther {
		// A single choice with text typed: the text wins only when "other" was chosen
		// or nothing else was.
		if q.Multi || len(picked) == 0 || contains(chosen, OtherValue) {
			if !q.Multi {
				picked = picked[:0]
				for i := range q.Options {
					q.Options[i].Selected = false
				}
			}
			picked = append(picked, other)
		}
	} else if contains(chosen, OtherValue) {
		q.Error = "Type your answer in the text field."
		return "", false
	}
	if len(picked) == 0 {
		q.Error = "Answer this question."
		return "", false
	}
	return strings.Join(picked, ", "), true
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

func contains(vs []string, s string) bool {
	for _, v := range vs {
		if v == s {
			return true
		}
	}
	return false
}
