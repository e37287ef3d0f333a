package setup

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/pelletier/go-toml/v2"
)

// The lines around Gatehouse's block in a TOML settings file: a re-install replaces
// what lies between them and nothing else.
const (
	blockBegin = "# >>> gatehouse >>>"
	blockEnd   = "# <<< gatehouse <<<"
)

// mergeTOML replaces Gatehouse's marked block in old with snippet, or appends the
// block; every byte outside the block stays as it was.
func mergeTOML(old, snippet []byte, agent string) ([]byte, error) {
	if err := validTOML(old); err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	block := []byte(blockBegin + "\n" + string(bytes.TrimRight(snippet, "\n")) + "\n" + blockEnd + "\n")
	i, j := bytes.Index(old, []byte(blockBegin)), bytes.Index(old, []byte(blockEnd))
	var out []byte
	switch {
	case i >= 0 && j > i:
		rest := old[j+len(blockEnd):]
		rest = bytes.TrimPrefix(rest, []byte("\n"))
		out = append(append(append(out, old[:i]...), block...), rest...)
	case i >= 0 || j >= 0:
		return nil, errors.New("holds only one of Gatehouse's block markers: fix or remove it")
	case bytes.Contains(old, []byte(" hook "+agent)):
		return nil, fmt.Errorf("holds Gatehouse hooks outside a marked block: remove them, then run setup again")
	default:
		out = append(out, old...)
		if len(out) > 0 {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		out = append(out, block...)
	}
	if err := validTOML(out); err != nil {
		return nil, fmt.Errorf("the merged file would not be valid TOML: %v", err)
	}
	return out, nil
}

func validTOML(b []byte) error {
	var v map[string]any
	return toml.Unmarshal(b, &v)
}
