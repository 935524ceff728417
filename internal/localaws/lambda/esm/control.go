package esm

import (
	"net/http"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// ShardStatus is the progress of a mapping on one shard.
type ShardStatus struct {
	ShardID string `json:"shardId"`
	// Checkpoint is the sequence number of the last processed record.
	Checkpoint string `json:"checkpoint"`
	// InFlight counts records read and matched but not yet processed.
	InFlight int `json:"inFlight"`
	// Pending counts records read and not yet checkpointed.
	Pending  int  `json:"pending"`
	Finished bool `json:"finished"`
}

// Status is the poller state of one mapping.
type Status struct {
	UUID                 string        `json:"uuid"`
	State                string        `json:"state"`
	LastProcessingResult string        `json:"lastProcessingResult"`
	Paused               bool          `json:"paused"`
	Polling              bool          `json:"polling"`
	Shards               []ShardStatus `json:"shards"`
	Counters             Counters      `json:"counters"`
}

// Status returns the poller state of a mapping.
func (s *Service) Status(uuid string) (Status, bool) {
	m, ok := s.mapping(uuid)
	if !ok {
		return Status{}, false
	}
	return m.status(), true
}

// Pause stops a mapping's poller from reading and invoking without
// changing its state. It reports whether the mapping exists.
func (s *Service) Pause(uuid string) bool { return s.setPaused(uuid, true) }

// Resume undoes Pause.
func (s *Service) Resume(uuid string) bool { return s.setPaused(uuid, false) }

func (s *Service) setPaused(uuid string, paused bool) bool {
	m, ok := s.mapping(uuid)
	if !ok {
		return false
	}
	m.mu.Lock()
	m.paused = paused
	m.mu.Unlock()
	return true
}

func (m *mapping) status() Status {
	m.mu.Lock()
	st := Status{
		UUID:                 m.uuid,
		State:                m.state,
		LastProcessingResult: m.lastResult,
		Paused:               m.paused,
		Polling:              m.cancel != nil,
		Shards:               []ShardStatus{},
	}
	run := m.run
	for _, id := range m.shardOrder {
		cp := m.shards[id]
		st.Shards = append(st.Shards, ShardStatus{ShardID: id, Checkpoint: cp.checkpoint, Finished: cp.finished})
	}
	m.mu.Unlock()
	if run != nil {
		run.mu.Lock()
		for i := range st.Shards {
			if sr, ok := run.shards[st.Shards[i].ShardID]; ok {
				st.Shards[i].InFlight = sr.inFlight
				st.Shards[i].Pending = len(sr.pending)
			}
		}
		run.mu.Unlock()
	}
	st.Counters = m.counters.snapshot()
	return st
}

type uuidBody struct {
	UUID string `json:"uuid"`
}

// RegisterControl adds the mappings control routes.
func (s *Service) RegisterControl(c *awsapi.Control) {
	c.HandleFunc("POST mappings/pause", func(w http.ResponseWriter, r *http.Request) {
		s.controlPause(w, r, true)
	})
	c.HandleFunc("POST mappings/resume", func(w http.ResponseWriter, r *http.Request) {
		s.controlPause(w, r, false)
	})
	c.HandleFunc("GET mappings/status", func(w http.ResponseWriter, r *http.Request) {
		if uuid := r.URL.Query().Get("uuid"); uuid != "" {
			st, ok := s.Status(uuid)
			if !ok {
				awsapi.WriteControlError(w, http.StatusNotFound, "no event source mapping "+uuid)
				return
			}
			awsapi.WriteControlJSON(w, http.StatusOK, st)
			return
		}
		out := []Status{}
		for _, c := range s.Mappings() {
			if st, ok := s.Status(c.UUID); ok {
				out = append(out, st)
			}
		}
		awsapi.WriteControlJSON(w, http.StatusOK, out)
	})
}

func (s *Service) controlPause(w http.ResponseWriter, r *http.Request, paused bool) {
	var body uuidBody
	if err := awsapi.DecodeControlJSON(r, &body); err != nil || body.UUID == "" {
		awsapi.WriteControlError(w, http.StatusBadRequest, `a body {"uuid": "…"} is required`)
		return
	}
	if !s.setPaused(body.UUID, paused) {
		awsapi.WriteControlError(w, http.StatusNotFound, "no event source mapping "+body.UUID)
		return
	}
	st, _ := s.Status(body.UUID)
	awsapi.WriteControlJSON(w, http.StatusOK, st)
}
