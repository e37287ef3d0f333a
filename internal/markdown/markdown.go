// Package markdown turns the markdown agents send (plans, messages) into HTML that is
// safe to put in a page.
//
// Agent text is untrusted: a plan may carry raw HTML, javascript: links or event
// handler attributes, and it may try to hide part of itself from the person approving
// it. So the renderer shows everything the agent wrote: raw HTML (an HTML comment, a
// <details>, a <span style=display:none>) is shown as literal text instead of being
// dropped or obeyed, link reference definitions ("[//]: # (hidden)", markdown's
// comment idiom) stay visible paragraphs, and images are shown as their text and
// address. The result is then run through a bluemonday allow-list, so only inert
// formatting survives even if the renderer ever let something through.
package markdown

import (
	"bytes"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
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
		md: goldmark.New(
			// The default parser minus the link-reference-definition transformer: a
			// definition renders as nothing, which makes it a hiding place.
			goldmark.WithParser(parser.NewParser(
				parser.WithBlockParsers(parser.DefaultBlockParsers()...),
				parser.WithInlineParsers(parser.DefaultInlineParsers()...),
			)),
			goldmark.WithExtensions(extension.GFM),
			// Below the HTML renderer's priority (1000), so these take over its kinds.
			goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(visibleRenderer{}, 100))),
		),
		policy: p,
	}
}

// visibleRenderer renders what would otherwise be invisible — raw HTML and images —
// as escaped, visible text.
type visibleRenderer struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (visibleRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindImage, renderImage)
}

// renderHTMLBlock shows a block of raw HTML (or an HTML comment) as preformatted text.
func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if entering {
		_, _ = w.WriteString(`<pre><code class="raw-html">`)
		for i := range n.Lines().Len() {
			seg := n.Lines().At(i)
			_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
		}
		return ast.WalkContinue, nil
	}
	if n.HasClosure() {
		_, _ = w.Write(util.EscapeHTML(n.ClosureLine.Value(source)))
	}
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkContinue, nil
}

// renderRawHTML shows an inline HTML tag or comment as code text.
func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	_, _ = w.WriteString(`<code class="raw-html">`)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	_, _ = w.WriteString("</code>")
	return ast.WalkSkipChildren, nil
}

// renderImage shows an image as its alt text and address: an image shows nothing of
// its alt text, and the approval page loads nothing from elsewhere.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	var alt bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			alt.Write(t.Value(source))
		}
		return ast.WalkContinue, nil
	})
	_, _ = w.WriteString(`<code class="raw-html">`)
	_, _ = w.Write(util.EscapeHTML([]byte("[image: " + alt.String() + " <" + string(n.Destination) + ">]")))
	_, _ = w.WriteString("</code>")
	return ast.WalkSkipChildren, nil
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
