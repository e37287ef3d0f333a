package ids

import (
	"testing"
	"time"
)

func TestOrderedIDsSortByTimeAndStayUnique(t *testing.T) {
	first := NewOrdered(ElicitationPrefix)
	if !ValidElicitation(first) {
		t.Fatalf("%s is not a valid elicitation id", first)
	}
	same := NewOrdered(ElicitationPrefix)
	if same == first {
		t.Fatal("two ids made in the same millisecond are equal")
	}
	for start := time.Now().UnixMilli(); time.Now().UnixMilli() == start; {
	}
	later := NewOrdered(ElicitationPrefix)
	if later <= first || later <= same {
		t.Fatalf("an id made later (%s) does not sort after earlier ones (%s, %s)", later, first, same)
	}
}
