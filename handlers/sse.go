package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
)

// eventStream writes server-sent events: the API's session streams, the live pages'
// fragments and the MCP proxy's held calls all go through it.
type eventStream struct {
	w *echo.Response
}

// startEventStream sends the headers of a server-sent event stream.
func startEventStream(c echo.Context) *eventStream {
	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	// Streams live long; only this response is exempt from the server's write timeout.
	_ = http.NewResponseController(w.Writer).SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	return &eventStream{w: w}
}

// send writes one event and flushes it. id (when positive) is the event's SSE id, the
// resume point a client sends back as Last-Event-ID. Every line of data is its own
// data: line: an HTML fragment has newlines, and a raw one would end the event early.
func (es *eventStream) send(id int64, event string, data []byte) error {
	var b strings.Builder
	if id > 0 {
		b.WriteString("id: ")
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte('\n')
	}
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteByte('\n')
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return es.write(b.String())
}

// busEvent writes an event of the bus, with its sequence number as the SSE id.
func (es *eventStream) busEvent(ev stream.Event) error { return es.send(ev.Seq, ev.Type, ev.Data) }

// sendJSON writes v as the data of one event.
func (es *eventStream) sendJSON(event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return es.send(0, event, data)
}

// fragment renders comp and sends it as one event.
func (es *eventStream) fragment(ctx context.Context, event string, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(ctx, &buf); err != nil {
		return err
	}
	return es.send(0, event, buf.Bytes())
}

// comment keeps an idle stream open through proxies; EventSource ignores comments.
func (es *eventStream) comment(text string) error { return es.write(": " + text + "\n\n") }

func (es *eventStream) write(s string) error {
	if _, err := es.w.Write([]byte(s)); err != nil {
		return err
	}
	return http.NewResponseController(es.w.Writer).Flush()
}
