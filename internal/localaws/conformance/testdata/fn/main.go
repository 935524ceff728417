// Command fn is the conformance test function. It runs in the local stack's
// Lambda service and calls the stack with its execution role's credentials.
//
// A DynamoDB stream event ({"Records":[…]}) is recorded: the function sends
// one message to the queue RECORD_QUEUE_URL when the invocation starts
// (phase "start") and one when it returns successfully (phase "done"), each
// listing the records it received. What it does with a record is driven by
// the record's NewImage:
//
//   - failCount (N): reported in batchItemFailures the first N times this
//     process sees the record's sequence number;
//   - poison (BOOL true): the whole invocation fails with an error;
//   - sleepMs (N): the invocation sleeps N ms after recording its start.
//
// Any other event is a command: {"action":"put","table":"T","pk":"…","sk":"…"}
// writes an item with PutItem and returns the error, if any, as the
// function's error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/conformance"
)

type command struct {
	Action string `json:"action"`
	Table  string `json:"table"`
	PK     string `json:"pk"`
	SK     string `json:"sk"`
}

var (
	cfg      aws.Config
	mu       sync.Mutex
	failures = map[string]int{}
)

func handle(ctx context.Context, raw json.RawMessage) (any, error) {
	at := time.Now().UnixNano()
	var probe struct {
		Records json.RawMessage `json:"Records"`
	}
	if err := json.Unmarshal(raw, &probe); err == nil && probe.Records != nil {
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("decoding the stream event: %w", err)
		}
		return handleStream(ctx, at, ev)
	}
	var cmd command
	if err := json.Unmarshal(raw, &cmd); err != nil {
		return nil, fmt.Errorf("decoding the command: %w", err)
	}
	switch cmd.Action {
	case "put":
		_, err := dynamodb.NewFromConfig(cfg).PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(cmd.Table),
			Item: map[string]ddbtypes.AttributeValue{
				"PK": &ddbtypes.AttributeValueMemberS{Value: cmd.PK},
				"SK": &ddbtypes.AttributeValueMemberS{Value: cmd.SK},
			},
		})
		if err != nil {
			fmt.Println("put failed: " + err.Error())
			return nil, err
		}
		return map[string]string{"put": cmd.PK + "/" + cmd.SK}, nil
	}
	return nil, fmt.Errorf("unknown action %q", cmd.Action)
}

func handleStream(ctx context.Context, at int64, ev events.DynamoDBEvent) (any, error) {
	rep := conformance.Report{Phase: "start", PID: os.Getpid(), AtNanos: at}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		rep.RequestID = lc.AwsRequestID
	}
	poison, sleep := false, 0
	var failed []string
	mu.Lock()
	for _, r := range ev.Records {
		rc := conformance.Received{Seq: r.Change.SequenceNumber, EventName: r.EventName, UserIdentity: r.UserIdentity}
		if v, ok := r.Change.Keys["PK"]; ok && v.DataType() == events.DataTypeString {
			rc.PK = v.String()
		}
		if v, ok := r.Change.Keys["SK"]; ok && v.DataType() == events.DataTypeString {
			rc.SK = v.String()
		}
		rep.Records = append(rep.Records, rc)
		img := r.Change.NewImage
		if v, ok := img["poison"]; ok && v.DataType() == events.DataTypeBoolean && v.Boolean() {
			poison = true
		}
		if v, ok := img["sleepMs"]; ok && v.DataType() == events.DataTypeNumber {
			n, _ := strconv.Atoi(v.Number())
			sleep = max(sleep, n)
		}
		if v, ok := img["failCount"]; ok && v.DataType() == events.DataTypeNumber {
			n, _ := strconv.Atoi(v.Number())
			if failures[rc.Seq] < n {
				failures[rc.Seq]++
				failed = append(failed, rc.Seq)
			}
		}
	}
	mu.Unlock()
	if err := send(ctx, rep); err != nil {
		return nil, err
	}
	if sleep > 0 {
		time.Sleep(time.Duration(sleep) * time.Millisecond)
	}
	if poison {
		return nil, errors.New("poison record in the batch")
	}
	rep.Phase, rep.Failed, rep.AtNanos = "done", failed, time.Now().UnixNano()
	if err := send(ctx, rep); err != nil {
		return nil, err
	}
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	for _, seq := range failed {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
	}
	return resp, nil
}

func send(ctx context.Context, rep conformance.Report) error {
	url := os.Getenv("RECORD_QUEUE_URL")
	if url == "" {
		return nil
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = sqs.NewFromConfig(cfg).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(string(body))})
	if err != nil {
		return fmt.Errorf("recording the invocation: %w", err)
	}
	return nil
}

func main() {
	cfg = aws.Config{
		Region: os.Getenv("AWS_REGION"),
		Credentials: credentials.NewStaticCredentialsProvider(
			os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")),
		BaseEndpoint: aws.String(os.Getenv("AWS_ENDPOINT_URL")),
	}
	lambda.Start(handle)
}
