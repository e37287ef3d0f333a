package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// member is one key of a JSON object with its value as written, so a merge keeps the
// person's keys, their order and their values.
type member struct {
	key string
	val json.RawMessage
}

// members reads a JSON object's keys in order; an empty document is an empty object.
func members(data []byte) ([]member, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: t.(string), val: v})
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err == nil {
		return nil, errors.New("text after the JSON object")
	}
	return out, nil
}

func find(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

// object writes members back as one JSON object.
func object(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// mergeJSON puts the snippet's hooks into old: for each hook event the snippet names,
// the entries an earlier install left are replaced where they stood (or the snippet's
// are appended), and every other key and entry is kept.
func mergeJSON(old, snippet []byte, agent string) ([]byte, error) {
	top, err := members(old)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	snip, err := members(snippet)
	if err != nil {
		return nil, fmt.Errorf("the snippet: %v", err)
	}
	for _, s := range snip {
		i := find(top, s.key)
		if s.key != "hooks" || i < 0 {
			if i < 0 {
				top = append(top, s)
			} else {
				top[i] = s
			}
			continue
		}
		merged, err := mergeHooks(top[i].val, s.val, agent)
		if err != nil {
			return nil, err
		}
		top[i].val = merged
	}
	var out bytes.Buffer
	if err := json.Indent(&out, object(top), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// mergeHooks merges the snippet's hooks object into the file's.
func mergeHooks(old, snippet json.RawMessage, agent string) (json.RawMessage, error) {
	have, err := members(old)
	if err != nil {
		return nil, fmt.Errorf(`"hooks" is not an object: %v`, err)
	}
	add, err := members(snippet)
	if err != nil {
		return nil, err
	}
	for _, ev := range add {
		var mine []json.RawMessage
		if err := json.Unmarshal(ev.val, &mine); err != nil {
			return nil, err
		}
		i := find(have, ev.key)
		if i < 0 {
			have = append(have, ev)
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(have[i].val, &list); err != nil {
			return nil, fmt.Errorf(`"hooks.%s" is not a list: %v`, ev.key, err)
		}
		var out []json.RawMessage
		placed := false
		for _, e := range list {
			if !installedBy(e, agent) {
				out = append(out, e)
			} else if !placed {
				out, placed = append(out, mine...), true
			}
		}
		if !placed {
			out = append(out, mine...)
		}
		b, _ := json.Marshal(out)
		have[i].val = b
	}
	return object(have), nil
}

// installedBy reports whether a hook entry is one Gatehouse installed for agent: it
// posts to /v1/hooks/<agent> or runs `gatehouse hook <agent>`.
func installedBy(entry []byte, agent string) bool {
	return bytes.Contains(entry, []byte("/v1/hooks/"+agent+`"`)) ||
		bytes.Contains(entry, []byte(" hook "+agent+" ")) || bytes.Contains(entry, []byte(" hook "+agent+`"`))
}
