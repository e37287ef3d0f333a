package stream

import (
	"bytes"
	"strconv"
	"sync"
)

// AppendFrame appends one server-sent event to b: its id (when positive: the resume
// point a client sends back as Last-Event-ID), its name and its data, every line of
// data its own data: line (an HTML fragment has newlines, and a raw one would end the
// event early; carriage returns are dropped for the same reason).
func AppendFrame(b []byte, id int64, event string, data []byte) []byte {
	if id > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, '\n')
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		b = append(b, "data: "...)
		if bytes.IndexByte(line, '\r') < 0 {
			b = append(b, line...)
		} else {
			for _, c := range line {
				if c != '\r' {
					b = append(b, c)
				}
			}
		}
		b = append(b, '\n')
		if !more {
			break
		}
		data = rest
	}
	return append(b, '\n')
}

// frameMemo is an event's frame, encoded by the first of its subscribers to write it.
type frameMemo struct {
	once  sync.Once
	frame []byte
}

// Frame is the event as one server-sent event (AppendFrame), with its sequence number
// as the id. An event published to many subscribers at once is encoded once for all of
// them: two thousand streams open on one session write the same bytes, and encoding
// it for each made work — and garbage — that grew with the audience.
func (e Event) Frame() []byte {
	if e.memo == nil {
		return AppendFrame(nil, e.Seq, e.Type, e.Data)
	}
	e.memo.once.Do(func() { e.memo.frame = AppendFrame(nil, e.Seq, e.Type, e.Data) })
	return e.memo.frame
}
