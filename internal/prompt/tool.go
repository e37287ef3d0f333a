package prompt

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/diff"
)

// ToolKind is how a tool call is shown in its own terms.
type ToolKind string

// Tool kinds.
const (
	// ToolCommand is a shell command (Claude's Bash, a Codex command approval), with its
	// description and working directory, and the diffs of a patch it applies.
	ToolCommand ToolKind = "command"
	// ToolFiles is a file change (Edit, MultiEdit, Write, NotebookEdit, apply_patch,
	// Codex file changes) shown as diffs.
	ToolFiles ToolKind = "files"
	// ToolFetch is a web request (WebFetch): the URL, its host as the browser resolves
	// it, and what the agent means to do with the page.
	ToolFetch ToolKind = "fetch"
	// ToolQuestions is AskUserQuestion (or Codex requestUserInput): the questions.
	ToolQuestions ToolKind = "questions"
	// ToolPlan is ExitPlanMode: the plan.
	ToolPlan ToolKind = "plan"
	// ToolFields is any other tool whose input is flat: one labelled value each.
	ToolFields ToolKind = "fields"
	// ToolJSON is the fallback for nested input: the bounded JSON view.
	ToolJSON ToolKind = "json"
)

// Tool is one tool call in its own terms. Only the fields of its Kind are set; Fields
// holds whatever else the input carries (unknown flags are shown, never dropped).
type Tool struct {
	Kind ToolKind
	Name string

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

// Tool names Claude Code sends.
const (
	toolBash         = "Bash"
	toolEdit         = "Edit"
	toolMultiEdit    = "MultiEdit"
	toolWrite        = "Write"
	toolNotebookEdit = "NotebookEdit"
	toolWebFetch     = "WebFetch"
)

// previousContentKeys are where a Write's tool input may carry the file's content
// before the write; Claude Code itself does not send it, other callers may.
var previousContentKeys = []string{"original_content", "originalFile", "previous_content", "old_content"}

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
	name := str(params["tool_name"])
	input, hasInput := params["tool_input"].(map[string]any)
	t := &Tool{Name: name}
	switch {
	case len(questionList(params)) > 0:
		t.Kind = ToolQuestions
		t.Questions = b.questions(questionList(params))
	case params["exit_plan_mode"] != nil:
		t.Kind = ToolPlan
		plan := planText(params["exit_plan_mode"])
		if plan == "" {
			t.Kind = ToolJSON
			t.JSON = b.json(params["exit_plan_mode"])
			break
		}
		t.Plan = b.text(plan)
	case params["fileChanges"] != nil:
		files := b.codexChanges(mapOf(params["fileChanges"]))
		if files == nil {
			return nil
		}
		t.Kind, t.Files = ToolFiles, files
		b.field(&t.Fields, "Reason", str(params["reason"]))
	case hasInput:
		b.claudeTool(t, name, input, str(params["cwd"]))
	case str(params["command"]) != "":
		t.Kind = ToolCommand
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

// claudeTool fills t for a Claude-style tool_name + tool_input.
func (b *toolBuilder) claudeTool(t *Tool, name string, input map[string]any, cwd string) {
	used := map[string]bool{}
	take := func(k string) string { used[k] = true; return str(input[k]) }
	path := func() string {
		for _, k := range []string{"file_path", "notebook_path", "path"} {
			if v := str(input[k]); v != "" {
				used[k] = true
				return v
			}
		}
		return ""
	}
	switch {
	case name == toolEdit || (name == toolMultiEdit && input["edits"] == nil && input["old_string"] != nil):
		t.Kind = ToolFiles
		p := path()
		all, _ := input["replace_all"].(bool)
		used["replace_all"] = true
		change := "edit"
		if all {
			change = "edit (every occurrence)"
		}
		lines, cut := diff.Compute(take("old_string"), take("new_string"))
		t.Files = []FileDiff{b.file(diff.File{Path: p, Change: change, Lines: lines, Relative: true, Cut: cut})}
	case name == toolMultiEdit:
		t.Kind = ToolFiles
		p := path()
		used["edits"] = true
		edits := listOf(input["edits"])
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
		t.Files = []FileDiff{b.file(diff.File{Path: p, Change: "edit", Lines: lines, Relative: true, Cut: cut})}
	case name == toolWrite:
		t.Kind = ToolFiles
		p := path()
		content := take("content")
		var f diff.File
		note := ""
		if prev, ok := previous(input, used); ok {
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
		t.Files = []FileDiff{fd}
	case name == toolNotebookEdit:
		t.Kind = ToolFiles
		p := path()
		mode := take("edit_mode")
		if mode == "" {
			mode = "replace"
		}
		change := "notebook cell " + mode
		if id := take("cell_id"); id != "" {
			change += " (" + id + ")"
		}
		lines, cut := diff.Added(take("new_source"))
		if mode == "delete" {
			lines = nil
		}
		t.Files = []FileDiff{b.file(diff.File{Path: p, Change: change, Lines: lines, Cut: cut})}
	case isApplyPatch(name):
		t.Kind = ToolFiles
		for _, k := range []string{"input", "patch", "command"} {
			if s := str(input[k]); s != "" {
				used[k] = true
				t.Files = b.patch(s)
				break
			}
		}
	case name == toolWebFetch && str(input["url"]) != "":
		t.Kind = ToolFetch
		var u Prompt
		u.describeURL(take("url"))
		t.URL, t.URLHost, t.URLHostUnicode, t.URLSafe = b.line(u.URL), b.line(u.URLHost), b.line(u.URLHostUnicode), u.URLSafe
	case str(input["command"]) != "" || name == toolBash:
		t.Kind = ToolCommand
		cmd := take("command")
		t.Command = b.text(cmd)
		t.Description = b.line(take("description"))
		t.Cwd = b.line(cwd)
		if diff.IsPatch(cmd) {
			t.Files = b.patch(cmd)
		}
	case flat(input):
		t.Kind = ToolFields
		if !b.lim.card {
			// The page's details already show these two.
			used["description"] = true
			path()
		}
	default:
		t.Kind = ToolJSON
		t.JSON = b.json(input)
		return
	}
	// Whatever else the input holds is shown too, so nothing can ride along unseen.
	keys := make([]string, 0, len(input))
	for k := range input {
		if !used[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.value(&t.Fields, k, input[k])
	}
}

func isApplyPatch(name string) bool {
	n := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	return n == "applypatch"
}

// previous finds a Write's previous file content in its input.
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
	case t.Kind == ToolFiles:
		return t, map[string]bool{"tool-input": true, "file": true, "files": true}
	case t.Kind == ToolFetch || t.Kind == ToolFields:
		return t, map[string]bool{"tool-input": true}
	case t.Kind == ToolCommand && len(t.Files) > 0:
		// The details show the command; the view adds the patch's diffs.
		return t, nil
	}
	return nil, nil
}
