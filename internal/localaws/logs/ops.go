package logs

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

type groupOut struct {
	LogGroupName      string `json:"logGroupName"`
	CreationTime      int64  `json:"creationTime"`
	RetentionInDays   *int32 `json:"retentionInDays,omitempty"`
	MetricFilterCount int32  `json:"metricFilterCount"`
	Arn               string `json:"arn"`
	LogGroupArn       string `json:"logGroupArn"`
	StoredBytes       int64  `json:"storedBytes"`
	LogGroupClass     string `json:"logGroupClass"`
}

type streamOut struct {
	LogStreamName       string `json:"logStreamName"`
	CreationTime        int64  `json:"creationTime"`
	FirstEventTimestamp *int64 `json:"firstEventTimestamp,omitempty"`
	LastEventTimestamp  *int64 `json:"lastEventTimestamp,omitempty"`
	LastIngestionTime   *int64 `json:"lastIngestionTime,omitempty"`
	Arn                 string `json:"arn"`
	StoredBytes         int64  `json:"storedBytes"`
}

type eventOut struct {
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
}

type filteredOut struct {
	LogStreamName string `json:"logStreamName"`
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
	EventID       string `json:"eventId"`
}

func (s *Service) groupOut(g *group) groupOut {
	o := groupOut{LogGroupName: g.name, CreationTime: g.created, Arn: s.groupArn(g.name) + ":*", LogGroupArn: s.groupArn(g.name), LogGroupClass: "STANDARD"}
	if g.retention > 0 {
		r := g.retention
		o.RetentionInDays = &r
	}
	return o
}

func (s *Service) streamOut(g *group, st *stream) streamOut {
	o := streamOut{LogStreamName: st.name, CreationTime: st.created, Arn: s.streamArn(g.name, st.name)}
	if n := len(st.events); n > 0 {
		first, last, ing := st.events[0].timestamp, st.events[n-1].timestamp, st.lastIngestion
		o.FirstEventTimestamp, o.LastEventTimestamp, o.LastIngestionTime = &first, &last, &ing
	}
	return o
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) { return s.ops.Handle(req) }

// operations is the table of the operations served.
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"CreateLogGroup":        {Handle: s.createLogGroup},
		"DeleteLogGroup":        {Handle: s.deleteLogGroup},
		"DescribeLogGroups":     {Handle: s.describeLogGroups},
		"PutRetentionPolicy":    {Handle: s.putRetentionPolicy},
		"DeleteRetentionPolicy": {Handle: s.deleteRetentionPolicy},
		"TagResource":           {Handle: s.tagging},
		"UntagResource":         {Handle: s.tagging},
		"ListTagsForResource":   {Handle: s.tagging},
		"TagLogGroup":           {Handle: s.tagLogGroup},
		"UntagLogGroup":         {Handle: s.untagLogGroup},
		"ListTagsLogGroup":      {Handle: s.listTagsLogGroup},
		"CreateLogStream":       {Handle: s.createLogStream},
		"DeleteLogStream":       {Handle: s.deleteLogStream},
		"DescribeLogStreams":    {Handle: s.describeLogStreams},
		"PutLogEvents":          {Handle: s.putLogEvents},
		"GetLogEvents":          {Handle: s.getLogEvents},
		"FilterLogEvents":       {Handle: s.filterLogEvents},
	}
}

func (s *Service) deleteLogGroup(req *awsapi.Request) (any, error) {
	var in struct{ LogGroupName string }
	return s.withGroup(req, &in, func() string { return in.LogGroupName }, "logs:DeleteLogGroup", true, func(g *group) (any, error) {
		delete(s.groups, g.name)
		return nil, nil
	})
}

func (s *Service) putRetentionPolicy(req *awsapi.Request) (any, error) {
	var in struct {
		LogGroupName    string
		RetentionInDays *int32
	}
	return s.withGroup(req, &in, func() string { return in.LogGroupName }, "logs:PutRetentionPolicy", true, func(g *group) (any, error) {
		if in.RetentionInDays == nil {
			return nil, invalidParameter("1 validation error detected: Value null at 'retentionInDays' failed to satisfy constraint: Member must not be null")
		}
		valid := false
		for _, v := range validRetention {
			valid = valid || v == *in.RetentionInDays
		}
		if !valid {
			return nil, invalidParameter("1 validation error detected: Value '%d' at 'retentionInDays' failed to satisfy constraint: Member must satisfy enum value set: %s", *in.RetentionInDays, retentionList())
		}
		g.retention = *in.RetentionInDays
		return nil, nil
	})
}

func (s *Service) deleteRetentionPolicy(req *awsapi.Request) (any, error) {
	var in struct{ LogGroupName string }
	return s.withGroup(req, &in, func() string { return in.LogGroupName }, "logs:DeleteRetentionPolicy", true, func(g *group) (any, error) {
		g.retention = 0
		return nil, nil
	})
}

func (s *Service) tagLogGroup(req *awsapi.Request) (any, error) {
	var in struct {
		LogGroupName string
		Tags         map[string]string
	}
	return s.withGroup(req, &in, func() string { return in.LogGroupName }, "logs:TagLogGroup", true, func(g *group) (any, error) {
		return nil, g.addTags(in.Tags)
	})
}

func (s *Service) untagLogGroup(req *awsapi.Request) (any, error) {
	var in struct {
		LogGroupName string
		Tags         []string
	}
	return s.withGroup(req, &in, func() string { return in.LogGroupName }, "logs:UntagLogGroup", true, func(g *group) (any, error) {
		awsapi.Untag(g.tags, in.Tags)
		return nil, nil
	})
}

func (s *Service) listTagsLogGroup(req *awsapi.Request) (any, error) {
	var in struct{ LogGroupName string }
	return s.withGroup(req, &in, func() string { return in.LogGroupName }, "logs:ListTagsLogGroup", false, func(g *group) (any, error) {
		return map[string]any{"tags": copyTags(g.tags)}, nil
	})
}

func (s *Service) createLogStream(req *awsapi.Request) (any, error) {
	var in streamInput
	return s.withStream(req, &in, "logs:CreateLogStream", func(g *group) (any, error) {
		if !streamNameRE.MatchString(in.LogStreamName) {
			return nil, invalidParameter("1 validation error detected: Value '%s' at 'logStreamName' failed to satisfy constraint: Member must satisfy regular expression pattern: [^:*]*", in.LogStreamName)
		}
		if g.streams[in.LogStreamName] != nil {
			return nil, awsapi.NewError("ResourceAlreadyExistsException", "The specified log stream already exists")
		}
		g.streams[in.LogStreamName] = &stream{name: in.LogStreamName, created: s.nowMillis()}
		return nil, nil
	})
}

func (s *Service) deleteLogStream(req *awsapi.Request) (any, error) {
	var in streamInput
	return s.withStream(req, &in, "logs:DeleteLogStream", func(g *group) (any, error) {
		if g.streams[in.LogStreamName] == nil {
			return nil, streamNotFound()
		}
		delete(g.streams, in.LogStreamName)
		return nil, nil
	})
}

func copyTags(t map[string]string) map[string]string {
	out := make(map[string]string, len(t))
	maps.Copy(out, t)
	return out
}

func (g *group) addTags(tags map[string]string) error {
	merged := copyTags(g.tags)
	maps.Copy(merged, tags)
	if err := checkTags(merged); err != nil {
		return err
	}
	g.tags = merged
	return nil
}

// withGroup decodes the input, authorises action on the group and runs fn
// under the lock with the group.
func (s *Service) withGroup(req *awsapi.Request, in any, name func() string, action string, write bool, fn func(g *group) (any, error)) (any, error) {
	if err := req.DecodeJSON(in); err != nil {
		return nil, err
	}
	n := name()
	if err := checkGroupName(n); err != nil {
		return nil, err
	}
	return s.onGroup(req, action, s.groupArn(n), n, write, fn)
}

// streamInput names a log stream of a log group.
type streamInput struct{ LogGroupName, LogStreamName string }

// withStream decodes the input, authorises action on the log stream
// (arn:...:log-group:<group>:log-stream:<stream>, the resource AWS
// authorises CreateLogStream and DeleteLogStream on) and runs fn under the
// exclusive lock with its group.
func (s *Service) withStream(req *awsapi.Request, in *streamInput, action string, fn func(g *group) (any, error)) (any, error) {
	if err := req.DecodeJSON(in); err != nil {
		return nil, err
	}
	if err := checkGroupName(in.LogGroupName); err != nil {
		return nil, err
	}
	return s.onGroup(req, action, s.streamArn(in.LogGroupName, in.LogStreamName), in.LogGroupName, true, fn)
}

// onGroup authorises action on resource and runs fn with log group name
// under the lock (write: exclusive).
func (s *Service) onGroup(req *awsapi.Request, action, resource, name string, write bool, fn func(g *group) (any, error)) (any, error) {
	if err := req.Authorize(action, resource); err != nil {
		return nil, err
	}
	if write {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	g := s.groups[name]
	if g == nil {
		return nil, groupNotFound()
	}
	return fn(g)
}

func (s *Service) createLogGroup(req *awsapi.Request) (any, error) {
	var in struct {
		LogGroupName  string
		KmsKeyID      string `json:"kmsKeyId"`
		Tags          map[string]string
		LogGroupClass string
	}
	if err := req.DecodeJSON(&in); err != nil {
		return nil, err
	}
	if err := checkGroupName(in.LogGroupName); err != nil {
		return nil, err
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	if c := in.LogGroupClass; c != "" && c != "STANDARD" && c != "INFREQUENT_ACCESS" && c != "DELIVERY" {
		return nil, invalidParameter("1 validation error detected: Value '%s' at 'logGroupClass' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, INFREQUENT_ACCESS, DELIVERY]", c)
	}
	if err := req.Authorize("logs:CreateLogGroup", s.groupArn(in.LogGroupName)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[in.LogGroupName] != nil {
		return nil, awsapi.NewError("ResourceAlreadyExistsException", "The specified log group already exists")
	}
	tags := copyTags(in.Tags)
	s.groups[in.LogGroupName] = &group{name: in.LogGroupName, created: s.nowMillis(), tags: tags, streams: map[string]*stream{}}
	return nil, nil
}

func (s *Service) describeLogGroups(req *awsapi.Request) (any, error) {
	var in struct {
		LogGroupNamePrefix  string
		LogGroupNamePattern string
		LogGroupIdentifiers []string
		Limit               *int32
		NextToken           string
	}
	if err := req.DecodeJSON(&in); err != nil {
		return nil, err
	}
	if in.LogGroupNamePrefix != "" && in.LogGroupNamePattern != "" {
		return nil, invalidParameter("LogGroup name prefix and LogGroup name pattern are mutually exclusive parameters.")
	}
	n, start, err := paging(in.Limit, 50, 50, "groups", in.NextToken)
	if err != nil {
		return nil, err
	}
	if aerr := req.Authorize("logs:DescribeLogGroups", s.env.ARN("logs", "log-group:*")); aerr != nil {
		return nil, aerr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var names []string
	for name := range s.groups {
		switch {
		case in.LogGroupNamePrefix != "" && !strings.HasPrefix(name, in.LogGroupNamePrefix):
			continue
		case in.LogGroupNamePattern != "" && !strings.Contains(strings.ToLower(name), strings.ToLower(in.LogGroupNamePattern)):
			continue
		case len(in.LogGroupIdentifiers) > 0 && !identifies(in.LogGroupIdentifiers, name):
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	page, next := pageOf(names, start, n)
	out := map[string]any{"logGroups": []groupOut{}}
	groups := make([]groupOut, 0, len(page))
	for _, name := range page {
		groups = append(groups, s.groupOut(s.groups[name]))
	}
	out["logGroups"] = groups
	if next >= 0 {
		out["nextToken"] = token("groups", next)
	}
	return out, nil
}

func identifies(ids []string, name string) bool {
	for _, id := range ids {
		if groupName("", id) == name {
			return true
		}
	}
	return false
}

// tagging serves TagResource, UntagResource and ListTagsForResource on log
// group ARNs.
func (s *Service) tagging(req *awsapi.Request) (any, error) {
	var in struct {
		ResourceArn string
		Tags        map[string]string
		TagKeys     []string
	}
	if err := req.DecodeJSON(&in); err != nil {
		return nil, err
	}
	a, perr := awsapi.ParseARN(in.ResourceArn)
	name, isGroup := strings.CutPrefix(a.Resource, "log-group:")
	if perr != nil || a.Service != "logs" || !isGroup || strings.HasSuffix(name, ":*") {
		return nil, invalidParameter("1 validation error detected: Value '%s' at 'resourceArn' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=/:,.@\\-*]*", in.ResourceArn)
	}
	if err := req.Authorize("logs:"+req.Operation, in.ResourceArn); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[name]
	if g == nil || a.Region != s.env.Region || a.AccountID != s.env.AccountID {
		return nil, awsapi.ResourceNotFoundException("The specified resource does not exist.")
	}
	switch req.Operation {
	case "TagResource":
		if len(in.Tags) == 0 {
			return nil, invalidParameter("1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null")
		}
		return nil, g.addTags(in.Tags)
	case "UntagResource":
		awsapi.Untag(g.tags, in.TagKeys)
		return nil, nil
	}
	return map[string]any{"tags": copyTags(g.tags)}, nil
}

func (s *Service) describeLogStreams(req *awsapi.Request) (any, error) {
	var in struct {
		groupRef
		LogStreamNamePrefix string
		OrderBy             string
		Descending          bool
		Limit               *int32
		NextToken           string
	}
	name, derr := decodeGroupRequest(req, &in, &in.groupRef)
	if derr != nil {
		return nil, derr
	}
	if in.OrderBy != "" && in.OrderBy != "LogStreamName" && in.OrderBy != "LastEventTime" {
		return nil, invalidParameter("1 validation error detected: Value '%s' at 'orderBy' failed to satisfy constraint: Member must satisfy enum value set: [LogStreamName, LastEventTime]", in.OrderBy)
	}
	if in.OrderBy == "LastEventTime" && in.LogStreamNamePrefix != "" {
		return nil, invalidParameter("Cannot order by LastEventTime with a logStreamNamePrefix.")
	}
	n, start, err := paging(in.Limit, 50, 50, "streams", in.NextToken)
	if err != nil {
		return nil, err
	}
	return s.onGroup(req, "logs:DescribeLogStreams", s.groupArn(name), name, false, func(g *group) (any, error) {
		var streams []*stream
		for _, st := range g.streams {
			if strings.HasPrefix(st.name, in.LogStreamNamePrefix) {
				streams = append(streams, st)
			}
		}
		less := func(i, j int) bool { return streams[i].name < streams[j].name }
		if in.OrderBy == "LastEventTime" {
			less = func(i, j int) bool {
				a, b := lastEvent(streams[i]), lastEvent(streams[j])
				if a != b {
					return a < b
				}
				return streams[i].name < streams[j].name
			}
		}
		sort.Slice(streams, func(i, j int) bool {
			if in.Descending {
				return less(j, i)
			}
			return less(i, j)
		})
		page, next := pageOf(streams, start, n)
		outs := make([]streamOut, 0, len(page))
		for _, st := range page {
			outs = append(outs, s.streamOut(g, st))
		}
		out := map[string]any{"logStreams": outs}
		if next >= 0 {
			out["nextToken"] = token("streams", next)
		}
		return out, nil
	})
}

func lastEvent(st *stream) int64 {
	if len(st.events) == 0 {
		return 0
	}
	return st.events[len(st.events)-1].timestamp
}

const (
	maxEventsPerPut = 10000
	maxPutBytes     = 1048576
	eventOverhead   = 26
	maxEventBytes   = 1048576 - eventOverhead
	tooOldAge       = 14 * 24 * time.Hour
	tooNewAhead     = 2 * time.Hour
)

func (s *Service) putLogEvents(req *awsapi.Request) (any, error) {
	var in struct {
		LogGroupName  string
		LogStreamName string
		LogEvents     []struct {
			Timestamp *int64
			Message   *string
		}
		SequenceToken string
	}
	if err := req.DecodeJSON(&in); err != nil {
		return nil, err
	}
	if err := checkGroupName(in.LogGroupName); err != nil {
		return nil, err
	}
	if len(in.LogEvents) == 0 || len(in.LogEvents) > maxEventsPerPut {
		return nil, invalidParameter("1 validation error detected: Value at 'logEvents' failed to satisfy constraint: Member must have length less than or equal to %d and greater than or equal to 1", maxEventsPerPut)
	}
	size := 0
	for i, e := range in.LogEvents {
		if e.Timestamp == nil || e.Message == nil {
			return nil, invalidParameter("1 validation error detected: Value null at 'logEvents.%d.member' failed to satisfy constraint: Member must not be null", i+1)
		}
		if *e.Message == "" {
			return nil, invalidParameter("1 validation error detected: Value '' at 'logEvents.%d.member.message' failed to satisfy constraint: Member must have length greater than or equal to 1", i+1)
		}
		if i > 0 && *e.Timestamp < *in.LogEvents[i-1].Timestamp {
			return nil, invalidParameter("Log events in a single PutLogEvents request must be in chronological order.")
		}
		size += len(*e.Message) + eventOverhead
	}
	if size > maxPutBytes {
		return nil, invalidParameter("Upload too large: %d bytes exceeds limit of %d", size, maxPutBytes)
	}
	return s.onGroup(req, "logs:PutLogEvents", s.streamArn(in.LogGroupName, in.LogStreamName), in.LogGroupName, true, func(g *group) (any, error) {
		st := g.streams[in.LogStreamName]
		if st == nil {
			return nil, streamNotFound()
		}
		now := s.nowMillis()
		oldest := now - tooOldAge.Milliseconds()
		if g.retention > 0 {
			oldest = max(oldest, now-int64(g.retention)*24*time.Hour.Milliseconds())
		}
		newest := now + tooNewAhead.Milliseconds()
		rejected := map[string]int{}
		for i, e := range in.LogEvents {
			switch {
			case *e.Timestamp > newest:
				if _, ok := rejected["tooNewLogEventStartIndex"]; !ok {
					rejected["tooNewLogEventStartIndex"] = i
				}
				continue
			case *e.Timestamp < now-tooOldAge.Milliseconds():
				rejected["tooOldLogEventEndIndex"] = i + 1
				continue
			case *e.Timestamp < oldest:
				rejected["expiredLogEventEndIndex"] = i + 1
				continue
			}
			msg := *e.Message
			if len(msg) > maxEventBytes {
				msg = msg[:maxEventBytes]
			}
			s.seq++
			st.insert(event{timestamp: *e.Timestamp, ingestion: now, message: msg, id: s.seq})
		}
		st.lastIngestion = now
		out := map[string]any{"nextSequenceToken": strconv.FormatInt(s.seq, 10)}
		if len(rejected) > 0 {
			out["rejectedLogEventsInfo"] = rejected
		}
		return out, nil
	})
}

func (s *Service) getLogEvents(req *awsapi.Request) (any, error) {
	var in struct {
		groupRef
		LogStreamName string
		StartTime     *int64
		EndTime       *int64
		NextToken     string
		Limit         *int32
		StartFromHead *bool
	}
	name, derr := decodeGroupRequest(req, &in, &in.groupRef)
	if derr != nil {
		return nil, derr
	}
	n, err := limit(in.Limit, 10000, 10000)
	if err != nil {
		return nil, err
	}
	return s.onGroup(req, "logs:GetLogEvents", s.streamArn(name, in.LogStreamName), name, false, func(g *group) (any, error) {
		st := g.streams[in.LogStreamName]
		if st == nil {
			return nil, streamNotFound()
		}
		var sel []event
		for _, e := range st.events {
			if (in.StartTime == nil || e.timestamp >= *in.StartTime) && (in.EndTime == nil || e.timestamp < *in.EndTime) {
				sel = append(sel, e)
			}
		}
		// Tokens are positions in sel: "f/<i>" reads forward from i, "b/<i>"
		// reads backward ending before i.
		forward := in.StartFromHead != nil && *in.StartFromHead
		var from, to int
		switch {
		case in.NextToken != "":
			dir, pos, ok := strings.Cut(in.NextToken, "/")
			p, perr := strconv.Atoi(pos)
			if !ok || perr != nil || p < 0 || p > len(sel) || (dir != "f" && dir != "b") {
				return nil, invalidParameter("The specified nextToken is invalid.")
			}
			if dir == "f" {
				from, to = p, min(p+n, len(sel))
			} else {
				from, to = max(p-n, 0), p
			}
		case forward:
			from, to = 0, min(n, len(sel))
		default:
			from, to = max(len(sel)-n, 0), len(sel)
		}
		events := make([]eventOut, 0, to-from)
		for _, e := range sel[from:to] {
			events = append(events, eventOut{Timestamp: e.timestamp, Message: e.message, IngestionTime: e.ingestion})
		}
		return map[string]any{
			"events":            events,
			"nextForwardToken":  "f/" + strconv.Itoa(to),
			"nextBackwardToken": "b/" + strconv.Itoa(from),
		}, nil
	})
}

func (s *Service) filterLogEvents(req *awsapi.Request) (any, error) {
	var in struct {
		groupRef
		LogStreamNames      []string
		LogStreamNamePrefix string
		StartTime           *int64
		EndTime             *int64
		FilterPattern       string
		NextToken           string
		Limit               *int32
	}
	name, derr := decodeGroupRequest(req, &in, &in.groupRef)
	if derr != nil {
		return nil, derr
	}
	if len(in.LogStreamNames) > 0 && in.LogStreamNamePrefix != "" {
		return nil, invalidParameter("logStreamNames and logStreamNamePrefix are mutually exclusive parameters.")
	}
	n, start, err := paging(in.Limit, 10000, 10000, "filter", in.NextToken)
	if err != nil {
		return nil, err
	}
	match, perr := compileFilter(in.FilterPattern)
	if perr != nil {
		return nil, perr
	}
	return s.onGroup(req, "logs:FilterLogEvents", s.groupArn(name), name, false, func(g *group) (any, error) {
		var all []filteredOut
		type ordered struct {
			filteredOut
			id int64
		}
		var sel []ordered
		for _, st := range g.streams {
			if len(in.LogStreamNames) > 0 && !slices.Contains(in.LogStreamNames, st.name) {
				continue
			}
			if !strings.HasPrefix(st.name, in.LogStreamNamePrefix) {
				continue
			}
			for _, e := range st.events {
				if (in.StartTime != nil && e.timestamp < *in.StartTime) || (in.EndTime != nil && e.timestamp > *in.EndTime) || !match(e.message) {
					continue
				}
				sel = append(sel, ordered{filteredOut{LogStreamName: st.name, Timestamp: e.timestamp, Message: e.message,
					IngestionTime: e.ingestion, EventID: strconv.FormatInt(e.id, 10)}, e.id})
			}
		}
		sort.Slice(sel, func(i, j int) bool {
			if sel[i].Timestamp != sel[j].Timestamp {
				return sel[i].Timestamp < sel[j].Timestamp
			}
			return sel[i].id < sel[j].id
		})
		for _, o := range sel {
			all = append(all, o.filteredOut)
		}
		page, next := pageOf(all, start, n)
		if page == nil {
			page = []filteredOut{}
		}
		out := map[string]any{"events": page, "searchedLogStreams": []any{}}
		if next >= 0 {
			out["nextToken"] = token("filter", next)
		}
		return out, nil
	})
}
