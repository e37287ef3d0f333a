// Package setup installs an agent's Gatehouse settings snippet into the agent's own
// settings file (`gatehouse setup <agent> --install`). It never loses what the person
// wrote there: a JSON file keeps every key but the hooks Gatehouse installs, a TOML file
// keeps every byte outside Gatehouse's marked block; a file it cannot read as its format
// is left untouched; running it twice changes nothing the second time.
package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Result is what Install did.
type Result struct {
	// Path is the settings file.
	Path string
	// Changed is false when the file already held exactly this snippet.
	Changed bool
	// Created is true when there was no file before.
	Created bool
	// Backup is the copy of the old file ("" when nothing was backed up).
	Backup string
	// Old and New are the file's contents before and after.
	Old, New []byte
}

// Install merges s into its settings file at path, writing a backup of the old file
// (path + ".bak") before changing it. agent is the agent's name, which recognises the
// hooks an earlier install left (they run `gatehouse hook <agent>` or post to
// /v1/hooks/<agent>).
func Install(path, agent string, s models.Settings) (Result, error) {
	r := Result{Path: path}
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Created = true
	case err != nil:
		return r, err
	}
	r.Old = old
	switch s.File.Format {
	case models.FormatJSON:
		r.New, err = mergeJSON(old, []byte(s.Text), agent)
	case models.FormatTOML:
		r.New, err = mergeTOML(old, []byte(s.Text), agent)
	default:
		return r, fmt.Errorf("this agent's settings have no format to install in")
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w (left untouched)", path, err)
	}
	if !r.Created && bytes.Equal(old, r.New) {
		return r, nil
	}
	r.Changed = true
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return r, err
	}
	if !r.Created {
		r.Backup = path + ".bak"
		if err := os.WriteFile(r.Backup, old, 0o600); err != nil {
			return r, fmt.Errorf("backup %s: %w", r.Backup, err)
		}
	}
	return r, writeFile(path, r.New)
}

// writeFile replaces path with data through a temporary file in the same directory, so
// an agent starting meanwhile reads the old file or the new one, never half of it.
func writeFile(path string, data []byte) error {
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
