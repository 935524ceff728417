package esm

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// PathPrefix is the REST path of the event source mapping operations.
const PathPrefix = "/2015-03-31/event-source-mappings"

// Config configures the service. Streams, Functions, Queues and Compile are
// resolved each time they are needed, so the services behind them may be
// built later; a nil resolver or an error makes the operation fail clearly.
type Config struct {
	Env       *awsapi.Env
	Streams   func() (Streams, error)
	Functions func() (Functions, error)
	Queues    func() (Queues, error)
	// Messages is the SQS data plane queue mappings poll.
	Messages func() (QueueMessages, error)
	// Compile compiles a filter pattern (EventBridge pattern syntax).
	Compile func(pattern string) (Matcher, error)
	// PollInterval is the per-shard poll cadence; DefaultPollInterval
	// (Lambda's 4 polls a second) when zero.
	PollInterval time.Duration
	// Transition is how long transient states last; DefaultTransition when
	// zero.
	Transition time.Duration
	// Metrics is where mappings with MetricsConfig publish their event
	// counts; nil, or a nil sink, publishes none.
	Metrics func() MetricSink
	// QueuePollers is how many batches a queue mapping without
	// ScalingConfig processes at once; Lambda's five when zero.
	QueuePollers int
}

// Service holds the mappings and their pollers.
type Service struct {
	*awsapi.Lifecycle
	*awsapi.Routes
	cfg Config
	env *awsapi.Env

	mu       sync.Mutex
	mappings map[string]*mapping
	order    []string
	closed   bool
}

// New returns a service with no mappings.
func New(cfg Config) *Service {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Transition <= 0 {
		cfg.Transition = DefaultTransition
	}
	if cfg.Env == nil {
		cfg.Env = awsapi.NewEnv("", "", nil)
	}
	// The Lifecycle's Background runs the pollers and the state
	// transitions.
	s := &Service{Lifecycle: awsapi.NewLifecycle(), cfg: cfg, env: cfg.Env, mappings: map[string]*mapping{}}
	s.Routes = awsapi.NewRoutes(s.operations())
	s.Lists(&s.mu, s.inventory)
	s.OnStop(awsapi.StopEach(&s.mu, &s.closed, s.mappings, (*mapping).stopPoller))
	return s
}

// SetPollInterval changes the per-shard poll cadence of pollers started
// afterwards (tests); d <= 0 restores Lambda's DefaultPollInterval.
func (s *Service) SetPollInterval(d time.Duration) {
	s.setDuration(&s.cfg.PollInterval, d, DefaultPollInterval)
}

// SetTransition changes how long transient states last; d <= 0 restores
// DefaultTransition.
func (s *Service) SetTransition(d time.Duration) {
	s.setDuration(&s.cfg.Transition, d, DefaultTransition)
}

// setDuration sets a duration of the configuration under the lock; d <= 0
// restores def.
func (s *Service) setDuration(field *time.Duration, d, def time.Duration) {
	if d <= 0 {
		d = def
	}
	s.mu.Lock()
	*field = d
	s.mu.Unlock()
}

func (s *Service) pollInterval() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.PollInterval
}

// Spec names the service "lambda-esm". It is routed through the lambda
// service (same signing name), and by path when requests are unsigned.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "lambda-esm", Protocol: awsapi.RESTJSON, PathPrefixes: []string{PathPrefix}}
}

// operations is the table of the operations served: creation and listing
// authorise on "*", the others find the mapping the path names and
// authorise on it first.
func (s *Service) operations() awsapi.Operations {
	const one = "/2015-03-31/event-source-mappings/{UUID}"
	return awsapi.Operations{
		"CreateEventSourceMapping": {Route: "POST " + PathPrefix, Handle: awsapi.Decoded(s.create)},
		"ListEventSourceMappings":  {Route: "GET " + PathPrefix, Handle: s.list},
		"GetEventSourceMapping":    {Route: "GET " + one, Handle: s.onMapping("lambda:GetEventSourceMapping", s.get)},
		"UpdateEventSourceMapping": {Route: "PUT " + one, Handle: s.onMapping("lambda:UpdateEventSourceMapping", withInput(s.update))},
		"DeleteEventSourceMapping": {Route: "DELETE " + one, Handle: s.onMapping("lambda:DeleteEventSourceMapping", s.delete)},
	}
}

// onMapping returns the handler of an operation on the mapping the path
// names: it finds the mapping and authorises action on it before h runs.
func (s *Service) onMapping(action string, h func(req *awsapi.Request, m *mapping) (any, error)) func(*awsapi.Request) (any, error) {
	return func(req *awsapi.Request) (any, error) {
		m, err := s.lookup(req)
		if err != nil {
			return nil, err
		}
		if err := req.Authorize(action, m.arn); err != nil {
			return nil, err
		}
		return h(req, m)
	}
}

// withInput is h with the request's mapping input decoded.
func withInput(h func(req *awsapi.Request, m *mapping, in *mappingInput) (any, error)) func(*awsapi.Request, *mapping) (any, error) {
	return func(req *awsapi.Request, m *mapping) (any, error) {
		return awsapi.Decoded(func(req *awsapi.Request, in *mappingInput) (any, error) { return h(req, m, in) })(req)
	}
}

// inventory lists the mapping ARNs.
func (s *Service) inventory(add func(string)) {
	for _, id := range s.order {
		add(s.mappings[id].arn)
	}
}

// InvalidParameterValueException is Lambda's 400 validation error for
// semantic problems.
func InvalidParameterValueException(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("InvalidParameterValueException", format, args...)
}

func resourceInUse(uuid, state string) *awsapi.Error {
	return awsapi.ResourceInUseException("Cannot modify the event source mapping %s because it is in use. The event source mapping is currently in %s state.", uuid, state)
}

func mappingNotFound() *awsapi.Error {
	return awsapi.NotFound404("The resource you requested does not exist.")
}

func accepted(v any) (*awsapi.Raw, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &awsapi.Raw{Status: http.StatusAccepted, Header: http.Header{"Content-Type": {"application/json"}}, Body: b}, nil
}

// constraint violations of the API model, reported as Lambda does:
// "1 validation error detected: Value '0' at 'batchSize' failed to satisfy
// constraint: Member must have value greater than or equal to 1".
type violations []string

func (v *violations) intRange(name string, p *int64, lo, hi int64) {
	if p == nil {
		return
	}
	if *p < lo {
		*v = append(*v, fmt.Sprintf("Value '%d' at '%s' failed to satisfy constraint: Member must have value greater than or equal to %d", *p, name, lo))
	} else if *p > hi {
		*v = append(*v, fmt.Sprintf("Value '%d' at '%s' failed to satisfy constraint: Member must have value less than or equal to %d", *p, name, hi))
	}
}

// metricNames are the values of MetricsConfig.Metrics the API model allows.
var metricNames = []string{"EventCount", "ErrorCount", "KafkaMetrics"}

func (v *violations) metrics(names []string) {
	if len(names) > len(metricNames) {
		*v = append(*v, fmt.Sprintf("Value '[%s]' at 'metricsConfig.metrics' failed to satisfy constraint: Member must have length less than or equal to %d", strings.Join(names, ", "), len(metricNames)))
		return
	}
	for _, n := range names {
		if !slices.Contains(metricNames, n) {
			*v = append(*v, fmt.Sprintf("Value '[%s]' at 'metricsConfig.metrics' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [%s]]", strings.Join(names, ", "), strings.Join(metricNames, ", ")))
			return
		}
	}
}

func (v violations) err() error {
	if len(v) == 0 {
		return nil
	}
	noun := "error"
	if len(v) > 1 {
		noun = "errors"
	}
	return awsapi.ValidationException("%d validation %s detected: %s", len(v), noun, strings.Join(v, "; "))
}

func validateModel(in *mappingInput) error {
	var v violations
	v.intRange("batchSize", in.BatchSize, 1, 10000)
	v.intRange("maximumBatchingWindowInSeconds", in.MaximumBatchingWindowInSeconds, 0, 300)
	v.intRange("parallelizationFactor", in.ParallelizationFactor, 1, 10)
	v.intRange("maximumRecordAgeInSeconds", in.MaximumRecordAgeInSeconds, -1, 604800)
	v.intRange("maximumRetryAttempts", in.MaximumRetryAttempts, -1, 10000)
	v.intRange("tumblingWindowInSeconds", in.TumblingWindowInSeconds, 0, 900)
	if in.ScalingConfig != nil {
		v.intRange("scalingConfig.maximumConcurrency", in.ScalingConfig.MaximumConcurrency, 2, 1000)
	}
	if in.MetricsConfig != nil {
		v.metrics(in.MetricsConfig.Metrics)
	}
	if in.StartingPosition != nil {
		switch *in.StartingPosition {
		case "TRIM_HORIZON", "LATEST", "AT_TIMESTAMP":
		default:
			v = append(v, fmt.Sprintf("Value '%s' at 'startingPosition' failed to satisfy constraint: Member must satisfy enum value set: [TRIM_HORIZON, AT_TIMESTAMP, LATEST]", *in.StartingPosition))
		}
	}
	if in.FunctionResponseTypes != nil {
		for _, t := range *in.FunctionResponseTypes {
			if t != "ReportBatchItemFailures" {
				v = append(v, fmt.Sprintf("Value '[%s]' at 'functionResponseTypes' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [ReportBatchItemFailures]]", strings.Join(*in.FunctionResponseTypes, ", ")))
				break
			}
		}
	}
	return v.err()
}

// isStreamArn reports whether arn is a DynamoDB stream ARN
// (arn:aws:dynamodb:region:acct:table/T/stream/LABEL).
func isStreamArn(arn string) bool {
	a, err := awsapi.ParseARN(arn)
	if err != nil || a.Service != "dynamodb" {
		return false
	}
	parts := strings.Split(a.Resource, "/")
	return len(parts) == 4 && parts[0] == "table" && parts[2] == "stream"
}

// applyInput validates in and applies it over st: the members every kind
// takes here, the kind's own ones through st.kind. create selects the
// create defaults and requirements.
func (s *Service) applyInput(in *mappingInput, st *Settings, create bool) error {
	if create {
		st.FunctionResponseTypes = []string{}
		st.kind.defaults(st)
	}
	if in.BatchSize != nil {
		st.BatchSize = int(*in.BatchSize)
	}
	if in.MaximumBatchingWindowInSeconds != nil {
		st.MaximumBatchingWindowInSeconds = int(*in.MaximumBatchingWindowInSeconds)
	}
	if in.FunctionResponseTypes != nil {
		st.FunctionResponseTypes = append([]string{}, *in.FunctionResponseTypes...)
	}
	if err := applyMetrics(in.MetricsConfig, st); err != nil {
		return err
	}
	if err := s.applyFilters(in.FilterCriteria, st); err != nil {
		return err
	}
	return st.kind.apply(s, in, st, create)
}

// applyMetrics applies MetricsConfig: EventCount is the metric of stream
// and queue mappings; ErrorCount and KafkaMetrics are Kafka's.
func applyMetrics(mc *wireMetricsConfig, st *Settings) error {
	if mc == nil {
		return nil
	}
	for _, n := range mc.Metrics {
		if n != "EventCount" {
			return InvalidParameterValueException("MetricsConfig.Metrics %s is supported only for Amazon MSK and self-managed Apache Kafka event sources; use [\"EventCount\"] or [] for %s.", n, st.EventSourceArn)
		}
	}
	st.Metrics = append([]string{}, mc.Metrics...)
	return nil
}

// applyStreamScalars applies the numbers and flags only stream mappings
// take.
func applyStreamScalars(in *mappingInput, st *Settings) error {
	for _, f := range []struct {
		from *int64
		to   *int
	}{
		{in.ParallelizationFactor, &st.ParallelizationFactor},
		{in.MaximumRetryAttempts, &st.MaximumRetryAttempts},
		{in.TumblingWindowInSeconds, &st.TumblingWindowInSeconds},
	} {
		if f.from != nil {
			*f.to = int(*f.from)
		}
	}
	if in.MaximumRecordAgeInSeconds != nil {
		age := int(*in.MaximumRecordAgeInSeconds)
		if age != -1 && age < 60 {
			return InvalidParameterValueException("MaximumRecordAgeInSeconds must be -1 or between 60 and 604800. Provided value: %d", age)
		}
		st.MaximumRecordAgeInSeconds = age
	}
	if in.BisectBatchOnFunctionError != nil {
		st.BisectBatchOnFunctionError = *in.BisectBatchOnFunctionError
	}
	return nil
}

// applyDestination applies an on-failure destination: an SQS queue, as
// this endpoint supports no other.
func applyDestination(dc *wireDestinationConfig, st *Settings) error {
	if dc == nil {
		return nil
	}
	if dc.OnSuccess != nil && dc.OnSuccess.Destination != nil {
		return InvalidParameterValueException("Unsupported DestinationConfig parameter for given event source mapping type.")
	}
	st.OnFailureDestination = ""
	of := dc.OnFailure
	if of == nil || of.Destination == nil || *of.Destination == "" {
		return nil
	}
	a, err := awsapi.ParseARN(*of.Destination)
	if err != nil || (a.Service != "sqs" && a.Service != "sns") {
		return InvalidParameterValueException("The provided destination config DestinationConfig(onSuccess=null, onFailure=OnFailure(destination=%s)) is invalid.", *of.Destination)
	}
	if a.Service != "sqs" {
		return InvalidParameterValueException("Only SQS queues are supported as on-failure destinations by this endpoint: %s", *of.Destination)
	}
	st.OnFailureDestination = *of.Destination
	return nil
}

// applyFilters compiles and applies the filter patterns of fc.
func (s *Service) applyFilters(fc *wireFilterCriteria, st *Settings) error {
	if fc == nil {
		return nil
	}
	if len(fc.Filters) > maxFilters {
		return InvalidParameterValueException("The maximum number of filters per event source mapping is %d.", maxFilters)
	}
	filters := []string{}
	for _, f := range fc.Filters {
		if f.Pattern == nil {
			return InvalidParameterValueException("Invalid filter pattern definition.")
		}
		if s.cfg.Compile == nil {
			return awsapi.InternalFailure("filter criteria are not available: no pattern matcher configured")
		}
		if _, err := s.cfg.Compile(*f.Pattern); err != nil {
			return InvalidParameterValueException("Invalid filter pattern definition.")
		}
		filters = append(filters, *f.Pattern)
	}
	st.Filters = filters
	return nil
}

// applyStartingPosition requires a DynamoDB starting position on create
// and refuses one on update.
func applyStartingPosition(in *mappingInput, st *Settings, create bool) error {
	if !create {
		if in.StartingPosition != nil || in.StartingPositionTimestamp != nil {
			// UpdateEventSourceMapping has no StartingPosition member; the
			// SDK never sends it.
			return InvalidParameterValueException("StartingPosition cannot be updated.")
		}
		return nil
	}
	if in.StartingPosition == nil {
		return InvalidParameterValueException("1 validation error detected: Value null at 'startingPosition' failed to satisfy constraint: Member must not be null")
	}
	st.StartingPosition = *in.StartingPosition
	if st.StartingPosition == "AT_TIMESTAMP" {
		return InvalidParameterValueException("Unsupported starting position for DynamoDB stream event source: AT_TIMESTAMP. AT_TIMESTAMP is supported only for Amazon Kinesis streams, Amazon DocumentDB, Amazon MSK, and self-managed Apache Kafka.")
	}
	if in.StartingPositionTimestamp != nil {
		return InvalidParameterValueException("StartingPositionTimestamp can only be specified with StartingPosition AT_TIMESTAMP.")
	}
	return nil
}

// functionInfo resolves a function (name or ARN, optionally qualified)
// to its ARN and execution role.
func (s *Service) functionInfo(name string) (fnArn, roleArn string, err error) {
	fns, err := s.functions()
	if err != nil {
		return "", "", err
	}
	base, qualifier := splitQualifier(name)
	arn, role, _, ok := fns.FunctionInfo(base)
	if !ok {
		return "", "", awsapi.NotFound404("Function not found: %s", s.qualifiedFunctionArn(name))
	}
	if qualifier != "" {
		arn += ":" + qualifier
	}
	return arn, role, nil
}

// splitQualifier splits "name:qual", "arn:…:function:name:qual" into the
// unqualified name or ARN and the qualifier.
func splitQualifier(name string) (string, string) {
	if strings.HasPrefix(name, "arn:") {
		parts := strings.Split(name, ":")
		if len(parts) == 8 {
			return strings.Join(parts[:7], ":"), parts[7]
		}
		return name, ""
	}
	parts := strings.Split(name, ":")
	switch len(parts) {
	case 2:
		return parts[0], parts[1]
	case 4: // account:function:name:qualifier (partial ARN)
		return strings.Join(parts[:3], ":"), parts[3]
	}
	return name, ""
}

func (s *Service) qualifiedFunctionArn(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name
	}
	return s.env.ARN("lambda", "function:"+name)
}

// rolePrincipal is the principal a mapping acts as: a Lambda session of the
// function's execution role.
func (s *Service) rolePrincipal(roleArn string) awsapi.Principal {
	return s.env.RolePrincipal(roleArn, "awslambda_esm")
}

func (s *Service) authorizeRole(roleArn, action, resource string) error {
	return s.env.AuthorizeAs(s.rolePrincipal(roleArn), action, resource)
}

// streamReadActions are the actions Lambda needs on a DynamoDB stream.
var streamReadActions = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}

// checkStreamAccess checks the role may read the stream and send to the
// destination, with Lambda's messages.
func (s *Service) checkStreamAccess(roleArn string, st *Settings) error {
	for _, action := range streamReadActions {
		if err := s.authorizeRole(roleArn, action, st.EventSourceArn); err != nil {
			return InvalidParameterValueException("Cannot access stream %s. Please ensure the role can perform the GetRecords, GetShardIterator, DescribeStream, and ListStreams Actions on your stream in IAM.", st.EventSourceArn)
		}
	}
	if st.OnFailureDestination != "" {
		if err := s.authorizeRole(roleArn, "sqs:SendMessage", st.OnFailureDestination); err != nil {
			return InvalidParameterValueException("The provided execution role does not have permissions to call SendMessage on SQS")
		}
	}
	return nil
}

func (s *Service) functions() (Functions, error) {
	return awsapi.Dependency(s.cfg.Functions, "lambda", awsapi.ServiceUnavailable)
}

func (s *Service) streams() (Streams, error) {
	return awsapi.Dependency(s.cfg.Streams, "DynamoDB Streams", awsapi.ServiceUnavailable)
}

func (s *Service) create(req *awsapi.Request, in *mappingInput) (any, error) {
	if err := validateModel(in); err != nil {
		return nil, err
	}
	if in.FunctionName == nil || *in.FunctionName == "" {
		return nil, awsapi.ValidationException("1 validation error detected: Value null at 'functionName' failed to satisfy constraint: Member must not be null")
	}
	if in.EventSourceArn == nil || *in.EventSourceArn == "" {
		return nil, InvalidParameterValueException("Unrecognized event source, must be kinesis, dynamodb stream, sqs, kafka, mq or documentdb.")
	}
	kind, ok := kindOf(*in.EventSourceArn)
	if !ok {
		return nil, InvalidParameterValueException("Unrecognized event source, must be kinesis, dynamodb stream, sqs, kafka, mq or documentdb. This endpoint serves DynamoDB stream and SQS queue event sources: %s", *in.EventSourceArn)
	}
	if err := req.Authorize("lambda:CreateEventSourceMapping", "*"); err != nil {
		return nil, err
	}
	fnArn, roleArn, err := s.functionInfo(*in.FunctionName)
	if err != nil {
		return nil, err
	}
	st := Settings{EventSourceArn: *in.EventSourceArn, FunctionArn: fnArn, kind: kind}
	if err := s.applyInput(in, &st, true); err != nil {
		return nil, err
	}
	if err := kind.exists(s, st.EventSourceArn); err != nil {
		return nil, err
	}
	if err := kind.checkAccess(s, roleArn, &st); err != nil {
		return nil, err
	}
	enabled := in.Enabled == nil || *in.Enabled

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.order {
		m := s.mappings[id]
		m.mu.Lock()
		dup := m.settings.EventSourceArn == st.EventSourceArn && m.settings.FunctionArn == st.FunctionArn
		m.mu.Unlock()
		if dup {
			return nil, awsapi.ResourceConflictException("The event source arn (\" %s \") and function (\" %s \") provided mapping already exists. Please update or delete the existing mapping with UUID %s",
				st.EventSourceArn, awsapi.ResourceName(strings.TrimSuffix(st.FunctionArn, ":"+lastQualifier(st.FunctionArn))), id)
		}
	}
	uuid := awsapi.NewUUID()
	m := newMapping(s, uuid, st)
	s.mappings[uuid] = m
	s.order = append(s.order, uuid)
	m.mu.Lock()
	conf := m.configurationLocked()
	m.mu.Unlock()
	m.scheduleTransition(enabledState(enabled))
	return accepted(conf)
}

func lastQualifier(fnArn string) string {
	parts := strings.Split(fnArn, ":")
	if len(parts) == 8 {
		return parts[7]
	}
	return ""
}

func enabledState(enabled bool) string {
	if enabled {
		return StateEnabled
	}
	return StateDisabled
}

func (s *Service) lookup(req *awsapi.Request) (*mapping, error) {
	uuid := req.PathValue("UUID")
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.mappings[uuid]
	if !ok {
		return nil, mappingNotFound()
	}
	return m, nil
}

func (s *Service) get(_ *awsapi.Request, m *mapping) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.configurationLocked(), nil
}

func (s *Service) update(_ *awsapi.Request, m *mapping, in *mappingInput) (any, error) {
	if err := validateModel(in); err != nil {
		return nil, err
	}
	if in.EventSourceArn != nil {
		return nil, InvalidParameterValueException("EventSourceArn cannot be updated.")
	}
	m.mu.Lock()
	st := m.settings
	st.Filters = append([]string(nil), st.Filters...)
	st.Metrics = append([]string(nil), st.Metrics...)
	state := m.state
	m.mu.Unlock()
	switch state {
	case StateEnabled, StateDisabled:
	default:
		return nil, resourceInUse(m.uuid, state)
	}
	fnName := st.FunctionArn
	if in.FunctionName != nil && *in.FunctionName != "" {
		fnName = *in.FunctionName
	}
	fnArn, roleArn, err := s.functionInfo(fnName)
	if err != nil {
		return nil, err
	}
	st.FunctionArn = fnArn
	if err := s.applyInput(in, &st, false); err != nil {
		return nil, err
	}
	if err := st.kind.checkAccess(s, roleArn, &st); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.state != state {
		cur := m.state
		m.mu.Unlock()
		return nil, resourceInUse(m.uuid, cur)
	}
	target := state
	transient := StateUpdating
	if in.Enabled != nil {
		target = enabledState(*in.Enabled)
		if target != state {
			transient = map[bool]string{true: StateEnabling, false: StateDisabling}[*in.Enabled]
		}
	}
	m.settings = st
	m.state = transient
	m.reason = "User action"
	m.lastModified = s.env.Time()
	m.generation++
	conf := m.configurationLocked()
	m.mu.Unlock()
	m.scheduleTransition(target)
	return accepted(conf)
}

func (s *Service) delete(_ *awsapi.Request, m *mapping) (any, error) {
	m.mu.Lock()
	switch m.state {
	case StateEnabled, StateDisabled:
	default:
		st := m.state
		m.mu.Unlock()
		return nil, resourceInUse(m.uuid, st)
	}
	m.state = StateDeleting
	m.reason = "User action"
	m.generation++
	conf := m.configurationLocked()
	m.mu.Unlock()
	m.stopPoller()
	s.afterTransition(func() {
		m.stopPoller()
		s.mu.Lock()
		delete(s.mappings, m.uuid)
		for i, id := range s.order {
			if id == m.uuid {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
	})
	return accepted(conf)
}

// afterTransition runs fn after the transition delay, unless the service
// is closed.
func (s *Service) afterTransition(fn func()) {
	s.Go(func() {
		s.mu.Lock()
		d := s.cfg.Transition
		s.mu.Unlock()
		t := time.NewTimer(d)
		defer t.Stop()
		<-t.C
		fn()
	})
}

func (s *Service) list(req *awsapi.Request) (any, error) {
	if err := req.Authorize("lambda:ListEventSourceMappings", "*"); err != nil {
		return nil, err
	}
	q := req.HTTP.URL.Query()
	srcArn := q.Get("EventSourceArn")
	fn := q.Get("FunctionName")
	maxItems, ok := awsapi.IntParam(q, "MaxItems", 100, 1, 10000)
	if !ok {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 10000", q.Get("MaxItems"))
	}
	start, ok := awsapi.IntParam(q, "Marker", 0, 0, math.MaxInt)
	if !ok {
		return nil, InvalidParameterValueException("Invalid marker: %s", q.Get("Marker"))
	}
	var fnArn string
	if fn != "" {
		base, qual := splitQualifier(fn)
		fnArn = s.qualifiedFunctionArn(base)
		if !strings.HasPrefix(base, "arn:") && strings.Count(base, ":") == 2 {
			fnArn = "arn:aws:lambda:" + s.env.Region + ":" + base
		}
		if qual != "" {
			fnArn += ":" + qual
		}
	}
	var out []Configuration
	for _, c := range s.Mappings() {
		if srcArn != "" && c.EventSourceArn != srcArn {
			continue
		}
		if fnArn != "" && c.FunctionArn != fnArn {
			continue
		}
		out = append(out, c)
	}
	resp := struct {
		EventSourceMappings []Configuration `json:"EventSourceMappings"`
		NextMarker          *string         `json:"NextMarker,omitempty"`
	}{EventSourceMappings: []Configuration{}}
	if start < len(out) {
		end := min(start+maxItems, len(out))
		resp.EventSourceMappings = out[start:end]
		if end < len(out) {
			next := strconv.Itoa(end)
			resp.NextMarker = &next
		}
	}
	return resp, nil
}

// Mappings returns the configurations of all mappings, in creation order.
func (s *Service) Mappings() []Configuration {
	s.mu.Lock()
	ms := make([]*mapping, 0, len(s.order))
	for _, id := range s.order {
		ms = append(ms, s.mappings[id])
	}
	s.mu.Unlock()
	out := make([]Configuration, 0, len(ms))
	for _, m := range ms {
		m.mu.Lock()
		out = append(out, m.configurationLocked())
		m.mu.Unlock()
	}
	return out
}

func (s *Service) mapping(uuid string) (*mapping, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.mappings[uuid]
	return m, ok
}

// configurationLocked renders the mapping; m.mu must be held.
func (m *mapping) configurationLocked() Configuration {
	st := m.settings
	c := Configuration{
		UUID:                           m.uuid,
		BatchSize:                      st.BatchSize,
		MaximumBatchingWindowInSeconds: st.MaximumBatchingWindowInSeconds,
		EventSourceArn:                 st.EventSourceArn,
		FunctionArn:                    st.FunctionArn,
		LastModified:                   awsapi.Epoch(m.lastModified),
		LastProcessingResult:           m.lastResult,
		State:                          m.state,
		StateTransitionReason:          m.reason,
		FunctionResponseTypes:          append([]string{}, st.FunctionResponseTypes...),
		EventSourceMappingArn:          m.arn,
	}
	if st.Metrics != nil {
		c.MetricsConfig = &wireMetricsConfig{Metrics: append([]string{}, st.Metrics...)}
	}
	if len(st.Filters) > 0 {
		fc := &wireFilterCriteria{}
		for _, p := range st.Filters {
			fc.Filters = append(fc.Filters, wireFilter{Pattern: &p})
		}
		c.FilterCriteria = fc
	}
	st.kind.render(st, &c)
	return c
}
