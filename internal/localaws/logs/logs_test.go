package logs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cwl "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	cwltypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/logs"
)

func start(t *testing.T) (*logs.Service, *cwl.Client) {
	t.Helper()
	s := localawstest.StartEmpty(t)
	svc := logs.New(s.Env())
	localawstest.Serve(t, s, svc)
	return svc, cwl.NewFromConfig(localawstest.Config(s), func(o *cwl.Options) { o.RetryMaxAttempts = 1 })
}

// createLog creates log group group and, unless stream is "", its log
// stream.
func createLog(t *testing.T, c *cwl.Client, group, stream string) {
	t.Helper()
	if _, err := c.CreateLogGroup(context.Background(), &cwl.CreateLogGroupInput{LogGroupName: aws.String(group)}); err != nil {
		t.Fatal(err)
	}
	if stream == "" {
		return
	}
	if _, err := c.CreateLogStream(context.Background(), &cwl.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream)}); err != nil {
		t.Fatal(err)
	}
}

func TestLogGroups(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	ctx := context.Background()
	if _, err := c.CreateLogGroup(ctx, &cwl.CreateLogGroupInput{LogGroupName: aws.String("/aws/lambda/relay"), Tags: map[string]string{"team": "outbox"}}); err != nil {
		t.Fatal(err)
	}
	createLog(t, c, "/other", "")
	_, err := c.CreateLogGroup(ctx, &cwl.CreateLogGroupInput{LogGroupName: aws.String("/other")})
	localawstest.WantError[*cwltypes.ResourceAlreadyExistsException](t, err, "duplicate")
	_, err = c.CreateLogGroup(ctx, &cwl.CreateLogGroupInput{LogGroupName: aws.String("bad name")})
	localawstest.WantError[*cwltypes.InvalidParameterException](t, err, "bad name")

	if _, err := c.PutRetentionPolicy(ctx, &cwl.PutRetentionPolicyInput{LogGroupName: aws.String("/aws/lambda/relay"), RetentionInDays: aws.Int32(14)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PutRetentionPolicy(ctx, &cwl.PutRetentionPolicyInput{LogGroupName: aws.String("/aws/lambda/relay"), RetentionInDays: aws.Int32(15)})
	localawstest.WantError[*cwltypes.InvalidParameterException](t, err, "retention 15")
	out, err := c.DescribeLogGroups(ctx, &cwl.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String("/aws/lambda/")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LogGroups) != 1 {
		t.Fatalf("groups = %+v", out.LogGroups)
	}
	g := out.LogGroups[0]
	if aws.ToString(g.Arn) != "arn:aws:logs:us-east-1:000000000000:log-group:/aws/lambda/relay:*" ||
		aws.ToString(g.LogGroupArn) != "arn:aws:logs:us-east-1:000000000000:log-group:/aws/lambda/relay" ||
		aws.ToInt32(g.RetentionInDays) != 14 || aws.ToInt64(g.CreationTime) == 0 || g.LogGroupClass != cwltypes.LogGroupClassStandard {
		t.Fatalf("group = %+v", g)
	}
	if _, err := c.DeleteRetentionPolicy(ctx, &cwl.DeleteRetentionPolicyInput{LogGroupName: aws.String("/aws/lambda/relay")}); err != nil {
		t.Fatal(err)
	}
	out, _ = c.DescribeLogGroups(ctx, &cwl.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String("/aws/lambda/")})
	if out.LogGroups[0].RetentionInDays != nil {
		t.Fatalf("retention after delete = %d", aws.ToInt32(out.LogGroups[0].RetentionInDays))
	}

	arn := aws.ToString(g.LogGroupArn)
	if _, err := c.TagResource(ctx, &cwl.TagResourceInput{ResourceArn: aws.String(arn), Tags: map[string]string{"env": "test"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagResource(ctx, &cwl.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.ListTagsForResource(ctx, &cwl.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil || len(tags.Tags) != 1 || tags.Tags["env"] != "test" {
		t.Fatalf("tags = %v, %v", tags, err)
	}
	if _, err := c.TagLogGroup(ctx, &cwl.TagLogGroupInput{LogGroupName: aws.String("/aws/lambda/relay"), Tags: map[string]string{"old": "api"}}); err != nil { //nolint:staticcheck // tests the stack's legacy TagLogGroup operation
		t.Fatal(err)
	}
	old, err := c.ListTagsLogGroup(ctx, &cwl.ListTagsLogGroupInput{LogGroupName: aws.String("/aws/lambda/relay")}) //nolint:staticcheck // tests the stack's legacy ListTagsLogGroup operation
	if err != nil || len(old.Tags) != 2 || old.Tags["old"] != "api" {
		t.Fatalf("ListTagsLogGroup = %v, %v", old, err)
	}

	all, err := c.DescribeLogGroups(ctx, &cwl.DescribeLogGroupsInput{Limit: aws.Int32(1)})
	if err != nil || len(all.LogGroups) != 1 || all.NextToken == nil {
		t.Fatalf("page 1 = %+v, %v", all, err)
	}
	all, err = c.DescribeLogGroups(ctx, &cwl.DescribeLogGroupsInput{Limit: aws.Int32(1), NextToken: all.NextToken})
	if err != nil || len(all.LogGroups) != 1 || aws.ToString(all.LogGroups[0].LogGroupName) != "/other" || all.NextToken != nil {
		t.Fatalf("page 2 = %+v, %v", all, err)
	}

	if _, err := c.DeleteLogGroup(ctx, &cwl.DeleteLogGroupInput{LogGroupName: aws.String("/other")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteLogGroup(ctx, &cwl.DeleteLogGroupInput{LogGroupName: aws.String("/other")})
	var nf *cwltypes.ResourceNotFoundException
	if !errors.As(err, &nf) || nf.ErrorMessage() != "The specified log group does not exist." {
		t.Fatalf("delete missing = %v", err)
	}
}

func TestLogEventsRoundTrip(t *testing.T) {
	t.Parallel()
	svc, c := start(t)
	ctx := context.Background()
	group, stream := "/aws/lambda/relay", "2026/01/01/[$LATEST]abc"
	createLog(t, c, group, "")
	_, err := c.PutLogEvents(ctx, &cwl.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream),
		LogEvents: []cwltypes.InputLogEvent{{Timestamp: aws.Int64(time.Now().UnixMilli()), Message: aws.String("x")}}})
	var nf *cwltypes.ResourceNotFoundException
	if !errors.As(err, &nf) || nf.ErrorMessage() != "The specified log stream does not exist." {
		t.Fatalf("put to missing stream = %v", err)
	}
	if _, err := c.CreateLogStream(ctx, &cwl.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream)}); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Minute).UnixMilli()
	var events []cwltypes.InputLogEvent
	for i := range 5 {
		events = append(events, cwltypes.InputLogEvent{Timestamp: aws.Int64(base + int64(i)), Message: aws.String(fmt.Sprintf("event %d published", i))})
	}
	events = append(events, cwltypes.InputLogEvent{Timestamp: aws.Int64(time.Now().Add(-15 * 24 * time.Hour).UnixMilli()), Message: aws.String("too old")})
	_, err = c.PutLogEvents(ctx, &cwl.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: events})
	localawstest.WantError[*cwltypes.InvalidParameterException](t, err, "unordered batch")
	events = append([]cwltypes.InputLogEvent{events[5]}, events[:5]...)
	put, err := c.PutLogEvents(ctx, &cwl.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: events})
	if err != nil {
		t.Fatal(err)
	}
	if put.RejectedLogEventsInfo == nil || aws.ToInt32(put.RejectedLogEventsInfo.TooOldLogEventEndIndex) != 1 {
		t.Fatalf("rejected = %+v", put.RejectedLogEventsInfo)
	}
	svc.AppendLog(group, stream, time.UnixMilli(base+10), "ERROR from function")
	svc.AppendLog("/aws/lambda/new", "s", time.UnixMilli(base), "auto-created")

	got, err := c.GetLogEvents(ctx, &cwl.GetLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), StartFromHead: aws.Bool(true), Limit: aws.Int32(4)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 4 || aws.ToString(got.Events[0].Message) != "event 0 published" || aws.ToInt64(got.Events[0].IngestionTime) == 0 {
		t.Fatalf("events = %+v", got.Events)
	}
	rest, err := c.GetLogEvents(ctx, &cwl.GetLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), NextToken: got.NextForwardToken})
	if err != nil || len(rest.Events) != 2 || aws.ToString(rest.Events[1].Message) != "ERROR from function" {
		t.Fatalf("rest = %+v, %v", rest, err)
	}
	tail, err := c.GetLogEvents(ctx, &cwl.GetLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), Limit: aws.Int32(1)})
	if err != nil || len(tail.Events) != 1 || aws.ToString(tail.Events[0].Message) != "ERROR from function" {
		t.Fatalf("tail = %+v, %v", tail, err)
	}

	filtered, err := c.FilterLogEvents(ctx, &cwl.FilterLogEventsInput{LogGroupName: aws.String(group), FilterPattern: aws.String(`published -"event 3"`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(filtered.Events) != 4 || aws.ToString(filtered.Events[0].LogStreamName) != stream || aws.ToString(filtered.Events[0].EventId) == "" {
		t.Fatalf("filtered = %+v", filtered.Events)
	}
	anyOf, err := c.FilterLogEvents(ctx, &cwl.FilterLogEventsInput{LogGroupName: aws.String(group), FilterPattern: aws.String(`?ERROR ?"event 1"`)})
	if err != nil || len(anyOf.Events) != 2 {
		t.Fatalf("any-of = %+v, %v", anyOf, err)
	}

	streams, err := c.DescribeLogStreams(ctx, &cwl.DescribeLogStreamsInput{LogGroupName: aws.String(group)})
	if err != nil || len(streams.LogStreams) != 1 {
		t.Fatalf("streams = %+v, %v", streams, err)
	}
	st := streams.LogStreams[0]
	if aws.ToInt64(st.FirstEventTimestamp) != base || aws.ToInt64(st.LastEventTimestamp) != base+10 ||
		aws.ToString(st.Arn) != "arn:aws:logs:us-east-1:000000000000:log-group:"+group+":log-stream:"+stream {
		t.Fatalf("stream = %+v", st)
	}
	auto, err := c.GetLogEvents(ctx, &cwl.GetLogEventsInput{LogGroupName: aws.String("/aws/lambda/new"), LogStreamName: aws.String("s")})
	if err != nil || len(auto.Events) != 1 {
		t.Fatalf("AppendLog group = %+v, %v", auto, err)
	}
}

// The relay logs JSON; operators filter it with JSON patterns.
func TestFilterLogEventsJSONAndDelimitedPatterns(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	ctx := context.Background()
	group, stream := "/aws/lambda/shop-relay", "2026/12/01/[$LATEST]abc"
	createLog(t, c, group, stream)
	now := time.Now().UnixMilli()
	messages := []string{
		`{"level":"INFO","msg":"published","events":10}`,
		`{"level":"WARN","msg":"publish failed","class":"environment","events":3}`,
		`{"level":"INFO","msg":"published","events":250}`,
		`10.0.0.1 GET /orders 500 2048`,
	}
	var events []cwltypes.InputLogEvent
	for i, m := range messages {
		events = append(events, cwltypes.InputLogEvent{Message: aws.String(m), Timestamp: aws.Int64(now + int64(i))})
	}
	if _, err := c.PutLogEvents(ctx, &cwl.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: events}); err != nil {
		t.Fatal(err)
	}
	for pattern, want := range map[string]int{
		`{ $.level = "INFO" }`:                          2,
		`{ $.level = "INFO" && $.events > 100 }`:        1,
		`{ $.level = "WARN" || $.events >= 250 }`:       2,
		`{ $.class NOT EXISTS }`:                        2,
		`[ip, method, path, status = 5*, bytes > 1000]`: 1,
	} {
		out, err := c.FilterLogEvents(ctx, &cwl.FilterLogEventsInput{LogGroupName: aws.String(group), FilterPattern: aws.String(pattern)})
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		if len(out.Events) != want {
			t.Errorf("%s matched %d events, want %d", pattern, len(out.Events), want)
		}
	}
	_, err := c.FilterLogEvents(ctx, &cwl.FilterLogEventsInput{LogGroupName: aws.String(group), FilterPattern: aws.String(`{ $.level = }`)})
	localawstest.WantError[*cwltypes.InvalidParameterException](t, err, "bad pattern")
}
