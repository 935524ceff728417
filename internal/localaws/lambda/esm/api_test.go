package esm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

func TestCreateReturnsEverySettingAndDefaults(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	pattern := `{"eventName":["INSERT"],"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}`
	out, err := f.client.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn:                 aws.String(streamArn),
		FunctionName:                   aws.String(fnName),
		StartingPosition:               types.EventSourcePositionTrimHorizon,
		BatchSize:                      aws.Int32(25),
		MaximumBatchingWindowInSeconds: aws.Int32(1),
		ParallelizationFactor:          aws.Int32(2),
		MaximumRetryAttempts:           aws.Int32(3),
		MaximumRecordAgeInSeconds:      aws.Int32(3600),
		BisectBatchOnFunctionError:     aws.Bool(true),
		DestinationConfig:              &types.DestinationConfig{OnFailure: &types.OnFailure{Destination: aws.String(queueArn)}},
		FilterCriteria:                 &types.FilterCriteria{Filters: []types.Filter{{Pattern: aws.String(pattern)}}},
		FunctionResponseTypes:          []types.FunctionResponseType{types.FunctionResponseTypeReportBatchItemFailures},
		TumblingWindowInSeconds:        aws.Int32(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.State); got != "Creating" {
		t.Errorf("State = %q, want Creating", got)
	}
	if aws.ToString(out.StateTransitionReason) != "User action" || aws.ToString(out.LastProcessingResult) != "No records processed" {
		t.Errorf("reason/result = %q/%q", aws.ToString(out.StateTransitionReason), aws.ToString(out.LastProcessingResult))
	}
	if aws.ToString(out.FunctionArn) != fnArn || aws.ToString(out.EventSourceArn) != streamArn {
		t.Errorf("arns = %s %s", aws.ToString(out.FunctionArn), aws.ToString(out.EventSourceArn))
	}
	if aws.ToInt32(out.BatchSize) != 25 || aws.ToInt32(out.MaximumBatchingWindowInSeconds) != 1 || aws.ToInt32(out.ParallelizationFactor) != 2 ||
		aws.ToInt32(out.MaximumRetryAttempts) != 3 || aws.ToInt32(out.MaximumRecordAgeInSeconds) != 3600 || !aws.ToBool(out.BisectBatchOnFunctionError) {
		t.Errorf("settings not returned exactly: %+v", out)
	}
	if out.DestinationConfig == nil || aws.ToString(out.DestinationConfig.OnFailure.Destination) != queueArn {
		t.Errorf("DestinationConfig = %+v", out.DestinationConfig)
	}
	if out.FilterCriteria == nil || len(out.FilterCriteria.Filters) != 1 || aws.ToString(out.FilterCriteria.Filters[0].Pattern) != pattern {
		t.Errorf("FilterCriteria = %+v", out.FilterCriteria)
	}
	if len(out.FunctionResponseTypes) != 1 || out.FunctionResponseTypes[0] != types.FunctionResponseTypeReportBatchItemFailures {
		t.Errorf("FunctionResponseTypes = %v", out.FunctionResponseTypes)
	}
	if want := "arn:aws:lambda:us-east-1:000000000000:event-source-mapping:" + aws.ToString(out.UUID); aws.ToString(out.EventSourceMappingArn) != want {
		t.Errorf("EventSourceMappingArn = %s, want %s", aws.ToString(out.EventSourceMappingArn), want)
	}
	if out.LastModified == nil || out.LastModified.IsZero() {
		t.Error("LastModified missing")
	}
	f.waitState(t, aws.ToString(out.UUID), "Enabled")
	if inv := f.svc.Inventory(); len(inv) != 1 || inv[0] != aws.ToString(out.EventSourceMappingArn) {
		t.Errorf("Inventory = %v", inv)
	}

	// Defaults for a stream.
	f2 := newFixture(t)
	id := f2.create(t, &lambda.CreateEventSourceMappingInput{Enabled: aws.Bool(false)})
	got, err := f2.client.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt32(got.BatchSize) != 100 || aws.ToInt32(got.ParallelizationFactor) != 1 || aws.ToInt32(got.MaximumRetryAttempts) != -1 ||
		aws.ToInt32(got.MaximumRecordAgeInSeconds) != -1 || aws.ToString(got.State) != "Disabled" || got.StartingPosition != types.EventSourcePositionTrimHorizon {
		t.Errorf("defaults: %+v", got)
	}
}

func TestValidationErrors(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cases := []struct {
		name string
		in   lambda.CreateEventSourceMappingInput
		code string
		msg  string
	}{
		{"batch size", lambda.CreateEventSourceMappingInput{BatchSize: aws.Int32(10001)}, "ValidationException", "Member must have value less than or equal to 10000"},
		{"window", lambda.CreateEventSourceMappingInput{MaximumBatchingWindowInSeconds: aws.Int32(301)}, "ValidationException", "maximumBatchingWindowInSeconds"},
		{"parallelization", lambda.CreateEventSourceMappingInput{ParallelizationFactor: aws.Int32(11)}, "ValidationException", "parallelizationFactor"},
		{"retries", lambda.CreateEventSourceMappingInput{MaximumRetryAttempts: aws.Int32(-2)}, "ValidationException", "maximumRetryAttempts"},
		{"record age", lambda.CreateEventSourceMappingInput{MaximumRecordAgeInSeconds: aws.Int32(59)}, "InvalidParameterValueException", "MaximumRecordAgeInSeconds"},
		{"at timestamp", lambda.CreateEventSourceMappingInput{StartingPosition: types.EventSourcePositionAtTimestamp}, "InvalidParameterValueException", "AT_TIMESTAMP"},
		{"bad filter", lambda.CreateEventSourceMappingInput{FilterCriteria: &types.FilterCriteria{Filters: []types.Filter{{Pattern: aws.String(`{"a":`)}}}}, "InvalidParameterValueException", "Invalid filter pattern"},
		{"missing function", lambda.CreateEventSourceMappingInput{FunctionName: aws.String("nope")}, "ResourceNotFoundException", "Function not found"},
		{"not a stream", lambda.CreateEventSourceMappingInput{EventSourceArn: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/s")}, "InvalidParameterValueException", "event source"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			if in.EventSourceArn == nil {
				in.EventSourceArn = aws.String(streamArn)
			}
			if in.FunctionName == nil {
				in.FunctionName = aws.String(fnName)
			}
			if in.StartingPosition == "" {
				in.StartingPosition = types.EventSourcePositionLatest
			}
			_, err := f.client.CreateEventSourceMapping(ctx, &in)
			var ae interface{ ErrorCode() string }
			if !errors.As(err, &ae) || ae.ErrorCode() != c.code || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %s containing %q", err, c.code, c.msg)
			}
		})
	}
}

func TestCreateChecksTheExecutionRole(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.auth.deny["dynamodb:GetShardIterator"] = true
	_, err := f.client.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn: aws.String(streamArn), FunctionName: aws.String(fnName), StartingPosition: types.EventSourcePositionTrimHorizon,
	})
	localawstest.WantErrorMessage[*types.InvalidParameterValueException](t, err, "CreateEventSourceMapping without stream access",
		"Cannot access stream "+streamArn+". Please ensure the role can perform the GetRecords, GetShardIterator, DescribeStream, and ListStreams Actions on your stream in IAM.")
	f.auth.mu.Lock()
	f.auth.deny = map[string]bool{"sqs:SendMessage": true}
	f.auth.mu.Unlock()
	_, err = f.client.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn: aws.String(streamArn), FunctionName: aws.String(fnName), StartingPosition: types.EventSourcePositionTrimHorizon,
		DestinationConfig: &types.DestinationConfig{OnFailure: &types.OnFailure{Destination: aws.String(queueArn)}},
	})
	localawstest.WantErrorMessage[*types.InvalidParameterValueException](t, err, "CreateEventSourceMapping without access to the destination",
		"execution role does not have permissions")
}

func TestLifecycleConflictsAndList(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// The update below must reach the service while the mapping is still
	// Creating: the fixture's 20 ms transition is too short a window on a
	// loaded machine, so this one lasts a second.
	f.svc.SetTransition(time.Second)
	out, err := f.client.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn: aws.String(streamArn), FunctionName: aws.String(fnName), StartingPosition: types.EventSourcePositionLatest,
	})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.UUID)
	// While Creating, updates and deletes are refused.
	_, err = f.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(id), BatchSize: aws.Int32(5)})
	localawstest.WantError[*types.ResourceInUseException](t, err, "update while Creating")
	f.svc.SetTransition(testTransition)
	f.waitState(t, id, "Enabled")
	// A second mapping of the same stream and function conflicts.
	_, err = f.client.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn: aws.String(streamArn), FunctionName: aws.String(fnArn), StartingPosition: types.EventSourcePositionLatest,
	})
	localawstest.WantErrorMessage[*types.ResourceConflictException](t, err, "duplicate", "Please update or delete the existing mapping with UUID "+id)
	up, err := f.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(id), Enabled: aws.Bool(false), BatchSize: aws.Int32(7)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(up.State) != "Disabling" || aws.ToInt32(up.BatchSize) != 7 {
		t.Errorf("update: state %s batch %d", aws.ToString(up.State), aws.ToInt32(up.BatchSize))
	}
	f.waitState(t, id, "Disabled")
	up, err = f.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(id), FilterCriteria: &types.FilterCriteria{Filters: []types.Filter{{Pattern: aws.String(`{"eventName":["INSERT"]}`)}}}})
	if err != nil || aws.ToString(up.State) != "Updating" || up.FilterCriteria == nil {
		t.Fatalf("update filters: %v %+v", err, up)
	}
	f.waitState(t, id, "Disabled")
	up, err = f.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(id), FilterCriteria: &types.FilterCriteria{}})
	if err != nil || up.FilterCriteria != nil {
		t.Fatalf("clearing filters: %v %+v", err, up.FilterCriteria)
	}
	f.waitState(t, id, "Disabled")

	list, err := f.client.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(fnName)})
	if err != nil || len(list.EventSourceMappings) != 1 {
		t.Fatalf("list by function: %v %d", err, len(list.EventSourceMappings))
	}
	list, err = f.client.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{EventSourceArn: aws.String(streamArn + "x")})
	if err != nil || len(list.EventSourceMappings) != 0 {
		t.Fatalf("list by other source: %v %d", err, len(list.EventSourceMappings))
	}

	del, err := f.client.DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: aws.String(id)})
	if err != nil || aws.ToString(del.State) != "Deleting" {
		t.Fatalf("delete: %v %+v", err, del)
	}
	eventually(t, 10e9, func() bool {
		_, err := f.client.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(id)})
		var nf *types.ResourceNotFoundException
		return errors.As(err, &nf)
	}, func() string { return "mapping still exists after delete" })
}
