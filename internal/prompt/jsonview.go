package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// BoundedJSON pretty-prints a decoded JSON value for a page, within limits: nesting
// below MaxDepth is summarised ("{… 3 keys}"), strings longer than MaxString are cut,
// and output stops at max bytes (as escaped HTML). It reports whether anything was
// left out.
//
// It never visits what it will not print, so its cost is linear in what it prints,
// not in the input: a 10,000-deep nesting costs the same as an 8-deep one.
func BoundedJSON(v any, max int) (string, bool) {
	w := jsonWriter{max: max}
	w.value(v, 0)
	if w.full {
		w.buf.WriteString("\n… [output cut at " + strconv.Itoa(max>>10) + " KB; see the raw request]")
	}
	return w.buf.String(), w.cut || w.full
}

type jsonWriter struct {
	buf  strings.Builder
	used int // bytes written, counted as escaped HTML
	max  int
	cut  bool // something was summarised or shortened
	full bool // the byte budget ran out
}

func (w *jsonWriter) write(s string) {
	if w.full {
		return
	}
	cost := htmlLen(s)
	if w.used+cost > w.max {
		w.full = true
		return
	}
	w.used += cost
	w.buf.WriteString(s)
}

func (w *jsonWriter) newline(depth int) {
	w.write("\n" + strings.Repeat("  ", depth))
}

func (w *jsonWriter) value(v any, depth int) {
	if w.full {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			w.write("{}")
			return
		}
		if depth >= MaxDepth {
			w.cut = true
			w.write(fmt.Sprintf("{… %d %s}", len(t), plural(len(t), "key", "keys")))
			return
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.write("{")
		for i, k := range keys {
			if w.full {
				return
			}
			if i > 0 {
				w.write(",")
			}
			w.newline(depth + 1)
			w.str(k)
			w.write(": ")
			w.value(t[k], depth+1)
		}
		w.newline(depth)
		w.write("}")
	case []any:
		if len(t) == 0 {
			w.write("[]")
			return
		}
		if depth >= MaxDepth {
			w.cut = true
			w.write(fmt.Sprintf("[… %d %s]", len(t), plural(len(t), "item", "items")))
			return
		}
		w.write("[")
		for i, e := range t {
			if w.full {
				return
			}
			if i > 0 {
				w.write(",")
			}
			w.newline(depth + 1)
			w.value(e, depth+1)
		}
		w.newline(depth)
		w.write("]")
	case string:
		w.str(t)
	case float64:
		w.write(strconv.FormatFloat(t, 'g', -1, 64))
	case json.Number:
		w.write(t.String())
	case bool:
		w.write(strconv.FormatBool(t))
	case nil:
		w.write("null")
	default:
		w.str(fmt.Sprint(t))
	}
}

// str writes a JSON string, cut to MaxString bytes with a marker.
func (w *jsonWriter) str(s string) {
	s, cut := Cut(s, MaxString)
	w.cut = w.cut || cut
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // escaping for HTML is the template's job
	_ = enc.Encode(s)
	w.write(strings.TrimSuffix(b.String(), "\n"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rawIndentDepth is the deepest JSON RawText indents.
const rawIndentDepth = 32

// RawText makes a stored request readable as plain text: indented when it nests no
// deeper than rawIndentDepth (indentation then costs at most that many bytes a line),
// as stored otherwise. Either way it holds every byte of content the agent sent.
func RawText(raw []byte) []byte {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			if b == '\\' {
				escaped = true
			} else if b == '"' {
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	if deepest > rawIndentDepth {
		return raw
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return raw
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}
