package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
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

// send writes one event (stream.AppendFrame) and flushes it.
func (es *eventStream) send(id int64, event string, data []byte) error {
	return es.write(stream.AppendFrame(nil, id, event, data))
}

// busEvent writes an event of the bus, with its sequence number as the SSE id: the
// frame its other subscribers on this server write too.
func (es *eventStream) busEvent(ev stream.Event) error { return es.write(ev.Frame()) }

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
func (es *eventStream) comment(text string) error { return es.write([]byte(": " + text + "\n\n")) }

// write writes b, which it does not keep or change (a bus event's frame is shared), and
// flushes it.
func (es *eventStream) write(b []byte) error {
	if _, err := es.w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(es.w.Writer).Flush()
}
