package testserver

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
)

// PostgresBinEnv names a directory holding initdb and postgres, for machines where
// they are not in Debian's /usr/lib/postgresql/<version>/bin or on PATH.
const PostgresBinEnv = "GATEHOUSE_PG_BIN"

// clusterStartTimeout bounds how long a private cluster may take to accept connections,
// and clusterStopTimeout how long it may take to exit before it is killed.
const (
	clusterStartTimeout = 60 * time.Second
	clusterStopTimeout  = 30 * time.Second
)

// Cluster is a private Postgres server for one test: its own data directory, TCP port
// (on 127.0.0.1) and unix socket directory, trust authentication for the user
// "postgres". Tests that stop, restart or crash the database use one of these — never
// the shared server behind GATEHOUSE_TEST_DATABASE_URL, which other tests are using.
//
// Typical use:
//
//	cl := testserver.StartCluster(t)   // skips when Postgres binaries are missing
//	srv := testserver.Start(t, cl.CreateDB(t))
//	...
//	cl.Stop(t)    // fast shutdown: open connections are terminated (57P01)
//	cl.Start(t)   // same port, same data: committed rows are still there
//	cl.Restart(t) // both, back to back
//	cl.Crash(t)   // immediate shutdown (like a power cut for the clients), then Start
//
// The server runs as a child process of the test binary (as the "postgres" user when
// the test runs as root, since initdb and postgres refuse root) and dies with it: the
// test's cleanup stops it and deletes its directory, and if the test binary itself is
// killed the kernel kills the server too (parent-death signal). Methods are safe to
// call from several goroutines (for chaos tests); each waits until the server is in
// the state asked for and fails the test when it does not get there in time.
type Cluster struct {
	// Port is the TCP port the server listens on (127.0.0.1), kept across restarts.
	Port int

	bin  string              // directory of initdb and postgres
	dir  string              // root of everything: data/, the socket, the log
	cred *syscall.Credential // run as "postgres" when the test runs as root; else nil
	log  string              // server log (stderr), shown when something fails

	mu   sync.Mutex
	proc *exec.Cmd     // the running postmaster; nil while stopped
	done chan struct{} // closed when proc has exited
}

// StartCluster creates a fresh cluster (initdb) and starts it. It skips the test when
// the Postgres server binaries are not installed (Debian: apt-get install postgresql;
// or set GATEHOUSE_PG_BIN), and fails it instead when GATEHOUSE_REQUIRE_POSTGRES is set.
// Everything is removed when the test ends.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	bin, err := postgresBinDir()
	if err != nil {
		missingPostgres(t, err.Error())
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			missingPostgres(t, "running as root, and initdb refuses root: need a \"postgres\" user to run the server as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// A short path of our own rather than t.TempDir(): the unix socket path must fit in
	// 107 bytes, and the postgres user must be able to reach it (t.TempDir's parent is
	// private to the test's user).
	c.dir, err = os.MkdirTemp("", "gh-pg-")
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	t.Cleanup(func() {
		c.stop(t, syscall.SIGQUIT)
		if err := os.RemoveAll(c.dir); err != nil {
			t.Logf("cluster: remove %s: %v", c.dir, err)
		}
	})
	if c.cred != nil {
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			t.Fatalf("cluster: hand %s to the postgres user: %v", c.dir, err)
		}
	}
	c.log = filepath.Join(c.dir, "postgres.log")
	out, err := c.command(filepath.Join(bin, "initdb"), "-D", c.dataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions").CombinedOutput()
	if err != nil {
		t.Fatalf("cluster: initdb: %v\n%s", err, out)
	}
	conf := fmt.Sprintf(`
# Private test cluster (internal/testserver/pgcluster.go).
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
fsync = off
full_page_writes = off
shared_buffers = 16MB
max_connections = 100
include_if_exists = 'gatehouse_port.conf'
`, c.dir)
	if err := appendFile(filepath.Join(c.dataDir(), "postgresql.conf"), conf); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	// A free port can be taken by someone else between our probe and the server's
	// bind; try a few.
	for attempt := 1; ; attempt++ {
		c.Port = freePort(t)
		if err := os.WriteFile(filepath.Join(c.dataDir(), "gatehouse_port.conf"),
			[]byte(fmt.Sprintf("port = %d\n", c.Port)), 0o644); err != nil {
			t.Fatalf("cluster: %v", err)
		}
		err := c.start()
		if err == nil {
			return c
		}
		if attempt == 3 {
			t.Fatalf("cluster: start: %v\n%s", err, c.logTail())
		}
	}
}

func missingPostgres(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(RequirePostgresEnv) != "" {
		t.Fatalf("private Postgres cluster: %s (and %s is set)", why, RequirePostgresEnv)
	}
	t.Skipf("private Postgres cluster: %s; install the server (Debian: apt-get install postgresql) or set %s",
		why, PostgresBinEnv)
}

// postgresBinDir finds initdb and postgres: $GATEHOUSE_PG_BIN, else Debian's newest
// /usr/lib/postgresql/<version>/bin, else PATH.
func postgresBinDir() (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv(PostgresBinEnv); dir != "" {
		if !has(dir) {
			return "", fmt.Errorf("%s=%s holds no initdb and postgres", PostgresBinEnv, dir)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, dir := range dirs {
		if has(dir) {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no initdb and postgres binaries found")
}

// versionOf reads the major version from /usr/lib/postgresql/<version>/bin.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("cluster: find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// command prepares a Postgres program to run as the cluster's owner, in its directory.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

// URL is the connection URL of database db on this cluster.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

// CreateDB creates a fresh, empty database and returns its URL. The cluster must be
// running. (It goes away with the cluster; nothing to drop.)
func (c *Cluster) CreateDB(t testing.TB) string {
	t.Helper()
	name := "gatehouse_" + strings.ToLower(ids.New("")[:12])
	db, err := sql.Open("pgx", c.URL("postgres"))
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("cluster: create database %s: %v", name, err)
	}
	return c.URL(name)
}

// Running reports whether the server process is up (it may still be starting).
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc != nil
}

// Start starts a stopped cluster on its port and returns once it accepts connections.
// Starting a running cluster is a no-op.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	if err := c.start(); err != nil {
		t.Fatalf("cluster: start: %v\n%s", err, c.logTail())
	}
}

// Stop shuts the server down in "fast" mode (SIGINT): every open connection is
// terminated with admin_shutdown (SQLSTATE 57P01), a checkpoint is written, and new
// connections are refused until Start. It returns once the server has exited.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	c.stop(t, syscall.SIGINT)
}

// Crash shuts the server down in "immediate" mode (SIGQUIT): processes quit at once
// with no checkpoint, as after a crash; Start then runs crash recovery. Committed
// transactions survive (synchronous_commit is on; only fsync is off, and the machine
// does not crash).
func (c *Cluster) Crash(t testing.TB) {
	t.Helper()
	c.stop(t, syscall.SIGQUIT)
}

// Restart is Stop then Start: connections drop, the server is back on the same port.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	c.Stop(t)
	c.Start(t)
}

func (c *Cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return nil
	}
	logf, err := os.OpenFile(c.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	cmd := c.command(filepath.Join(c.bin, "postgres"), "-D", c.dataDir())
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server must not outlive a test binary that is killed (a go test timeout)
	// before its cleanup runs.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c.proc, c.done = cmd, done

	deadline := time.Now().Add(clusterStartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			c.proc, c.done = nil, nil
			return fmt.Errorf("postgres exited while starting (last error: %v)", err)
		case <-time.After(50 * time.Millisecond): // the server cannot tell us it is ready; ask again
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			c.proc, c.done = nil, nil
			return fmt.Errorf("postgres did not accept connections within %s: %v", clusterStartTimeout, err)
		}
	}
}

// stop signals the postmaster and waits for it to exit (killing it after
// clusterStopTimeout). Stopping a stopped cluster is a no-op.
func (c *Cluster) stop(t testing.TB, sig syscall.Signal) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return
	}
	_ = c.proc.Process.Signal(sig)
	select {
	case <-c.done:
	case <-time.After(clusterStopTimeout):
		_ = c.proc.Process.Kill()
		<-c.done
		t.Errorf("cluster: postgres did not stop within %s after %s; killed\n%s", clusterStopTimeout, sig, c.logTail())
	}
	c.proc, c.done = nil, nil
}

// logTail returns the end of the server log, for failure messages.
func (c *Cluster) logTail() string {
	raw, err := os.ReadFile(c.log)
	if err != nil {
		return ""
	}
	if len(raw) > 4000 {
		raw = raw[len(raw)-4000:]
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw = raw[i+1:]
		}
	}
	return "postgres log (tail):\n" + string(raw)
}
