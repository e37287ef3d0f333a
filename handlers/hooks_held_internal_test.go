package handlers

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/held"
	"github.com/gatehouse-dev/gatehouse/internal/park"
)

// TestBurstIsHeldBeforePreparing: with every slot to prepare taken, a hook is held at
// once — its handler returns before it is prepared — and prepare later reads the
// detached request: the route's parameter, the body and the identity the middleware
// set. The answer, given without a wait, comes on the held connection.
func TestBurstIsHeldBeforePreparing(t *testing.T) {
	set := &held.Set{}
	e := echo.New()
	s := &Server{held: set, echo: e, log: slog.New(slog.DiscardHandler), park: park.New(nil, nil, 1)}
	returned := make(chan struct{}, 1)
	seen := make(chan string, 1)
	e.POST("/v1/sessions/:sid/hooks/permission-request", func(c echo.Context) error {
		c.Set(ctxUser, "alice@example.com")
		err := s.parkHook(c, func(c echo.Context) (*park.Job, error) {
			body, err := io.ReadAll(c.Request().Body)
			seen <- c.Param("sid") + " " + string(body) + " " + userOf(c)
			return &park.Job{Level: auth.Read, Immediate: map[string]string{"behavior": "allow"}}, err
		})
		returned <- struct{}{}
		return err
	})
	srv := httptest.NewServer(e)
	defer srv.Close()
	defer set.Wait(t.Context())

	free := takeSlot(t, s) // the only slot is taken
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"tool_name":"Bash"}`
	if _, err := io.WriteString(conn, "POST /v1/sessions/conv_1/hooks/permission-request HTTP/1.1\r\nHost: x\r\n"+
		"Content-Type: application/json\r\nContent-Length: 20\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		free() // let the handler finish, so the server can close
		t.Fatal("the handler did not return while the request waited for a slot")
	}
	select {
	case got := <-seen:
		t.Fatalf("prepared (%s) with no slot free", got)
	default:
	}
	free() // the slot comes free
	select {
	case got := <-seen:
		if want := "conv_1 " + body + " alice@example.com"; got != want {
			t.Fatalf("prepare read %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not prepared once the slot came free")
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(answer) != `{"behavior":"allow"}` || !resp.Close {
		t.Fatalf("answer %d %q (close %v)", resp.StatusCode, answer, resp.Close)
	}
}

// TestPanicWhilePreparingIsA500: a panic in a request's prepare — which runs on a
// goroutine of its own, beyond Echo's Recover — answers that request 500 with the
// error envelope, held or not, and the server goes on.
func TestPanicWhilePreparingIsA500(t *testing.T) {
	set := &held.Set{}
	e := echo.New()
	s := &Server{held: set, echo: e, log: slog.New(slog.DiscardHandler), park: park.New(nil, nil, 1)}
	e.HTTPErrorHandler = s.errorHandler
	returned := make(chan struct{}, 2)
	e.POST("/v1/hooks/claude", func(c echo.Context) error {
		defer func() { returned <- struct{}{} }()
		return s.parkHook(c, func(c echo.Context) (*park.Job, error) { panic("a bug") })
	})
	srv := httptest.NewServer(e)
	defer srv.Close()
	defer set.Wait(t.Context())
	type answer struct {
		resp *http.Response
		body string
	}
	post := func() <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			resp, err := http.Post(srv.URL+"/v1/hooks/claude", "application/json", strings.NewReader(`{}`))
			if err != nil {
				ch <- answer{body: err.Error()}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			ch <- answer{resp, string(b)}
		}()
		return ch
	}
	check := func(name string, ch <-chan answer, closed bool) {
		t.Helper()
		select {
		case a := <-ch:
			if a.resp == nil || a.resp.StatusCode != http.StatusInternalServerError || !strings.Contains(a.body, `"code":"internal"`) || a.resp.Close != closed {
				t.Fatalf("%s: %+v %s", name, a.resp, a.body)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer", name)
		}
	}
	// A slot free: prepared on net/http, answered keeping the connection.
	check("prepared on net/http", post(), false)
	<-returned
	// Every slot taken: held (the handler returns), prepared once a slot comes free.
	free := takeSlot(t, s)
	ch := post()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		free()
		t.Fatal("not held while every slot was taken")
	}
	free()
	check("held", ch, true)
}

// takeSlot occupies one of s's slots to prepare a park until free is called (free is
// safe to call twice).
func takeSlot(t *testing.T, s *Server) (free func()) {
	t.Helper()
	taken, release := make(chan struct{}), make(chan struct{})
	go func() {
		_, _ = s.park.Park(t.Context(), func() (*park.Job, error) {
			close(taken)
			<-release
			return &park.Job{Immediate: true}, nil
		})
	}()
	select {
	case <-taken:
	case <-time.After(10 * time.Second):
		t.Fatal("could not take a slot")
	}
	var once sync.Once
	return func() { once.Do(func() { close(release) }) }
}
