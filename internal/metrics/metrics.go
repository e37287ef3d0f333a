// Package metrics defines Gatehouse's Prometheus metrics on a registry of its own (no
// global default registry), fed by callbacks from the domain core.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Sources are the live figures the metrics read when scraped.
type Sources struct {
	// Pending counts pending prompts in the database (all replicas).
	Pending func(ctx context.Context) (int64, error)
	// Subscribers counts live stream subscribers in this process.
	Subscribers func() int
	// Parked counts requests parked in this process.
	Parked func() int
	// OpenStreams counts open API and page streams in this process.
	OpenStreams func() int
	// InboxLoads counts inbox builds in this process (each is several queries): live
	// inboxes rebuild only on events in their own trees, so it should not grow with
	// traffic elsewhere.
	InboxLoads func() uint64
}

// Metrics holds the collectors.
type Metrics struct {
	reg      *prometheus.Registry
	created  *prometheus.CounterVec
	decided  *prometheus.CounterVec
	decision *prometheus.HistogramVec
	commit   prometheus.Histogram
}

// New registers every collector on a fresh registry.
func New(src Sources) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_elicitations_created_total", Help: "Prompts parked, by origin.",
		}, []string{"origin"}),
		decided: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatehouse_elicitations_decided_total",
			Help: "Prompts that left pending, by origin, final status and action (empty when no verdict).",
		}, []string{"origin", "status", "action"}),
		decision: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gatehouse_time_to_decision_seconds",
			Help:    "Time from parking a prompt to its verdict, by origin.",
			Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600, 4 * 3600, 24 * 3600},
		}, []string{"origin"}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gatehouse_verdict_commit_seconds",
			Help: "Time to commit a person's verdict (the conditional update and its audit chain append), in this process.",
			Buckets: []float64{50e-6, 75e-6, 100e-6, 125e-6, 150e-6, 200e-6, 250e-6, 300e-6, 400e-6, 500e-6, 750e-6,
				1e-3, 1.5e-3, 2e-3, 3e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1},
		}),
	}
	reg.MustRegister(m.created, m.decided, m.decision, m.commit,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Pending != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gatehouse_elicitations_pending", Help: "Prompts waiting for a verdict (database-wide).",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := src.Pending(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		}))
	}
	if src.Subscribers != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gatehouse_stream_subscribers", Help: "Live stream subscribers in this process.",
		}, func() float64 { return float64(src.Subscribers()) }))
	}
	if src.Parked != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gatehouse_parked_waiters", Help: "Requests parked in this process.",
		}, func() float64 { return float64(src.Parked()) }))
	}
	if src.OpenStreams != nil {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gatehouse_open_streams", Help: "Open API and page streams in this process.",
		}, func() float64 { return float64(src.OpenStreams()) }))
	}
	if src.InboxLoads != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gatehouse_inbox_loads_total", Help: "Inbox lists built (page loads and live re-renders) in this process.",
		}, func() float64 { return float64(src.InboxLoads()) }))
	}
	return m
}

// Opened counts a newly parked prompt.
func (m *Metrics) Opened(e *models.Elicitation) { m.created.WithLabelValues(e.Origin).Inc() }

// Decided counts a prompt leaving pending and observes its time to decision.
func (m *Metrics) Decided(e *models.Elicitation) {
	action := ""
	if e.Action != nil {
		action = *e.Action
	}
	m.decided.WithLabelValues(e.Origin, e.Status, action).Inc()
	if e.Status == models.StatusResolved && e.ResolvedAt != nil {
		m.decision.WithLabelValues(e.Origin).Observe(e.ResolvedAt.Sub(e.CreatedAt).Seconds())
	}
}

// VerdictCommitted observes how long a verdict's commit took.
func (m *Metrics) VerdictCommitted(took time.Duration) { m.commit.Observe(took.Seconds()) }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
