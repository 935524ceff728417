// Package sns is Amazon SNS (awsQuery) for the local AWS stack: standard
// and FIFO topics (fifo.go), SQS and Lambda subscriptions with filter
// policies (filter.go), Publish and PublishBatch, message attributes and
// tags.
//
// Publishing delivers asynchronously to every subscription. Delivery to an
// SQS queue happens only when the queue policy allows the service principal
// sns.amazonaws.com (aws:SourceArn the topic), to a Lambda function only
// when its resource policy allows it; otherwise the delivery fails silently,
// as on AWS, and is counted (GET /_localaws/sns/metrics).
package sns

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/targets"
)

// Limits, as AWS documents them.
const (
	MaxMessageBytes     = 256 * 1024
	MaxBatchEntries     = 10
	MaxMessageAttrs     = 10
	ServicePrincipal    = "sns.amazonaws.com"
	notificationVersion = "1"
)

// A topic's MaximumMessageSize ("Publishing large messages with Amazon SNS",
// https://docs.aws.amazon.com/sns/latest/dg/large-message-payloads.html):
// 1,024 to 1,048,576 bytes, MaxMessageBytes when unset. It bounds a
// message, and the whole of a PublishBatch. A topic set above
// MaxMessageBytes takes at most LargeTopicMaxSubscriptions subscriptions,
// of the largeTopicProtocols only.
const (
	MinMaximumMessageSize      = 1024
	MaxMaximumMessageSize      = 1024 * 1024
	LargeTopicMaxSubscriptions = 100
)

var largeTopicProtocols = map[string]bool{"firehose": true, "sqs": true, "lambda": true}

// Attribute is a message attribute.
type Attribute struct {
	DataType    string
	StringValue string
	BinaryValue []byte
}

// QueueSink delivers to SQS queues (the sqs service).
type QueueSink interface {
	DeliverAttributes(queueArn string, m QueueMessage) (messageID string, err error)
	QueuePolicy(queueArn string) (policyJSON string, exists bool)
}

// QueueMessage is a message delivered to a queue: a FIFO topic's to a FIFO
// queue carries its group and deduplication ids.
type QueueMessage struct {
	Body                     string
	Attributes               map[string]Attribute
	GroupID, DeduplicationID string
}

// FunctionInvoker invokes Lambda functions (the lambda service).
type FunctionInvoker = targets.FunctionInvoker

// Deps resolves the services SNS delivers to, at delivery time.
type Deps = targets.Deps[QueueSink]

// Metrics are delivery counters, named as SNS's CloudWatch metrics.
type Metrics struct {
	NumberOfMessagesPublished      int64 `json:"numberOfMessagesPublished"`
	NumberOfNotificationsDelivered int64 `json:"numberOfNotificationsDelivered"`
	NumberOfNotificationsFailed    int64 `json:"numberOfNotificationsFailed"`
	// NumberOfNotificationsFilteredOut counts the deliveries a
	// subscription's filter policy rejected.
	NumberOfNotificationsFilteredOut int64 `json:"numberOfNotificationsFilteredOut"`
}

// Service is the SNS service.
type Service struct {
	*awsapi.Lifecycle
	env  *awsapi.Env
	deps Deps

	// DeduplicationWindow is how long a FIFO topic remembers a
	// deduplication id; DefaultDeduplicationWindow by default.
	DeduplicationWindow time.Duration

	mu      sync.Mutex
	topics  map[string]*topic // by ARN
	subs    map[string]*subscription
	metrics awsapi.Counters[Metrics] // by topic ARN

	ops awsapi.Operations
	bg  *awsapi.Background // deliveries in flight
}

type topic struct {
	name, arn string
	attrs     map[string]string
	tags      map[string]string
	subs      []string
	fifoTopic bool // FifoTopic, set at creation
	fifo      fifoState
}

type subscription struct {
	arn, topicArn, protocol, endpoint string
	attrs                             map[string]string
	filter                            *filter
	fifoTopic                         bool
}

// New returns an empty SNS service.
func New(env *awsapi.Env, deps Deps) *Service {
	lc := awsapi.NewLifecycle()
	s := &Service{Lifecycle: lc, env: env, deps: deps, topics: map[string]*topic{}, subs: map[string]*subscription{},
		bg: lc.Background, DeduplicationWindow: DefaultDeduplicationWindow}
	s.ops = s.operations()
	s.Lists(&s.mu, s.inventory)
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "sns", Protocol: awsapi.Query, SigningName: "sns", XMLNamespace: "http://sns.amazonaws.com/doc/2010-03-31/"}
}

// inventory lists topics and subscriptions.
func (s *Service) inventory(add func(string)) {
	for a := range s.topics {
		add(a)
	}
	for a := range s.subs {
		add(a)
	}
}

// RegisterControl adds GET /_localaws/sns/metrics.
func (s *Service) RegisterControl(c *awsapi.Control) {
	c.HandleFunc("GET sns/metrics", func(w http.ResponseWriter, _ *http.Request) {
		awsapi.WriteControlJSON(w, http.StatusOK, map[string]any{"topics": s.Metrics()})
	})
}

// Metrics returns the delivery counters by topic ARN.
func (s *Service) Metrics() map[string]Metrics {
	return s.metrics.Snapshot()
}

func errNotFound(format string, args ...any) *awsapi.Error {
	e := awsapi.NewError("NotFound", format, args...)
	e.HTTPStatus = http.StatusNotFound
	return e
}

func errInvalid(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("InvalidParameter", format, args...)
}

func errAuth(req *awsapi.Request, action, arn string) *awsapi.Error {
	e := awsapi.NewError("AuthorizationError", "User: %s is not authorized to perform: %s on resource: %s", req.Principal.ARN, action, arn)
	e.HTTPStatus = http.StatusForbidden
	return e
}

// operations is the table of the operations served, each reading the
// request's awsQuery parameters.
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"CreateTopic":               {Handle: awsapi.FromForm(s.createTopic)},
		"GetTopicAttributes":        {Handle: awsapi.FromForm(s.getTopicAttributes)},
		"SetTopicAttributes":        {Handle: awsapi.FromForm(s.setTopicAttributes)},
		"ListTopics":                {Handle: awsapi.FromForm(s.listTopics)},
		"DeleteTopic":               {Handle: awsapi.FromForm(s.deleteTopic)},
		"Subscribe":                 {Handle: awsapi.FromForm(s.subscribe)},
		"Unsubscribe":               {Handle: awsapi.FromForm(s.unsubscribe)},
		"ListSubscriptionsByTopic":  {Handle: awsapi.FromForm(func(req *awsapi.Request, f form) (any, error) { return s.listSubscriptions(req, f, f.Get("TopicArn")) })},
		"ListSubscriptions":         {Handle: awsapi.FromForm(func(req *awsapi.Request, f form) (any, error) { return s.listSubscriptions(req, f, "") })},
		"GetSubscriptionAttributes": {Handle: awsapi.FromForm(s.getSubscriptionAttributes)},
		"SetSubscriptionAttributes": {Handle: awsapi.FromForm(s.setSubscriptionAttributes)},
		"Publish":                   {Handle: awsapi.FromForm(s.publish)},
		"PublishBatch":              {Handle: awsapi.FromForm(s.publishBatch)},
		"TagResource":               {Handle: awsapi.FromForm(s.tagResource)},
		"UntagResource":             {Handle: awsapi.FromForm(s.untagResource)},
		"ListTagsForResource":       {Handle: awsapi.FromForm(s.listTagsForResource)},
	}
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) { return s.ops.Handle(req) }

// ---- awsQuery helpers ----

type form = url.Values

func get(f form, k string) string {
	if v := f[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// queryMap reads prefix.entry.N.<key>/<value>.
func queryMap(f form, prefix, key, value string) map[string]string {
	out := map[string]string{}
	for i := 1; ; i++ {
		base := prefix + ".entry." + strconv.Itoa(i) + "."
		k, ok := f[base+key]
		if !ok {
			return out
		}
		out[k[0]] = get(f, base+value)
	}
}

func queryTags(f form, prefix string) map[string]string {
	out := map[string]string{}
	for i := 1; ; i++ {
		base := prefix + ".member." + strconv.Itoa(i) + "."
		k, ok := f[base+"Key"]
		if !ok {
			return out
		}
		out[k[0]] = get(f, base+"Value")
	}
}

func queryList(f form, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := f[prefix+".member."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, v[0])
	}
}

func queryAttributes(f form, prefix string) (map[string]Attribute, error) {
	out := map[string]Attribute{}
	for i := 1; ; i++ {
		base := prefix + ".entry." + strconv.Itoa(i) + "."
		name, ok := f[base+"Name"]
		if !ok {
			break
		}
		a := Attribute{DataType: get(f, base+"Value.DataType"), StringValue: get(f, base+"Value.StringValue")}
		if b := get(f, base+"Value.BinaryValue"); b != "" {
			v, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return nil, errInvalid("The message attribute '%s' has an invalid binary value.", name[0])
			}
			a.BinaryValue = v
		}
		base2, _, _ := strings.Cut(a.DataType, ".")
		switch base2 {
		case "String", "String.Array":
			if a.StringValue == "" {
				return nil, errInvalid("The message attribute '%s' must contain non-empty message attribute value for message attribute type 'String'.", name[0])
			}
		case "Number":
			if _, err := strconv.ParseFloat(a.StringValue, 64); err != nil {
				return nil, errInvalid("Could not cast message attribute '%s' value to number.", name[0])
			}
		case "Binary":
			if len(a.BinaryValue) == 0 {
				return nil, errInvalid("The message attribute '%s' must contain non-empty message attribute value for message attribute type 'Binary'.", name[0])
			}
		default:
			return nil, errInvalid("The message attribute '%s' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.", name[0])
		}
		out[name[0]] = a
	}
	if len(out) > MaxMessageAttrs {
		return nil, errInvalid("Number of message attributes [%d] exceeds the allowed maximum [%d].", len(out), MaxMessageAttrs)
	}
	return out, nil
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func el(name, v string) string { return "<" + name + ">" + esc(v) + "</" + name + ">" }

// optionalEl is el, or nothing for an empty value.
func optionalEl(name, v string) string {
	if v == "" {
		return ""
	}
	return el(name, v)
}

func xmlMap(name string, m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	b.WriteString("<" + name + ">")
	for _, k := range keys {
		b.WriteString("<entry>" + el("key", k) + el("value", m[k]) + "</entry>")
	}
	b.WriteString("</" + name + ">")
	return b.String()
}

// ---- topics ----

var topicNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

func (s *Service) defaultPolicy(arn string) string {
	return fmt.Sprintf(`{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{"AWS":"*"},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"%s","Condition":{"StringEquals":{"AWS:SourceOwner":"%s"}}}]}`, arn, s.env.AccountID)
}

var settableTopicAttrs = map[string]bool{
	"Policy": true, "DisplayName": true, "DeliveryPolicy": true, "KmsMasterKeyId": true, "SignatureVersion": true,
	"TracingConfig": true, "DataProtectionPolicy": true, "ArchivePolicy": true, "MaximumMessageSize": true,
	"SQSSuccessFeedbackRoleArn": true, "SQSFailureFeedbackRoleArn": true, "SQSSuccessFeedbackSampleRate": true,
	"LambdaSuccessFeedbackRoleArn": true, "LambdaFailureFeedbackRoleArn": true, "LambdaSuccessFeedbackSampleRate": true,
}

// topicAttrValidator checks the attributes of a topic, a FIFO topic when
// fifo.
func topicAttrValidator(fifo bool) func(k, v string) error {
	return func(k, v string) error {
		if known, err := validateFifoTopicAttr(fifo, k, v); known {
			return err
		}
		return validateTopicAttr(k, v)
	}
}

func validateTopicAttr(k, v string) error {
	if !settableTopicAttrs[k] {
		return errInvalid("Invalid parameter: AttributeName")
	}
	if k == "Policy" && v != "" {
		if _, err := iampolicy.Parse(v); err != nil {
			return errInvalid("Invalid parameter: Policy Error: %v", err)
		}
	}
	if k == "MaximumMessageSize" {
		if n, err := strconv.Atoi(v); err != nil || n < MinMaximumMessageSize || n > MaxMaximumMessageSize {
			return errInvalid("Invalid parameter: Attributes Reason: MaximumMessageSize: Invalid value [%s]. Must be an integer from %d to %d.", v, MinMaximumMessageSize, MaxMaximumMessageSize)
		}
	}
	return nil
}

// maxMessageBytes is the largest message, or PublishBatch, that t takes.
func (s *Service) maxMessageBytes(t *topic) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.maxMessageBytes()
}

// maxMessageBytes is the largest message, or PublishBatch, that t takes;
// the service's lock must be held.
func (t *topic) maxMessageBytes() int {
	if n, err := strconv.Atoi(t.attrs["MaximumMessageSize"]); err == nil {
		return n
	}
	return MaxMessageBytes
}

// checkLargeTopic refuses a topic of maximum message size size with the
// subscriptions subs, when size is above MaxMessageBytes and subs holds
// more subscriptions, or other protocols, than such a topic takes; s.mu
// must be held.
func checkLargeTopic(size int, subs []*subscription) error {
	if size <= MaxMessageBytes {
		return nil
	}
	if len(subs) > LargeTopicMaxSubscriptions {
		return errInvalid("Invalid parameter: A topic with a MaximumMessageSize above %d bytes supports at most %d subscriptions", MaxMessageBytes, LargeTopicMaxSubscriptions)
	}
	for _, sub := range subs {
		if !largeTopicProtocols[sub.protocol] {
			return errInvalid("Invalid parameter: A topic with a MaximumMessageSize above %d bytes supports only the firehose, sqs and lambda protocols, not %s", MaxMessageBytes, sub.protocol)
		}
	}
	return nil
}

// liveSubs are t's subscriptions; s.mu must be held.
func (s *Service) liveSubs(t *topic) []*subscription {
	var out []*subscription
	for _, sa := range t.subs {
		if sub := s.subs[sa]; sub != nil {
			out = append(out, sub)
		}
	}
	return out
}

// authorize allows a caller the topic policy allows, denies one it denies,
// and asks the installed authorizer otherwise.
func (s *Service) authorize(req *awsapi.Request, action string, t *topic) error {
	if req.Principal.Admin {
		return nil
	}
	s.mu.Lock()
	policy := t.attrs["Policy"]
	s.mu.Unlock()
	switch iampolicy.EvaluateResource(policy, iampolicy.Request{Action: action, Resource: t.arn, PrincipalArn: req.Principal.ARN}) {
	case iampolicy.Allow:
		return nil
	case iampolicy.Deny:
		return errAuth(req, action, t.arn)
	}
	if err := req.Authorize(action, t.arn); err != nil {
		return errAuth(req, action, t.arn)
	}
	return nil
}

func (s *Service) topicFor(req *awsapi.Request, arn, action string) (*topic, error) {
	if arn == "" {
		return nil, errInvalid("Invalid parameter: TopicArn")
	}
	s.mu.Lock()
	t := s.topics[arn]
	s.mu.Unlock()
	if err := s.authorizeFound(req, action, arn, "TopicArn", "Topic", t); err != nil {
		return nil, err
	}
	return t, nil
}

// authorizeFound authorises action on topic t, found for the ARN of the
// request parameter param; a nil t is a missing what, or an invalid param
// when the ARN does not parse.
func (s *Service) authorizeFound(req *awsapi.Request, action, arn, param, what string, t *topic) error {
	if t == nil {
		if _, err := awsapi.ParseARN(arn); err != nil {
			return errInvalid("Invalid parameter: %s", param)
		}
		return errNotFound("%s does not exist", what)
	}
	return s.authorize(req, action, t)
}

func (s *Service) createTopic(req *awsapi.Request, f form) (any, error) {
	name := get(f, "Name")
	attrs := queryMap(f, "Attributes", "key", "value")
	fifo := attrs["FifoTopic"] == "true"
	if err := checkTopicName(name, fifo); err != nil {
		return nil, err
	}
	if v, ok := attrs["FifoTopic"]; ok && v != "true" && v != "false" {
		return nil, errInvalid("Invalid parameter: Attributes Reason: FifoTopic: Invalid value [%s]", v)
	}
	delete(attrs, "FifoTopic")
	for k, v := range attrs {
		if err := topicAttrValidator(fifo)(k, v); err != nil {
			return nil, err
		}
	}
	tags := queryTags(f, "Tags")
	arn := s.env.ARN("sns", name)
	if err := req.Authorize("sns:CreateTopic", arn); err != nil {
		return nil, errAuth(req, "sns:CreateTopic", arn)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.topics[arn]; ok {
		for k, v := range attrs {
			if t.attrs[k] != v {
				return nil, errInvalid("Invalid parameter: Attributes Reason: Topic already exists with different attributes")
			}
		}
		for k, v := range tags {
			if cur, ok := t.tags[k]; ok && cur != v {
				return nil, errInvalid("Invalid parameter: Tags Reason: Topic already exists with different tags")
			}
		}
		return el("TopicArn", arn), nil
	}
	t := &topic{name: name, arn: arn, attrs: map[string]string{"Policy": s.defaultPolicy(arn), "DisplayName": "", "SignatureVersion": "1"}, tags: tags,
		fifoTopic: fifo}
	if fifo {
		t.attrs["FifoTopic"], t.attrs["ContentBasedDeduplication"] = "true", "false"
	}
	maps.Copy(t.attrs, attrs)
	s.topics[arn] = t
	return el("TopicArn", arn), nil
}

func (s *Service) getTopicAttributes(req *awsapi.Request, f form) (any, error) {
	return underLock(s, s.topicFor, req, get(f, "TopicArn"), "sns:GetTopicAttributes", func(t *topic) (any, error) {
		attrs := map[string]string{"TopicArn": t.arn, "Owner": s.env.AccountID, "EffectiveDeliveryPolicy": `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false}}`}
		maps.Copy(attrs, t.attrs)
		confirmed := 0
		for _, sa := range t.subs {
			if s.subs[sa] != nil {
				confirmed++
			}
		}
		attrs["SubscriptionsConfirmed"] = strconv.Itoa(confirmed)
		attrs["SubscriptionsPending"] = "0"
		attrs["SubscriptionsDeleted"] = "0"
		return xmlMap("Attributes", attrs), nil
	})
}

func (s *Service) setTopicAttributes(req *awsapi.Request, f form) (any, error) {
	t, err := s.topicFor(req, get(f, "TopicArn"), "sns:SetTopicAttributes")
	if err != nil {
		return nil, err
	}
	validate := func(k, v string) error {
		if err := topicAttrValidator(t.isFIFO())(k, v); err != nil || k != "MaximumMessageSize" {
			return err
		}
		size, _ := strconv.Atoi(v)
		s.mu.Lock()
		defer s.mu.Unlock()
		return checkLargeTopic(size, s.liveSubs(t))
	}
	return s.setAttribute(f, validate, func(k, v string) {
		if k == "Policy" && v == "" {
			v = s.defaultPolicy(t.arn)
		}
		t.attrs[k] = v
	})
}

// setAttribute validates the request's AttributeName and AttributeValue
// and sets them under the lock.
func (s *Service) setAttribute(f form, validate func(k, v string) error, set func(k, v string)) (any, error) {
	k, v := get(f, "AttributeName"), get(f, "AttributeValue")
	if err := validate(k, v); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set(k, v)
	return nil, nil
}

func (s *Service) listTopics(req *awsapi.Request, f form) (any, error) {
	if err := req.Authorize("sns:ListTopics", s.env.ARN("sns", "*")); err != nil {
		return nil, errAuth(req, "sns:ListTopics", s.env.ARN("sns", "*"))
	}
	s.mu.Lock()
	arns := slices.Sorted(maps.Keys(s.topics))
	s.mu.Unlock()
	page, next := awsapi.PageNames(arns, get(f, "NextToken"), 100)
	var b strings.Builder
	b.WriteString("<Topics>")
	for _, a := range page {
		b.WriteString("<member>" + el("TopicArn", a) + "</member>")
	}
	b.WriteString("</Topics>")
	if next != "" {
		b.WriteString(el("NextToken", next))
	}
	return b.String(), nil
}

func (s *Service) deleteTopic(req *awsapi.Request, f form) (any, error) {
	arn := get(f, "TopicArn")
	s.mu.Lock()
	t, ok := s.topics[arn]
	s.mu.Unlock()
	if !ok {
		return nil, nil // deleting a missing topic succeeds
	}
	if err := s.authorize(req, "sns:DeleteTopic", t); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sa := range t.subs {
		delete(s.subs, sa)
	}
	delete(s.topics, arn)
	return nil, nil
}

// ---- subscriptions ----

var subAttrs = map[string]bool{"RawMessageDelivery": true, "FilterPolicy": true, "FilterPolicyScope": true,
	"RedrivePolicy": true, "DeliveryPolicy": true, "SubscriptionRoleArn": true, "ReplayPolicy": true}

func validateSubAttr(k, v string) error {
	if !subAttrs[k] {
		return errInvalid("Invalid parameter: Attributes Reason: Unknown attribute %s", k)
	}
	if k == "RawMessageDelivery" && v != "true" && v != "false" {
		return errInvalid("Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value [%s]. Must be true or false.", v)
	}
	return nil
}

// sameSubAttr reports whether a subscription's attribute k, currently cur,
// has the value v; an unset RawMessageDelivery is false.
func sameSubAttr(k, cur, v string) bool {
	return cur == v || k == "RawMessageDelivery" && cur == "" && v == "false"
}

func (s *Service) subscribe(req *awsapi.Request, f form) (any, error) {
	t, err := s.topicFor(req, get(f, "TopicArn"), "sns:Subscribe")
	if err != nil {
		return nil, err
	}
	protocol, endpoint := get(f, "Protocol"), get(f, "Endpoint")
	switch protocol {
	case "sqs", "lambda":
		a, err := awsapi.ParseARN(endpoint)
		if err != nil || a.Service != protocol {
			return nil, errInvalid("Invalid parameter: %s endpoint ARN", map[string]string{"sqs": "SQS", "lambda": "Lambda"}[protocol])
		}
	case "":
		return nil, errInvalid("Invalid parameter: Protocol")
	default:
		return nil, errInvalid("Invalid parameter: Protocol %s is not supported by this endpoint", protocol)
	}
	if err := checkFifoEndpoint(t, protocol, endpoint); err != nil {
		return nil, err
	}
	attrs := queryMap(f, "Attributes", "key", "value")
	for k, v := range attrs {
		if err := validateSubAttr(k, v); err != nil {
			return nil, err
		}
	}
	flt, err := compileFilter(attrs)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkLargeTopic(t.maxMessageBytes(), append(s.liveSubs(t), &subscription{protocol: protocol})); err != nil {
		return nil, err
	}
	for _, sa := range t.subs {
		if sub := s.subs[sa]; sub != nil && sub.protocol == protocol && sub.endpoint == endpoint {
			for k, v := range attrs {
				if !sameSubAttr(k, sub.attrs[k], v) {
					return nil, errInvalid("Invalid parameter: Attributes Reason: Subscription already exists with different attributes")
				}
			}
			return el("SubscriptionArn", sub.arn), nil
		}
	}
	sub := &subscription{arn: t.arn + ":" + awsapi.NewUUID(), topicArn: t.arn, protocol: protocol, endpoint: endpoint,
		attrs: map[string]string{"RawMessageDelivery": "false"}, filter: flt, fifoTopic: t.isFIFO()}
	maps.Copy(sub.attrs, attrs)
	defaultFilterScope(sub.attrs)
	s.subs[sub.arn] = sub
	t.subs = append(t.subs, sub.arn)
	return el("SubscriptionArn", sub.arn), nil
}

func (s *Service) subFor(req *awsapi.Request, arn, action string) (*subscription, error) {
	s.mu.Lock()
	sub, ok := s.subs[arn]
	var t *topic
	if ok {
		t = s.topics[sub.topicArn]
	}
	s.mu.Unlock()
	if err := s.authorizeFound(req, action, arn, "SubscriptionArn", "Subscription", t); err != nil {
		return nil, err
	}
	return sub, nil
}

// underLock finds a topic or subscription by arn with find, which
// authorises action on it, then runs fn on it under s.mu.
func underLock[T any](s *Service, find func(req *awsapi.Request, arn, action string) (T, error), req *awsapi.Request, arn, action string,
	fn func(T) (any, error)) (any, error) {
	v, err := find(req, arn, action)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(v)
}

func (s *Service) unsubscribe(req *awsapi.Request, f form) (any, error) {
	return underLock(s, s.subFor, req, get(f, "SubscriptionArn"), "sns:Unsubscribe", func(sub *subscription) (any, error) {
		delete(s.subs, sub.arn)
		if t := s.topics[sub.topicArn]; t != nil {
			kept := t.subs[:0]
			for _, a := range t.subs {
				if a != sub.arn {
					kept = append(kept, a)
				}
			}
			t.subs = kept
		}
		return nil, nil
	})
}

func (s *Service) listSubscriptions(req *awsapi.Request, f form, topicArn string) (any, error) {
	var arns []string
	if topicArn != "" {
		t, err := s.topicFor(req, topicArn, "sns:ListSubscriptionsByTopic")
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		arns = append(arns, t.subs...)
		s.mu.Unlock()
	} else {
		if err := req.Authorize("sns:ListSubscriptions", s.env.ARN("sns", "*")); err != nil {
			return nil, errAuth(req, "sns:ListSubscriptions", s.env.ARN("sns", "*"))
		}
		s.mu.Lock()
		for a := range s.subs {
			arns = append(arns, a)
		}
		s.mu.Unlock()
	}
	sort.Strings(arns)
	page, next := awsapi.PageNames(arns, get(f, "NextToken"), 100)
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString("<Subscriptions>")
	for _, a := range page {
		sub := s.subs[a]
		if sub == nil {
			continue
		}
		b.WriteString("<member>" + el("SubscriptionArn", sub.arn) + el("Owner", s.env.AccountID) + el("Protocol", sub.protocol) +
			el("Endpoint", sub.endpoint) + el("TopicArn", sub.topicArn) + "</member>")
	}
	b.WriteString("</Subscriptions>")
	if next != "" {
		b.WriteString(el("NextToken", next))
	}
	return b.String(), nil
}

func (s *Service) getSubscriptionAttributes(req *awsapi.Request, f form) (any, error) {
	return underLock(s, s.subFor, req, get(f, "SubscriptionArn"), "sns:GetSubscriptionAttributes", func(sub *subscription) (any, error) {
		attrs := map[string]string{"SubscriptionArn": sub.arn, "TopicArn": sub.topicArn, "Protocol": sub.protocol, "Endpoint": sub.endpoint,
			"Owner": s.env.AccountID, "PendingConfirmation": "false", "ConfirmationWasAuthenticated": "true", "SubscriptionPrincipal": "arn:aws:iam::" + s.env.AccountID + ":root"}
		maps.Copy(attrs, sub.attrs)
		return xmlMap("Attributes", attrs), nil
	})
}

func (s *Service) setSubscriptionAttributes(req *awsapi.Request, f form) (any, error) {
	sub, err := s.subFor(req, get(f, "SubscriptionArn"), "sns:SetSubscriptionAttributes")
	if err != nil {
		return nil, err
	}
	k, v := get(f, "AttributeName"), get(f, "AttributeValue")
	s.mu.Lock()
	next := maps.Clone(sub.attrs)
	s.mu.Unlock()
	next[k] = v
	flt, err := compileFilter(next)
	if err != nil {
		return nil, err
	}
	return s.setAttribute(f, validateSubAttr, func(k, v string) {
		if v == "" && (k == "FilterPolicy" || k == "FilterPolicyScope") {
			delete(sub.attrs, k)
		} else {
			sub.attrs[k] = v
		}
		defaultFilterScope(sub.attrs)
		sub.filter = flt
	})
}

// ---- tags ----

// withTags authorises action on the request's ResourceArn, a topic, and
// runs fn with its tags under the lock.
func (s *Service) withTags(req *awsapi.Request, f form, action string, fn func(tags map[string]string) (any, error)) (any, error) {
	return underLock(s, s.topicFor, req, get(f, "ResourceArn"), action, func(t *topic) (any, error) { return fn(t.tags) })
}

func (s *Service) tagResource(req *awsapi.Request, f form) (any, error) {
	return s.withTags(req, f, "sns:TagResource", func(tags map[string]string) (any, error) {
		maps.Copy(tags, queryTags(f, "Tags"))
		if len(tags) > 50 {
			return nil, awsapi.NewError("TagLimitExceeded", "Could not complete request: tag quota of per resource exceeded")
		}
		return nil, nil
	})
}

func (s *Service) untagResource(req *awsapi.Request, f form) (any, error) {
	return s.withTags(req, f, "sns:UntagResource", func(tags map[string]string) (any, error) {
		awsapi.Untag(tags, queryList(f, "TagKeys"))
		return nil, nil
	})
}

func (s *Service) listTagsForResource(req *awsapi.Request, f form) (any, error) {
	return s.withTags(req, f, "sns:ListTagsForResource", func(tags map[string]string) (any, error) {
		var b strings.Builder
		b.WriteString("<Tags>")
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			b.WriteString("<member>" + el("Key", k) + el("Value", tags[k]) + "</member>")
		}
		b.WriteString("</Tags>")
		return b.String(), nil
	})
}

// ---- publishing ----

type outgoing struct {
	id, subject, message string
	attrs                map[string]Attribute
	structure            string
	// FIFO topics: the message group, deduplication id and sequence
	// number.
	groupID, dedupID, sequence string
}

func messageSize(message string, attrs map[string]Attribute) int {
	n := len(message)
	for k, a := range attrs {
		n += len(k) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}

func (s *Service) validateMessage(t *topic, message, structure, subject string, attrs map[string]Attribute) error {
	if message == "" {
		return errInvalid("Invalid parameter: Empty message")
	}
	if messageSize(message, attrs) > s.maxMessageBytes(t) {
		return errInvalid("Invalid parameter: Message too long")
	}
	if len(subject) > 100 {
		return errInvalid("Invalid parameter: Subject")
	}
	if structure != "" {
		if structure != "json" {
			return errInvalid("Invalid parameter: MessageStructure")
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(message), &m); err != nil || m["default"] == "" {
			return errInvalid("Invalid parameter: Message Structure - No default entry in JSON message body")
		}
	}
	return nil
}

func (s *Service) publish(req *awsapi.Request, f form) (any, error) {
	arn := get(f, "TopicArn")
	if arn == "" {
		arn = get(f, "TargetArn")
	}
	if arn == "" {
		return nil, errInvalid("Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter")
	}
	t, err := s.topicFor(req, arn, "sns:Publish")
	if err != nil {
		return nil, err
	}
	attrs, err := queryAttributes(f, "MessageAttributes")
	if err != nil {
		return nil, err
	}
	m := readOutgoing(f, "")
	m.attrs = attrs
	if err := s.send(t, &m, nil); err != nil {
		return nil, err
	}
	return el("MessageId", m.id) + optionalEl("SequenceNumber", m.sequence), nil
}

var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func (s *Service) publishBatch(req *awsapi.Request, f form) (any, error) {
	t, err := s.topicFor(req, get(f, "TopicArn"), "sns:Publish")
	if err != nil {
		return nil, err
	}
	type entry struct {
		id  string
		m   outgoing
		err error
	}
	var entries []entry
	for i := 1; ; i++ {
		base := "PublishBatchRequestEntries.member." + strconv.Itoa(i) + "."
		id, ok := f[base+"Id"]
		if !ok {
			break
		}
		e := entry{id: id[0], m: readOutgoing(f, base)}
		e.m.attrs, e.err = queryAttributes(f, base+"MessageAttributes")
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, awsapi.NewError("EmptyBatchRequest", "The batch request doesn't contain any entries")
	}
	if len(entries) > MaxBatchEntries {
		return nil, awsapi.NewError("TooManyEntriesInBatchRequest", "The batch request contains more entries than permissible")
	}
	seen := map[string]bool{}
	total := 0
	for _, e := range entries {
		if !batchIDRE.MatchString(e.id) {
			return nil, awsapi.NewError("InvalidBatchEntryId", "The Id of a batch entry in a batch request doesn't abide by the specification")
		}
		if seen[e.id] {
			return nil, awsapi.NewError("BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id")
		}
		seen[e.id] = true
		total += messageSize(e.m.message, e.m.attrs)
	}
	if total > s.maxMessageBytes(t) {
		return nil, awsapi.NewError("BatchRequestTooLong", "The length of all the messages put together is more than the limit")
	}
	var ok, failed strings.Builder
	for _, e := range entries {
		err := e.err
		if err == nil {
			err = s.send(t, &e.m, func() error {
				if code, msg, hit := s.env.Faults.EntryFault("sns", "PublishBatch"); hit {
					return &awsapi.Error{Code: code, Message: msg, Sender: code != "InternalError" && code != "InternalFailure"}
				}
				return nil
			})
		}
		if err != nil {
			ae := awsapi.AsError(err)
			failed.WriteString("<member>" + el("Id", e.id) + el("Code", ae.Code) + el("Message", ae.Message) +
				el("SenderFault", strconv.FormatBool(ae.Sender)) + "</member>")
			continue
		}
		ok.WriteString("<member>" + el("Id", e.id) + el("MessageId", e.m.id) + optionalEl("SequenceNumber", e.m.sequence) + "</member>")
	}
	return "<Successful>" + ok.String() + "</Successful><Failed>" + failed.String() + "</Failed>", nil
}

// readOutgoing reads a published message's parameters under prefix (a
// PublishBatch entry's, or "" for Publish's), but its attributes.
func readOutgoing(f form, prefix string) outgoing {
	return outgoing{id: awsapi.NewUUID(), subject: get(f, prefix+"Subject"), message: get(f, prefix+"Message"), structure: get(f, prefix+"MessageStructure"),
		groupID: get(f, prefix+"MessageGroupId"), dedupID: get(f, prefix+"MessageDeduplicationId")}
}

// send validates a published message, then (when fault, if any, passes)
// admits it and fans it out; a FIFO duplicate succeeds with the original's
// ids and is not delivered again.
func (s *Service) send(t *topic, m *outgoing, fault func() error) error {
	if err := s.validateMessage(t, m.message, m.structure, m.subject, m.attrs); err != nil {
		return err
	}
	if fault != nil {
		if err := fault(); err != nil {
			return err
		}
	}
	fresh, err := s.admit(t, m)
	if err != nil {
		return err
	}
	if fresh {
		s.fanOut(t, *m)
	}
	return nil
}

// fanOut delivers a published message to every subscription, asynchronously.
func (s *Service) fanOut(t *topic, m outgoing) {
	s.mu.Lock()
	var subs []subscription
	for _, a := range t.subs {
		if sub := s.subs[a]; sub != nil {
			c := *sub
			c.attrs = map[string]string{}
			maps.Copy(c.attrs, sub.attrs)
			subs = append(subs, c)
		}
	}
	s.mu.Unlock()
	s.metrics.Count(t.arn, func(x *Metrics) { x.NumberOfMessagesPublished++ })
	now := s.env.Time().UTC()
	if t.isFIFO() {
		// One delivery after the other keeps each group's order.
		t.fifo.ordered.run(s.bg, func() {
			for _, sub := range subs {
				s.deliverCounted(t, sub, m, now)
			}
		})
		return
	}
	for _, sub := range subs {
		s.bg.Go(func() { s.deliverCounted(t, sub, m, now) })
	}
}

// deliverCounted delivers m to sub unless its filter policy rejects it,
// and counts the outcome.
func (s *Service) deliverCounted(t *topic, sub subscription, m outgoing, at time.Time) {
	if !sub.filter.matches(m) {
		s.metrics.Count(t.arn, func(x *Metrics) { x.NumberOfNotificationsFilteredOut++ })
		return
	}
	err := s.deliver(sub, m, at)
	s.metrics.Count(t.arn, func(x *Metrics) {
		if err != nil {
			x.NumberOfNotificationsFailed++
		} else {
			x.NumberOfNotificationsDelivered++
		}
	})
	if err != nil {
		s.env.Logger.Warn("SNS delivery failed", "subscription", sub.arn, "endpoint", sub.endpoint, "error", err)
	}
}

// ErrNotAuthorized is a delivery the endpoint's resource policy does not
// allow.
var ErrNotAuthorized = errors.New("the endpoint's resource policy does not allow sns.amazonaws.com")

func (s *Service) messageFor(m outgoing, protocol string) string {
	if m.structure != "json" {
		return m.message
	}
	var byProto map[string]string
	_ = json.Unmarshal([]byte(m.message), &byProto)
	if v, ok := byProto[protocol]; ok {
		return v
	}
	return byProto["default"]
}

// notification builds the SNS notification JSON.
func (s *Service) notification(sub subscription, m outgoing, at time.Time, lambda bool) map[string]any {
	n := map[string]any{
		"Type": "Notification", "MessageId": m.id, "TopicArn": sub.topicArn, "Message": s.messageFor(m, sub.protocol),
		"Timestamp": at.Format("2006-01-02T15:04:05.000Z"), "SignatureVersion": notificationVersion,
		"Signature":      signature(),
		"SigningCertURL": "https://sns." + s.env.Region + ".amazonaws.com/SimpleNotificationService-local.pem",
		"UnsubscribeURL": s.env.Endpoint + "/?Action=Unsubscribe&SubscriptionArn=" + sub.arn,
	}
	if m.sequence != "" {
		n["SequenceNumber"] = m.sequence
	}
	if lambda {
		n["SigningCertUrl"], n["UnsubscribeUrl"] = n["SigningCertURL"], n["UnsubscribeURL"]
		delete(n, "SigningCertURL")
		delete(n, "UnsubscribeURL")
	}
	if m.subject != "" {
		n["Subject"] = m.subject
	} else if lambda {
		n["Subject"] = nil
	}
	if len(m.attrs) > 0 {
		attrs := map[string]map[string]string{}
		for k, a := range m.attrs {
			v := a.StringValue
			if strings.HasPrefix(a.DataType, "Binary") {
				v = base64.StdEncoding.EncodeToString(a.BinaryValue)
			}
			attrs[k] = map[string]string{"Type": a.DataType, "Value": v}
		}
		n["MessageAttributes"] = attrs
	} else if lambda {
		n["MessageAttributes"] = map[string]any{}
	}
	return n
}

func signature() string {
	b := make([]byte, 256)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func (s *Service) deliver(sub subscription, m outgoing, at time.Time) error {
	g := targets.Grant{Principal: ServicePrincipal, SourceArn: sub.topicArn, SourceAccount: s.env.AccountID, Denied: ErrNotAuthorized}
	switch sub.protocol {
	case "sqs":
		q, err := s.deps.Queue(g, sub.endpoint)
		if err != nil {
			return err
		}
		qm := QueueMessage{Body: s.messageFor(m, "sqs"), Attributes: m.attrs}
		if sub.attrs["RawMessageDelivery"] != "true" {
			body, err := json.Marshal(s.notification(sub, m, at, false))
			if err != nil {
				return err
			}
			qm = QueueMessage{Body: string(body)}
		}
		if sub.fifoTopic && isFIFOQueue(sub.endpoint) {
			qm.GroupID, qm.DeduplicationID = m.groupID, m.dedupID
		}
		_, err = q.DeliverAttributes(sub.endpoint, qm)
		return err
	case "lambda":
		fn, err := s.deps.Function(g, sub.endpoint)
		if err != nil {
			return err
		}
		event := map[string]any{"Records": []any{map[string]any{
			"EventSource": "aws:sns", "EventVersion": "1.0", "EventSubscriptionArn": sub.arn,
			"Sns": s.notification(sub, m, at, true),
		}}}
		payload, err := json.Marshal(event)
		if err != nil {
			return err
		}
		return fn.InvokeAsync(s.bg.Context(), sub.endpoint, payload)
	}
	return fmt.Errorf("protocol %s is not supported", sub.protocol)
}
