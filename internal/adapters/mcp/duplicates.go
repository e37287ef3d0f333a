package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// DuplicateKey finds the first object key that appears twice in the same JSON object
// anywhere in raw, and returns its path ($.a.b[2].c). JSON readers disagree on which
// of two equal keys wins (Go and most others take the last, some the first), so an
// argument object with a repeated key could show the person and the policy one value
// while the tool reads another. Callers refuse such input. It runs in linear time and
// reports found=false for input that is not valid JSON (parsing rejects that anyway).
func DuplicateKey(raw []byte) (path string, found bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]struct{}
		key    string // the current key (objects) awaiting its value
		index  int    // the next element's index (arrays)
		atKey  bool   // an object expects a key next
	}
	var stack []*frame
	render := func() string {
		var b strings.Builder
		b.WriteString("$")
		for _, f := range stack {
			if f.object {
				b.WriteString("." + f.key)
			} else {
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		return b.String()
	}
	// valueDone advances the parent after a complete value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.atKey = true
		} else {
			top.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if len(stack) > 0 {
			if top := stack[len(stack)-1]; top.object && top.atKey {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:len(stack)-1]
					valueDone()
					if len(stack) == 0 {
						return "", false
					}
					continue
				}
				k, _ := tok.(string)
				if _, dup := top.keys[k]; dup {
					top.key = k
					return render(), true
				}
				top.keys[k] = struct{}{}
				top.key, top.atKey = k, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]struct{}{}, atKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		valueDone()
		if len(stack) == 0 {
			return "", false
		}
	}
}
