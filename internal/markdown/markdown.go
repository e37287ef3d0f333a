// Package markdown turns the markdown agents send (plans, messages) into HTML that is
// safe to put in a page.
//
// Agent text is untrusted: a plan may carry raw HTML, javascript: links or event
// handler attributes. Rendering drops raw HTML (goldmark's default), and the result is
// then run through a bluemonday allow-list, so only inert formatting survives even if
// the renderer ever let something through.
package markdown

import (
	"bytes"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// Renderer renders and sanitizes markdown. It is safe for concurrent use.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// New builds a Renderer with GitHub-flavoured markdown (tables, task lists,
// strikethrough) and a user-generated-content sanitizing policy whose links never send
// a referrer and open outside the approval page.
func New() *Renderer {
	p := bluemonday.UGCPolicy()
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code")
	return &Renderer{
		md:     goldmark.New(goldmark.WithExtensions(extension.GFM)),
		policy: p,
	}
}

// HTML renders src as sanitized HTML. Input that fails to render comes back escaped as
// preformatted text, never raw.
func (r *Renderer) HTML(src string) string {
	var buf bytes.Buffer
	if err := r.md.Convert([]byte(src), &buf); err != nil {
		return "<pre>" + bluemonday.StrictPolicy().Sanitize(src) + "</pre>"
	}
	return r.policy.Sanitize(buf.String())
}

// Span is a run of text that is bold or not.
type Span struct {
	Text string
	Bold bool
}

// InlineBold splits a one-line message on markdown's ** markers ("Claude wants to call
// **Bash**") so a page can render the bold parts with <strong> while every character
// stays escaped text. An unpaired marker is kept as literal text.
func InlineBold(s string) []Span {
	parts := strings.Split(s, "**")
	if len(parts)%2 == 0 {
		// Odd number of markers: the last one is unpaired; glue it back on.
		last := len(parts) - 1
		parts[last-1] = parts[last-1] + "**" + parts[last]
		parts = parts[:last]
	}
	out := make([]Span, 0, len(parts))
	for i, p := range parts {
		if p == "" {
			continue
		}
		out = append(out, Span{Text: p, Bold: i%2 == 1})
	}
	return out
}
