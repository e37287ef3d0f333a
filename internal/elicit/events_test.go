package elicit

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// TestRequestEventsCarryTheParamsAsEncoded: a request event made from the params as
// newRow encoded them is byte for byte the event made by encoding the params again,
// on the prompt's own session and on its ancestors.
func TestRequestEventsCarryTheParamsAsEncoded(t *testing.T) {
	params := map[string]any{"message": "run <b>this</b> & that", "tool_input": map[string]any{"command": "ls", "n": json.Number("3")},
		"risk": map[string]any{"level": "high", "reasons": []any{"a", "b"}}, "approve_path": "/approve/x/y"}
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	sess := &models.Session{ID: "conv_child", Path: "/conv_root/conv_child/"}
	again, chainA := s.requestEvents(sess, "elicit_1", params, nil)
	asIs, chainB := s.requestEvents(sess, "elicit_1", params, raw)
	if len(again) != 2 || len(asIs) != 2 || len(chainA) != 2 || chainA[1] != chainB[1] {
		t.Fatalf("events %d and %d on %v and %v", len(again), len(asIs), chainA, chainB)
	}
	for i := range again {
		if string(again[i].Data) != string(asIs[i].Data) {
			t.Fatalf("event for %s differs:\n%s\n%s", chainA[i], again[i].Data, asIs[i].Data)
		}
	}
	// Without a risk, too; and the prompt's own event is RequestEvent's, encoded.
	delete(params, "risk")
	if raw, err = json.Marshal(params); err != nil {
		t.Fatal(err)
	}
	own, _ := s.requestEvents(&models.Session{ID: "conv_root", Path: "/conv_root/"}, "elicit_<2>", params, raw)
	want, err := json.Marshal(RequestEvent("elicit_<2>", "conv_root", "conv_root", params))
	if err != nil || len(own) != 1 || string(own[0].Data) != string(want) {
		t.Fatalf("own event without a risk:\n%s\nwant\n%s", own[0].Data, want)
	}
}
