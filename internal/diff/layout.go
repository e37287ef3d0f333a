package diff

import "strconv"

// Block is a run of lines shown together. A Folded block is collapsed behind a
// summary (a long unchanged run, or the rest of a long file) that a person can open;
// a block with Hidden > 0 and no lines stands for unchanged lines left out entirely
// (list cards, which show changes and a little context only).
type Block struct {
	// Header is a fragment header (a unified diff's "@@ … @@", one edit of several)
	// shown above the lines.
	Header string
	Lines  []Line
	Folded bool
	Hidden int
	// Changed counts the added and removed lines of a folded block, so its summary can
	// say that it holds changes.
	Changed int
}

// Summary says what a folded or hidden block holds, for its <summary> line.
func (b Block) Summary() string {
	n := len(b.Lines) + b.Hidden
	noun := "lines"
	if n == 1 {
		noun = "line"
	}
	if b.Changed > 0 {
		return strconv.Itoa(n) + " more " + noun + " (" + strconv.Itoa(b.Changed) + " changed)"
	}
	return strconv.Itoa(n) + " unchanged " + noun
}

// Options bound a layout.
type Options struct {
	// Context is how many unchanged lines are shown around a change.
	Context int
	// MinFold is the shortest unchanged run worth folding (shorter runs are shown).
	MinFold int
	// FoldAfter folds every line after this many unfolded lines into one block (0: never).
	FoldAfter int
	// Elide leaves long unchanged runs out (Hidden) instead of folding them, and stops
	// at MaxLines instead of folding the rest.
	Elide bool
	// MaxLines is the most lines laid out (0: no limit); past it the layout is cut.
	MaxLines int
	// Clip shortens one line's text for display and reports whether it cut.
	Clip func(string) (string, bool)
	// Cost is what one line takes of the budget.
	Cost func(Line) int
}

// Budget is what a set of layouts may still spend, shared across the files of one
// request so that many files cannot add up to a huge page.
type Budget struct{ Left int }

// Layout lays out lines in blocks under o, spending from b. It reports whether it
// left out a line that adds, removes or shows content (elided unchanged runs do not
// count: they hide nothing that changes).
func Layout(lines []Line, o Options, b *Budget) (blocks []Block, cut bool) {
	near := nearChange(lines, o.Context)
	shown, open := 0, 0 // lines laid out; of them, lines not folded
	cur := Block{}
	flush := func() {
		if len(cur.Lines) > 0 || cur.Header != "" || cur.Hidden > 0 {
			blocks = append(blocks, cur)
		}
		cur = Block{}
	}
	emit := func(l Line) bool {
		if o.MaxLines > 0 && shown >= o.MaxLines {
			return false
		}
		if o.Clip != nil {
			var c bool
			l.Text, c = o.Clip(l.Text)
			cut = cut || c
		}
		cost := 1
		if o.Cost != nil {
			cost = o.Cost(l)
		}
		if cost > b.Left {
			b.Left = 0
			return false
		}
		b.Left -= cost
		shown++
		if !cur.Folded {
			open++
		}
		cur.Lines = append(cur.Lines, l)
		return true
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if o.FoldAfter > 0 && open >= o.FoldAfter && !o.Elide {
			// The rest of a long diff, folded as one block.
			flush()
			cur.Folded = true
			for _, r := range lines[i:] {
				if r.Op == Hunk {
					continue
				}
				if !emit(r) {
					cut = true
					break
				}
				if r.Op != Same {
					cur.Changed++
				}
			}
			flush()
			return blocks, cut
		}
		if l.Op == Hunk {
			flush()
			cur.Header = l.Text
			if o.Clip != nil {
				cur.Header, _ = o.Clip(l.Text)
			}
			continue
		}
		if l.Op == Same && !near[i] {
			j := i
			for j < len(lines) && lines[j].Op == Same && !near[j] {
				j++
			}
			if j-i >= o.MinFold {
				flush()
				if o.Elide {
					blocks = append(blocks, Block{Hidden: j - i})
				} else {
					cur.Folded = true
					for _, r := range lines[i:j] {
						if !emit(r) {
							flush()
							return blocks, true
						}
					}
					flush()
				}
				i = j - 1
				continue
			}
		}
		if !emit(l) {
			flush()
			return blocks, true
		}
	}
	flush()
	return blocks, cut
}

// nearChange marks the lines within context lines of an added or removed line. A diff
// with no change at all (a bare fragment) keeps every line.
func nearChange(lines []Line, context int) []bool {
	near := make([]bool, len(lines))
	changed := false
	last := -1 << 30
	for i, l := range lines {
		if l.Op == Add || l.Op == Del {
			last, changed = i, true
		}
		if i-last <= context {
			near[i] = true
		}
	}
	last = 1 << 30
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Op == Add || lines[i].Op == Del {
			last = i
		}
		if last-i <= context {
			near[i] = true
		}
	}
	if !changed {
		for i := range near {
			near[i] = true
		}
	}
	return near
}
