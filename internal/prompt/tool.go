package prompt

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/diff"
	"github.com/gatehouse-dev/gatehouse/models"
)

// ToolLayout is how a tool call is shown in its own terms (chosen from its kind,
// models.ToolKind, and the shape of its input).
type ToolLayout string

// Tool layouts.
const (
	// ToolCommand is a shell command (models.KindShell, a Codex command approval),
	// with its description and working directory, and the diffs of a patch it applies.
	ToolCommand ToolLayout = "command"
	// ToolFiles is a file change (models.KindEdit, models.KindWrite, Codex file
	// changes) shown as diffs.
	ToolFiles ToolLayout = "files"
	// ToolFetch is a web request (models.KindFetch): the URL, its host as the browser
	// resolves it, and what the agent means to do with the page.
	ToolFetch ToolLayout = "fetch"
	// ToolQuestions is the agent's questions to the person (Claude's AskUserQuestion,
	// Codex requestUserInput).
	ToolQuestions ToolLayout = "questions"
	// ToolPlan is a plan the agent asks to carry out (Claude's ExitPlanMode).
	ToolPlan ToolLayout = "plan"
	// ToolFields is any other tool whose input is flat: one labelled value each.
	ToolFields ToolLayout = "fields"
	// ToolJSON is the fallback for nested input: the bounded JSON view.
	ToolJSON ToolLayout = "json"
)

// Tool is one tool call in its own terms. Only the fields of its Layout are set;
// Fields holds whatever else the input carries (unknown flags are shown, never
// dropped).
type Tool struct {
	Layout ToolLayout
	Name   string

	Command     string
	Description string
	Cwd         string

	Files []FileDiff

	URL            string
	URLHost        string
	URLHostUnicode string
	URLSafe        bool

	Questions []ToolQuestion
	Plan      string
	JSON      string
	Fields    []ToolField

	// Cut reports that this view shows less of the tool input than the agent sent
	// (unchanged lines left out of a card's diff do not count).
	Cut bool
}

// ToolField is one labelled input value; Block values are multi-line.
type ToolField struct {
	Label string
	Value string
	Block bool
}

// ToolQuestion is one question of AskUserQuestion as a card lists it.
type ToolQuestion struct {
	Header  string
	Text    string
	Options []string
	Multi   bool
}

// FileDiff is one file's change, laid out for display.
type FileDiff struct {
	Path   string
	MoveTo string
	// Change names the change: "edit", "edit (every occurrence)", "write", "add",
	// "delete", "update", "notebook cell …".
	Change         string
	Added, Removed int
	// Relative: line numbers count within each fragment, not from the top of the file.
	Relative bool
	Blocks   []diff.Block
	// Note says what the request does not show (no previous content, no diff at all).
	Note string
}

// Bounds of a list card's tool view: it must stay a few lines, so a long input is cut
// (and the card then offers "Open to review" instead of Approve).
const (
	// CardLines is the most diff lines a card shows.
	CardLines = 8
	// CardBudget is the most bytes a card's tool view shows, counted as escaped HTML
	// (diff lines count their markup too).
	CardBudget = 1536
	// MaxDiff is the most bytes the diffs of one request take on a page, counted as
	// escaped HTML with each line's markup.
	MaxDiff = 4 * MaxRendered
	// FoldAfter is how many diff lines a page shows before folding the rest.
	FoldAfter = 400
	// diffLineMarkup approximates the markup of one rendered diff line.
	diffLineMarkup = 96
)

// toolLimits bound one rendering of a tool view (the page's or a card's).
type toolLimits struct {
	card   bool
	text   int // longest free text, escaped bytes
	budget int // bytes for the non-diff parts
	diff   diff.Options
	diffs  int // bytes for all diffs
}

func pageLimits() toolLimits {
	return toolLimits{text: MaxText, budget: MaxRendered, diffs: MaxDiff, diff: diff.Options{
		Context: 3, MinFold: 8, FoldAfter: FoldAfter,
		Clip: func(s string) (string, bool) { return Cut(s, MaxString) },
		Cost: lineCost,
	}}
}

func cardLimits() toolLimits {
	return toolLimits{card: true, text: PreviewLimit, budget: CardBudget, diffs: CardBudget, diff: diff.Options{
		Context: 1, MinFold: 3, Elide: true, MaxLines: CardLines,
		Clip: func(s string) (string, bool) { return Cut(s, PreviewLimit) },
		Cost: lineCost,
	}}
}

func lineCost(l diff.Line) int { return htmlLen(l.Text) + diffLineMarkup }

// previousContentKeys are where a file write's tool input may carry the file's
// content before the write; Claude Code itself does not send it, other callers may.
var previousContentKeys = []string{"original_content", "originalFile", "previous_content", "old_content"}

// patchKeys are where an edit's tool input may carry a patch (an apply_patch envelope
// or a unified diff) instead of old and new text.
var patchKeys = []string{"input", "patch", "command"}

// DescribeTool shows a prompt's tool call in its own terms, within a page's bounds
// (card false) or a list card's (card true). It returns nil for prompts that are not
// a tool call (MCP forms, URL consent, policy asks without input).
func DescribeTool(params map[string]any, card bool) *Tool {
	lim := pageLimits()
	if card {
		lim = cardLimits()
	}
	return describeTool(params, lim)
}

func describeTool(params map[string]any, lim toolLimits) *Tool {
	b := &toolBuilder{lim: lim, left: lim.budget, diffs: diff.Budget{Left: lim.diffs}}
	input, hasInput := params["tool_input"].(map[string]any)
	t := &Tool{Name: str(params["tool_name"])}
	switch {
	case len(questionList(params)) > 0:
		t.Layout = ToolQuestions
		t.Questions = b.questions(questionList(params))
	case params["exit_plan_mode"] != nil:
		t.Layout = ToolPlan
		plan := planText(params["exit_plan_mode"])
		if plan == "" {
			t.Layout = ToolJSON
			t.JSON = b.json(params["exit_plan_mode"])
			break
		}
		t.Plan = b.text(plan)
	case params["fileChanges"] != nil:
		files := b.codexChanges(mapOf(params["fileChanges"]))
		if files == nil {
			return nil
		}
		t.Layout, t.Files = ToolFiles, files
		b.field(&t.Fields, "Reason", str(params["reason"]))
	case hasInput:
		b.inputTool(t, ToolKindOf(params), input, str(params["cwd"]))
	case str(params["command"]) != "":
		// A command approval whose params hold the command itself (Codex app-server).
		t.Layout = ToolCommand
		t.Command = b.text(str(params["command"]))
		t.Cwd = b.line(str(params["cwd"]))
		b.field(&t.Fields, "Reason", str(params["reason"]))
		if nc := mapOf(params["networkApprovalContext"]); nc != nil {
			b.field(&t.Fields, "Network access to", strings.TrimSpace(str(nc["protocol"])+" "+str(nc["host"])))
		}
		if diff.IsPatch(str(params["command"])) {
			t.Files = b.patch(str(params["command"]))
		}
	default:
		return nil
	}
	t.Cut = b.cut
	return t
}

// toolInput reads a tool input, remembering which keys a view shows in its own terms
// so that every other key is listed too.
type toolInput struct {
	m    map[string]any
	used map[string]bool
}

func (in toolInput) take(k string) string { in.used[k] = true; return str(in.m[k]) }

// has reports whether the input carries k at all.
func (in toolInput) has(k string) bool { _, ok := in.m[k]; return ok }

// path is the file the input names.
func (in toolInput) path() string {
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if v := str(in.m[k]); v != "" {
			in.used[k] = true
			return v
		}
	}
	return ""
}

// inputTool fills t for a tool_input laid out by the tool's kind: a command, a file
// edit or write as diffs, a fetch's URL; any other input as labelled fields or JSON.
func (b *toolBuilder) inputTool(t *Tool, kind models.ToolKind, input map[string]any, cwd string) {
	in := toolInput{m: input, used: map[string]bool{}}
	switch {
	case kind == models.KindEdit:
		t.Layout = ToolFiles
		t.Files = b.edit(in)
	case kind == models.KindWrite:
		t.Layout = ToolFiles
		t.Files = []FileDiff{b.write(in)}
	case kind == models.KindFetch && str(input["url"]) != "":
		t.Layout = ToolFetch
		var u Prompt
		u.describeURL(in.take("url"))
		t.URL, t.URLHost, t.URLHostUnicode, t.URLSafe = b.line(u.URL), b.line(u.URLHost), b.line(u.URLHostUnicode), u.URLSafe
	case kind == models.KindShell || str(input["command"]) != "":
		t.Layout = ToolCommand
		cmd := in.take("command")
		t.Command = b.text(cmd)
		t.Description = b.line(in.take("description"))
		t.Cwd = b.line(cwd)
		if diff.IsPatch(cmd) {
			t.Files = b.patch(cmd)
		}
	case flat(input):
		t.Layout = ToolFields
		if !b.lim.card {
			// The page's details already show these two.
			in.used["description"] = true
			in.path()
		}
	default:
		t.Layout = ToolJSON
		t.JSON = b.json(input)
		return
	}
	// Whatever else the input holds is shown too, so nothing can ride along unseen.
	keys := make([]string, 0, len(input))
	for k := range input {
		if !in.used[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.value(&t.Fields, k, input[k])
	}
}

// edit lays out a file edit by the shape of its input: a list of edits (each old and
// new text), one old and new text, a notebook cell, or a patch. An input of none of
// these shapes shows no diff: its fields say what it holds.
func (b *toolBuilder) edit(in toolInput) []FileDiff {
	switch {
	case in.m["edits"] != nil:
		p := in.path()
		in.used["edits"] = true
		edits := listOf(in.m["edits"])
		var lines []diff.Line
		cut := false
		for i, e := range edits {
			m := mapOf(e)
			header := "Edit " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(edits))
			if all, _ := m["replace_all"].(bool); all {
				header += " (every occurrence)"
			}
			l, c := diff.Compute(str(m["old_string"]), str(m["new_string"]))
			cut = cut || c
			lines = append(lines, diff.Line{Op: diff.Hunk, Text: header})
			lines = append(lines, l...)
		}
		return []FileDiff{b.file(diff.File{Path: p, Change: "edit", Lines: lines, Relative: true, Cut: cut})}
	case in.has("old_string") || in.has("new_string"):
		p := in.path()
		all, _ := in.m["replace_all"].(bool)
		in.used["replace_all"] = true
		change := "edit"
		if all {
			change = "edit (every occurrence)"
		}
		lines, cut := diff.Compute(in.take("old_string"), in.take("new_string"))
		return []FileDiff{b.file(diff.File{Path: p, Change: change, Lines: lines, Relative: true, Cut: cut})}
	case in.has("notebook_path") || in.has("new_source"):
		p := in.path()
		mode := in.take("edit_mode")
		if mode == "" {
			mode = "replace"
		}
		change := "notebook cell " + mode
		if id := in.take("cell_id"); id != "" {
			change += " (" + id + ")"
		}
		lines, cut := diff.Added(in.take("new_source"))
		if mode == "delete" {
			lines = nil
		}
		return []FileDiff{b.file(diff.File{Path: p, Change: change, Lines: lines, Cut: cut})}
	}
	for _, k := range patchKeys {
		if s := str(in.m[k]); s != "" {
			in.used[k] = true
			return b.patch(s)
		}
	}
	return nil
}

// write lays out a whole-file write: a diff against the previous content when the
// input carries it, else every line as added.
func (b *toolBuilder) write(in toolInput) FileDiff {
	p := in.path()
	content := in.take("content")
	var f diff.File
	note := ""
	if prev, ok := previous(in.m, in.used); ok {
		f.Lines, f.Cut = diff.Compute(prev, content)
		f.Change = "write"
	} else {
		f.Lines, f.Cut = diff.Added(content)
		f.Change = "write (whole file)"
		note = "The request does not hold the file's current content: this is everything the file will contain."
	}
	f.Path = p
	fd := b.file(f)
	fd.Note = note
	return fd
}

// previous finds a file write's previous file content in its input.
func previous(input map[string]any, used map[string]bool) (string, bool) {
	for _, k := range previousContentKeys {
		if s, ok := input[k].(string); ok {
			used[k] = true
			return s, true
		}
	}
	return "", false
}

// flat reports whether every value of an input is a string, number, boolean or null.
func flat(input map[string]any) bool {
	for _, v := range input {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// toolBuilder spends one view's bounds and remembers whether anything was cut.
type toolBuilder struct {
	lim   toolLimits
	left  int
	diffs diff.Budget
	cut   bool
}

// text is free text (a command, a plan) within the view's bounds.
func (b *toolBuilder) text(s string) string {
	return b.clip(s, b.lim.text)
}

// line is a one-line value (a path, a URL) within the view's bounds.
func (b *toolBuilder) line(s string) string {
	return b.clip(s, min(b.lim.text, MaxMessage))
}

func (b *toolBuilder) clip(s string, limit int) string {
	if s == "" {
		return ""
	}
	limit = min(limit, b.left)
	if limit <= 0 {
		b.cut = true
		return ""
	}
	v, c := Cut(s, limit)
	b.cut = b.cut || c
	b.left -= htmlLen(v)
	return v
}

func (b *toolBuilder) json(v any) string {
	if b.left <= 0 {
		b.cut = true
		return ""
	}
	js, c := BoundedJSON(v, b.left)
	b.cut = b.cut || c
	b.left -= htmlLen(js)
	return js
}

// field adds a labelled string value (skipping empty ones).
func (b *toolBuilder) field(fields *[]ToolField, label, v string) {
	if strings.TrimSpace(v) == "" {
		return
	}
	block := strings.Contains(v, "\n")
	if block {
		v = b.text(v)
	} else {
		v = b.line(v)
	}
	*fields = append(*fields, ToolField{Label: label, Value: v, Block: block})
}

// value adds one input value: strings as they are, other scalars as JSON, nested
// values as bounded JSON.
func (b *toolBuilder) value(fields *[]ToolField, label string, v any) {
	switch t := v.(type) {
	case string:
		if t == "" {
			*fields = append(*fields, ToolField{Label: label, Value: `""`})
			return
		}
		b.field(fields, label, t)
	case map[string]any, []any:
		js := b.json(t)
		*fields = append(*fields, ToolField{Label: label, Value: js, Block: strings.Contains(js, "\n")})
	default:
		*fields = append(*fields, ToolField{Label: label, Value: b.line(compactJSON(t))})
	}
}

func (b *toolBuilder) questions(list []any) []ToolQuestion {
	var out []ToolQuestion
	for _, q := range list {
		m := mapOf(q)
		tq := ToolQuestion{Header: b.line(str(m["header"])), Text: b.text(str(m["question"]))}
		tq.Multi, _ = m["multiSelect"].(bool)
		for _, o := range listOf(m["options"]) {
			if l := str(mapOf(o)["label"]); l != "" {
				tq.Options = append(tq.Options, b.line(l))
			}
		}
		out = append(out, tq)
	}
	return out
}

// file lays out one file's diff.
func (b *toolBuilder) file(f diff.File) FileDiff {
	fd := FileDiff{Path: b.line(f.Path), MoveTo: b.line(f.MoveTo), Change: f.Change, Relative: f.Relative}
	fd.Added, fd.Removed = diff.Stat(f.Lines)
	var cut bool
	fd.Blocks, cut = diff.Layout(f.Lines, b.lim.diff, &b.diffs)
	b.cut = b.cut || cut || f.Cut
	if len(f.Lines) == 0 && fd.Note == "" {
		fd.Note = "No lines change."
	}
	return fd
}

// patch lays out an apply_patch envelope (or, failing that, a unified diff).
func (b *toolBuilder) patch(text string) []FileDiff {
	files, ok := diff.Patch(text)
	if !ok {
		files, ok = diff.Unified(text)
	}
	if !ok {
		files = []diff.File{{Change: "patch", Lines: plainLines(text)}}
	}
	out := make([]FileDiff, 0, len(files))
	for _, f := range files {
		fd := b.file(f)
		if f.Change == "delete" && len(f.Lines) == 0 {
			fd.Note = "The file is deleted."
		}
		out = append(out, fd)
	}
	return out
}

// codexChanges lays out Codex's legacy fileChanges ({path: {type, content |
// unified_diff, move_path}}, or the externally tagged {path: {"add": {content}}}). It
// returns nil when no change carries content, so the page lists the paths instead.
func (b *toolBuilder) codexChanges(fc map[string]any) []FileDiff {
	paths := make([]string, 0, len(fc))
	for k := range fc {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	var out []FileDiff
	shown := false
	for _, p := range paths {
		m := mapOf(fc[p])
		kind := str(m["type"])
		if kind == "" {
			for _, k := range []string{"add", "delete", "update"} {
				if sub, ok := m[k].(map[string]any); ok {
					kind, m = k, sub
					break
				}
			}
		}
		f := diff.File{Path: p, Change: kind, MoveTo: str(m["move_path"])}
		note := ""
		switch content, hasContent := m["content"].(string); {
		case kind == "add" && hasContent:
			f.Lines, f.Cut = diff.Added(content)
			shown = true
		case kind == "delete" && hasContent:
			f.Lines, f.Cut = diff.Removed(content)
			shown = true
		case kind == "delete":
			note = "The file is deleted."
		case str(m["unified_diff"]) != "":
			shown = true
			if files, ok := diff.Unified(str(m["unified_diff"])); ok {
				for _, uf := range files {
					f.Lines = append(f.Lines, uf.Lines...)
					f.Cut = f.Cut || uf.Cut
				}
			} else {
				f.Lines = plainLines(str(m["unified_diff"]))
			}
		default:
			note = "The request does not hold this change's content."
		}
		fd := b.file(f)
		if note != "" {
			fd.Note = note
		}
		out = append(out, fd)
	}
	if !shown {
		return nil
	}
	return out
}

// plainLines shows text that is not a diff as unnumbered lines.
func plainLines(text string) []diff.Line {
	lines := diff.SplitLines(text)
	out := make([]diff.Line, len(lines))
	for i, l := range lines {
		out[i] = diff.Line{Op: diff.Same, Text: l}
	}
	return out
}

func compactJSON(v any) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// pageTool is the page's tool view when it shows the call better than the details
// do (diffs, a URL, labelled fields), with the test ids of the details it replaces.
func pageTool(params map[string]any) (*Tool, map[string]bool) {
	t := DescribeTool(params, false)
	if t == nil {
		return nil, nil
	}
	switch {
	case t.Layout == ToolFiles:
		return t, map[string]bool{"tool-input": true, "file": true, "files": true}
	case t.Layout == ToolFetch || t.Layout == ToolFields:
		return t, map[string]bool{"tool-input": true}
	case t.Layout == ToolCommand && len(t.Files) > 0:
		// The details show the command; the view adds the patch's diffs.
		return t, nil
	}
	return nil, nil
}
