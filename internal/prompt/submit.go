package prompt

import (
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Submit binds a posted form onto the prompt — so a re-render shows what the person
// entered, with an error beside each field that needs one — and returns the verdict
// when the submission is valid (its content values limited to what an
// ElicitationResult allows: string, json.Number, bool, []string). Nothing is decided here; an invalid submission must
// leave the prompt pending.
func (p *Prompt) Submit(form url.Values) (models.Verdict, bool) {
	action := form.Get(FieldAction)
	fb := strings.TrimSpace(form.Get(FieldFeedback))
	if p.AllowsFeedback() {
		p.Feedback = fb
	}
	switch action {
	case models.ActionDecline, models.ActionCancel:
		d := models.Verdict{Action: action}
		if fb != "" && p.AllowsFeedback() {
			if len(fb) > MaxFeedback {
				p.FormError = "Keep the reason under 4,000 characters."
				return models.Verdict{}, false
			}
			d.Content = map[string]any{"feedback": fb}
		}
		return d, true
	case ActionAcceptRemember:
		return p.submitRemember(form)
	case models.ActionAccept:
	default:
		p.FormError = "Choose approve or reject."
		return models.Verdict{}, false
	}
	switch p.Kind {
	case KindQuestion:
		return p.submitAnswers(form)
	case KindForm:
		return p.submitForm(form)
	}
	d := models.Verdict{Action: models.ActionAccept}
	if p.approvalFlag != "" {
		d.Content = map[string]any{p.approvalFlag: true}
	}
	return d, true
}

// submitAnswers keys each answer by the question's text, as Claude Code reads them.
func (p *Prompt) submitAnswers(form url.Values) (models.Verdict, bool) {
	content := make(map[string]any, len(p.Questions))
	ok := true
	for i := range p.Questions {
		q := &p.Questions[i]
		ans, good := q.answer(form)
		if !good {
			ok = false
			continue
		}
		content[q.Key] = ans
	}
	if !ok {
		p.FormError = "Answer every question, or reject."
		return models.Verdict{}, false
	}
	return models.Verdict{Action: models.ActionAccept, Content: content}, true
}

// submitForm builds the content from the fields and validates it against the schema.
func (p *Prompt) submitForm(form url.Values) (models.Verdict, bool) {
	content := map[string]any{}
	ok := true
	for i := range p.Fields {
		f := &p.Fields[i]
		val, present, good := f.bind(form)
		if !good {
			ok = false
			continue
		}
		if present {
			content[f.Name] = val
		}
	}
	if ok {
		for name, msg := range validate(p.schema, content) {
			ok = false
			if f := p.field(name); f != nil {
				if f.Error == "" {
					f.Error = msg
				}
			} else if p.FormError == "" {
				p.FormError = msg
			}
		}
	}
	if !ok {
		if p.FormError == "" {
			p.FormError = "Some answers need fixing; see the fields marked below."
		}
		return models.Verdict{}, false
	}
	return models.Verdict{Action: models.ActionAccept, Content: content}, true
}

func (p *Prompt) field(name string) *Field {
	for i := range p.Fields {
		if p.Fields[i].Name == name {
			return &p.Fields[i]
		}
	}
	return nil
}
