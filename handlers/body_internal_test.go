package handlers

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestABodyReadAheadIsHandedOverOnce: a body the middleware read ahead is taken whole
// by the next reader without another copy, then is spent; a body read from since is
// read as it stands, and the read error comes after the bytes that arrived.
func TestABodyReadAheadIsHandedOverOnce(t *testing.T) {
	body := []byte(`{"tool_name":"Bash"}`)
	ra := replay(body, nil)
	got, err := readAll(ra)
	if err != nil || &got[0] != &body[0] {
		t.Fatalf("read ahead: %q, %v (a copy: %v)", got, err, err == nil && &got[0] != &body[0])
	}
	if rest, err := io.ReadAll(ra); err != nil || len(rest) != 0 {
		t.Fatalf("read again after the hand-over: %q, %v", rest, err)
	}

	tooLarge := errors.New("too large")
	ra = replay([]byte("abcdef"), tooLarge)
	first := make([]byte, 2)
	if _, err := ra.Read(first); err != nil {
		t.Fatal(err)
	}
	got, err = readAll(ra)
	if string(got) != "cdef" || !errors.Is(err, tooLarge) {
		t.Fatalf("after a partial read: %q, %v", got, err)
	}
	if got, err := readAll(replay([]byte("x"), tooLarge)); string(got) != "x" || !errors.Is(err, tooLarge) {
		t.Fatalf("handed over with its error: %q, %v", got, err)
	}
}

// TestReadSizedReadsWhatArrives: whatever Content-Length said, the body read is the
// bytes that arrived.
func TestReadSizedReadsWhatArrives(t *testing.T) {
	for _, tc := range []struct {
		body string
		n    int64
	}{{"hello", 5}, {"hello", 2}, {"hello", 50}, {"hello", -1}, {strings.Repeat("x", 5000), 5000}, {"", 0}} {
		got, err := readSized(bytes.NewReader([]byte(tc.body)), tc.n)
		if err != nil || string(got) != tc.body {
			t.Fatalf("readSized(%d bytes, %d) = %d bytes, %v", len(tc.body), tc.n, len(got), err)
		}
	}
}
