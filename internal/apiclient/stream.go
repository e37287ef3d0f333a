package apiclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Event names on the server's streams.
const (
	EventRequest   = "response.elicitation_request"
	EventResolved  = "response.elicitation_resolved"
	EventHeartbeat = "session.heartbeat"
)

// Frame is one event of a text/event-stream: its name and its data lines joined.
type Frame struct {
	Event string
	Data  []byte
}

// maxFrameLine bounds one line of a stream (a prompt's params can be large).
const maxFrameLine = 16 << 20

// errStreamEnded is a stream the server closed: it drops slow subscribers and ends
// streams on shutdown, and the client reconnects.
var errStreamEnded = errors.New("the server ended the stream")

// Stream reads the event stream at path, calling fn with each frame, until ctx ends,
// the stream ends or fn returns an error, which it returns. An answer that is not a
// stream is an *Error. The client's HTTP timeout does not apply: a stream is open for
// as long as it is read.
func (c *Client) Stream(ctx context.Context, path string, fn func(Frame) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := http.Client{}
	if c.HTTP != nil {
		hc = *c.HTTP
		hc.Timeout = 0
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return errorOf(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxFrameLine)
	var f Frame
	var data [][]byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if f.Event != "" || len(data) > 0 {
				f.Data = bytes.Join(data, []byte("\n"))
				if err := fn(f); err != nil {
					return err
				}
			}
			f, data = Frame{}, nil
			continue
		}
		field, value, _ := strings.Cut(string(line), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			f.Event = value
		case "data":
			data = append(data, []byte(value))
		}
		// "id", "retry" and comments (an empty field) are not used.
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errStreamEnded
}

// errorOf reads an error answer's envelope.
func errorOf(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &env)
	return &Error{Status: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message}
}
