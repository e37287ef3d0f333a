package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// proc is a server process the bench drives.
type proc struct {
	cmd *exec.Cmd
	URL string
	// MetricsURL is where a Gatehouse server's /metrics is read (--metrics-addr).
	MetricsURL string
	// exited, when set, is closed once the process has been waited for (by whoever
	// started it); stop then waits on it instead of calling Wait again.
	exited   chan struct{}
	stopOnce sync.Once
}

// startProc runs bin with args and waits for its "… running at URL" line.
func startProc(bin string, args []string, env []string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "running at "); i >= 0 {
				u := strings.Fields(line[i+len("running at "):])[0]
				urlc <- u
			}
		}
	}()
	select {
	case u := <-urlc:
		return &proc{cmd: cmd, URL: u}, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not report its URL within 30s", bin)
	}
}

// stop ends the process (SIGINT, then SIGKILL after 15s); later calls do nothing.
func (p *proc) stop() { p.stopOnce.Do(p.stopNow) }

func (p *proc) stopNow() {
	p.cmd.Process.Signal(os.Interrupt)
	done := p.exited
	if done == nil {
		done = make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// rssKiB reads the process's resident set size from /proc.
func (p *proc) rssKiB() (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}

// freshPostgres creates an empty database under admin and returns its URL and a drop func.
func freshPostgres(admin string) (string, func(), error) {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("gatehouse_bench_%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		return "", nil, err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		// Write out what the part left dirty now, so the checkpointer's flush does not
		// land on the next part's measurements (the auto-answered rows, run right after
		// 10,000 parked and decided prompts, lost a third of their throughput to it).
		db.Exec("CHECKPOINT")
		db.Close()
	}
	return u.String(), drop, nil
}
