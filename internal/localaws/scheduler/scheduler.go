// Package scheduler is Amazon EventBridge Scheduler (restJson1, signing name
// "scheduler") for the local AWS stack: schedules and schedule groups, their
// tags, and the firing of schedules on their rate(), cron() or at()
// expressions.
//
// Each enabled schedule has its own runner that waits for the next
// occurrence on the service's clock and fires it: the target (a Lambda
// function, invoked asynchronously, or an SQS queue) is called as the
// schedule's execution role, so the role's identity policies decide whether
// the invocation may happen. A failed invocation is retried per the target's
// RetryPolicy, then sent to its DeadLetterConfig queue with the message
// attributes AWS documents (ERROR_CODE, ERROR_MESSAGE, EXECUTION_ID,
// EXHAUSTED_RETRY_CONDITION, IS_PAYLOAD_TRUNCATED, RETRY_ATTEMPTS,
// SCHEDULED_TIME, SCHEDULE_ARN, TARGET_ARN), which the role must be allowed
// to send to. An SQS FIFO queue target takes its messages' group from
// SqsParameters.MessageGroupId and needs ContentBasedDeduplication, since
// the scheduler gives no deduplication id; a dead-letter queue is a standard
// queue, as AWS refuses a FIFO queue's ARN there.
//
// Control routes:
//
//	POST /_localaws/schedules/fire     {"name":…,"group":…} → FireResult
//	GET  /_localaws/schedules/metrics  {"schedules":{arn: Metrics}}
//
// Known differences from AWS: a rate() schedule without StartDate first
// fires one period after it is created or updated; an at() schedule whose
// time has passed never fires; failed invocations are retried after local
// delays (Options.RetryBaseDelay) rather than AWS's minutes; the L, W and #
// cron wildcards are rejected.
package scheduler

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // ScheduleExpressionTimezone needs the zone database.

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// ServiceName is the Spec.Name of the service.
const ServiceName = "scheduler"

// Constants of the service as AWS documents them.
const (
	DefaultGroup       = "default"
	ServicePrincipal   = "scheduler.amazonaws.com"
	DefaultMaxAttempts = 185
	DefaultMaxAge      = 86400
)

// FunctionInvoker invokes Lambda functions asynchronously (the lambda
// service).
type FunctionInvoker interface {
	InvokeAsync(ctx context.Context, function string, payload []byte) error
}

// QueueSink delivers messages to SQS queues (the sqs service), to a
// message group for a FIFO queue.
type QueueSink interface {
	DeliverToGroup(queueArn, groupID, body string, attributes map[string]string) (messageID string, err error)
}

// RoleChecker tells whether a role can be assumed by a service principal
// (the iam service).
type RoleChecker interface {
	RoleAssumableBy(roleArn, servicePrincipal string) error
}

// Deps resolves the services the scheduler calls, at use time.
type Deps struct {
	Functions func() (FunctionInvoker, error)
	Queues    func() (QueueSink, error)
	// Roles returns the role checker, or nil when there is none (any role
	// is accepted).
	Roles func() RoleChecker
}

// Clock is the time source of schedule runners.
type Clock interface {
	Now() time.Time
	// After waits for d on this clock.
	After(d time.Duration) <-chan time.Time
}

// Options configure the service. The zero value is usable.
type Options struct {
	// Clock drives the schedules; default the stack's clock (Env.Time) with
	// real timers.
	Clock Clock
	// RetryBaseDelay is the wait before the first retry of a failed
	// invocation, doubled for each further retry up to RetryMaxDelay;
	// defaults 1s and 30s.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
}

type envClock struct{ env *awsapi.Env }

func (c envClock) Now() time.Time                         { return c.env.Time() }
func (c envClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Service is the EventBridge Scheduler service.
type Service struct {
	*awsapi.Lifecycle
	*awsapi.Routes
	env  *awsapi.Env
	deps Deps
	opts Options

	mu      sync.Mutex
	groups  map[string]*group
	metrics awsapi.Counters[Metrics] // by schedule ARN
	// deleteTokens remembers the ClientToken of deletions, so a repeated
	// DeleteSchedule succeeds.
	deleteTokens map[string]string
}

// The embedded Lifecycle makes it an awsapi.Inventory and awsapi.Closer.
var (
	_ awsapi.Service           = (*Service)(nil)
	_ awsapi.OperationResolver = (*Service)(nil)
	_ awsapi.ControlRegistrar  = (*Service)(nil)
)

type group struct {
	name, arn         string
	created, modified time.Time
	tags              map[string]string
	clientToken       string
	schedules         map[string]*schedule
}

type schedule struct {
	name, group, arn string
	cfg              config
	created          time.Time
	modified         time.Time
	createToken      string
	updateToken      string
	// runner of an enabled schedule; gen identifies it.
	stop chan struct{}
	gen  int
}

// config is what CreateSchedule and UpdateSchedule set.
type config struct {
	expression  string
	parsed      *expression
	timezone    string
	loc         *time.Location
	startDate   *time.Time
	endDate     *time.Time
	state       string
	description string
	kmsKeyArn   string
	after       string // ActionAfterCompletion
	window      flexibleTimeWindow
	target      target
}

type flexibleTimeWindow struct {
	Mode                   string
	MaximumWindowInMinutes *int `json:",omitempty"`
}

type retryPolicy struct {
	MaximumEventAgeInSeconds *int `json:",omitempty"`
	MaximumRetryAttempts     *int `json:",omitempty"`
}

type deadLetterConfig struct {
	Arn string `json:",omitempty"`
}

// sqsParameters are a target's SqsParameters: the message group of the
// messages it sends to a FIFO queue.
type sqsParameters struct {
	MessageGroupId *string `json:",omitempty"`
}

type target struct {
	Arn              string
	RoleArn          string
	Input            *string           `json:",omitempty"`
	RetryPolicy      *retryPolicy      `json:",omitempty"`
	DeadLetterConfig *deadLetterConfig `json:",omitempty"`
	SqsParameters    *sqsParameters    `json:",omitempty"`
}

// messageGroup is the message group of the target's SQS messages, "" for
// none.
func (t target) messageGroup() string {
	if t.SqsParameters == nil || t.SqsParameters.MessageGroupId == nil {
		return ""
	}
	return *t.SqsParameters.MessageGroupId
}

// New returns a scheduler with the default schedule group.
func New(env *awsapi.Env, deps Deps, opts Options) *Service {
	if opts.Clock == nil {
		opts.Clock = envClock{env}
	}
	if opts.RetryBaseDelay <= 0 {
		opts.RetryBaseDelay = time.Second
	}
	if opts.RetryMaxDelay <= 0 {
		opts.RetryMaxDelay = 30 * time.Second
	}
	s := &Service{Lifecycle: awsapi.NewLifecycle(), env: env, deps: deps, opts: opts, groups: map[string]*group{},
		deleteTokens: map[string]string{}}
	s.Routes = awsapi.NewRoutes(s.operations())
	s.Lists(&s.mu, s.inventory)
	s.OnStop(s.stopRunners)
	now := env.Time()
	s.groups[DefaultGroup] = &group{name: DefaultGroup, arn: s.groupArn(DefaultGroup), created: now, modified: now,
		tags: map[string]string{}, schedules: map[string]*schedule{}}
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: ServiceName, Protocol: awsapi.RESTJSON, SigningName: "scheduler"}
}

// stopRunners stops every runner when the service closes; Close then waits
// for the invocations in flight.
func (s *Service) stopRunners() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		for _, sc := range g.schedules {
			s.stopLocked(sc)
		}
	}
}

// inventory lists schedules and non-default groups.
func (s *Service) inventory(add func(string)) {
	for _, g := range s.groups {
		if g.name != DefaultGroup {
			add(g.arn)
		}
		for _, sc := range g.schedules {
			add(sc.arn)
		}
	}
}

func (s *Service) groupArn(name string) string { return s.env.ARN("scheduler", "schedule-group/"+name) }
func (s *Service) scheduleArn(group, name string) string {
	return s.env.ARN("scheduler", "schedule/"+group+"/"+name)
}

// operations is the table of the operations served, routed by method and
// path as the Scheduler model has them.
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"CreateSchedule":      {Route: "POST /schedules/{Name}", Handle: awsapi.Decoded(s.createSchedule)},
		"GetSchedule":         {Route: "GET /schedules/{Name}", Handle: s.getSchedule},
		"UpdateSchedule":      {Route: "PUT /schedules/{Name}", Handle: awsapi.Decoded(s.updateSchedule)},
		"DeleteSchedule":      {Route: "DELETE /schedules/{Name}", Handle: s.deleteSchedule},
		"ListSchedules":       {Route: "GET /schedules", Handle: s.listSchedules},
		"CreateScheduleGroup": {Route: "POST /schedule-groups/{Name}", Handle: awsapi.Decoded(s.createGroup)},
		"GetScheduleGroup":    {Route: "GET /schedule-groups/{Name}", Handle: s.getGroup},
		"DeleteScheduleGroup": {Route: "DELETE /schedule-groups/{Name}", Handle: s.deleteGroup},
		"ListScheduleGroups":  {Route: "GET /schedule-groups", Handle: s.listGroups},
		"TagResource":         {Route: "POST /tags/{ResourceArn...}", Handle: awsapi.Decoded(s.tagResource)},
		"UntagResource":       {Route: "DELETE /tags/{ResourceArn...}", Handle: s.untagResource},
		"ListTagsForResource": {Route: "GET /tags/{ResourceArn...}", Handle: s.listTags},
	}
}

// ---- validation ----

var (
	nameRE    = regexp.MustCompile(`^[0-9a-zA-Z\-_.]{1,64}$`)
	roleArnRE = regexp.MustCompile(`^arn:aws(-[a-z]+)?:iam::\d{12}:role/[\w+=,.@/-]+$`)
	dlqArnRE  = regexp.MustCompile(`^arn:aws(-[a-z]+)?:sqs:[a-z0-9\-]+:\d{12}:[a-zA-Z0-9\-_]+$`)
	kmsArnRE  = regexp.MustCompile(`^arn:aws(-[a-z]+)?:kms:[a-z0-9\-]+:\d{12}:(key|alias)/[0-9a-zA-Z-_]*$`)
)

// constraint is the standard validation message of AWS JSON services.
func constraint(value any, member, rule string) *awsapi.Error {
	return awsapi.ValidationException("1 validation error detected: Value '%v' at '%s' failed to satisfy constraint: %s", value, member, rule)
}

// states are the states of a schedule, the default first.
var states = []string{"ENABLED", "DISABLED"}

// enum is v, or the first of values (the default) when v is empty; any
// other value is refused with AWS's message for member.
func enum(v, member string, values ...string) (string, error) {
	if v == "" {
		return values[0], nil
	}
	if !slices.Contains(values, v) {
		return "", constraint(v, member, "Member must satisfy enum value set: ["+strings.Join(values, ", ")+"]")
	}
	return v, nil
}

// bounded sets *p to def when absent, and refuses a value outside lo..hi
// with AWS's message for member.
func bounded(p **int, def, lo, hi int, member string) error {
	if *p == nil {
		*p = &def
		return nil
	}
	if v := **p; v < lo || v > hi {
		return constraint(v, member, fmt.Sprintf("Member must have value between %d and %d", lo, hi))
	}
	return nil
}

func checkName(name, member string) error {
	if !nameRE.MatchString(name) {
		return constraint(name, member, `Member must satisfy regular expression pattern: ^[0-9a-zA-Z-_.]+$ and have length between 1 and 64`)
	}
	return nil
}

func groupName(s string) string {
	if s == "" {
		return DefaultGroup
	}
	return s
}

// scheduleInput is the body of CreateSchedule and UpdateSchedule.
type scheduleInput struct {
	ActionAfterCompletion      string
	ClientToken                string
	Description                *string
	EndDate                    *float64
	FlexibleTimeWindow         *flexibleTimeWindow
	GroupName                  string
	KmsKeyArn                  *string
	ScheduleExpression         *string
	ScheduleExpressionTimezone *string
	StartDate                  *float64
	State                      string
	Target                     *target
}

func fromEpoch(f *float64) *time.Time {
	if f == nil {
		return nil
	}
	t := time.UnixMilli(int64(*f * 1000)).UTC()
	return &t
}

// validate turns an input into a config, with AWS's checks.
func (s *Service) validate(req *awsapi.Request, in scheduleInput) (config, error) {
	var c config
	if in.ScheduleExpression == nil || *in.ScheduleExpression == "" {
		return c, constraint(nil, "scheduleExpression", "Member must not be null")
	}
	if in.FlexibleTimeWindow == nil {
		return c, constraint(nil, "flexibleTimeWindow", "Member must not be null")
	}
	if in.Target == nil {
		return c, constraint(nil, "target", "Member must not be null")
	}
	c.expression = *in.ScheduleExpression
	c.timezone = "UTC"
	if in.ScheduleExpressionTimezone != nil && *in.ScheduleExpressionTimezone != "" {
		c.timezone = *in.ScheduleExpressionTimezone
	}
	loc, err := time.LoadLocation(c.timezone)
	if err != nil || c.timezone == "Local" {
		return c, awsapi.ValidationException("Invalid timezone %s.", c.timezone)
	}
	c.loc = loc
	if c.parsed, err = parseExpression(c.expression, loc); err != nil {
		return c, awsapi.ValidationException("%s", err.Error())
	}
	if err := c.setOptions(in); err != nil {
		return c, err
	}
	if err := c.setWindow(*in.FlexibleTimeWindow); err != nil {
		return c, err
	}
	if err := c.setTarget(*in.Target); err != nil {
		return c, err
	}
	if err := req.Authorize("iam:PassRole", c.target.RoleArn); err != nil {
		return c, err
	}
	if s.deps.Roles != nil {
		if rc := s.deps.Roles(); rc != nil {
			if err := rc.RoleAssumableBy(c.target.RoleArn, ServicePrincipal); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// setOptions sets the dates, state, action after completion, description
// and key of a schedule.
func (c *config) setOptions(in scheduleInput) error {
	c.startDate, c.endDate = fromEpoch(in.StartDate), fromEpoch(in.EndDate)
	if c.startDate != nil && c.endDate != nil && !c.endDate.After(*c.startDate) {
		return awsapi.ValidationException("The EndDate you specify must be after the StartDate.")
	}
	var err error
	if c.state, err = enum(in.State, "state", states...); err != nil {
		return err
	}
	if c.after, err = enum(in.ActionAfterCompletion, "actionAfterCompletion", "NONE", "DELETE"); err != nil {
		return err
	}
	if in.Description != nil {
		if len(*in.Description) > 512 {
			return constraint(*in.Description, "description", "Member must have length less than or equal to 512")
		}
		c.description = *in.Description
	}
	if in.KmsKeyArn != nil {
		if !kmsArnRE.MatchString(*in.KmsKeyArn) {
			return constraint(*in.KmsKeyArn, "kmsKeyArn", `Member must satisfy regular expression pattern: arn:aws(-[a-z]+)?:kms:[a-z0-9\-]+:\d{12}:(key|alias)\/[0-9a-zA-Z-_]*`)
		}
		c.kmsKeyArn = *in.KmsKeyArn
	}
	return nil
}

// setWindow sets the flexible time window of a schedule.
func (c *config) setWindow(w flexibleTimeWindow) error {
	switch w.Mode {
	case "OFF":
		if w.MaximumWindowInMinutes != nil {
			return awsapi.ValidationException("MaximumWindowInMinutes must not be provided when the FlexibleTimeWindow mode is OFF.")
		}
	case "FLEXIBLE":
		if w.MaximumWindowInMinutes == nil {
			return awsapi.ValidationException("MaximumWindowInMinutes must be provided when the FlexibleTimeWindow mode is FLEXIBLE.")
		}
		if m := *w.MaximumWindowInMinutes; m < 1 || m > 1440 {
			return constraint(m, "flexibleTimeWindow.maximumWindowInMinutes", "Member must have value between 1 and 1440")
		}
	default:
		return constraint(w.Mode, "flexibleTimeWindow.mode", "Member must satisfy enum value set: [OFF, FLEXIBLE]")
	}
	c.window = w
	return nil
}

// setTarget sets the target of a schedule, with the retry policy's
// defaults.
func (c *config) setTarget(t target) error {
	if !roleArnRE.MatchString(t.RoleArn) {
		return constraint(t.RoleArn, "target.roleArn", `Member must satisfy regular expression pattern: ^arn:aws(-[a-z]+)?:iam::\d{12}:role\/[\w+=,.@\/-]+$`)
	}
	a, err := awsapi.ParseARN(t.Arn)
	if err != nil {
		return awsapi.ValidationException("Invalid target arn %s.", t.Arn)
	}
	switch {
	case a.Service == "lambda" && strings.HasPrefix(a.Resource, "function:"):
	case a.Service == "sqs" && a.Resource != "" && !strings.Contains(a.Resource, ":"):
	default:
		return awsapi.ValidationException("Invalid target arn %s. The local stack's scheduler supports Lambda function and SQS queue targets.", t.Arn)
	}
	if t.RetryPolicy == nil {
		t.RetryPolicy = &retryPolicy{}
	}
	rp := *t.RetryPolicy
	if err := bounded(&rp.MaximumEventAgeInSeconds, DefaultMaxAge, 60, 86400, "target.retryPolicy.maximumEventAgeInSeconds"); err != nil {
		return err
	}
	if err := bounded(&rp.MaximumRetryAttempts, DefaultMaxAttempts, 0, 185, "target.retryPolicy.maximumRetryAttempts"); err != nil {
		return err
	}
	t.RetryPolicy = &rp
	if t.DeadLetterConfig != nil && t.DeadLetterConfig.Arn != "" && !dlqArnRE.MatchString(t.DeadLetterConfig.Arn) {
		return constraint(t.DeadLetterConfig.Arn, "target.deadLetterConfig.arn", `Member must satisfy regular expression pattern: arn:aws(-[a-z]+)?:sqs:[a-z0-9\-]+:\d{12}:[a-zA-Z0-9\-_]+`)
	}
	if p := t.SqsParameters; p != nil && p.MessageGroupId != nil {
		if n := len(*p.MessageGroupId); n < 1 || n > 128 {
			return constraint(*p.MessageGroupId, "target.sqsParameters.messageGroupId", "Member must have length between 1 and 128")
		}
	}
	if t.Input != nil && len(*t.Input) > 8192 {
		return constraint("***", "target.input", "Member must have length less than or equal to 8192")
	}
	c.target = t
	return nil
}

// ---- schedules ----

func (s *Service) getGroupLocked(name string) (*group, error) {
	g, ok := s.groups[name]
	if !ok {
		return nil, awsapi.NotFound404("Schedule group %s does not exist.", name)
	}
	return g, nil
}

func (s *Service) getScheduleLocked(groupName, name string) (*schedule, error) {
	g, err := s.getGroupLocked(groupName)
	if err != nil {
		return nil, err
	}
	if sc, ok := g.schedules[name]; ok {
		return sc, nil
	}
	return nil, awsapi.NotFound404("Schedule %s does not exist.", name)
}

func (s *Service) createSchedule(req *awsapi.Request, in *scheduleInput) (any, error) {
	name := req.PathValue("Name")
	if err := checkName(name, "name"); err != nil {
		return nil, err
	}
	gname := groupName(in.GroupName)
	arn := s.scheduleArn(gname, name)
	if err := req.Authorize("scheduler:CreateSchedule", arn); err != nil {
		return nil, err
	}
	// An idempotent retry of a create that succeeded returns its result.
	s.mu.Lock()
	if g, ok := s.groups[gname]; ok {
		if sc, ok := g.schedules[name]; ok {
			s.mu.Unlock()
			if in.ClientToken != "" && in.ClientToken == sc.createToken {
				return map[string]string{"ScheduleArn": sc.arn}, nil
			}
			return nil, awsapi.ConflictException("Schedule %s already exists.", name)
		}
	}
	s.mu.Unlock()
	cfg, err := s.validate(req, *in)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.getGroupLocked(gname)
	if err != nil {
		return nil, err
	}
	if _, ok := g.schedules[name]; ok {
		return nil, awsapi.ConflictException("Schedule %s already exists.", name)
	}
	now := s.env.Time()
	sc := &schedule{name: name, group: gname, arn: arn, cfg: cfg, created: now, modified: now, createToken: in.ClientToken}
	g.schedules[name] = sc
	s.count(arn, func(*Metrics) {}) // listed from its creation on
	s.startLocked(sc)
	return map[string]string{"ScheduleArn": arn}, nil
}

func (s *Service) updateSchedule(req *awsapi.Request, in *scheduleInput) (any, error) {
	name := req.PathValue("Name")
	gname := groupName(in.GroupName)
	arn := s.scheduleArn(gname, name)
	if err := req.Authorize("scheduler:UpdateSchedule", arn); err != nil {
		return nil, err
	}
	s.mu.Lock()
	sc, err := s.getScheduleLocked(gname, name)
	if err == nil && in.ClientToken != "" && in.ClientToken == sc.updateToken {
		s.mu.Unlock()
		return map[string]string{"ScheduleArn": sc.arn}, nil
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cfg, err := s.validate(req, *in)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, err = s.getScheduleLocked(gname, name)
	if err != nil {
		return nil, err
	}
	// UpdateSchedule replaces the whole configuration, as in AWS.
	s.stopLocked(sc)
	sc.cfg = cfg
	sc.modified = s.env.Time()
	sc.updateToken = in.ClientToken
	s.startLocked(sc)
	return map[string]string{"ScheduleArn": sc.arn}, nil
}

func (s *Service) getSchedule(req *awsapi.Request) (any, error) {
	name, gname := req.PathValue("Name"), groupName(req.Query().Get("groupName"))
	if err := req.Authorize("scheduler:GetSchedule", s.scheduleArn(gname, name)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, err := s.getScheduleLocked(gname, name)
	if err != nil {
		return nil, err
	}
	c := sc.cfg
	out := map[string]any{
		"ActionAfterCompletion":      c.after,
		"Arn":                        sc.arn,
		"CreationDate":               awsapi.Epoch(sc.created),
		"FlexibleTimeWindow":         c.window,
		"GroupName":                  sc.group,
		"LastModificationDate":       awsapi.Epoch(sc.modified),
		"Name":                       sc.name,
		"ScheduleExpression":         c.expression,
		"ScheduleExpressionTimezone": c.timezone,
		"State":                      c.state,
		"Target":                     c.target,
	}
	if c.description != "" {
		out["Description"] = c.description
	}
	if c.kmsKeyArn != "" {
		out["KmsKeyArn"] = c.kmsKeyArn
	}
	if c.startDate != nil {
		out["StartDate"] = awsapi.Epoch(*c.startDate)
	}
	if c.endDate != nil {
		out["EndDate"] = awsapi.Epoch(*c.endDate)
	}
	return out, nil
}

func (s *Service) deleteSchedule(req *awsapi.Request) (any, error) {
	q := req.Query()
	name, gname := req.PathValue("Name"), groupName(q.Get("groupName"))
	arn := s.scheduleArn(gname, name)
	if err := req.Authorize("scheduler:DeleteSchedule", arn); err != nil {
		return nil, err
	}
	token := q.Get("clientToken")
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, err := s.getScheduleLocked(gname, name)
	if err != nil {
		if token != "" && s.deleteTokens[token] == arn {
			return map[string]any{}, nil
		}
		return nil, err
	}
	s.removeLocked(sc)
	if token != "" {
		s.deleteTokens[token] = arn
	}
	return map[string]any{}, nil
}

// removeLocked stops a schedule and forgets it.
func (s *Service) removeLocked(sc *schedule) {
	s.stopLocked(sc)
	if g, ok := s.groups[sc.group]; ok && g.schedules[sc.name] == sc {
		delete(g.schedules, sc.name)
	}
}

func encodeToken(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

func decodeToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) == 0 {
		return "", awsapi.ValidationException("Invalid NextToken.")
	}
	return string(b), nil
}

func maxResults(q url.Values) (int, error) {
	v := q.Get("MaxResults")
	if v == "" {
		return 100, nil
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n < 1 || n > 100 {
		return 0, constraint(v, "maxResults", "Member must have value between 1 and 100")
	}
	return n, nil
}

// page returns the keys after the token, at most limit, and the next token.
func page(keys []string, token string, limit int) ([]string, string, error) {
	sort.Strings(keys)
	if token != "" {
		after, err := decodeToken(token)
		if err != nil {
			return nil, "", err
		}
		keys = keys[sort.Search(len(keys), func(i int) bool { return keys[i] > after }):]
	}
	if len(keys) > limit {
		return keys[:limit], encodeToken(keys[limit-1]), nil
	}
	return keys, "", nil
}

// listing authorises a list operation and reads its query and page size.
func listing(req *awsapi.Request, action string) (url.Values, int, error) {
	if err := req.Authorize(action, "*"); err != nil {
		return nil, 0, err
	}
	q := req.Query()
	limit, err := maxResults(q)
	return q, limit, err
}

// listed is a list operation's answer: under field, the page of items
// (by their sort key) after the query's NextToken, each as summary has it,
// and NextToken when there is more.
func listed[T any](field string, q url.Values, limit int, items map[string]T, summary func(T) map[string]any) (any, error) {
	keys, next, err := page(slices.Collect(maps.Keys(items)), q.Get("NextToken"), limit)
	if err != nil {
		return nil, err
	}
	list := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		list = append(list, summary(items[k]))
	}
	out := map[string]any{field: list}
	if next != "" {
		out["NextToken"] = next
	}
	return out, nil
}

func scheduleSummary(sc *schedule) map[string]any {
	return map[string]any{
		"Arn": sc.arn, "CreationDate": awsapi.Epoch(sc.created), "GroupName": sc.group,
		"LastModificationDate": awsapi.Epoch(sc.modified), "Name": sc.name, "State": sc.cfg.state,
		"Target": map[string]string{"Arn": sc.cfg.target.Arn},
	}
}

func (s *Service) listSchedules(req *awsapi.Request) (any, error) {
	q, limit, err := listing(req, "scheduler:ListSchedules")
	if err != nil {
		return nil, err
	}
	state := q.Get("State")
	if _, err := enum(state, "state", states...); err != nil {
		return nil, err
	}
	prefix, gfilter := q.Get("NamePrefix"), q.Get("ScheduleGroup")
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := map[string]*schedule{}
	for _, g := range s.groups {
		if gfilter != "" && g.name != gfilter {
			continue
		}
		for _, sc := range g.schedules {
			if !strings.HasPrefix(sc.name, prefix) || state != "" && sc.cfg.state != state {
				continue
			}
			byKey[sc.group+"/"+sc.name] = sc
		}
	}
	return listed("Schedules", q, limit, byKey, scheduleSummary)
}

// ---- groups ----

type tag = awsapi.Tag

func tagMap(tags []tag) (map[string]string, error) {
	return awsapi.TagMap(tags, func(t tag) *awsapi.Error {
		return constraint(t.Key, "tags.member.key", "Member must have length between 1 and 128")
	})
}

// groupInput is the body of CreateScheduleGroup.
type groupInput struct {
	ClientToken string
	Tags        []tag
}

func (s *Service) createGroup(req *awsapi.Request, in *groupInput) (any, error) {
	name := req.PathValue("Name")
	if err := checkName(name, "name"); err != nil {
		return nil, err
	}
	arn := s.groupArn(name)
	if err := req.Authorize("scheduler:CreateScheduleGroup", arn); err != nil {
		return nil, err
	}
	tags, err := tagMap(in.Tags)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[name]; ok {
		if in.ClientToken != "" && in.ClientToken == g.clientToken {
			return map[string]string{"ScheduleGroupArn": g.arn}, nil
		}
		return nil, awsapi.ConflictException("Schedule group %s already exists.", name)
	}
	now := s.env.Time()
	s.groups[name] = &group{name: name, arn: arn, created: now, modified: now, tags: tags,
		clientToken: in.ClientToken, schedules: map[string]*schedule{}}
	return map[string]string{"ScheduleGroupArn": arn}, nil
}

func groupSummary(g *group) map[string]any {
	return map[string]any{"Arn": g.arn, "CreationDate": awsapi.Epoch(g.created), "LastModificationDate": awsapi.Epoch(g.modified),
		"Name": g.name, "State": "ACTIVE"}
}

func (s *Service) getGroup(req *awsapi.Request) (any, error) {
	return s.onGroup(req, "scheduler:GetScheduleGroup", func(g *group) (any, error) { return groupSummary(g), nil })
}

// onGroup authorises action on the schedule group the path names and runs
// h with it under the lock.
func (s *Service) onGroup(req *awsapi.Request, action string, h func(g *group) (any, error)) (any, error) {
	name := req.PathValue("Name")
	if err := req.Authorize(action, s.groupArn(name)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.getGroupLocked(name)
	if err != nil {
		return nil, err
	}
	return h(g)
}

func (s *Service) deleteGroup(req *awsapi.Request) (any, error) {
	return s.onGroup(req, "scheduler:DeleteScheduleGroup", s.deleteGroupLocked)
}

func (s *Service) deleteGroupLocked(g *group) (any, error) {
	if g.name == DefaultGroup {
		return nil, awsapi.ValidationException("Cannot delete the default schedule group.")
	}
	// Deleting a group deletes its schedules (AWS does it asynchronously).
	for _, sc := range g.schedules {
		s.stopLocked(sc)
	}
	delete(s.groups, g.name)
	return map[string]any{}, nil
}

func (s *Service) listGroups(req *awsapi.Request) (any, error) {
	q, limit, err := listing(req, "scheduler:ListScheduleGroups")
	if err != nil {
		return nil, err
	}
	prefix := q.Get("NamePrefix")
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string]*group{}
	for n, g := range s.groups {
		if strings.HasPrefix(n, prefix) {
			byName[n] = g
		}
	}
	return listed("ScheduleGroups", q, limit, byName, groupSummary)
}

// ---- tags (schedule groups only, as in AWS) ----

func (s *Service) taggedGroupLocked(arn string) (*group, error) {
	a, err := awsapi.ParseARN(arn)
	if err != nil || a.Service != "scheduler" {
		return nil, constraint(arn, "resourceArn", `Member must satisfy regular expression pattern: ^arn:aws(-[a-z]+)?:scheduler:[a-z0-9\-]+:\d{12}:schedule-group\/[0-9a-zA-Z-_.]+$`)
	}
	name, ok := strings.CutPrefix(a.Resource, "schedule-group/")
	if !ok {
		return nil, awsapi.ValidationException("Tagging is supported for schedule groups only: %s is not a schedule group.", arn)
	}
	g, ok := s.groups[name]
	if !ok || g.arn != arn {
		return nil, awsapi.NotFound404("Schedule group %s does not exist.", name)
	}
	return g, nil
}

func (s *Service) tagResource(req *awsapi.Request, in *struct{ Tags []tag }) (any, error) {
	arn := req.PathValue("ResourceArn")
	if err := req.Authorize("scheduler:TagResource", arn); err != nil {
		return nil, err
	}
	tags, err := tagMap(in.Tags)
	if err != nil {
		return nil, err
	}
	return s.onTaggedLocked(arn, func(g *group) (any, error) {
		maps.Copy(g.tags, tags)
		return map[string]any{}, nil
	})
}

func (s *Service) untagResource(req *awsapi.Request) (any, error) {
	return s.onTagged(req, "scheduler:UntagResource", func(g *group) (any, error) {
		awsapi.Untag(g.tags, req.Query()["TagKeys"])
		return map[string]any{}, nil
	})
}

func (s *Service) listTags(req *awsapi.Request) (any, error) {
	return s.onTagged(req, "scheduler:ListTagsForResource", func(g *group) (any, error) {
		return map[string]any{"Tags": awsapi.TagList(g.tags)}, nil
	})
}

// onTagged authorises action on the resource the path names and runs h
// with its schedule group under the lock.
func (s *Service) onTagged(req *awsapi.Request, action string, h func(g *group) (any, error)) (any, error) {
	arn := req.PathValue("ResourceArn")
	if err := req.Authorize(action, arn); err != nil {
		return nil, err
	}
	return s.onTaggedLocked(arn, h)
}

// onTaggedLocked runs h with the schedule group arn names, under the lock.
func (s *Service) onTaggedLocked(arn string, h func(g *group) (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.taggedGroupLocked(arn)
	if err != nil {
		return nil, err
	}
	return h(g)
}
