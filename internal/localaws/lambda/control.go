package lambda

import (
	"net/http"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// KillResult is the answer of POST /_localaws/lambda/kill.
type KillResult struct {
	// Killed is true when a process was killed in the middle of an
	// invocation; false when the kill is armed for the next invocation.
	Killed bool `json:"killed"`
}

// Instances is the answer of GET /_localaws/lambda/instances/{function}.
type Instances struct {
	// Live is the number of running processes, Busy those serving an
	// invocation, Running those whose runtime has received its invocation,
	// Started the processes started since the function was created.
	Live    int `json:"live"`
	Busy    int `json:"busy"`
	Running int `json:"running"`
	Started int `json:"started"`
}

// RegisterControl implements awsapi.ControlRegistrar:
//
//	POST /_localaws/lambda/kill            {"function": "f"} → KillResult
//	     kills a process of f in the middle of its current invocation, or
//	     of the next invocation when none is running; that invocation
//	     fails with Runtime.ExitError.
//	GET  /_localaws/lambda/instances/{fn}  → Instances
//	POST /_localaws/lambda/stop            {"function": "f"} → {"stopped": n}
//	     stops every process of f: the next invocation starts cold.
//	GET  /_localaws/lambda/code/{fn}       the function's zip (Code.Location)
func (s *Service) RegisterControl(c *awsapi.Control) {
	c.HandleFunc("POST lambda/kill", func(w http.ResponseWriter, r *http.Request) {
		f, ok := s.controlFunction(w, r)
		if !ok {
			return
		}
		awsapi.WriteControlJSON(w, http.StatusOK, KillResult{Killed: f.pool.killInFlight()})
	})
	c.HandleFunc("POST lambda/stop", func(w http.ResponseWriter, r *http.Request) {
		f, ok := s.controlFunction(w, r)
		if !ok {
			return
		}
		awsapi.WriteControlJSON(w, http.StatusOK, map[string]int{"stopped": f.pool.stopAll()})
	})
	c.HandleFunc("GET lambda/instances/{function}", func(w http.ResponseWriter, r *http.Request) {
		f, ok := s.find(w, r.PathValue("function"))
		if !ok {
			return
		}
		live, busy, running, started := f.pool.counts()
		awsapi.WriteControlJSON(w, http.StatusOK, Instances{Live: live, Busy: busy, Running: running, Started: started})
	})
	c.HandleFunc("GET lambda/code/{function}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		f, err := s.lookupLocked(r.PathValue("function"), "")
		var zip []byte
		if err == nil {
			zip = f.cfg.Zip
		}
		s.mu.Unlock()
		if err != nil {
			awsapi.WriteControlError(w, http.StatusNotFound, err.Message)
			return
		}
		w.Header().Set("Content-Type", "application/zip")
		_, _ = w.Write(zip)
	})
}

func (s *Service) controlFunction(w http.ResponseWriter, r *http.Request) (*function, bool) {
	var in struct {
		Function string `json:"function"`
	}
	if err := awsapi.DecodeControlJSON(r, &in); err != nil {
		awsapi.WriteControlError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	return s.find(w, in.Function)
}

func (s *Service) find(w http.ResponseWriter, name string) (*function, bool) {
	s.mu.Lock()
	f, err := s.lookupLocked(name, "")
	s.mu.Unlock()
	if err != nil {
		awsapi.WriteControlError(w, http.StatusNotFound, err.Message)
		return nil, false
	}
	return f, true
}
