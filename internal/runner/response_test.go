package runner

import (
	"bufio"
	"strings"
	"testing"
)

// TestReadAnswerOn: the framings a runner may answer with are read whole, and the
// connection is kept only when the answer says it may be.
func TestReadAnswerOn(t *testing.T) {
	cases := []struct {
		name, wire, body string
		status           int
		reusable         bool
		next             string // what is left for the next answer
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}NEXT", "{}", 200, true, "NEXT"},
		{"no reason, LF only", "HTTP/1.1 502\ncontent-length: 1\n\nxNEXT", "x", 502, true, "NEXT"},
		{"chunked with a trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n3\r\n\":1\r\n1\r\n}\r\n0\r\nX-T: 1\r\n\r\nNEXT", `{"a":1}`, 200, true, "NEXT"},
		{"chunked wins over a length", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\nNEXT", "{}", 200, true, "NEXT"},
		{"close asked", "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\n{}", "{}", 200, false, ""},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", "{}", 200, false, ""},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}NEXT", "{}", 200, true, "NEXT"},
		{"to the close", "HTTP/1.1 200 OK\r\n\r\n{\"x\":1}", `{"x":1}`, 200, false, ""},
		{"informational first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}NEXT", "{}", 200, true, "NEXT"},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\nNEXT", "", 204, true, "NEXT"},
	}
	for _, c := range cases {
		br := bufio.NewReaderSize(strings.NewReader(c.wire), 16)
		status, body, reusable, err := readAnswerOn(br)
		if err != nil || status != c.status || string(body) != c.body || reusable != c.reusable {
			t.Errorf("%s: %d %q reusable=%v %v", c.name, status, body, reusable, err)
			continue
		}
		if rest, _ := br.Peek(len(c.next)); string(rest) != c.next {
			t.Errorf("%s: left %q for the next answer, want %q", c.name, rest, c.next)
		}
	}
	for _, bad := range []string{
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 20x OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\n folded\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\n",
	} {
		if _, _, _, err := readAnswerOn(bufio.NewReaderSize(strings.NewReader(bad), 16)); err == nil {
			t.Errorf("%.60q read as an answer", bad)
		}
	}
	if _, _, _, err := readAnswerOn(bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\nContent-Length: 16777217\r\n\r\n"))); err != errTooLarge {
		t.Errorf("an answer over the cap: %v", err)
	}
}
