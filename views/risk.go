package views

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/risk"
)

// riskLabel is "High risk", "Low risk", ….
func riskLabel(l risk.Level) string {
	s := string(l)
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:] + " risk"
}
