package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
)

// eventStream writes server-sent events: the API's session streams, the live pages'
// fragments and the MCP proxy's held calls all go through it.
type eventStream struct {
	w  *echo.Response
	rc *http.ResponseController
}

// startEventStream sends the headers of a server-sent event stream.
func startEventStream(c echo.Context) *eventStream {
	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w.Writer)
	// Streams live long; only this response is exempt from the server's write timeout.
	_ = rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	return &eventStream{w: w, rc: rc}
}

// frames are the buffers events are rendered in. One event published to a session is
// written to every stream open on it — 2,000 in the fan-out bench — so a frame that
// allocated per stream made the fan-out mostly garbage collection (issue 13).
var frames = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledFrame bounds the buffers kept for reuse (a large fragment's is dropped).
const maxPooledFrame = 64 << 10

// send writes one event and flushes it. id (when positive) is the event's SSE id, the
// resume point a client sends back as Last-Event-ID. Every line of data is its own
// data: line: an HTML fragment has newlines, and a raw one would end the event early.
// Carriage returns are dropped, so none can end a line either.
func (es *eventStream) send(id int64, event string, data []byte) error {
	b := frames.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= maxPooledFrame {
			b.Reset()
			frames.Put(b)
		}
	}()
	if id > 0 {
		b.WriteString("id: ")
		b.Write(strconv.AppendInt(b.AvailableBuffer(), id, 10))
		b.WriteByte('\n')
	}
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteByte('\n')
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		b.WriteString("data: ")
		for {
			i := bytes.IndexByte(line, '\r')
			if i < 0 {
				b.Write(line)
				break
			}
			b.Write(line[:i])
			line = line[i+1:]
		}
		b.WriteByte('\n')
		if !more {
			break
		}
		data = rest
	}
	b.WriteByte('\n')
	return es.write(b.Bytes())
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
func (es *eventStream) comment(text string) error { return es.write([]byte(": " + text + "\n\n")) }

func (es *eventStream) write(p []byte) error {
	if _, err := es.w.Write(p); err != nil {
		return err
	}
	return es.rc.Flush()
}
