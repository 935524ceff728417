// Package sqs is Amazon SQS (standard and FIFO queues) for the local AWS stack, in
// the AWS JSON 1.0 protocol the current SDK speaks (X-Amz-Target
// AmazonSQS.*), with awsQuery-compatible error codes, and in the awsQuery
// (XML) protocol of older SDKs and CLIs, which the router transcodes
// through the SDK's schemas of the operations (operations.go).
//
// Queues live in memory. Messages honour delays, visibility timeouts, long
// polling (a waiting ReceiveMessage returns as soon as a message is
// available), the redrive policy (a message received more than
// maxReceiveCount times moves to the dead-letter queue when it would be
// received again) and the retention period. FIFO queues (fifo.go) keep the
// order of each message group, hold a group back while one of its messages
// is in flight, deduplicate sends for five minutes and number messages.
//
// Other services of the stack deliver messages with Deliver (no
// authorisation: the caller checks the queue policy, read with
// QueuePolicy).
package sqs

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// Limits and defaults, as AWS documents them.
const (
	DefaultVisibilityTimeout      = 30
	DefaultMessageRetentionPeriod = 345600
	// DefaultMaximumMessageSize is a new queue's: 1 MiB, also the most a
	// queue takes (CreateQueue, SQS API reference; 256 KiB before 2025).
	DefaultMaximumMessageSize = 1048576
	MaxBatchEntries           = 10
	MaxMessageAttributes      = 10
	MaxWaitTimeSeconds        = 20
	// RecreateDelay is how long after DeleteQueue a queue of the same name
	// cannot be created (QueueDeletedRecently) and the interval PurgeQueue
	// requires between purges.
	RecreateDelay = 60 * time.Second
)

// Service is the SQS service.
type Service struct {
	*awsapi.Lifecycle
	env *awsapi.Env

	// DeletedRecentlyWindow is how long a deleted queue's name stays
	// reserved (QueueDeletedRecently); RecreateDelay by default.
	DeletedRecentlyWindow time.Duration
	// PurgeInterval is the minimum time between two purges of a queue
	// (PurgeQueueInProgress); RecreateDelay by default.
	PurgeInterval time.Duration
	// DeduplicationWindow is how long a FIFO queue remembers a
	// deduplication id, and a ReceiveRequestAttemptId its messages;
	// DefaultDeduplicationWindow (five minutes) by default.
	DeduplicationWindow time.Duration

	ops    awsapi.Operations
	shapes awsapi.Shapes

	mu      sync.Mutex
	queues  map[string]*queue // by name
	deleted map[string]time.Time
	closed  chan struct{} // closed by Close: long polls return at once
	waiting atomic.Int32  // long polls parked in wait
}

type queue struct {
	name, arn string
	created   time.Time
	modified  time.Time
	attrs     map[string]string // settable attributes, normalised
	tags      map[string]string
	msgs      []*message
	receipts  map[string]*message
	purgedAt  time.Time
	notify    chan struct{} // closed and replaced when a message is added
	// FIFO queues: the last sequence number given, the deduplication ids
	// of the window and the receive attempts to answer again.
	sequence uint64
	dedup    awsapi.Window[dedupRecord]
	attempts awsapi.Window[receiveAttempt]
	received map[string][]*message // by group: received, maybe still in flight
	dead     int                   // messages deleted but still in msgs
}

type message struct {
	id            string
	body          string
	md5Body       string
	md5Attrs      string
	attrs         map[string]MessageAttribute
	sent          time.Time
	senderID      string
	availableAt   time.Time
	receiveCount  int
	firstReceive  time.Time
	inflight      bool
	deleted       bool
	lastReceiptAt time.Time
	// FIFO: the group, deduplication id and sequence number; the current
	// receipt handle and the ReceiveRequestAttemptId that received it.
	groupID, dedupID, sequence string
	handle, attempt            string
}

// MessageAttribute is an SQS message attribute.
type MessageAttribute struct {
	DataType    string `json:"DataType"`
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue []byte `json:"BinaryValue,omitempty"`
}

// New returns an empty SQS service.
func New(env *awsapi.Env) *Service {
	s := &Service{
		env:                   env,
		DeletedRecentlyWindow: RecreateDelay,
		PurgeInterval:         RecreateDelay,
		DeduplicationWindow:   DefaultDeduplicationWindow,
		queues:                map[string]*queue{},
		deleted:               map[string]time.Time{},
		closed:                make(chan struct{}),
	}
	s.Lifecycle = awsapi.NewLifecycle()
	s.ops = s.operations()
	s.shapes = s.ops.Shapes()
	s.Lists(&s.mu, s.inventory)
	s.OnStop(func() { close(s.closed) })
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{
		Name:           "sqs",
		Protocol:       awsapi.JSON10,
		TargetPrefix:   "AmazonSQS",
		SigningName:    "sqs",
		ErrorNamespace: "com.amazonaws.sqs",
		XMLNamespace:   xmlNamespace,
		Protocols:      []awsapi.Protocol{awsapi.Query},
		Shapes:         s.shapes,
	}
}

// inventory lists the queue ARNs.
func (s *Service) inventory(add func(string)) {
	for _, q := range s.queues {
		add(q.arn)
	}
}

// Errors, with the awsQuery codes the SDK maps through x-amzn-query-error.
func sqsError(code, queryCode, format string, args ...any) *awsapi.Error {
	e := awsapi.NewError(code, format, args...)
	e.QueryCode = queryCode
	return e
}

func errNoQueue() *awsapi.Error {
	return sqsError("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.")
}

func errInvalidParameter(format string, args ...any) *awsapi.Error {
	return sqsError("InvalidParameterValue", "InvalidParameterValue", format, args...)
}

func errMissingParameter(name string) *awsapi.Error {
	return sqsError("MissingParameter", "MissingParameter", "The request must contain the parameter %s.", name)
}

func errInvalidAttributeName(name string) *awsapi.Error {
	return sqsError("InvalidAttributeName", "InvalidAttributeName", "Unknown Attribute %s.", name)
}

func errInvalidAttributeValue(name string) *awsapi.Error {
	return sqsError("InvalidAttributeValue", "InvalidAttributeValue", "Invalid value for the parameter %s.", name)
}

func errReceiptHandle(h string) *awsapi.Error {
	return sqsError("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "The input receipt handle \"%s\" is not a valid receipt handle.", h)
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) { return s.ops.Handle(req) }

var queueNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func (s *Service) queueURL(name string) string {
	return strings.TrimRight(s.env.Endpoint, "/") + "/" + s.env.AccountID + "/" + name
}

// nameFromURL extracts the queue name from a queue URL
// (<endpoint>/<account>/<name>) or accepts a bare name.
func nameFromURL(u string) string {
	if u == "" {
		return ""
	}
	if p, err := url.Parse(u); err == nil && p.Path != "" {
		u = p.Path
	}
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndex(u, "/"); i >= 0 {
		u = u[i+1:]
	}
	return u
}

// lookup finds a queue by URL; s.mu must be held.
func (s *Service) lookup(queueURL string) (*queue, error) {
	if queueURL == "" {
		return nil, errMissingParameter("QueueUrl")
	}
	q, ok := s.queues[nameFromURL(queueURL)]
	if !ok {
		return nil, errNoQueue()
	}
	return q, nil
}

// byARN finds a queue by ARN; s.mu must be held.
func (s *Service) byARN(arn string) *queue {
	a, err := awsapi.ParseARN(arn)
	if err != nil || a.Service != "sqs" {
		return nil
	}
	q, ok := s.queues[a.Resource]
	if !ok || q.arn != arn {
		return nil
	}
	return q
}

// authorize allows a caller when the queue policy allows it (and denies
// when it explicitly denies), otherwise asks the installed authorizer
// (identity policies).
func (s *Service) authorize(req *awsapi.Request, action string, q *queue) error {
	if req.Principal.Admin {
		return nil
	}
	s.mu.Lock()
	policy, arn := "", ""
	if q != nil {
		policy, arn = q.attrs["Policy"], q.arn
	}
	s.mu.Unlock()
	if policy != "" {
		switch iampolicy.EvaluateResource(policy, iampolicy.Request{Action: action, Resource: arn, PrincipalArn: req.Principal.ARN}) {
		case iampolicy.Allow:
			return nil
		case iampolicy.Deny:
			return accessDenied(req, action, arn)
		}
	}
	if err := req.Authorize(action, arn); err != nil {
		return accessDenied(req, action, arn)
	}
	return nil
}

func accessDenied(req *awsapi.Request, action, arn string) *awsapi.Error {
	e := sqsError("AccessDenied", "AccessDenied", "User: %s is not authorized to perform: %s on resource: %s", req.Principal.ARN, action, arn)
	e.HTTPStatus = 403
	return e
}

// queueFor decodes nothing: it locks, looks the queue up and authorises.
func (s *Service) queueFor(req *awsapi.Request, queueURL, action string) (*queue, error) {
	s.mu.Lock()
	q, err := s.lookup(queueURL)
	s.mu.Unlock()
	if err != nil {
		if !req.Principal.Admin {
			// Authorise against the would-be ARN first, as AWS does.
			if aerr := req.Authorize(action, s.env.ARN("sqs", nameFromURL(queueURL))); aerr != nil {
				return nil, accessDenied(req, action, s.env.ARN("sqs", nameFromURL(queueURL)))
			}
		}
		return nil, err
	}
	if err := s.authorize(req, action, q); err != nil {
		return nil, err
	}
	return q, nil
}

// lockedQueue resolves and authorises the queue of queueURL for action,
// then runs fn on it under s.mu; fn's result is the response.
func (s *Service) lockedQueue(req *awsapi.Request, queueURL, action string, fn func(q *queue) (any, error)) (any, error) {
	q, err := s.queueFor(req, queueURL, action)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(q)
}

// ---- attributes ----

type attrSpec struct {
	min, max int
	def      string
}

var intAttrs = map[string]attrSpec{
	"VisibilityTimeout":             {0, 43200, strconv.Itoa(DefaultVisibilityTimeout)},
	"MessageRetentionPeriod":        {60, 1209600, strconv.Itoa(DefaultMessageRetentionPeriod)},
	"ReceiveMessageWaitTimeSeconds": {0, 20, "0"},
	"DelaySeconds":                  {0, 900, "0"},
	"MaximumMessageSize":            {1024, 1048576, strconv.Itoa(DefaultMaximumMessageSize)},
	"KmsDataKeyReusePeriodSeconds":  {60, 86400, "300"},
}

var computedAttrs = map[string]bool{
	"ApproximateNumberOfMessages": true, "ApproximateNumberOfMessagesNotVisible": true,
	"ApproximateNumberOfMessagesDelayed": true, "CreatedTimestamp": true,
	"LastModifiedTimestamp": true, "QueueArn": true,
}

func defaultAttrs(fifo bool) map[string]string {
	m := map[string]string{"SqsManagedSseEnabled": "true"}
	for k, v := range intAttrs {
		if k != "KmsDataKeyReusePeriodSeconds" {
			m[k] = v.def
		}
	}
	if fifo {
		maps.Copy(m, fifoDefaults)
	}
	return m
}

type redrivePolicy struct {
	DeadLetterTargetArn string `json:"deadLetterTargetArn"`
	MaxReceiveCount     int
}

func parseRedrive(s string) (redrivePolicy, bool) {
	var raw struct {
		DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil || raw.DeadLetterTargetArn == "" {
		return redrivePolicy{}, false
	}
	txt := strings.Trim(string(raw.MaxReceiveCount), `"`)
	n, err := strconv.Atoi(txt)
	if err != nil || n < 1 || n > 1000 {
		return redrivePolicy{}, false
	}
	return redrivePolicy{DeadLetterTargetArn: raw.DeadLetterTargetArn, MaxReceiveCount: n}, true
}

// normaliseAttrs validates settable attributes of a queue (a FIFO queue
// when fifo) and returns them in the form GetQueueAttributes reports.
func normaliseAttrs(in map[string]string, fifo bool) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range in {
		if spec, ok := intAttrs[k]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < spec.min || n > spec.max {
				return nil, errInvalidAttributeValue(k)
			}
			out[k] = strconv.Itoa(n)
			continue
		}
		switch k {
		case "Policy":
			if v != "" {
				if _, err := iampolicy.Parse(v); err != nil {
					return nil, sqsError("InvalidAttributeValue", "InvalidAttributeValue", "Invalid value for the parameter Policy. Reason: %v", err)
				}
			}
			out[k] = v
		case "RedrivePolicy":
			if v != "" {
				rp, ok := parseRedrive(v)
				if !ok {
					return nil, sqsError("InvalidAttributeValue", "InvalidAttributeValue",
						"Value %s for parameter RedrivePolicy is invalid. Reason: Redrive policy is not a valid JSON map or is missing deadLetterTargetArn or maxReceiveCount (1 to 1000).", v)
				}
				b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": rp.DeadLetterTargetArn, "maxReceiveCount": rp.MaxReceiveCount})
				v = string(b)
			}
			out[k] = v
		case "RedriveAllowPolicy", "KmsMasterKeyId":
			out[k] = v
		case "SqsManagedSseEnabled":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, errInvalidAttributeValue(k)
			}
			out[k] = strconv.FormatBool(b)
		case "FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit":
			n, err := normaliseFifoAttr(k, v, fifo)
			if err != nil {
				return nil, err
			}
			if n != "" {
				out[k] = n
			}
		default:
			return nil, errInvalidAttributeName(k)
		}
	}
	if out["KmsMasterKeyId"] != "" && out["SqsManagedSseEnabled"] == "true" {
		return nil, sqsError("InvalidAttributeName", "InvalidAttributeName",
			"You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.")
	}
	return out, nil
}

// apply merges normalised attributes into a queue; s.mu must be held.
func (q *queue) apply(attrs map[string]string) {
	for k, v := range attrs {
		if v == "" && (k == "Policy" || k == "RedrivePolicy" || k == "RedriveAllowPolicy" || k == "KmsMasterKeyId") {
			delete(q.attrs, k)
			continue
		}
		q.attrs[k] = v
	}
	if attrs["KmsMasterKeyId"] != "" {
		q.attrs["SqsManagedSseEnabled"] = "false"
		if q.attrs["KmsDataKeyReusePeriodSeconds"] == "" {
			q.attrs["KmsDataKeyReusePeriodSeconds"] = "300"
		}
	}
}

func (q *queue) intAttr(name string) int {
	n, _ := strconv.Atoi(q.attrs[name])
	return n
}

// ---- queue operations ----

type createQueueInput struct {
	QueueName  string
	Attributes map[string]string
	Tags       map[string]string `json:"tags"`
}

func (s *Service) createQueue(req *awsapi.Request, in *createQueueInput) (any, error) {
	if in.QueueName == "" {
		return nil, errMissingParameter("QueueName")
	}
	fifo := in.Attributes["FifoQueue"] == "true"
	if err := checkQueueName(in.QueueName, fifo); err != nil {
		return nil, err
	}
	arn := s.env.ARN("sqs", in.QueueName)
	if err := req.Authorize("sqs:CreateQueue", arn); err != nil {
		return nil, accessDenied(req, "sqs:CreateQueue", arn)
	}
	attrs, err := normaliseAttrs(in.Attributes, fifo)
	if err != nil {
		return nil, err
	}
	if err := checkThroughput(attrs); err != nil {
		return nil, err
	}
	if len(in.Tags) > 50 {
		return nil, errInvalidParameter("Too many tags added for queue %s.", in.QueueName)
	}
	now := s.env.Time()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkRedriveTarget(fifo, attrs["RedrivePolicy"]); err != nil {
		return nil, err
	}
	if q, ok := s.queues[in.QueueName]; ok {
		for k, v := range attrs {
			cur, has := q.attrs[k]
			if !has {
				cur = defaultAttrs(fifo)[k]
			}
			if cur != v {
				return nil, sqsError("QueueNameExists", "QueueAlreadyExists",
					"A queue already exists with the same name and a different value for attribute %s", k)
			}
		}
		return map[string]string{"QueueUrl": s.queueURL(q.name)}, nil
	}
	if t, ok := s.deleted[in.QueueName]; ok && now.Sub(t) < s.DeletedRecentlyWindow {
		return nil, sqsError("QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently",
			"You must wait 60 seconds after deleting a queue before you can create another with the same name.")
	}
	q := &queue{
		name: in.QueueName, arn: arn, created: now, modified: now,
		attrs: defaultAttrs(fifo), tags: map[string]string{}, receipts: map[string]*message{},
		notify: make(chan struct{}),
	}
	q.apply(attrs)
	maps.Copy(q.tags, in.Tags)
	s.queues[q.name] = q
	return map[string]string{"QueueUrl": s.queueURL(q.name)}, nil
}

type getQueueURLInput struct {
	QueueName              string
	QueueOwnerAWSAccountId string
}

func (s *Service) getQueueURL(req *awsapi.Request, in *getQueueURLInput) (any, error) {
	if in.QueueName == "" {
		return nil, errMissingParameter("QueueName")
	}
	if in.QueueOwnerAWSAccountId != "" && in.QueueOwnerAWSAccountId != s.env.AccountID {
		return nil, errNoQueue()
	}
	q, err := s.queueFor(req, in.QueueName, "sqs:GetQueueUrl")
	if err != nil {
		return nil, err
	}
	return map[string]string{"QueueUrl": s.queueURL(q.name)}, nil
}

type getQueueAttributesInput struct {
	QueueUrl       string
	AttributeNames []string
}

func (s *Service) getQueueAttributes(req *awsapi.Request, in *getQueueAttributesInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:GetQueueAttributes", func(q *queue) (any, error) {
		now := s.env.Time()
		s.sweep(q, now)
		all := map[string]string{}
		maps.Copy(all, q.attrs)
		visible, inflight, delayed := 0, 0, 0
		for _, m := range q.msgs {
			switch {
			case m.inflight && now.Before(m.availableAt):
				inflight++
			case !m.inflight && now.Before(m.availableAt):
				delayed++
			default:
				visible++
			}
		}
		all["ApproximateNumberOfMessages"] = strconv.Itoa(visible)
		all["ApproximateNumberOfMessagesNotVisible"] = strconv.Itoa(inflight)
		all["ApproximateNumberOfMessagesDelayed"] = strconv.Itoa(delayed)
		all["CreatedTimestamp"] = strconv.FormatInt(q.created.Unix(), 10)
		all["LastModifiedTimestamp"] = strconv.FormatInt(q.modified.Unix(), 10)
		all["QueueArn"] = q.arn
		out := map[string]string{}
		for _, name := range in.AttributeNames {
			if name == "All" {
				return map[string]any{"Attributes": all}, nil
			}
			if _, settable := intAttrs[name]; !settable && !computedAttrs[name] {
				switch name {
				case "Policy", "RedrivePolicy", "RedriveAllowPolicy", "KmsMasterKeyId", "SqsManagedSseEnabled",
					"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit":
				default:
					return nil, errInvalidAttributeName(name)
				}
			}
			if v, ok := all[name]; ok {
				out[name] = v
			}
		}
		if len(out) == 0 {
			return map[string]any{}, nil
		}
		return map[string]any{"Attributes": out}, nil
	})
}

type setQueueAttributesInput struct {
	QueueUrl   string
	Attributes map[string]string
}

func (s *Service) setQueueAttributes(req *awsapi.Request, in *setQueueAttributesInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:SetQueueAttributes", func(q *queue) (any, error) {
		if in.Attributes == nil {
			return nil, errMissingParameter("Attribute.Name")
		}
		if _, ok := in.Attributes["FifoQueue"]; ok {
			// The queue type is chosen at creation only.
			return nil, errInvalidAttributeName("FifoQueue")
		}
		attrs, err := normaliseAttrs(in.Attributes, q.isFIFO())
		if err != nil {
			return nil, err
		}
		if err := checkThroughput(q.merged(attrs)); err != nil {
			return nil, err
		}
		if err := s.checkRedriveTarget(q.isFIFO(), attrs["RedrivePolicy"]); err != nil {
			return nil, err
		}
		q.apply(attrs)
		q.modified = s.env.Time()
		return nil, nil
	})
}

type listQueuesInput struct {
	QueueNamePrefix string
	MaxResults      int
	NextToken       string
}

func (s *Service) listQueues(req *awsapi.Request, in *listQueuesInput) (any, error) {
	if in.MaxResults < 0 || in.MaxResults > 1000 {
		return nil, errInvalidParameter("Value for parameter MaxResults is invalid. Reason: MaxResults must be an integer between 1 and 1000.")
	}
	if err := req.Authorize("sqs:ListQueues", s.env.ARN("sqs", "*")); err != nil {
		return nil, accessDenied(req, "sqs:ListQueues", s.env.ARN("sqs", "*"))
	}
	s.mu.Lock()
	var names []string
	for n := range s.queues {
		if strings.HasPrefix(n, in.QueueNamePrefix) {
			names = append(names, n)
		}
	}
	s.mu.Unlock()
	sort.Strings(names)
	token, err := base64.RawURLEncoding.DecodeString(in.NextToken)
	if err != nil {
		return nil, errInvalidParameter("Invalid NextToken value.")
	}
	limit := 1000
	if in.MaxResults > 0 {
		limit = in.MaxResults
	}
	out := map[string]any{}
	names, next := awsapi.PageNames(names, string(token), limit)
	if next != "" && in.MaxResults > 0 {
		out["NextToken"] = base64.RawURLEncoding.EncodeToString([]byte(next))
	}
	urls := make([]string, len(names))
	for i, n := range names {
		urls[i] = s.queueURL(n)
	}
	if len(urls) > 0 {
		out["QueueUrls"] = urls
	}
	return out, nil
}

type deleteQueueInput struct{ QueueUrl string }

func (s *Service) deleteQueue(req *awsapi.Request, in *deleteQueueInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:DeleteQueue", func(q *queue) (any, error) {
		if s.queues[q.name] == q {
			delete(s.queues, q.name)
			s.deleted[q.name] = s.env.Time()
			close(q.notify)
			q.notify = make(chan struct{})
		}
		return nil, nil
	})
}

type purgeQueueInput struct{ QueueUrl string }

func (s *Service) purgeQueue(req *awsapi.Request, in *purgeQueueInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:PurgeQueue", func(q *queue) (any, error) {
		now := s.env.Time()
		if !q.purgedAt.IsZero() && now.Sub(q.purgedAt) < s.PurgeInterval {
			return nil, sqsError("PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress",
				"Only one PurgeQueue operation on %s is allowed every 60 seconds.", q.name)
		}
		q.purgedAt = now
		for _, m := range q.msgs {
			m.deleted = true
		}
		q.msgs, q.dead = nil, 0
		q.receipts = map[string]*message{}
		return nil, nil
	})
}

type tagQueueInput struct {
	QueueUrl string
	Tags     map[string]string
}

func (s *Service) tagQueue(req *awsapi.Request, in *tagQueueInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:TagQueue", func(q *queue) (any, error) {
		if len(in.Tags) == 0 {
			return nil, errMissingParameter("Tags")
		}
		if awsapi.MergedLen(q.tags, in.Tags) > 50 {
			return nil, errInvalidParameter("Too many tags added for queue %s.", q.name)
		}
		maps.Copy(q.tags, in.Tags)
		return nil, nil
	})
}

type untagQueueInput struct {
	QueueUrl string
	TagKeys  []string
}

func (s *Service) untagQueue(req *awsapi.Request, in *untagQueueInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:UntagQueue", func(q *queue) (any, error) {
		awsapi.Untag(q.tags, in.TagKeys)
		return nil, nil
	})
}

type listQueueTagsInput struct{ QueueUrl string }

func (s *Service) listQueueTags(req *awsapi.Request, in *listQueueTagsInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:ListQueueTags", func(q *queue) (any, error) {
		if len(q.tags) == 0 {
			return map[string]any{}, nil
		}
		tags := make(map[string]string, len(q.tags))
		maps.Copy(tags, q.tags)
		return map[string]any{"Tags": tags}, nil
	})
}

type listDeadLetterSourceQueuesInput struct{ QueueUrl string }

func (s *Service) listDeadLetterSourceQueues(req *awsapi.Request, in *listDeadLetterSourceQueuesInput) (any, error) {
	return s.lockedQueue(req, in.QueueUrl, "sqs:ListDeadLetterSourceQueues", func(q *queue) (any, error) {
		urls := []string{}
		for _, src := range s.queues {
			if rp, ok := parseRedrive(src.attrs["RedrivePolicy"]); ok && rp.DeadLetterTargetArn == q.arn {
				urls = append(urls, s.queueURL(src.name))
			}
		}
		sort.Strings(urls)
		return map[string]any{"queueUrls": urls}, nil
	})
}

// ---- in-process contract ----

// Deliver enqueues a message on behalf of another service of the stack
// (EventBridge, SNS, Lambda destinations). It does no authorisation: the
// caller checks the queue policy. attributes become String message
// attributes.
func (s *Service) Deliver(queueArn, body string, attributes map[string]string) (messageID string, err error) {
	attrs := make(map[string]MessageAttribute, len(attributes))
	for k, v := range attributes {
		attrs[k] = MessageAttribute{DataType: "String", StringValue: v}
	}
	return s.DeliverMessage(queueArn, body, attrs)
}

// DeliverToGroup is Deliver to the message group groupID, as EventBridge
// and EventBridge Scheduler deliver to a target queue: a FIFO queue
// requires the group and deduplicates by content, so it needs
// ContentBasedDeduplication; a standard queue takes "" (or a fair queue's
// group).
func (s *Service) DeliverToGroup(queueArn, groupID, body string, attributes map[string]string) (string, error) {
	d := Delivery{Body: body, GroupID: groupID, Attributes: make(map[string]MessageAttribute, len(attributes))}
	for k, v := range attributes {
		d.Attributes[k] = MessageAttribute{DataType: "String", StringValue: v}
	}
	return s.DeliverTo(queueArn, d)
}

// DeliverMessage is Deliver with typed message attributes.
func (s *Service) DeliverMessage(queueArn, body string, attributes map[string]MessageAttribute) (string, error) {
	return s.DeliverTo(queueArn, Delivery{Body: body, Attributes: attributes})
}

// Delivery is a message another service of the stack delivers; a FIFO
// queue requires GroupID, and DeduplicationID unless it has
// ContentBasedDeduplication.
type Delivery struct {
	Body                     string
	Attributes               map[string]MessageAttribute
	GroupID, DeduplicationID string
}

// DeliverTo is Deliver of a Delivery. A duplicate of a FIFO queue's
// deduplication window succeeds with the original's message id.
func (s *Service) DeliverTo(queueArn string, d Delivery) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byARN(queueArn)
	if q == nil {
		return "", fmt.Errorf("delivering to %s: %w", queueArn, errNoQueue())
	}
	r, err := s.put(q, put{body: d.Body, attrs: d.Attributes, delay: -1, groupID: d.GroupID, dedupID: d.DeduplicationID, sender: "AIDAAWSSERVICE"})
	if err != nil {
		return "", fmt.Errorf("delivering to %s: %w", queueArn, err)
	}
	return r.id, nil
}

// QueuePolicy returns the queue's Policy attribute; exists is false when the
// queue does not exist. A queue without a policy gives "" and true.
func (s *Service) QueuePolicy(queueArn string) (policyJSON string, exists bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byARN(queueArn)
	if q == nil {
		return "", false
	}
	return q.attrs["Policy"], true
}

// QueueURL returns the URL of a queue by ARN.
func (s *Service) QueueURL(queueArn string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byARN(queueArn)
	if q == nil {
		return "", false
	}
	return s.queueURL(q.name), true
}

// ---- messages ----

func validBody(body string) bool {
	if !utf8.ValidString(body) {
		return false
	}
	for _, r := range body {
		switch {
		case r == 0x9 || r == 0xA || r == 0xD:
		case r >= 0x20 && r <= 0xD7FF:
		case r >= 0xE000 && r <= 0xFFFD:
		case r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

var attrNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,256}$`)

func validateAttributes(attrs map[string]MessageAttribute) (size int, err error) {
	if len(attrs) > MaxMessageAttributes {
		return 0, errInvalidParameter("Number of message attributes [%d] exceeds the allowed maximum [%d].", len(attrs), MaxMessageAttributes)
	}
	for name, a := range attrs {
		lower := strings.ToLower(name)
		if !attrNameRE.MatchString(name) || strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon.") ||
			strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
			return 0, errInvalidParameter("Message (user) attribute name '%s' is invalid.", name)
		}
		base, _, _ := strings.Cut(a.DataType, ".")
		switch base {
		case "String":
			if a.StringValue == "" {
				return 0, errInvalidParameter("Message (user) attribute '%s' must contain a non-empty value of type 'String'.", name)
			}
			size += len(a.StringValue)
		case "Number":
			if _, err := strconv.ParseFloat(a.StringValue, 64); err != nil {
				return 0, errInvalidParameter("Can't cast the value of message (user) attribute '%s' to a number.", name)
			}
			size += len(a.StringValue)
		case "Binary":
			if len(a.BinaryValue) == 0 {
				return 0, errInvalidParameter("Message (user) attribute '%s' must contain a non-empty value of type 'Binary'.", name)
			}
			size += len(a.BinaryValue)
		default:
			return 0, errInvalidParameter("The type of message (user) attribute '%s' is invalid. You must use only the following supported type prefixes: Binary, Number, String.", name)
		}
		size += len(name) + len(a.DataType)
	}
	return size, nil
}

// MD5OfMessageAttributes computes the digest SQS returns for message
// attributes: names sorted; each as length-prefixed name, data type, a
// transport byte (1 string/number, 2 binary) and the length-prefixed value.
func MD5OfMessageAttributes(attrs map[string]MessageAttribute) string {
	if len(attrs) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(attrs))
	h := md5.New()
	put := func(b []byte) {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(b)))
		h.Write(l[:])
		h.Write(b)
	}
	for _, n := range names {
		a := attrs[n]
		put([]byte(n))
		put([]byte(a.DataType))
		if strings.HasPrefix(a.DataType, "Binary") {
			h.Write([]byte{2})
			put(a.BinaryValue)
		} else {
			h.Write([]byte{1})
			put([]byte(a.StringValue))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// newMessage validates and builds a message; delay < 0 uses the queue's.
// s.mu must be held.
func (s *Service) newMessage(q *queue, body string, attrs map[string]MessageAttribute, delay int, sender string) (*message, error) {
	if body == "" {
		return nil, errMissingParameter("MessageBody")
	}
	if !validBody(body) {
		return nil, sqsError("InvalidMessageContents", "InvalidMessageContents", "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF")
	}
	attrSize, err := validateAttributes(attrs)
	if err != nil {
		return nil, err
	}
	if maxSize := q.intAttr("MaximumMessageSize"); len(body)+attrSize > maxSize {
		return nil, errInvalidParameter("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", maxSize)
	}
	if delay > 900 {
		return nil, errInvalidParameter("Value %d for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.", delay)
	}
	if delay < 0 {
		delay = q.intAttr("DelaySeconds")
	}
	now := s.env.Time()
	return &message{
		id: awsapi.NewUUID(), body: body, md5Body: md5Hex(body), md5Attrs: MD5OfMessageAttributes(attrs),
		attrs: attrs, sent: now, senderID: sender, availableAt: now.Add(time.Duration(delay) * time.Second),
	}, nil
}

// enqueue adds a message and wakes long polls; s.mu must be held.
func (s *Service) enqueue(q *queue, m *message) {
	q.msgs = append(q.msgs, m)
	q.wake()
}

// wake wakes the long polls of q; s.mu must be held.
func (q *queue) wake() {
	close(q.notify)
	q.notify = make(chan struct{})
}

func senderID(p awsapi.Principal) string {
	if p.RoleArn != "" {
		return "AROA" + strings.ToUpper(strings.ReplaceAll(p.SessionName, "-", "")) + ":" + p.SessionName
	}
	if p.AccessKeyID != "" {
		return p.AccessKeyID
	}
	return "AIDAANONYMOUS"
}

type sendEntry struct {
	Id                     string
	MessageBody            string
	DelaySeconds           *int
	MessageAttributes      map[string]MessageAttribute
	MessageGroupId         string
	MessageDeduplicationId string
}

// put is a message to enqueue: delay < 0 is the queue's; perMessage is a
// DelaySeconds given with the message (which FIFO queues refuse).
type put struct {
	body             string
	attrs            map[string]MessageAttribute
	delay            int
	perMessage       *int
	groupID, dedupID string
	sender           string
}

// sent is a send's result: the message enqueued, or the original of a
// duplicate.
type sent struct {
	id, md5Body, md5Attrs, sequence string
}

func (s *Service) send(q *queue, req *awsapi.Request, e sendEntry) (sent, error) {
	p := put{body: e.MessageBody, attrs: e.MessageAttributes, delay: -1, groupID: e.MessageGroupId, dedupID: e.MessageDeduplicationId,
		sender: senderID(req.Principal)}
	if e.DelaySeconds != nil {
		p.delay, p.perMessage = *e.DelaySeconds, e.DelaySeconds
		if p.delay < 0 {
			return sent{}, errInvalidParameter("Value %d for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.", p.delay)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues[q.name] != q {
		return sent{}, errNoQueue()
	}
	return s.put(q, p)
}

// put validates and enqueues a message, or answers a FIFO duplicate with
// its original; s.mu must be held.
func (s *Service) put(q *queue, p put) (sent, error) {
	m, err := s.newMessage(q, p.body, p.attrs, p.delay, p.sender)
	if err != nil {
		return sent{}, err
	}
	ids, err := checkFifoIDs(q, p.groupID, p.dedupID, p.body, p.perMessage)
	if err != nil {
		return sent{}, err
	}
	if q.isFIFO() {
		if r, dup := s.duplicate(q, ids, m.sent); dup {
			return sent{id: r.messageID, md5Body: m.md5Body, md5Attrs: m.md5Attrs, sequence: r.sequence}, nil
		}
	}
	s.stamp(q, m, ids)
	s.enqueue(q, m)
	return sent{id: m.id, md5Body: m.md5Body, md5Attrs: m.md5Attrs, sequence: m.sequence}, nil
}

// senderQueue is the queue a producer sends to, once it may: sqs:SendMessage
// on the queue, and the use of its customer managed key.
func (s *Service) senderQueue(req *awsapi.Request, queueURL string) (*queue, error) {
	q, err := s.queueFor(req, queueURL, "sqs:SendMessage")
	if err != nil {
		return nil, err
	}
	if err := s.authorizeSenderKMS(req.Principal, q); err != nil {
		return nil, err
	}
	return q, nil
}

type sendMessageInput struct {
	QueueUrl string
	sendEntry
}

func (s *Service) sendMessage(req *awsapi.Request, in *sendMessageInput) (any, error) {
	q, err := s.senderQueue(req, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	m, err := s.send(q, req, in.sendEntry)
	if err != nil {
		return nil, err
	}
	out := map[string]string{"MessageId": m.id, "MD5OfMessageBody": m.md5Body}
	if m.md5Attrs != "" {
		out["MD5OfMessageAttributes"] = m.md5Attrs
	}
	if m.sequence != "" {
		out["SequenceNumber"] = m.sequence
	}
	return out, nil
}

var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func checkBatch(ids []string) error {
	if len(ids) == 0 {
		return sqsError("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "There should be at least one entry in the request.")
	}
	if len(ids) > MaxBatchEntries {
		return sqsError("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
			"Maximum number of entries per request are %d. You have sent %d.", MaxBatchEntries, len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !batchIDRE.MatchString(id) {
			return sqsError("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId",
				"A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if seen[id] {
			return sqsError("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Id %s repeated.", id)
		}
		seen[id] = true
	}
	return nil
}

type batchFailure struct {
	Id          string
	SenderFault bool
	Code        string
	Message     string
}

func failure(id string, err error) batchFailure {
	e := awsapi.AsError(err)
	code := e.Code
	if e.QueryCode != "" {
		code = e.QueryCode
	}
	return batchFailure{Id: id, SenderFault: e.Sender, Code: code, Message: e.Message}
}

type sendMessageBatchInput struct {
	QueueUrl string
	Entries  []sendEntry
}

func (s *Service) sendMessageBatch(req *awsapi.Request, in *sendMessageBatchInput) (any, error) {
	q, err := s.senderQueue(req, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(in.Entries))
	total := 0
	for i, e := range in.Entries {
		ids[i] = e.Id
		total += len(e.MessageBody)
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	s.mu.Lock()
	maxSize := q.intAttr("MaximumMessageSize")
	s.mu.Unlock()
	if total > maxSize {
		return nil, sqsError("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong",
			"Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxSize, total)
	}
	type ok struct {
		Id                     string
		MessageId              string
		MD5OfMessageBody       string
		MD5OfMessageAttributes string `json:",omitempty"`
		SequenceNumber         string `json:",omitempty"`
	}
	successful, failed := []ok{}, []batchFailure{}
	for _, e := range in.Entries {
		m, err := s.send(q, req, e)
		if err != nil {
			failed = append(failed, failure(e.Id, err))
			continue
		}
		successful = append(successful, ok{Id: e.Id, MessageId: m.id, MD5OfMessageBody: m.md5Body, MD5OfMessageAttributes: m.md5Attrs, SequenceNumber: m.sequence})
	}
	return map[string]any{"Successful": successful, "Failed": failed}, nil
}

// sweep drops deleted and expired messages; s.mu must be held.
func (s *Service) sweep(q *queue, now time.Time) {
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		if !q.gone(m, now) {
			kept = append(kept, m)
		}
	}
	for i := len(kept); i < len(q.msgs); i++ {
		q.msgs[i] = nil
	}
	q.msgs = kept
	q.dead = 0
}

// gone reports whether m is deleted, or past the queue's retention period
// (and so deleted now); s.mu must be held.
func (q *queue) gone(m *message, now time.Time) bool {
	if m.deleted {
		return true
	}
	if now.Sub(m.sent) >= time.Duration(q.intAttr("MessageRetentionPeriod"))*time.Second {
		m.deleted = true
		q.dead++
		return true
	}
	return false
}

// drop deletes m, drops the deleted messages at the head of the queue, and
// the others once they are most of it, so that deleting costs no scan of
// every message; s.mu must be held.
func (s *Service) drop(q *queue, m *message, now time.Time) {
	m.deleted = true
	q.dead++
	for len(q.msgs) > 0 && q.msgs[0].deleted {
		q.msgs[0] = nil
		q.msgs = q.msgs[1:]
		q.dead--
	}
	if q.dead > 32 && q.dead*2 > len(q.msgs) {
		s.sweep(q, now)
	}
}

type receivedMessage struct {
	MessageId              string
	ReceiptHandle          string
	MD5OfBody              string
	Body                   string
	Attributes             map[string]string           `json:",omitempty"`
	MD5OfMessageAttributes string                      `json:",omitempty"`
	MessageAttributes      map[string]MessageAttribute `json:",omitempty"`
}

// receiveArgs are a ReceiveMessage's settings.
type receiveArgs struct {
	maxMessages         int
	visibility          time.Duration
	sysNames, attrNames []string
	attemptID           string
}

// take receives up to r.maxMessages visible messages; s.mu must be held. It
// returns the messages and when the next message becomes visible (zero if
// none).
func (s *Service) take(q *queue, r receiveArgs) ([]receivedMessage, time.Time) {
	now := s.env.Time()
	if r.attemptID != "" && q.isFIFO() {
		if out, ok := s.retryAttempt(q, r.attemptID, r.visibility, now); ok {
			return out, time.Time{}
		}
	}
	dlq, maxReceives := s.deadLetterQueue(q)
	deadLettered := func(m *message) bool { return dlq != nil && m.receiveCount >= maxReceives }
	candidates, next := receivable(q, now, r.maxMessages, deadLettered)
	var out []receivedMessage
	var taken []*message
	for _, m := range candidates {
		if len(out) >= r.maxMessages {
			break
		}
		if deadLettered(m) {
			s.moveToDeadLetter(q, m, dlq, now)
			continue
		}
		handle := receiveOne(q, m, r.visibility, now)
		out = append(out, s.render(m, handle, r.sysNames, r.attrNames))
		taken = append(taken, m)
	}
	s.recordAttempt(q, r.attemptID, taken, out, now)
	return out, next
}

// receivable lists the messages a receive of up to maxMessages may return
// (or move to the dead-letter queue: deadLettered), in the order it
// returns them, and when the next hidden one becomes visible; s.mu must be
// held.
func receivable(q *queue, now time.Time, maxMessages int, deadLettered func(*message) bool) ([]*message, time.Time) {
	if q.isFIFO() {
		return fifoCandidates(q, now, maxMessages, deadLettered)
	}
	var out []*message
	var next time.Time
	scanLive(q, now, maxMessages, deadLettered, func(m *message) bool {
		if now.Before(m.availableAt) {
			next = earliest(next, m.availableAt)
			return false
		}
		out = append(out, m)
		return true
	})
	return out, next
}

// scanLive offers take the messages of q that are not gone, in order, until
// take has accepted maxMessages that deadLettered does not move away; s.mu
// must be held.
func scanLive(q *queue, now time.Time, maxMessages int, deadLettered func(*message) bool, take func(*message) bool) {
	total := 0
	for _, m := range q.msgs {
		if total >= maxMessages {
			break
		}
		if q.gone(m, now) {
			continue
		}
		if take(m) && !deadLettered(m) {
			total++
		}
	}
}

// deadLetterQueue is the queue q's redrive policy moves messages to, and
// after how many receives; nil when q has none. s.mu must be held.
func (s *Service) deadLetterQueue(q *queue) (*queue, int) {
	rp, ok := parseRedrive(q.attrs["RedrivePolicy"])
	if !ok {
		return nil, 0
	}
	if dlq := s.byARN(rp.DeadLetterTargetArn); dlq != nil && dlq != q {
		return dlq, rp.MaxReceiveCount
	}
	return nil, 0
}

// moveToDeadLetter moves m from q to the dead-letter queue; the enqueue
// time, and a FIFO message's group and deduplication id, are kept. s.mu
// must be held.
func (s *Service) moveToDeadLetter(q *queue, m *message, dlq *queue, now time.Time) {
	s.drop(q, m, now)
	c := &message{id: m.id, body: m.body, md5Body: m.md5Body, md5Attrs: m.md5Attrs, attrs: m.attrs,
		sent: m.sent, senderID: m.senderID, availableAt: now, groupID: m.groupID, dedupID: m.dedupID}
	if dlq.isFIFO() {
		dlq.sequence++
		c.sequence = awsapi.SequenceNumber(dlq.sequence)
	}
	s.enqueue(dlq, c)
}

// receiveOne marks m received, in flight for visibility, and returns its
// new receipt handle; s.mu must be held.
func receiveOne(q *queue, m *message, visibility time.Duration, now time.Time) string {
	m.receiveCount++
	if m.firstReceive.IsZero() {
		m.firstReceive = now
	}
	m.inflight = true
	m.availableAt = now.Add(visibility)
	m.lastReceiptAt = now
	m.handle = base64.RawURLEncoding.EncodeToString([]byte(q.name + " " + m.id + " " + awsapi.NewUUID()))
	m.attempt = ""
	q.receipts[m.handle] = m
	if q.isFIFO() {
		q.inFlight(m)
	}
	return m.handle
}

func wants(names []string, name string) bool {
	for _, n := range names {
		if n == "All" || n == name || n == ".*" {
			return true
		}
		if strings.HasSuffix(n, ".*") && strings.HasPrefix(name, strings.TrimSuffix(n, "*")) {
			return true
		}
	}
	return false
}

func (s *Service) render(m *message, handle string, sysNames, attrNames []string) receivedMessage {
	r := receivedMessage{MessageId: m.id, ReceiptHandle: handle, MD5OfBody: m.md5Body, Body: m.body}
	sys := map[string]string{
		"SenderId":                         m.senderID,
		"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
		"ApproximateReceiveCount":          strconv.Itoa(m.receiveCount),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
	}
	for k, v := range fifoSystemAttributes(m) {
		sys[k] = v
	}
	for k, v := range sys {
		if wants(sysNames, k) {
			if r.Attributes == nil {
				r.Attributes = map[string]string{}
			}
			r.Attributes[k] = v
		}
	}
	sel := map[string]MessageAttribute{}
	for k, v := range m.attrs {
		if wants(attrNames, k) {
			sel[k] = v
		}
	}
	if len(sel) > 0 {
		r.MessageAttributes = sel
		r.MD5OfMessageAttributes = MD5OfMessageAttributes(sel)
	}
	return r
}

type receiveMessageInput struct {
	QueueUrl                    string
	AttributeNames              []string
	MessageSystemAttributeNames []string
	MessageAttributeNames       []string
	MaxNumberOfMessages         *int
	VisibilityTimeout           *int
	WaitTimeSeconds             *int
	ReceiveRequestAttemptId     string
}

func (s *Service) receiveMessage(req *awsapi.Request, in *receiveMessageInput) (any, error) {
	q, err := s.queueFor(req, in.QueueUrl, "sqs:ReceiveMessage")
	if err != nil {
		return nil, err
	}
	maxMessages := 1
	if in.MaxNumberOfMessages != nil {
		maxMessages = *in.MaxNumberOfMessages
		if maxMessages < 1 || maxMessages > MaxBatchEntries {
			return nil, errInvalidParameter("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", maxMessages)
		}
	}
	s.mu.Lock()
	visibility := time.Duration(q.intAttr("VisibilityTimeout")) * time.Second
	wait := time.Duration(q.intAttr("ReceiveMessageWaitTimeSeconds")) * time.Second
	s.mu.Unlock()
	if in.VisibilityTimeout != nil {
		if *in.VisibilityTimeout < 0 || *in.VisibilityTimeout > 43200 {
			return nil, errInvalidParameter("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.", *in.VisibilityTimeout)
		}
		visibility = time.Duration(*in.VisibilityTimeout) * time.Second
	}
	if in.WaitTimeSeconds != nil {
		if *in.WaitTimeSeconds < 0 || *in.WaitTimeSeconds > MaxWaitTimeSeconds {
			return nil, errInvalidParameter("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", *in.WaitTimeSeconds)
		}
		wait = time.Duration(*in.WaitTimeSeconds) * time.Second
	}
	if err := checkAttemptID(in.ReceiveRequestAttemptId); err != nil {
		return nil, err
	}
	args := receiveArgs{maxMessages: maxMessages, visibility: visibility, attemptID: in.ReceiveRequestAttemptId,
		sysNames: append(append([]string{}, in.AttributeNames...), in.MessageSystemAttributeNames...), attrNames: in.MessageAttributeNames}
	msgs, err := s.poll(req.Context(), q, args, wait)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return map[string]any{}, nil
	}
	return map[string]any{"Messages": msgs}, nil
}

// poll receives messages, waiting up to wait for the first one.
func (s *Service) poll(ctx context.Context, q *queue, args receiveArgs, wait time.Duration) ([]receivedMessage, error) {
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		if s.queues[q.name] != q {
			s.mu.Unlock()
			return nil, errNoQueue()
		}
		msgs, next := s.take(q, args)
		notify := q.notify
		s.mu.Unlock()
		remaining := time.Until(deadline)
		if len(msgs) > 0 || remaining <= 0 {
			return msgs, nil
		}
		if !next.IsZero() {
			if d := next.Sub(s.env.Time()); d < remaining {
				remaining = max0(d) + time.Millisecond
			}
		}
		if !s.wait(ctx, notify, remaining) {
			return nil, nil
		}
	}
}

// wait parks a long poll until notify is closed or d passes (true), or
// until ctx ends or the service closes (false).
func (s *Service) wait(ctx context.Context, notify <-chan struct{}, d time.Duration) bool {
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-notify:
	case <-t.C:
	case <-ctx.Done():
		return false
	case <-s.closed:
		return false
	}
	return true
}

func max0(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

// byReceipt finds the message of a receipt handle; s.mu must be held.
func byReceipt(q *queue, handle string) (*message, bool) {
	m, ok := q.receipts[handle]
	return m, ok
}

func validHandle(q *queue, handle string) bool {
	b, err := base64.RawURLEncoding.DecodeString(handle)
	if err != nil {
		return false
	}
	name, _, ok := strings.Cut(string(b), " ")
	return ok && name == q.name
}

func (s *Service) deleteOne(q *queue, handle string) error {
	if handle == "" {
		return errMissingParameter("ReceiptHandle")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := byReceipt(q, handle)
	if !ok {
		if validHandle(q, handle) {
			return nil // an old handle of a message already deleted
		}
		return errReceiptHandle(handle)
	}
	delete(q.receipts, handle)
	if !m.deleted {
		s.drop(q, m, s.env.Time())
		if q.isFIFO() {
			q.wake() // the next message of the group is receivable
		}
	}
	return nil
}

type deleteMessageInput struct{ QueueUrl, ReceiptHandle string }

func (s *Service) deleteMessage(req *awsapi.Request, in *deleteMessageInput) (any, error) {
	q, err := s.queueFor(req, in.QueueUrl, "sqs:DeleteMessage")
	if err != nil {
		return nil, err
	}
	return nil, s.deleteOne(q, in.ReceiptHandle)
}

type deleteEntry struct{ Id, ReceiptHandle string }

type visibilityEntry struct {
	Id, ReceiptHandle string
	VisibilityTimeout int
}

// batchEntry is an entry of a batch of receipt handles; batchID is its Id,
// under which its outcome is reported.
type batchEntry interface{ batchID() string }

func (e deleteEntry) batchID() string { return e.Id }

func (e visibilityEntry) batchID() string { return e.Id }

// handleBatchInput is the input of DeleteMessageBatch and
// ChangeMessageVisibilityBatch.
type handleBatchInput[E batchEntry] struct {
	QueueUrl string
	Entries  []E
}

func (s *Service) deleteMessageBatch(req *awsapi.Request, in *handleBatchInput[deleteEntry]) (any, error) {
	return runHandleBatch(s, req, in, "sqs:DeleteMessage", func(q *queue, e deleteEntry) error {
		return s.deleteOne(q, e.ReceiptHandle)
	})
}

// runHandleBatch serves DeleteMessageBatch and ChangeMessageVisibilityBatch:
// it finds the queue (where the caller may do action), checks the entries'
// ids, applies do to each entry, and reports each outcome under Successful
// or Failed.
func runHandleBatch[E batchEntry](s *Service, req *awsapi.Request, in *handleBatchInput[E], action string, do func(*queue, E) error) (any, error) {
	q, err := s.queueFor(req, in.QueueUrl, action)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(in.Entries))
	for i, e := range in.Entries {
		ids[i] = e.batchID()
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	type ok struct{ Id string }
	successful, failed := []ok{}, []batchFailure{}
	for _, e := range in.Entries {
		if err := do(q, e); err != nil {
			failed = append(failed, failure(e.batchID(), err))
			continue
		}
		successful = append(successful, ok{Id: e.batchID()})
	}
	return map[string]any{"Successful": successful, "Failed": failed}, nil
}

func (s *Service) changeVisibility(q *queue, handle string, timeout int) error {
	if handle == "" {
		return errMissingParameter("ReceiptHandle")
	}
	if timeout < 0 || timeout > 43200 {
		return errInvalidParameter("Value %d for parameter VisibilityTimeout is invalid. Reason: VisibilityTimeout must be an integer between 0 and 43200.", timeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := byReceipt(q, handle)
	if !ok {
		return errReceiptHandle(handle)
	}
	now := s.env.Time()
	if m.deleted || !m.inflight || !now.Before(m.availableAt) {
		return sqsError("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", "Message does not exist or is not available for visibility timeout change.")
	}
	if now.Add(time.Duration(timeout)*time.Second).Sub(m.lastReceiptAt) > 12*time.Hour {
		return errInvalidParameter("Value %d for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]", timeout)
	}
	m.availableAt = now.Add(time.Duration(timeout) * time.Second)
	m.attempt = "" // a receive attempt of a changed message is not retried
	if timeout == 0 {
		close(q.notify)
		q.notify = make(chan struct{})
	}
	return nil
}

type changeMessageVisibilityInput struct {
	QueueUrl, ReceiptHandle string
	VisibilityTimeout       *int
}

func (s *Service) changeMessageVisibility(req *awsapi.Request, in *changeMessageVisibilityInput) (any, error) {
	q, err := s.queueFor(req, in.QueueUrl, "sqs:ChangeMessageVisibility")
	if err != nil {
		return nil, err
	}
	if in.VisibilityTimeout == nil {
		return nil, errMissingParameter("VisibilityTimeout")
	}
	return nil, s.changeVisibility(q, in.ReceiptHandle, *in.VisibilityTimeout)
}

func (s *Service) changeMessageVisibilityBatch(req *awsapi.Request, in *handleBatchInput[visibilityEntry]) (any, error) {
	return runHandleBatch(s, req, in, "sqs:ChangeMessageVisibility", func(q *queue, e visibilityEntry) error {
		return s.changeVisibility(q, e.ReceiptHandle, e.VisibilityTimeout)
	})
}
