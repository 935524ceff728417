// Package logs is the local stack's CloudWatch Logs (Logs_20140328,
// awsJson1_1): log groups with retention and tags, log streams, and events
// written with PutLogEvents or by other stack services through AppendLog
// (Lambda function output). FilterLogEvents takes term, JSON and
// space-delimited filter patterns (filterpattern.go).
package logs

import (
	"encoding/base64"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Service is CloudWatch Logs.
type Service struct {
	*awsapi.Lifecycle
	env *awsapi.Env
	ops awsapi.Operations

	mu     sync.RWMutex
	groups map[string]*group
	// seq numbers events in ingestion order (event ids, tokens).
	seq int64
}

type group struct {
	name      string
	created   int64
	retention int32
	tags      map[string]string
	streams   map[string]*stream
}

type stream struct {
	name          string
	created       int64
	lastIngestion int64
	events        []event // sorted by timestamp, then ingestion
}

type event struct {
	timestamp, ingestion int64
	message              string
	id                   int64
}

// New returns an empty CloudWatch Logs.
func New(env *awsapi.Env) *Service {
	s := &Service{Lifecycle: awsapi.NewLifecycle(), env: env, groups: map[string]*group{}}
	s.ops = s.operations()
	s.Lists(s.mu.RLocker(), s.inventory)
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "logs", Protocol: awsapi.JSON11, TargetPrefix: "Logs_20140328", SigningName: "logs"}
}

// inventory lists the log group ARNs.
func (s *Service) inventory(add func(string)) {
	for name := range s.groups {
		add(s.groupArn(name))
	}
}

func (s *Service) nowMillis() int64 { return s.env.Time().UnixMilli() }

// groupArn is the log group ARN without the trailing ":*" (logGroupArn,
// tagging); the older arn field has it.
func (s *Service) groupArn(name string) string {
	return s.env.ARN("logs", "log-group:"+name)
}

func (s *Service) streamArn(g, st string) string {
	return s.env.ARN("logs", "log-group:"+g+":log-stream:"+st)
}

// AppendLog appends one event to a log stream, creating the group and the
// stream when absent. Other stack services call it (function output).
func (s *Service) AppendLog(groupName, streamName string, at time.Time, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowMillis()
	g := s.groups[groupName]
	if g == nil {
		g = &group{name: groupName, created: now, tags: map[string]string{}, streams: map[string]*stream{}}
		s.groups[groupName] = g
	}
	st := g.streams[streamName]
	if st == nil {
		st = &stream{name: streamName, created: now}
		g.streams[streamName] = st
	}
	s.seq++
	st.insert(event{timestamp: at.UnixMilli(), ingestion: now, message: message, id: s.seq})
	st.lastIngestion = now
}

func (st *stream) insert(e event) {
	i := sort.Search(len(st.events), func(i int) bool { return st.events[i].timestamp > e.timestamp })
	st.events = slices.Insert(st.events, i, e)
}

// Errors as CloudWatch Logs returns them.
func invalidParameter(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("InvalidParameterException", format, args...)
}

func groupNotFound() *awsapi.Error {
	return awsapi.ResourceNotFoundException("The specified log group does not exist.")
}

func streamNotFound() *awsapi.Error {
	return awsapi.ResourceNotFoundException("The specified log stream does not exist.")
}

var (
	groupNameRE  = regexp.MustCompile(`^[.\-_/#A-Za-z0-9]{1,512}$`)
	streamNameRE = regexp.MustCompile(`^[^:*]{1,512}$`)
)

// validRetention are the retention periods CloudWatch Logs accepts.
var validRetention = []int32{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

func retentionList() string {
	parts := make([]string, len(validRetention))
	for i, v := range validRetention {
		parts[i] = strconv.Itoa(int(v))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func checkGroupName(name string) *awsapi.Error {
	if name == "" {
		return invalidParameter("1 validation error detected: Value null at 'logGroupName' failed to satisfy constraint: Member must not be null")
	}
	if !groupNameRE.MatchString(name) {
		return invalidParameter("1 validation error detected: Value '%s' at 'logGroupName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\.\\-_/#A-Za-z0-9]+", name)
	}
	return nil
}

// groupName resolves logGroupName or logGroupIdentifier (a name or an
// ARN, with or without ":*").
// groupRef names a log group in a request, by name or identifier.
type groupRef struct {
	LogGroupName       string
	LogGroupIdentifier string
}

// decodeGroupRequest decodes the request into in, which embeds ref, and
// returns the log group ref names, checked.
func decodeGroupRequest(req *awsapi.Request, in any, ref *groupRef) (string, error) {
	if err := req.DecodeJSON(in); err != nil {
		return "", err
	}
	name := groupName(ref.LogGroupName, ref.LogGroupIdentifier)
	if err := checkGroupName(name); err != nil {
		return "", err
	}
	return name, nil
}

func groupName(name, identifier string) string {
	if name != "" {
		return name
	}
	id := strings.TrimSuffix(identifier, ":*")
	if _, rest, ok := strings.Cut(id, ":log-group:"); ok {
		return rest
	}
	return id
}

func checkTags(tags map[string]string) *awsapi.Error {
	if len(tags) > 50 {
		return invalidParameter("1 validation error detected: Value at 'tags' failed to satisfy constraint: Member must have length less than or equal to 50")
	}
	for k, v := range tags {
		if !awsapi.TagWithinLimits(k, v) || strings.HasPrefix(k, "aws:") {
			return invalidParameter("1 validation error detected: Value '%s' at 'tags' failed to satisfy constraint: Map keys must satisfy constraints: [Member must have length between 1 and 128]", k)
		}
	}
	return nil
}

// token encodes a pagination offset.
func token(prefix string, n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(prefix + "/" + strconv.Itoa(n)))
}

func parseToken(prefix, t string) (int, *awsapi.Error) {
	if t == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), prefix+"/"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, invalidParameter("The specified nextToken is invalid.")
}

// paging reads a page request: its Limit (see limit) and its NextToken of
// the given kind (see parseToken).
func paging(v *int32, maxLimit int32, def int, kind, next string) (n, start int, err *awsapi.Error) {
	if n, err = limit(v, maxLimit, def); err != nil {
		return 0, 0, err
	}
	start, err = parseToken(kind, next)
	return n, start, err
}

func limit(v *int32, maxLimit int32, def int) (int, *awsapi.Error) {
	if v == nil {
		return def, nil
	}
	if *v < 1 || *v > maxLimit {
		return 0, invalidParameter("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value less than or equal to %d", *v, maxLimit)
	}
	return int(*v), nil
}

func pageOf[T any](items []T, start, n int) ([]T, int) {
	if start > len(items) {
		start = len(items)
	}
	end := min(start+n, len(items))
	next := -1
	if end < len(items) {
		next = end
	}
	return items[start:end], next
}
