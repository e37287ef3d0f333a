package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
)

// runReference serves the reference park/resolve server: plain net/http, a map of
// channels, no database. It is the floor for "a request waits, another request wakes
// it" that Gatehouse's figures are compared against.
//
//	POST /park?id=X     registers X, flushes the headers (so the client knows it is
//	                    parked), then blocks until X is resolved and writes the action
//	POST /resolve?id=X&action=A   wakes X (404 when nobody waits on X)
//	GET  /healthz
//	POST /hook      a Claude Code PermissionRequest answered at once by an in-memory
//	                allow rule (Bash "true"), the floor of a rule-answered hook
//	POST /evaluate  a policy check answered at once (the peer's: ALLOW unless Bash)
//	POST /v1/sessions/{sid}/mcp/execute   the runner protocol (docs/mcp-proxy.md):
//	                tools/list names one tool, tools/call answers it at once; a
//	                Gatehouse server in the bench runs its MCP calls here (--runner-url)
//	POST /v1/sessions/{sid}/events        the runner's control events (202)
func runReference(addr string) error {
	var mu sync.Mutex
	waiting := map[string]chan string{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("POST /park", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		ch := make(chan string, 1)
		mu.Lock()
		waiting[id] = ch
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case action := <-ch:
			fmt.Fprintf(w, `{"action":%q}`, action)
		case <-r.Context().Done():
			mu.Lock()
			delete(waiting, id)
			mu.Unlock()
		}
	})
	mux.HandleFunc("POST /resolve", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		mu.Lock()
		ch, ok := waiting[id]
		delete(waiting, id)
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		ch <- r.URL.Query().Get("action")
		w.WriteHeader(http.StatusAccepted)
	})
	autoAnswered(mux)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "Reference server running at http://%s\n", ln.Addr())
	return http.Serve(ln, mux)
}

// autoAnswered adds the reference server's requests answered at once: each decodes its
// JSON body, decides in memory and answers JSON — the least a check that needs no
// person can cost over HTTP.
func autoAnswered(mux *http.ServeMux) {
	mux.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Tool  string         `json:"tool_name"`
			Input map[string]any `json:"tool_input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		behavior := "ask"
		if in.Tool == "Bash" && in.Input["command"] == "true" {
			behavior = "allow"
		}
		writeJSON(w, map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest",
			"decision": map[string]any{"behavior": behavior}}})
	})
	mux.HandleFunc("POST /evaluate", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Event struct {
				Type string `json:"type"`
				Data struct {
					Name string `json:"name"`
				} `json:"data"`
			} `json:"event"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if in.Event.Type == "PHASE_TOOL_CALL" && in.Event.Data.Name == "Bash" {
			writeJSON(w, map[string]any{"result": "POLICY_ACTION_ASK", "reason": "Approve child tool call"})
			return
		}
		writeJSON(w, map[string]any{"result": "POLICY_ACTION_ALLOW"})
	})
	mux.HandleFunc("POST /v1/sessions/{sid}/mcp/execute", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Method string `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch in.Method {
		case "tools/list":
			writeJSON(w, map[string]any{"result": map[string]any{"tools": []any{map[string]any{
				"name": benchTool, "description": "answers at once",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}}}})
		case "tools/call":
			writeJSON(w, map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran " + in.Params.Name}}}})
		default:
			writeJSON(w, map[string]any{"error": map[string]any{"code": -32601, "message": "method not found: " + in.Method}})
		}
	})
	mux.HandleFunc("POST /v1/sessions/{sid}/events", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
}

// benchTool is the runner's one tool; no policy asks about it.
const benchTool = "bench_echo"

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
