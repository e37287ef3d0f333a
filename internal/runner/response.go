package runner

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http/httputil"
	"strconv"
)

// maxHeadBytes caps a runner answer's status line and headers.
const maxHeadBytes = 64 << 10

var errBadAnswer = errors.New("malformed HTTP answer from the runner")

// head is what a call needs of an answer's status line and headers.
type head struct {
	status int
	// length is the body's Content-Length; -1 when the body is chunked or runs to
	// the connection's close.
	length  int64
	chunked bool
	// close: the connection ends with this answer.
	close bool
}

// readAnswerOn reads one whole answer (informational ones skipped) from br: its
// status, its body of at most maxAnswerBytes, and whether the connection may carry
// another call. The standard library's ReadResponse builds a header map and a
// Response for what is here three headers.
func readAnswerOn(br *bufio.Reader) (status int, body []byte, reusable bool, err error) {
	h, err := readHead(br)
	for err == nil && h.status >= 100 && h.status < 200 && h.status != 101 {
		h, err = readHead(br)
	}
	if err != nil {
		return 0, nil, false, err
	}
	switch {
	case h.status == 204 || h.status == 304 || h.status == 101:
		return h.status, nil, !h.close && h.status != 101, nil
	case h.chunked:
		body, err = readLimited(httputil.NewChunkedReader(br))
		if err == nil {
			err = skipTrailer(br)
		}
	case h.length >= 0:
		if h.length > maxAnswerBytes {
			return h.status, nil, false, errTooLarge
		}
		body = make([]byte, h.length)
		_, err = io.ReadFull(br, body)
	default:
		body, err = readLimited(br)
		h.close = true
	}
	if err != nil {
		return h.status, nil, false, err
	}
	return h.status, body, !h.close, nil
}

func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxAnswerBytes {
		return nil, errTooLarge
	}
	return b, nil
}

// skipTrailer reads a chunked body's trailer fields up to the blank line ending it.
func skipTrailer(br *bufio.Reader) error {
	n := 0
	for {
		line, err := readLine(br, &n)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// readHead reads a status line and its header fields (RFC 9112 §4–6).
func readHead(br *bufio.Reader) (head, error) {
	n := 0
	line, err := readLine(br, &n)
	if err != nil {
		return head{}, err
	}
	// HTTP/1.x SP 3DIGIT [SP reason]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return head{}, errBadAnswer
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil || status < 100 {
		return head{}, errBadAnswer
	}
	h := head{status: status, length: -1}
	http10 := line[7] == '0'
	keepAlive := false
	for {
		line, err := readLine(br, &n)
		if err != nil {
			return head{}, err
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
			return head{}, errBadAnswer
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			v, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || v < 0 || (h.length >= 0 && v != h.length) {
				return head{}, errBadAnswer
			}
			h.length = v
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if !bytes.EqualFold(value, []byte("chunked")) || h.chunked {
				return head{}, errBadAnswer // no other coding was asked for
			}
			h.chunked = true
		case bytes.EqualFold(name, []byte("Connection")):
			for _, opt := range bytes.Split(value, []byte(",")) {
				opt = bytes.Trim(opt, " \t")
				h.close = h.close || bytes.EqualFold(opt, []byte("close"))
				keepAlive = keepAlive || bytes.EqualFold(opt, []byte("keep-alive"))
			}
		}
	}
	if h.chunked {
		h.length = -1
	}
	if http10 && !keepAlive {
		h.close = true
	}
	return h, nil
}

// readLine reads one line without its CRLF (or LF), counting its bytes into n against
// maxHeadBytes. The line is valid until br is read again.
func readLine(br *bufio.Reader, n *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxHeadBytes {
			line, err = br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if *n += len(line); *n > maxHeadBytes {
		return nil, errBadAnswer
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, nil
}
