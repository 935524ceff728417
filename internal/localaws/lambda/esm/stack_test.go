package esm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestStackWiring checks that the stack routes the mapping operations of
// the lambda client here and serves the control routes.
func TestStackWiring(t *testing.T) {
	stack := localawstest.Start(t)
	if stack.EventSourceMappings() == nil {
		t.Fatal("the stack has no event source mapping service")
	}
	ctx := context.Background()
	client := lambda.NewFromConfig(localawstest.Config(stack))
	list, err := client.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{})
	if err != nil || len(list.EventSourceMappings) != 0 {
		t.Fatalf("ListEventSourceMappings: %v %+v", err, list)
	}
	_, err = client.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn:   aws.String("arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"),
		FunctionName:     aws.String("missing"),
		StartingPosition: types.EventSourcePositionTrimHorizon,
	})
	localawstest.WantErrorMessage[*types.ResourceNotFoundException](t, err, "create for a missing function", "Function not found")
	_, err = client.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String("6f1e7c0e-0000-4000-8000-000000000000")})
	localawstest.WantError[*types.ResourceNotFoundException](t, err, "get of a missing mapping")
	ctl := localawstest.Control(stack)
	if _, err := ctl.PauseMapping(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("pausing a missing mapping: %v", err)
	}
	st, err := ctl.MappingStatuses(ctx)
	if err != nil || len(st) != 0 {
		t.Fatalf("statuses: %v %v", err, st)
	}
}
