// Package events is Amazon EventBridge (AWSEvents, awsJson1_1) for the local
// AWS stack: the default bus and custom buses, rules with event patterns,
// SQS and Lambda targets, tags and PutEvents with per-entry results.
//
// Events that match an enabled rule are delivered asynchronously to its
// targets in the standard envelope. Delivery to an SQS queue requires the
// queue policy to allow the service principal events.amazonaws.com (with
// aws:SourceArn the rule's ARN where the policy says so), delivery to a
// Lambda function requires its resource policy to allow it; otherwise the
// delivery fails silently, as on AWS, and counts as a failed invocation
// (GET /_localaws/events/metrics). A FIFO queue target needs SqsParameters
// with the MessageGroupId of its messages, and the queue needs
// ContentBasedDeduplication: EventBridge gives no deduplication id, so
// delivery to a FIFO queue without it fails.
package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/eventpattern"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/targets"
)

// Limits, as AWS documents them.
const (
	MaxPutEventsEntries = 10
	// MaxEntrySize is the most an entry, and the entries of one
	// PutEvents call in all, may be: 1 MB since 2026-01-29 (PutEvents,
	// EventBridge API reference), counted as EntrySize does.
	MaxEntrySize      = 1024 * 1024
	MaxTargetsPerRule = 5
	DefaultBus        = "default"
	ServicePrincipal  = "events.amazonaws.com"
)

// QueueSink delivers to SQS queues (the sqs service), to a message group
// for a FIFO queue.
type QueueSink interface {
	DeliverToGroup(queueArn, groupID, body string, attributes map[string]string) (messageID string, err error)
	QueuePolicy(queueArn string) (policyJSON string, exists bool)
}

// FunctionInvoker invokes Lambda functions (the lambda service).
type FunctionInvoker = targets.FunctionInvoker

// Deps resolves the services targets are delivered to, at delivery time.
type Deps = targets.Deps[QueueSink]

// Service is the EventBridge service.
type Service struct {
	*awsapi.Lifecycle
	env  *awsapi.Env
	deps Deps

	mu      sync.Mutex
	buses   map[string]*bus
	metrics awsapi.Counters[RuleMetrics] // by rule ARN

	ops awsapi.Operations

	bg *awsapi.Background // deliveries in flight
}

type bus struct {
	name, arn   string
	description string
	created     time.Time
	tags        map[string]string
	rules       map[string]*rule
}

type rule struct {
	name, arn, bus string
	description    string
	pattern        string
	compiled       *eventpattern.Pattern
	schedule       string
	state          string
	roleArn        string
	targets        []target
	tags           map[string]string
}

type target struct {
	Id            string
	Arn           string
	RoleArn       string         `json:",omitempty"`
	Input         string         `json:",omitempty"`
	InputPath     string         `json:",omitempty"`
	SqsParameters *sqsParameters `json:",omitempty"`
}

// sqsParameters are a target's SqsParameters: the message group of the
// messages it sends to a FIFO queue.
type sqsParameters struct {
	MessageGroupId string `json:",omitempty"`
}

// MaxMessageGroupIDLength is the longest SqsParameters.MessageGroupId.
const MaxMessageGroupIDLength = 100

// messageGroup is the message group of the target's SQS messages, "" for
// none.
func (t target) messageGroup() string {
	if t.SqsParameters == nil {
		return ""
	}
	return t.SqsParameters.MessageGroupId
}

// isFIFOQueue tells whether arn is an SQS FIFO queue's.
func isFIFOQueue(arn string) bool {
	a, err := awsapi.ParseARN(arn)
	return err == nil && a.Service == "sqs" && strings.HasSuffix(a.Resource, ".fifo")
}

// RuleMetrics are a rule's delivery counters, named as EventBridge's
// CloudWatch metrics.
type RuleMetrics struct {
	MatchedEvents     int64 `json:"matchedEvents"`
	Invocations       int64 `json:"invocations"`
	FailedInvocations int64 `json:"failedInvocations"`
}

// New returns an EventBridge service with the default bus.
func New(env *awsapi.Env, deps Deps) *Service {
	lc := awsapi.NewLifecycle()
	s := &Service{Lifecycle: lc, env: env, deps: deps, buses: map[string]*bus{}, bg: lc.Background}
	s.Lists(&s.mu, s.inventory)
	s.buses[DefaultBus] = &bus{name: DefaultBus, arn: env.ARN("events", "event-bus/default"), created: env.Time(),
		tags: map[string]string{}, rules: map[string]*rule{}}
	s.ops = s.operations()
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "events", Protocol: awsapi.JSON11, TargetPrefix: "AWSEvents", SigningName: "events"}
}

// inventory lists custom buses and rules.
func (s *Service) inventory(add func(string)) {
	for _, b := range s.buses {
		if b.name != DefaultBus {
			add(b.arn)
		}
		for _, r := range b.rules {
			add(r.arn)
		}
	}
}

// RegisterControl adds GET /_localaws/events/metrics.
func (s *Service) RegisterControl(c *awsapi.Control) {
	c.HandleFunc("GET events/metrics", func(w http.ResponseWriter, _ *http.Request) {
		awsapi.WriteControlJSON(w, http.StatusOK, map[string]any{"rules": s.Metrics()})
	})
}

// Metrics returns the delivery counters by rule ARN.
func (s *Service) Metrics() map[string]RuleMetrics {
	return s.metrics.Snapshot()
}

// operations is the table of the operations served, each decoded into its
// input and, where it says so, run under the service's lock.
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"CreateEventBus":      {Handle: awsapi.Decoded(s.createEventBus)},
		"DescribeEventBus":    {Handle: awsapi.Locked(&s.mu, s.describeEventBus)},
		"DeleteEventBus":      {Handle: awsapi.Decoded(s.deleteEventBus)},
		"ListEventBuses":      {Handle: awsapi.Decoded(s.listEventBuses)},
		"PutRule":             {Handle: awsapi.Decoded(s.putRule)},
		"DescribeRule":        {Handle: awsapi.Locked(&s.mu, s.describeRule)},
		"DeleteRule":          {Handle: awsapi.Locked(&s.mu, s.deleteRule)},
		"ListRules":           {Handle: awsapi.Locked(&s.mu, s.listRules)},
		"EnableRule":          {Handle: awsapi.Locked(&s.mu, s.setState("ENABLED"))},
		"DisableRule":         {Handle: awsapi.Locked(&s.mu, s.setState("DISABLED"))},
		"PutTargets":          {Handle: awsapi.Decoded(s.putTargets)},
		"RemoveTargets":       {Handle: awsapi.Locked(&s.mu, s.removeTargets)},
		"ListTargetsByRule":   {Handle: awsapi.Locked(&s.mu, s.listTargetsByRule)},
		"TagResource":         {Handle: awsapi.Decoded(s.tagResource)},
		"UntagResource":       {Handle: awsapi.Decoded(s.untagResource)},
		"ListTagsForResource": {Handle: awsapi.Decoded(s.listTagsForResource)},
		"PutEvents":           {Handle: awsapi.Decoded(s.putEvents)},
		"TestEventPattern":    {Handle: awsapi.Decoded(s.testEventPattern)},
	}
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) { return s.ops.Handle(req) }

func authorize(req *awsapi.Request, action, arn string) error {
	if err := req.Authorize(action, arn); err != nil {
		return awsapi.AccessDeniedException("User: %s is not authorized to perform: %s on resource: %s", req.Principal.ARN, action, arn)
	}
	return nil
}

var busNameRE = regexp.MustCompile(`^[/\.\-_A-Za-z0-9]{1,256}$`)
var ruleNameRE = regexp.MustCompile(`^[\.\-_A-Za-z0-9]{1,64}$`)

// busName accepts a name or an ARN; empty is the default bus.
func busName(s string) string {
	if s == "" {
		return DefaultBus
	}
	if strings.HasPrefix(s, "arn:") {
		a, err := awsapi.ParseARN(s)
		if err == nil {
			return strings.TrimPrefix(a.Resource, "event-bus/")
		}
	}
	return s
}

// getBus returns a bus; s.mu must be held.
func (s *Service) getBus(name string) (*bus, error) {
	b, ok := s.buses[busName(name)]
	if !ok {
		return nil, awsapi.ResourceNotFoundException("Event bus %s does not exist.", busName(name))
	}
	return b, nil
}

// getRule returns a rule of a bus; s.mu must be held.
func (s *Service) getRule(busNameOrArn, name string) (*rule, error) {
	b, err := s.getBus(busNameOrArn)
	if err != nil {
		return nil, err
	}
	r, ok := b.rules[name]
	if !ok {
		return nil, awsapi.ResourceNotFoundException("Rule %s does not exist on EventBus %s.", name, b.name)
	}
	return r, nil
}

// authorizedRule finds a rule of a bus and authorises action on it; s.mu
// must be held.
func (s *Service) authorizedRule(req *awsapi.Request, action, busNameOrArn, name string) (*rule, error) {
	r, err := s.getRule(busNameOrArn, name)
	if err != nil {
		return nil, err
	}
	if err := authorize(req, action, r.arn); err != nil {
		return nil, err
	}
	return r, nil
}

// namesWithPrefix returns the sorted names of m that start with prefix.
func namesWithPrefix[V any](m map[string]V, prefix string) []string {
	var names []string
	for n := range m {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

type tag = awsapi.Tag

func tagMap(tags []tag) (map[string]string, error) {
	return awsapi.TagMap(tags, func(tag) *awsapi.Error { return awsapi.ValidationException("Invalid tag key or value.") })
}

func tagList(m map[string]string) []tag { return awsapi.TagList(m) }

// ---- buses ----

type createEventBusInput struct {
	Name, Description, EventSourceName string
	Tags                               []tag
}

func (s *Service) createEventBus(req *awsapi.Request, in *createEventBusInput) (any, error) {
	if !busNameRE.MatchString(in.Name) || in.Name == DefaultBus || strings.HasPrefix(in.Name, "aws.") {
		return nil, awsapi.ValidationException("Event bus name %q is not valid.", in.Name)
	}
	arn := s.env.ARN("events", "event-bus/"+in.Name)
	if err := authorize(req, "events:CreateEventBus", arn); err != nil {
		return nil, err
	}
	tags, err := tagMap(in.Tags)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.buses[in.Name]; ok {
		return nil, awsapi.NewError("ResourceAlreadyExistsException", "Event bus %s already exists.", in.Name)
	}
	s.buses[in.Name] = &bus{name: in.Name, arn: arn, description: in.Description, created: s.env.Time(), tags: tags, rules: map[string]*rule{}}
	out := map[string]any{"EventBusArn": arn}
	if in.Description != "" {
		out["Description"] = in.Description
	}
	return out, nil
}

// busRef names a bus (its name or ARN; empty is the default bus).
type busRef struct{ Name string }

func (s *Service) describeEventBus(req *awsapi.Request, in *busRef) (any, error) {
	b, err := s.getBus(in.Name)
	if err != nil {
		return nil, err
	}
	if err := authorize(req, "events:DescribeEventBus", b.arn); err != nil {
		return nil, err
	}
	out := map[string]any{"Name": b.name, "Arn": b.arn, "CreationTime": awsapi.Epoch(b.created), "LastModifiedTime": awsapi.Epoch(b.created)}
	if b.description != "" {
		out["Description"] = b.description
	}
	return out, nil
}

func (s *Service) deleteEventBus(req *awsapi.Request, in *busRef) (any, error) {
	if busName(in.Name) == DefaultBus {
		return nil, awsapi.ValidationException("Cannot delete event bus default.")
	}
	arn := s.env.ARN("events", "event-bus/"+busName(in.Name))
	if err := authorize(req, "events:DeleteEventBus", arn); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.buses, busName(in.Name)) // deleting a missing bus succeeds
	return nil, nil
}

type listEventBusesInput struct {
	NamePrefix, NextToken string
	Limit                 int
}

func (s *Service) listEventBuses(req *awsapi.Request, in *listEventBusesInput) (any, error) {
	if err := authorize(req, "events:ListEventBuses", s.env.ARN("events", "event-bus/*")); err != nil {
		return nil, err
	}
	s.mu.Lock()
	page, next := paginate(namesWithPrefix(s.buses, in.NamePrefix), in.NextToken, in.Limit)
	var out []map[string]any
	for _, n := range page {
		b := s.buses[n]
		e := map[string]any{"Name": b.name, "Arn": b.arn, "CreationTime": awsapi.Epoch(b.created), "LastModifiedTime": awsapi.Epoch(b.created)}
		if b.description != "" {
			e["Description"] = b.description
		}
		out = append(out, e)
	}
	s.mu.Unlock()
	res := map[string]any{"EventBuses": out}
	if next != "" {
		res["NextToken"] = next
	}
	return res, nil
}

// paginate pages sorted names; the token is the next name.
func paginate(names []string, token string, limit int) ([]string, string) {
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	return awsapi.PageNames(names, token, limit)
}

// ---- rules ----

func (s *Service) ruleArn(busName, name string) string {
	if busName == DefaultBus {
		return s.env.ARN("events", "rule/"+name)
	}
	return s.env.ARN("events", "rule/"+busName+"/"+name)
}

type putRuleInput struct {
	Name, Description, EventBusName, EventPattern, RoleArn, ScheduleExpression, State string
	Tags                                                                              []tag
}

func (s *Service) putRule(req *awsapi.Request, in *putRuleInput) (any, error) {
	if !ruleNameRE.MatchString(in.Name) {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\.\\-_A-Za-z0-9]+", in.Name)
	}
	if in.EventPattern == "" && in.ScheduleExpression == "" {
		return nil, awsapi.ValidationException("Parameter(s) EventPattern or ScheduleExpression must be specified.")
	}
	var compiled *eventpattern.Pattern
	if in.EventPattern != "" {
		p, err := eventpattern.Compile(in.EventPattern)
		if err != nil {
			return nil, awsapi.NewError("InvalidEventPatternException", "%s", err.Error())
		}
		compiled = p
	}
	if in.ScheduleExpression != "" {
		if busName(in.EventBusName) != DefaultBus {
			return nil, awsapi.ValidationException("ScheduleExpression is supported only on the default event bus.")
		}
		if !strings.HasPrefix(in.ScheduleExpression, "rate(") && !strings.HasPrefix(in.ScheduleExpression, "cron(") || !strings.HasSuffix(in.ScheduleExpression, ")") {
			return nil, awsapi.ValidationException("Parameter ScheduleExpression is not valid.")
		}
	}
	state := in.State
	switch state {
	case "":
		state = "ENABLED"
	case "ENABLED", "DISABLED", "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS":
	default:
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'state' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED, ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS]", state)
	}
	tags, err := tagMap(in.Tags)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.getBus(in.EventBusName)
	if err != nil {
		return nil, err
	}
	arn := s.ruleArn(b.name, in.Name)
	if err := authorize(req, "events:PutRule", arn); err != nil {
		return nil, err
	}
	r, ok := b.rules[in.Name]
	if !ok {
		r = &rule{name: in.Name, arn: arn, bus: b.name, tags: map[string]string{}}
		b.rules[in.Name] = r
	}
	r.description, r.pattern, r.compiled, r.schedule, r.state, r.roleArn = in.Description, in.EventPattern, compiled, in.ScheduleExpression, state, in.RoleArn
	maps.Copy(r.tags, tags)
	return map[string]string{"RuleArn": arn}, nil
}

func (r *rule) describe() map[string]any {
	out := map[string]any{"Name": r.name, "Arn": r.arn, "EventBusName": r.bus, "State": r.state}
	for k, v := range map[string]string{"Description": r.description, "EventPattern": r.pattern, "ScheduleExpression": r.schedule, "RoleArn": r.roleArn} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// ruleRef names a rule of a bus.
type ruleRef struct{ Name, EventBusName string }

func (s *Service) describeRule(req *awsapi.Request, in *ruleRef) (any, error) {
	r, err := s.authorizedRule(req, "events:DescribeRule", in.EventBusName, in.Name)
	if err != nil {
		return nil, err
	}
	out := r.describe()
	out["CreatedBy"] = s.env.AccountID
	return out, nil
}

type deleteRuleInput struct {
	Name, EventBusName string
	Force              bool
}

func (s *Service) deleteRule(req *awsapi.Request, in *deleteRuleInput) (any, error) {
	b, err := s.getBus(in.EventBusName)
	if err != nil {
		return nil, err
	}
	r, ok := b.rules[in.Name]
	if !ok {
		return nil, nil // deleting a missing rule succeeds
	}
	if err := authorize(req, "events:DeleteRule", r.arn); err != nil {
		return nil, err
	}
	if len(r.targets) > 0 {
		return nil, awsapi.ValidationException("Rule can't be deleted since it has targets.")
	}
	delete(b.rules, in.Name)
	return nil, nil
}

type listRulesInput struct {
	NamePrefix, EventBusName, NextToken string
	Limit                               int
}

func (s *Service) listRules(req *awsapi.Request, in *listRulesInput) (any, error) {
	b, err := s.getBus(in.EventBusName)
	if err != nil {
		return nil, err
	}
	if err := authorize(req, "events:ListRules", s.ruleArn(b.name, "*")); err != nil {
		return nil, err
	}
	page, next := paginate(namesWithPrefix(b.rules, in.NamePrefix), in.NextToken, in.Limit)
	rules := []map[string]any{}
	for _, n := range page {
		rules = append(rules, b.rules[n].describe())
	}
	out := map[string]any{"Rules": rules}
	if next != "" {
		out["NextToken"] = next
	}
	return out, nil
}

// setState returns the handler of EnableRule or DisableRule.
func (s *Service) setState(state string) func(*awsapi.Request, *ruleRef) (any, error) {
	return func(req *awsapi.Request, in *ruleRef) (any, error) {
		action := "events:EnableRule"
		if state == "DISABLED" {
			action = "events:DisableRule"
		}
		r, err := s.authorizedRule(req, action, in.EventBusName, in.Name)
		if err != nil {
			return nil, err
		}
		r.state = state
		return nil, nil
	}
}

// ---- targets ----

var targetIDRE = regexp.MustCompile(`^[\.\-_A-Za-z0-9]{1,64}$`)

type putTargetsInput struct {
	Rule, EventBusName string
	Targets            []target
}

func (s *Service) putTargets(req *awsapi.Request, in *putTargetsInput) (any, error) {
	if len(in.Targets) == 0 || len(in.Targets) > 10 {
		return nil, awsapi.ValidationException("1 validation error detected: Value at 'targets' failed to satisfy constraint: Member must have length between 1 and 10")
	}
	if err := checkSqsParameters(in.Targets); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.authorizedRule(req, "events:PutTargets", in.EventBusName, in.Rule)
	if err != nil {
		return nil, err
	}
	type failed struct{ TargetId, ErrorCode, ErrorMessage string }
	var fails []failed
	for _, t := range in.Targets {
		if !targetIDRE.MatchString(t.Id) {
			fails = append(fails, failed{t.Id, "ValidationException", "Target Id is not valid."})
			continue
		}
		if _, err := awsapi.ParseARN(t.Arn); err != nil {
			fails = append(fails, failed{t.Id, "ValidationException", fmt.Sprintf("Parameter %s is not valid.", t.Arn)})
			continue
		}
		if t.Input != "" && t.InputPath != "" {
			fails = append(fails, failed{t.Id, "ValidationException", "Only one of Input, InputPath, or InputTransformer must be provided."})
			continue
		}
		if t.Input != "" && !json.Valid([]byte(t.Input)) {
			fails = append(fails, failed{t.Id, "ValidationException", "Parameter Input is not valid."})
			continue
		}
		replaced := false
		for i := range r.targets {
			if r.targets[i].Id == t.Id {
				r.targets[i], replaced = t, true
			}
		}
		if !replaced {
			if len(r.targets) >= MaxTargetsPerRule {
				return nil, awsapi.NewError("LimitExceededException", "The requested resource exceeds the maximum number allowed.")
			}
			r.targets = append(r.targets, t)
		}
	}
	return map[string]any{"FailedEntryCount": len(fails), "FailedEntries": fails}, nil
}

// checkSqsParameters refuses the whole request, before its rule is looked
// up, when a target is a FIFO queue without SqsParameters (the queue needs a
// message group) or has a MessageGroupId over its length limit.
func checkSqsParameters(ts []target) error {
	for i, t := range ts {
		if t.SqsParameters == nil && isFIFOQueue(t.Arn) {
			return awsapi.ValidationException("Parameter(s) SqsParameters must be specified for target: %s.", t.Id)
		}
		if g := t.messageGroup(); len(g) > MaxMessageGroupIDLength {
			return awsapi.ValidationException("1 validation error detected: Value '%s' at 'targets.%d.member.sqsParameters.messageGroupId' failed to satisfy constraint: Member must have length less than or equal to %d", g, i+1, MaxMessageGroupIDLength)
		}
	}
	return nil
}

type removeTargetsInput struct {
	Rule, EventBusName string
	Ids                []string
	Force              bool
}

func (s *Service) removeTargets(req *awsapi.Request, in *removeTargetsInput) (any, error) {
	r, err := s.authorizedRule(req, "events:RemoveTargets", in.EventBusName, in.Rule)
	if err != nil {
		return nil, err
	}
	r.targets = slices.DeleteFunc(r.targets, func(t target) bool { return slices.Contains(in.Ids, t.Id) })
	return map[string]any{"FailedEntryCount": 0, "FailedEntries": []any{}}, nil
}

type listTargetsByRuleInput struct{ Rule, EventBusName string }

func (s *Service) listTargetsByRule(req *awsapi.Request, in *listTargetsByRuleInput) (any, error) {
	r, err := s.authorizedRule(req, "events:ListTargetsByRule", in.EventBusName, in.Rule)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Targets": append([]target{}, r.targets...)}, nil
}

// ---- tags ----

// tagsOf finds the tags of a bus or rule ARN; s.mu must be held.
func (s *Service) tagsOf(arn string) (map[string]string, error) {
	for _, b := range s.buses {
		if b.arn == arn {
			return b.tags, nil
		}
		for _, r := range b.rules {
			if r.arn == arn {
				return r.tags, nil
			}
		}
	}
	return nil, awsapi.ResourceNotFoundException("Resource %s does not exist.", arn)
}

type tagResourceInput struct {
	ResourceARN string
	Tags        []tag
}

func (s *Service) tagResource(req *awsapi.Request, in *tagResourceInput) (any, error) {
	add, err := tagMap(in.Tags)
	if err != nil {
		return nil, err
	}
	return s.withTags(req, "events:TagResource", in.ResourceARN, func(tags map[string]string) any {
		maps.Copy(tags, add)
		return nil
	})
}

type untagResourceInput struct {
	ResourceARN string
	TagKeys     []string
}

func (s *Service) untagResource(req *awsapi.Request, in *untagResourceInput) (any, error) {
	return s.withTags(req, "events:UntagResource", in.ResourceARN, func(tags map[string]string) any {
		awsapi.Untag(tags, in.TagKeys)
		return nil
	})
}

type listTagsForResourceInput struct{ ResourceARN string }

func (s *Service) listTagsForResource(req *awsapi.Request, in *listTagsForResourceInput) (any, error) {
	return s.withTags(req, "events:ListTagsForResource", in.ResourceARN, func(tags map[string]string) any {
		return map[string]any{"Tags": tagList(tags)}
	})
}

// withTags authorises action on a bus or rule ARN and runs fn with its tags
// under the lock; fn's value is the response.
func (s *Service) withTags(req *awsapi.Request, action, arn string, fn func(tags map[string]string) any) (any, error) {
	if err := authorize(req, action, arn); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tags, err := s.tagsOf(arn)
	if err != nil {
		return nil, err
	}
	return fn(tags), nil
}

type testEventPatternInput struct{ EventPattern, Event string }

func (s *Service) testEventPattern(req *awsapi.Request, in *testEventPatternInput) (any, error) {
	p, err := eventpattern.Compile(in.EventPattern)
	if err != nil {
		return nil, awsapi.NewError("InvalidEventPatternException", "%s", err.Error())
	}
	return map[string]bool{"Result": p.Matches([]byte(in.Event))}, nil
}

// ---- PutEvents ----

type putEntry struct {
	Time         *json.Number
	Source       *string
	Resources    []string
	DetailType   *string
	Detail       *string
	EventBusName string
	TraceHeader  string
}

type resultEntry struct {
	EventId      string `json:",omitempty"`
	ErrorCode    string `json:",omitempty"`
	ErrorMessage string `json:",omitempty"`
}

// EntrySize is the size PutEvents counts for an entry: 14 bytes for Time
// when present, plus the UTF-8 bytes of Source, DetailType, Detail and each
// resource.
func EntrySize(hasTime bool, source, detailType, detail string, resources []string) int {
	n := len(source) + len(detailType) + len(detail)
	if hasTime {
		n += 14
	}
	for _, r := range resources {
		n += len(r)
	}
	return n
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type putEventsInput struct {
	Entries    []putEntry
	EndpointId string
}

func (s *Service) putEvents(req *awsapi.Request, in *putEventsInput) (any, error) {
	if len(in.Entries) == 0 || len(in.Entries) > MaxPutEventsEntries {
		return nil, awsapi.ValidationException("1 validation error detected: Value '[...]' at 'entries' failed to satisfy constraint: Member must have length less than or equal to %d", MaxPutEventsEntries)
	}
	total := 0
	sizes := make([]int, len(in.Entries))
	for i, e := range in.Entries {
		sizes[i] = EntrySize(e.Time != nil, strOf(e.Source), strOf(e.DetailType), strOf(e.Detail), e.Resources)
		if sizes[i] <= MaxEntrySize {
			total += sizes[i]
		}
	}
	if total > MaxEntrySize {
		return nil, awsapi.ValidationException("Total size of the entries in the request is over the limit.")
	}
	results := make([]resultEntry, len(in.Entries))
	failed := 0
	now := s.env.Time().UTC()
	for i, e := range in.Entries {
		ev, code, msg := s.acceptEntry(req, e, sizes[i], now)
		if code != "" {
			results[i] = resultEntry{ErrorCode: code, ErrorMessage: msg}
			failed++
			continue
		}
		results[i] = resultEntry{EventId: ev.ID}
		s.route(ev)
	}
	return map[string]any{"FailedEntryCount": failed, "Entries": results}, nil
}

// Event is an event in the envelope EventBridge delivers to targets.
type Event struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`

	bus string
}

func (s *Service) acceptEntry(req *awsapi.Request, e putEntry, size int, now time.Time) (*Event, string, string) {
	if code, msg, ok := s.env.Faults.EntryFault("events", "PutEvents"); ok {
		return nil, code, msg
	}
	if size > MaxEntrySize {
		return nil, "InvalidArgument", fmt.Sprintf("Event size %d bytes exceeds the limit of %d bytes.", size, MaxEntrySize)
	}
	switch {
	case e.Source == nil || *e.Source == "":
		return nil, "InvalidArgument", "Parameter Source is not valid. Reason: Source is a required argument."
	case e.DetailType == nil || *e.DetailType == "":
		return nil, "InvalidArgument", "Parameter DetailType is not valid. Reason: DetailType is a required argument."
	case e.Detail == nil || *e.Detail == "":
		return nil, "InvalidArgument", "Parameter Detail is not valid. Reason: Detail is a required argument."
	}
	if strings.HasPrefix(*e.Source, "aws.") {
		return nil, "NotAuthorizedForSourceException", "Not authorized for the source."
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(*e.Detail), &obj); err != nil || obj == nil {
		return nil, "MalformedDetail", "Detail is malformed."
	}
	for _, r := range e.Resources {
		if _, err := awsapi.ParseARN(r); err != nil {
			return nil, "InvalidArgument", fmt.Sprintf("Parameter Resources is not valid. Reason: %s is not an ARN.", r)
		}
	}
	s.mu.Lock()
	b, ok := s.buses[busName(e.EventBusName)]
	s.mu.Unlock()
	if !ok {
		return nil, "ResourceNotFoundException", fmt.Sprintf("Event bus %s does not exist.", busName(e.EventBusName))
	}
	if err := req.Authorize("events:PutEvents", b.arn); err != nil {
		return nil, "AccessDeniedException", fmt.Sprintf("User: %s is not authorized to perform: events:PutEvents on resource: %s", req.Principal.ARN, b.arn)
	}
	t := now
	if e.Time != nil {
		f, err := e.Time.Float64()
		if err != nil {
			return nil, "InvalidArgument", "Parameter Time is not valid."
		}
		sec := int64(f)
		t = time.Unix(sec, int64((f-float64(sec))*1e9)).UTC()
	}
	res := e.Resources
	if res == nil {
		res = []string{}
	}
	return &Event{
		Version: "0", ID: awsapi.NewUUID(), DetailType: *e.DetailType, Source: *e.Source, Account: s.env.AccountID,
		Time: t.Truncate(time.Second).Format("2006-01-02T15:04:05Z"), Region: s.env.Region, Resources: res,
		Detail: json.RawMessage(*e.Detail), bus: b.name,
	}, "", ""
}

type delivery struct {
	ruleArn string
	target  target
}

// route matches an accepted event against the bus's enabled rules and
// delivers it asynchronously.
func (s *Service) route(ev *Event) {
	body, err := json.Marshal(ev)
	if err != nil {
		return
	}
	s.mu.Lock()
	b, ok := s.buses[ev.bus]
	var ds []delivery
	if ok {
		for _, r := range b.rules {
			if r.compiled == nil || r.state == "DISABLED" || !r.compiled.Matches(body) {
				continue
			}
			s.metrics.Count(r.arn, func(m *RuleMetrics) { m.MatchedEvents++ })
			for _, t := range r.targets {
				ds = append(ds, delivery{ruleArn: r.arn, target: t})
			}
		}
	}
	s.mu.Unlock()
	for _, d := range ds {
		s.bg.Go(func() {
			err := s.deliver(d, body)
			s.metrics.Count(d.ruleArn, func(m *RuleMetrics) {
				m.Invocations++
				if err != nil {
					m.FailedInvocations++
				}
			})
			if err != nil {
				s.env.Logger.Warn("EventBridge target delivery failed", "rule", d.ruleArn, "target", d.target.Arn, "error", err)
			}
		})
	}
}

// ErrNotAuthorized is a delivery the target's resource policy does not
// allow.
var ErrNotAuthorized = errors.New("the target's resource policy does not allow events.amazonaws.com")

func (s *Service) payload(t target, body []byte) ([]byte, error) {
	if t.Input != "" {
		return []byte(t.Input), nil
	}
	if t.InputPath != "" {
		return jsonPath(body, t.InputPath)
	}
	return body, nil
}

func (s *Service) deliver(d delivery, body []byte) error {
	payload, err := s.payload(d.target, body)
	if err != nil {
		return err
	}
	a, err := awsapi.ParseARN(d.target.Arn)
	if err != nil {
		return err
	}
	g := targets.Grant{Principal: ServicePrincipal, SourceArn: d.ruleArn, SourceAccount: s.env.AccountID, Denied: ErrNotAuthorized}
	switch a.Service {
	case "sqs":
		q, err := s.deps.Queue(g, d.target.Arn)
		if err != nil {
			return err
		}
		_, err = q.DeliverToGroup(d.target.Arn, d.target.messageGroup(), string(payload), nil)
		return err
	case "lambda":
		f, err := s.deps.Function(g, d.target.Arn)
		if err != nil {
			return err
		}
		return f.InvokeAsync(s.bg.Context(), d.target.Arn, payload)
	}
	return fmt.Errorf("targets of service %s are not supported", a.Service)
}

// jsonPath selects a value with a simple JSONPath ($, $.a.b).
func jsonPath(body []byte, path string) ([]byte, error) {
	if path == "$" {
		return body, nil
	}
	rest, ok := strings.CutPrefix(path, "$.")
	if !ok {
		return nil, fmt.Errorf("unsupported InputPath %s", path)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	for _, k := range strings.Split(rest, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return []byte("null"), nil
		}
		v = m[k]
	}
	return json.Marshal(v)
}
