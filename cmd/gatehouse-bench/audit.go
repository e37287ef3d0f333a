package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// exportResult is one audit export run.
type exportResult struct {
	Rows       int
	Bytes      int64
	Took       time.Duration
	RSSBefore  int64 // KiB
	PeakRSSKiB int64
}

// auditExport starts a fresh server on url, writes rows decided prompts and their chain
// rows straight into its database, then exports them all (GET /v1/audit?format=jsonl)
// while sampling the server's resident set size.
func auditExport(bin, url string, rows int) (exportResult, error) {
	var res exportResult
	srv, err := startProc(bin, []string{"serve", "--addr", "127.0.0.1:0", "--database-url", url, "--log-format", "json"},
		[]string{"GATEHOUSE_SESSION_SECRET=" + strings.Repeat("b", 32)})
	if err != nil {
		return res, err
	}
	defer srv.stop()
	hc := newHTTP(4)
	sid, err := newSession(hc, srv.URL)
	if err != nil {
		return res, err
	}
	st, err := store.Open(url)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err = st.SeedAudit(ctx, sid, rows, 300)
	st.Close()
	if err != nil {
		return res, fmt.Errorf("seed: %w", err)
	}
	if res.RSSBefore, err = srv.rssKiB(); err != nil {
		return res, err
	}
	var peak atomic.Int64
	peak.Store(res.RSSBefore)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			if kib, err := srv.rssKiB(); err == nil && kib > peak.Load() {
				peak.Store(kib)
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	t0 := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/audit?format=jsonl", nil)
	resp, err := hc.Do(req)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("export answered %d", resp.StatusCode)
	}
	if err == nil {
		br := bufio.NewReaderSize(resp.Body, 256<<10)
		for {
			line, rerr := br.ReadSlice('\n')
			res.Bytes += int64(len(line))
			if rerr == nil {
				res.Rows++
				continue
			}
			if rerr != bufio.ErrBufferFull {
				if rerr != io.EOF {
					err = rerr
				}
				break
			}
		}
		resp.Body.Close()
	}
	res.Took = time.Since(t0)
	close(stop)
	<-sampled
	res.PeakRSSKiB = peak.Load()
	if err == nil && res.Rows != rows {
		err = fmt.Errorf("export had %d rows, want %d", res.Rows, rows)
	}
	return res, err
}

// runAuditExport adds the export measurement to the table.
func runAuditExport(t *table, db, bin, url string, rows int) {
	r, err := auditExport(bin, url, rows)
	if err != nil {
		t.note(db, "audit export: "+err.Error())
		return
	}
	rate := float64(r.Rows) / r.Took.Seconds()
	t.row(db, fmt.Sprintf("audit export of %d rows (jsonl, %.0f MiB)", r.Rows, float64(r.Bytes)/(1<<20)),
		fmt.Sprintf("%.0f rows/s", rate), fmt.Sprintf("%.1fs", r.Took.Seconds()), "—", "streamed")
	t.row(db, "audit export: server peak RSS", fmt.Sprintf("%.0f MiB", float64(r.PeakRSSKiB)/1024),
		fmt.Sprintf("before %.0f MiB", float64(r.RSSBefore)/1024), fmt.Sprintf("+%.0f MiB", float64(r.PeakRSSKiB-r.RSSBefore)/1024), "constant")
}
