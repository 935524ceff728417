package scheduler

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Metrics are a schedule's counters, after Scheduler's CloudWatch metrics
// (InvocationAttemptCount, TargetErrorCount, InvocationsSentToDeadLetterCount,
// InvocationsFailedToBeSentToDeadLetterCount, InvocationDroppedCount).
type Metrics struct {
	Invocations          int64 `json:"invocations"`
	FailedInvocations    int64 `json:"failedInvocations"`
	DeadLetterDeliveries int64 `json:"deadLetterDeliveries"`
	DeadLetterFailures   int64 `json:"deadLetterFailures"`
	Dropped              int64 `json:"dropped"`
}

// FireResult is the outcome of the first attempt of a fired schedule.
type FireResult struct {
	ScheduleArn   string    `json:"scheduleArn"`
	ExecutionID   string    `json:"executionId"`
	ScheduledTime time.Time `json:"scheduledTime"`
	// Invoked is true when the target accepted the invocation.
	Invoked bool `json:"invoked"`
	// ErrorCode and ErrorMessage describe a failed attempt; retries and the
	// dead-letter queue follow in the background.
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// Metrics returns the counters by schedule ARN.
func (s *Service) Metrics() map[string]Metrics { return s.metrics.Snapshot() }

func (s *Service) count(arn string, fn func(m *Metrics)) { s.metrics.Count(arn, fn) }

// RegisterControl adds POST /_localaws/schedules/fire and
// GET /_localaws/schedules/metrics.
func (s *Service) RegisterControl(c *awsapi.Control) {
	c.HandleFunc("POST schedules/fire", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Name  string `json:"name"`
			Group string `json:"group"`
		}
		if err := awsapi.DecodeControlJSON(r, &in); err != nil || in.Name == "" {
			awsapi.WriteControlError(w, http.StatusBadRequest, "the body must be {\"name\": schedule, \"group\": group}")
			return
		}
		res, err := s.Fire(in.Group, in.Name)
		if err != nil {
			awsapi.WriteControlError(w, http.StatusNotFound, err.Error())
			return
		}
		awsapi.WriteControlJSON(w, http.StatusOK, res)
	})
	c.HandleFunc("GET schedules/metrics", func(w http.ResponseWriter, _ *http.Request) {
		awsapi.WriteControlJSON(w, http.StatusOK, map[string]any{"schedules": s.Metrics()})
	})
}

// Fire fires a schedule now, whatever its expression and state: the first
// attempt is made before Fire returns; retries and the dead-letter queue
// follow in the background.
func (s *Service) Fire(groupName, name string) (FireResult, error) {
	if groupName == "" {
		groupName = DefaultGroup
	}
	s.mu.Lock()
	sc, err := s.getScheduleLocked(groupName, name)
	if err != nil {
		s.mu.Unlock()
		return FireResult{}, err
	}
	p := s.planLocked(sc)
	s.mu.Unlock()
	return s.fire(p, s.opts.Clock.Now().UTC().Truncate(time.Second)), nil
}

// plan is an immutable snapshot of a schedule for its runner.
type plan struct {
	name, group, arn string
	cfg              config
	anchor           time.Time
	gen              int
}

func (s *Service) planLocked(sc *schedule) plan {
	anchor := sc.modified
	if sc.cfg.startDate != nil {
		anchor = *sc.cfg.startDate
	}
	return plan{name: sc.name, group: sc.group, arn: sc.arn, cfg: sc.cfg, anchor: anchor, gen: sc.gen}
}

// startLocked starts the runner of an enabled schedule.
func (s *Service) startLocked(sc *schedule) {
	sc.gen++
	if sc.cfg.state != "ENABLED" || s.Context().Err() != nil {
		return
	}
	sc.stop = make(chan struct{})
	p := s.planLocked(sc)
	p.anchor = s.opts.Clock.Now()
	if sc.cfg.startDate != nil {
		p.anchor = *sc.cfg.startDate
	}
	stop := sc.stop
	s.Go(func() { s.run(p, stop) })
}

// stopLocked stops the runner of a schedule, if any.
func (s *Service) stopLocked(sc *schedule) {
	if sc.stop != nil {
		close(sc.stop)
		sc.stop = nil
	}
}

func (s *Service) run(p plan, stop <-chan struct{}) {
	clock := s.opts.Clock
	after := clock.Now()
	for {
		from := after
		if p.cfg.startDate != nil && p.cfg.startDate.After(from) {
			from = p.cfg.startDate.Add(-time.Nanosecond)
		}
		at, ok := p.cfg.parsed.next(from, p.anchor, p.cfg.loc)
		if p.cfg.parsed.kind == "at" && !ok {
			// The time has passed: a one-time schedule never fires.
			return
		}
		if !ok || p.cfg.endDate != nil && at.After(*p.cfg.endDate) {
			s.complete(p)
			return
		}
		wait := at.Sub(clock.Now())
		if w := p.cfg.window; w.Mode == "FLEXIBLE" && w.MaximumWindowInMinutes != nil {
			wait += rand.N(time.Duration(*w.MaximumWindowInMinutes) * time.Minute)
		}
		select {
		case <-stop:
			return
		case <-s.Context().Done():
			return
		case <-clock.After(max(wait, 0)):
		}
		select {
		case <-stop:
			return
		default:
		}
		s.fire(p, at.UTC())
		after = at
		if p.cfg.parsed.kind == "at" {
			s.complete(p)
			return
		}
	}
}

// complete ends a schedule that has no occurrence left: with
// ActionAfterCompletion DELETE it is deleted.
func (s *Service) complete(p plan) {
	if p.cfg.after != "DELETE" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[p.group]; ok {
		if sc, ok := g.schedules[p.name]; ok && sc.gen == p.gen {
			s.removeLocked(sc)
		}
	}
}

func newExecutionID() string { return awsapi.RandomHex(8) }

// fire makes the first attempt of an occurrence and leaves retries and the
// dead-letter queue to the background.
func (s *Service) fire(p plan, scheduled time.Time) FireResult {
	res := FireResult{ScheduleArn: p.arn, ExecutionID: newExecutionID(), ScheduledTime: scheduled}
	err := s.attempt(p, res.ExecutionID, scheduled, 1)
	if err == nil {
		res.Invoked = true
		return res
	}
	e := awsapi.AsError(err)
	res.ErrorCode, res.ErrorMessage = e.Code, e.Message
	s.Go(func() { s.retry(p, res.ExecutionID, scheduled, e) })
	return res
}

// retry retries a failed occurrence per the target's RetryPolicy, then
// dead-letters it.
func (s *Service) retry(p plan, execID string, scheduled time.Time, last *awsapi.Error) {
	rp := p.cfg.target.RetryPolicy
	maxRetries, maxAge := DefaultMaxAttempts, DefaultMaxAge
	if rp != nil && rp.MaximumRetryAttempts != nil {
		maxRetries = *rp.MaximumRetryAttempts
	}
	if rp != nil && rp.MaximumEventAgeInSeconds != nil {
		maxAge = *rp.MaximumEventAgeInSeconds
	}
	first := time.Now()
	delay := s.opts.RetryBaseDelay
	retries := 0
	condition := "MaximumRetryAttempts"
	for retries < maxRetries {
		if time.Since(first)+delay > time.Duration(maxAge)*time.Second {
			condition = "MaximumEventAgeInSeconds"
			break
		}
		if !awsapi.Sleep(s.Context(), delay) {
			return
		}
		retries++
		err := s.attempt(p, execID, scheduled, retries+1)
		if err == nil {
			return
		}
		last = awsapi.AsError(err)
		delay = min(2*delay, s.opts.RetryMaxDelay)
	}
	s.deadLetter(p, execID, scheduled, last, retries, condition)
}

// payload substitutes the context attributes AWS documents in the input.
func payload(p plan, execID string, scheduled time.Time, attemptNo int) string {
	in := "{}"
	if p.cfg.target.Input != nil {
		in = *p.cfg.target.Input
	}
	return strings.NewReplacer(
		"<aws.scheduler.schedule-arn>", p.arn,
		"<aws.scheduler.scheduled-time>", scheduled.UTC().Format(time.RFC3339),
		"<aws.scheduler.execution-id>", execID,
		"<aws.scheduler.attempt-number>", strconv.Itoa(attemptNo),
	).Replace(in)
}

// attempt invokes the target once, as the execution role.
func (s *Service) attempt(p plan, execID string, scheduled time.Time, attemptNo int) (err error) {
	s.count(p.arn, func(m *Metrics) { m.Invocations++ })
	defer func() {
		if err != nil {
			s.count(p.arn, func(m *Metrics) { m.FailedInvocations++ })
		}
	}()
	t := p.cfg.target
	if s.deps.Roles != nil {
		if rc := s.deps.Roles(); rc != nil {
			if err := rc.RoleAssumableBy(t.RoleArn, ServicePrincipal); err != nil {
				return err
			}
		}
	}
	// The session Scheduler opens on the execution role.
	principal := s.env.RolePrincipal(t.RoleArn, execID)
	body := payload(p, execID, scheduled, attemptNo)
	a, _ := awsapi.ParseARN(t.Arn)
	switch a.Service {
	case "lambda":
		if err := s.env.AuthorizeAs(principal, "lambda:InvokeFunction", t.Arn); err != nil {
			return err
		}
		fi, err := awsapi.Dependency(s.deps.Functions, "lambda", awsapi.InternalFailure)
		if err != nil {
			return err
		}
		return fi.InvokeAsync(s.Context(), t.Arn, []byte(body))
	case "sqs":
		if err := s.env.AuthorizeAs(principal, "sqs:SendMessage", t.Arn); err != nil {
			return err
		}
		q, err := s.queues()
		if err != nil {
			return err
		}
		_, err = q.DeliverToGroup(t.Arn, t.messageGroup(), body, nil)
		return err
	}
	return awsapi.ValidationException("unsupported target %s", t.Arn)
}

func (s *Service) queues() (QueueSink, error) {
	return awsapi.Dependency(s.deps.Queues, "sqs", awsapi.InternalFailure)
}

// deadLetter sends an occurrence whose retries are exhausted to the DLQ,
// with the body the target would have received and AWS's attributes. The
// DLQ is a standard queue (dlqArnRE refuses a FIFO queue's ARN, as AWS
// does), so its messages have no group.
func (s *Service) deadLetter(p plan, execID string, scheduled time.Time, last *awsapi.Error, retries int, condition string) {
	dlq := p.cfg.target.DeadLetterConfig
	if dlq == nil || dlq.Arn == "" {
		s.count(p.arn, func(m *Metrics) { m.Dropped++ })
		return
	}
	attrs := map[string]string{
		"ERROR_CODE":                last.Code,
		"ERROR_MESSAGE":             last.Message,
		"EXECUTION_ID":              execID,
		"EXHAUSTED_RETRY_CONDITION": condition,
		"IS_PAYLOAD_TRUNCATED":      "false",
		"RETRY_ATTEMPTS":            strconv.Itoa(retries),
		"SCHEDULED_TIME":            scheduled.UTC().Format(time.RFC3339),
		"SCHEDULE_ARN":              p.arn,
		"TARGET_ARN":                p.cfg.target.Arn,
	}
	err := s.env.AuthorizeAs(s.env.RolePrincipal(p.cfg.target.RoleArn, execID), "sqs:SendMessage", dlq.Arn)
	if err == nil {
		var q QueueSink
		if q, err = s.queues(); err == nil {
			_, err = q.DeliverToGroup(dlq.Arn, "", payload(p, execID, scheduled, retries+1), attrs)
		}
	}
	if err != nil {
		s.env.Logger.Warn("scheduler: dead-letter delivery failed", "schedule", p.arn, "queue", dlq.Arn, "error", fmt.Sprint(err))
		s.count(p.arn, func(m *Metrics) { m.DeadLetterFailures++ })
		return
	}
	s.count(p.arn, func(m *Metrics) { m.DeadLetterDeliveries++ })
}
