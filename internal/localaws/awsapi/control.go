package awsapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Control is the registry of control routes under /_localaws/. Services add
// their own routes with Handle.
//
// Built-in routes:
//
//	GET    /_localaws/health          {"status":"ok","region":…,"accountId":…}
//	GET    /_localaws/resources       {"<service>":["arn…",…],…}
//	GET    /_localaws/faults          [FaultRule…]
//	POST   /_localaws/faults          FaultRule → FaultRule with id
//	DELETE /_localaws/faults          clear all
//	DELETE /_localaws/faults/{id}     remove one
type Control struct {
	mux *http.ServeMux

	mu     sync.Mutex
	routes []string
}

func newControl(r *Router) *Control {
	c := &Control{mux: http.NewServeMux()}
	env := r.env
	c.HandleFunc("GET health", func(w http.ResponseWriter, _ *http.Request) {
		WriteControlJSON(w, http.StatusOK, map[string]string{"status": "ok", "region": env.Region, "accountId": env.AccountID})
	})
	c.HandleFunc("GET resources", func(w http.ResponseWriter, _ *http.Request) {
		WriteControlJSON(w, http.StatusOK, r.Inventory())
	})
	c.HandleFunc("GET faults", func(w http.ResponseWriter, _ *http.Request) {
		WriteControlJSON(w, http.StatusOK, env.Faults.List())
	})
	c.HandleFunc("POST faults", func(w http.ResponseWriter, req *http.Request) {
		var rule FaultRule
		if err := DecodeControlJSON(req, &rule); err != nil {
			WriteControlError(w, http.StatusBadRequest, err.Error())
			return
		}
		if rule.Rate < 0 || rule.Rate > 1 || rule.Count < 0 {
			WriteControlError(w, http.StatusBadRequest, "rate must be within 0..1 and count not negative")
			return
		}
		if rule.LatencyP99 != 0 && rule.LatencyP99 < rule.Latency {
			WriteControlError(w, http.StatusBadRequest, "latencyP99 must be at least latency, the median")
			return
		}
		if rule.Code == "" && rule.Latency == 0 {
			WriteControlError(w, http.StatusBadRequest, "a fault needs a code or a latency")
			return
		}
		WriteControlJSON(w, http.StatusOK, env.Faults.Add(rule))
	})
	c.HandleFunc("DELETE faults", func(w http.ResponseWriter, _ *http.Request) {
		env.Faults.Clear()
		w.WriteHeader(http.StatusNoContent)
	})
	c.HandleFunc("DELETE faults/{id}", func(w http.ResponseWriter, req *http.Request) {
		if !env.Faults.Remove(req.PathValue("id")) {
			WriteControlError(w, http.StatusNotFound, "no fault "+req.PathValue("id"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return c
}

// Handle registers a control route. The pattern is an http.ServeMux pattern
// whose path is relative to /_localaws/: "POST lambda/kill" serves
// POST /_localaws/lambda/kill; path wildcards ({name}) work as in ServeMux.
func (c *Control) Handle(pattern string, h http.Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	path = ControlPrefix + strings.TrimPrefix(strings.TrimPrefix(path, ControlPrefix), "/")
	if method != "" {
		path = method + " " + path
	}
	c.mu.Lock()
	c.routes = append(c.routes, pattern)
	c.mu.Unlock()
	c.mux.Handle(path, h)
}

// Routes lists the patterns of the routes registered, in order ("POST
// lambda/kill"): what the documentation of the control API must cover.
func (c *Control) Routes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.routes...)
}

// HandleFunc registers a control route handler function (see Handle).
func (c *Control) HandleFunc(pattern string, fn func(http.ResponseWriter, *http.Request)) {
	c.Handle(pattern, http.HandlerFunc(fn))
}

// ServeHTTP implements http.Handler.
func (c *Control) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mux.ServeHTTP(w, r)
}

// WriteControlJSON writes a control API JSON response.
func WriteControlJSON(w http.ResponseWriter, status int, v any) {
	b, err := jsonBody(v)
	if err != nil {
		WriteControlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteControlError writes a control API error: {"error": message}.
func WriteControlError(w http.ResponseWriter, status int, message string) {
	WriteControlJSON(w, status, map[string]string{"error": message})
}

// DecodeControlJSON decodes a control API request body; an empty body
// leaves v unchanged.
func DecodeControlJSON(r *http.Request, v any) error {
	if r.Body == nil || r.ContentLength == 0 {
		return nil
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
