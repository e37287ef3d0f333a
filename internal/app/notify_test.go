package app

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// TestRuleAnswersDoNotWakeTheNotifier: the dispatcher is nudged for a prompt it still
// has to plan (parked, or decided after being announced), never for a row stored with
// every notification stage done — a rule's answer.
func TestRuleAnswersDoNotWakeTheNotifier(t *testing.T) {
	kicks := 0
	f := kickUnlessNotified(func() { kicks++ })
	for _, stage := range []int{models.NotifiedNone, models.NotifiedCreated} {
		f(&models.Elicitation{Notified: stage})
	}
	if kicks != 2 {
		t.Fatalf("prompts to plan: %d nudges, want 2", kicks)
	}
	f(&models.Elicitation{Status: models.StatusResolved, Notified: models.NotifiedAll})
	if kicks != 2 {
		t.Fatal("a row stored fully notified nudged the dispatcher")
	}
}
