package main

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

// TestMakeRunHonoursEnvironmentTwins: `make run` passes --addr only when ADDR is given,
// so GATEHOUSE_ADDR (like every GATEHOUSE_* twin) reaches the server instead of being
// overridden by a default flag.
func TestMakeRunHonoursEnvironmentTwins(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	dryRun := func(env []string, vars ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"--no-print-directory", "-n", "-C", "../..", "run"}, vars...)...)
		cmd.Env = append(childEnv(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n run: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := dryRun([]string{"GATEHOUSE_ADDR=127.0.0.1:9000"}); strings.Contains(out, "--addr") {
		t.Errorf("with GATEHOUSE_ADDR set, make run still passes --addr (which wins over it):\n%s", out)
	}
	if out := dryRun(nil, "ADDR=127.0.0.1:9001"); !strings.Contains(out, "serve --addr 127.0.0.1:9001") {
		t.Errorf("make run ADDR=127.0.0.1:9001 does not pass --addr:\n%s", out)
	}
}

// TestListenURLIsOpenable: the announced URL names the port actually bound and a host
// a browser can open for a wildcard listen address.
func TestListenURLIsOpenable(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:9000":  "http://127.0.0.1:9000",
		"0.0.0.0:9000":    "http://127.0.0.1:9000",
		"[::]:9000":       "http://127.0.0.1:9000",
		"[::1]:9000":      "http://[::1]:9000",
		"192.0.2.10:8080": "http://192.0.2.10:8080",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := listenURL(tcp); got != want {
			t.Errorf("listenURL(%s) = %s, want %s", addr, got, want)
		}
	}
}
