package awsapi

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Duration is a time.Duration written in JSON as a Go duration string
// ("250ms"); a number is read as milliseconds.
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var ms float64
		if err2 := json.Unmarshal(b, &ms); err2 != nil {
			return err
		}
		*d = Duration(ms * float64(time.Millisecond))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// FaultRule injects an error or latency into matching requests.
type FaultRule struct {
	// ID is assigned when the rule is added.
	ID string `json:"id,omitempty"`
	// Service is a Spec.Name ("dynamodb"); "" or "*" matches every service.
	Service string `json:"service,omitempty"`
	// Operation is an operation name ("PutItem"); "" or "*" matches all.
	Operation string `json:"operation,omitempty"`
	// Code is the error code to return. Empty injects latency only.
	Code string `json:"code,omitempty"`
	// Message is the error message.
	Message string `json:"message,omitempty"`
	// HTTPStatus of the error; 400 when empty (500 for codes that are
	// server faults: InternalFailure, InternalServerError,
	// ServiceUnavailable).
	HTTPStatus int `json:"httpStatus,omitempty"`
	// Rate is the probability (0..1] that a matching request fires the
	// rule; 0 means always.
	Rate float64 `json:"rate,omitempty"`
	// Count limits how many times the rule fires; 0 is unlimited. The rule
	// is removed when it reaches zero.
	Count int `json:"count,omitempty"`
	// Latency is added before the request is served (or fails).
	Latency Duration `json:"latency,omitempty"`
	// LatencyP99, when greater than Latency, makes the added latency a
	// random draw instead of a constant: log-normal, with Latency as its
	// median and LatencyP99 as its 99th percentile, the long-tailed shape
	// of service call latencies.
	LatencyP99 Duration `json:"latencyP99,omitempty"`
	// Entry makes this a per-entry fault: the router ignores it; services
	// consult it through Faults.EntryFault for each entry of a batch (for
	// example PutEvents entries).
	Entry bool `json:"entry,omitempty"`
	// Fired counts how many times the rule fired.
	Fired int `json:"fired,omitempty"`
}

// Error returns the *Error the rule injects.
func (f FaultRule) Error() *Error {
	status := f.HTTPStatus
	if status == 0 {
		status = http.StatusBadRequest
		switch f.Code {
		case "InternalFailure", "InternalServerError", "InternalError", "ServiceUnavailable", "ServiceException":
			status = http.StatusInternalServerError
		}
	}
	msg := f.Message
	if msg == "" {
		msg = "injected fault"
	}
	return &Error{Code: f.Code, Message: msg, HTTPStatus: status, Sender: status < 500}
}

// Faults is the fault injection registry.
type Faults struct {
	mu    sync.Mutex
	rules []*FaultRule
	next  int
	rand  func() float64
}

// NewFaults returns an empty registry.
func NewFaults() *Faults {
	return &Faults{rand: rand.Float64}
}

// Add adds a rule and returns it with its id.
func (f *Faults) Add(r FaultRule) FaultRule {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	r.ID = "fault-" + strconv.Itoa(f.next)
	r.Fired = 0
	f.rules = append(f.rules, &r)
	return r
}

// List returns the rules in the order they were added.
func (f *Faults) List() []FaultRule {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FaultRule, len(f.rules))
	for i, r := range f.rules {
		out[i] = *r
	}
	return out
}

// Remove removes one rule; it reports whether it existed.
func (f *Faults) Remove(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rules {
		if r.ID == id {
			f.rules = append(f.rules[:i], f.rules[i+1:]...)
			return true
		}
	}
	return false
}

// Clear removes every rule.
func (f *Faults) Clear() {
	f.mu.Lock()
	f.rules = nil
	f.mu.Unlock()
}

// Request consults the request-level rules for service and operation. It
// returns the total latency to add and the error of the first firing rule
// with a code (nil when none).
func (f *Faults) Request(service, operation string) (time.Duration, *Error) {
	latency, rule := f.fire(service, operation, false)
	if rule == nil {
		return latency, nil
	}
	return latency, rule.Error()
}

// EntryFault consults the per-entry rules (Entry: true) for one entry of a
// batch operation. ok is true when a rule fires.
func (f *Faults) EntryFault(service, operation string) (code, message string, ok bool) {
	_, rule := f.fire(service, operation, true)
	if rule == nil {
		return "", "", false
	}
	e := rule.Error()
	return e.Code, e.Message, true
}

func (f *Faults) fire(service, operation string, entry bool) (time.Duration, *FaultRule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var latency time.Duration
	var hit *FaultRule
	kept := f.rules[:0]
	for _, r := range f.rules {
		keep := true
		if r.Entry == entry && matches(r.Service, service) && matches(r.Operation, operation) &&
			(r.Code == "" || hit == nil) && (r.Rate <= 0 || f.rand() < r.Rate) {
			latency += r.delay(f.rand)
			r.Fired++
			if r.Code != "" {
				c := *r
				hit = &c
			}
			if r.Count > 0 {
				r.Count--
				keep = r.Count > 0
			}
		}
		if keep {
			kept = append(kept, r)
		}
	}
	for i := len(kept); i < len(f.rules); i++ {
		f.rules[i] = nil
	}
	f.rules = kept
	return latency, hit
}

// z99 is the standard normal distribution's 99th percentile.
const z99 = 2.3263478740408408

// delay is the latency the rule adds to one request; uniform draws
// values in [0, 1).
func (f FaultRule) delay(uniform func() float64) time.Duration {
	median, p99 := float64(f.Latency), float64(f.LatencyP99)
	if p99 <= median || median <= 0 {
		return time.Duration(f.Latency)
	}
	sigma := math.Log(p99/median) / z99
	// Box-Muller: a standard normal draw from two uniform ones.
	z := math.Sqrt(-2*math.Log(1-uniform())) * math.Cos(2*math.Pi*uniform())
	return time.Duration(median * math.Exp(sigma*z))
}

func matches(pattern, v string) bool {
	return pattern == "" || pattern == "*" || pattern == v
}
