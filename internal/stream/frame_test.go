package stream

import (
	"encoding/json"
	"testing"
)

func TestAppendFrameWritesEachLineOfDataOnItsOwn(t *testing.T) {
	cases := []struct {
		id    int64
		event string
		data  string
		want  string
	}{
		{7, "response.elicitation_request", `{"a":1}`, "id: 7\nevent: response.elicitation_request\ndata: {\"a\":1}\n\n"},
		{0, "fragment", "<li>\r\n  x\r\n</li>", "event: fragment\ndata: <li>\ndata:   x\ndata: </li>\n\n"},
		{0, "empty", "", "event: empty\ndata: \n\n"},
		{3, "trailing", "a\n", "id: 3\nevent: trailing\ndata: a\ndata: \n\n"},
		{0, "lone-cr", "a\rb", "event: lone-cr\ndata: ab\n\n"},
	}
	for _, c := range cases {
		if got := string(AppendFrame(nil, c.id, c.event, []byte(c.data))); got != c.want {
			t.Errorf("AppendFrame(%d, %q, %q) = %q, want %q", c.id, c.event, c.data, got, c.want)
		}
	}
}

// Every subscriber of one publication writes the same frame, encoded once.
func TestSubscribersOfOnePublicationShareItsFrame(t *testing.T) {
	b := NewLocal()
	one, two := b.Subscribe("s1", 4), b.Subscribe("s1", 4)
	defer one.Cancel()
	defer two.Cancel()
	b.Publish([]string{"s1"}, []Event{{Type: "e", Seq: 9, Data: json.RawMessage(`{"x":"y"}`)}})
	f1, f2 := (<-one.C).Event.Frame(), (<-two.C).Event.Frame()
	if want := "id: 9\nevent: e\ndata: {\"x\":\"y\"}\n\n"; string(f1) != want || string(f2) != want {
		t.Fatalf("frames %q and %q, want %q", f1, f2, want)
	}
	if &f1[0] != &f2[0] {
		t.Fatal("each subscriber encoded the event again")
	}
	// The next publication of the same event is a frame of its own.
	b.Publish([]string{"s1"}, []Event{{Type: "e", Seq: 10, Data: json.RawMessage(`{}`)}})
	if f3 := (<-one.C).Event.Frame(); string(f3) != "id: 10\nevent: e\ndata: {}\n\n" {
		t.Fatalf("next frame %q", f3)
	}
}
