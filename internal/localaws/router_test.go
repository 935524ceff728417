package localaws_test

import (
	"context"
	"encoding/xml"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// fake is a service whose behaviour is a function.
type fake struct {
	spec    awsapi.Spec
	handle  func(req *awsapi.Request) (any, error)
	resolve func(r *http.Request) string
	inv     []string
	calls   atomic.Int64
}

func (f *fake) Spec() awsapi.Spec { return f.spec }

func (f *fake) Handle(req *awsapi.Request) (any, error) {
	f.calls.Add(1)
	return f.handle(req)
}

func (f *fake) Inventory() []string { return f.inv }

type restFake struct{ *fake }

func (f restFake) ResolveOperation(r *http.Request) string { return f.resolve(r) }

func newStack(t *testing.T, svcs ...awsapi.Service) *localaws.Stack {
	t.Helper()
	s := localawstest.StartEmpty(t)
	localawstest.Serve(t, s, svcs...)
	return s
}

func ddbFake() *fake {
	return &fake{
		spec: awsapi.Spec{Name: "fakeddb", Protocol: awsapi.JSON10, TargetPrefix: "DynamoDB_20120810",
			SigningName: "dynamodb", ErrorNamespace: "com.amazonaws.dynamodb.v20120810", CRC32: true},
		handle: func(req *awsapi.Request) (any, error) {
			switch req.Operation {
			case "ListTables":
				return map[string]any{"TableNames": []string{"a", "b"}}, nil
			case "DescribeTable":
				var in struct{ TableName string }
				if err := req.DecodeJSON(&in); err != nil {
					return nil, err
				}
				return nil, awsapi.ResourceNotFoundException("Requested resource not found: Table: %s not found", in.TableName)
			case "PutItem":
				return map[string]any{}, nil
			case "TransactWriteItems":
				return nil, awsapi.NewError("TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]").
					With("CancellationReasons", []map[string]any{{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}})
			}
			return nil, awsapi.UnknownOperationException(req.Operation)
		},
	}
}

func TestJSON10ResultsAndTypedErrors(t *testing.T) {
	t.Parallel()
	f := ddbFake()
	s := newStack(t, f)
	c := dynamodb.NewFromConfig(oneAttempt(s))
	ctx := context.Background()

	out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.TableNames, ",") != "a,b" {
		t.Fatalf("TableNames = %v", out.TableNames)
	}

	_, err = c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("missing")})
	var rnf *ddbtypes.ResourceNotFoundException
	if !errors.As(err, &rnf) || !strings.Contains(rnf.ErrorMessage(), "missing") {
		t.Fatalf("DescribeTable error = %v, want ResourceNotFoundException", err)
	}

	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{}})
	tce := localawstest.ErrorAs[*ddbtypes.TransactionCanceledException](t, err, "TransactWriteItems")
	if len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[1].Code) != "ConditionalCheckFailed" {
		t.Fatalf("CancellationReasons = %+v", tce.CancellationReasons)
	}

	_, err = c.DeleteBackup(ctx, &dynamodb.DeleteBackupInput{BackupArn: aws.String("x")})
	localawstest.WantCode(t, err, "UnknownOperationException", "DeleteBackup")
}

func TestCRC32Header(t *testing.T) {
	t.Parallel()
	s := newStack(t, ddbFake())
	req, _ := http.NewRequest(http.MethodPost, s.Endpoint(), strings.NewReader("{}"))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if got, want := resp.Header.Get("X-Amz-Crc32"), strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10); got != want {
		t.Fatalf("X-Amz-Crc32 = %q, want %q", got, want)
	}
	if resp.Header.Get("x-amzn-RequestId") == "" {
		t.Fatal("no request id")
	}
}

// oneAttempt is the stack's client configuration without retries, so that
// an error reaches the test at once.
func oneAttempt(s *localaws.Stack) aws.Config {
	cfg := localawstest.Config(s)
	cfg.RetryMaxAttempts = 1
	return cfg
}

func TestUnknownTargetAndService(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	c := dynamodb.NewFromConfig(oneAttempt(s))
	_, err := c.ListTables(context.Background(), &dynamodb.ListTablesInput{})
	localawstest.WantCode(t, err, "UnknownOperationException", "ListTables")
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) || re.HTTPStatusCode() != 400 {
		t.Fatalf("status = %v", err)
	}

	sc := sns.NewFromConfig(oneAttempt(s))
	_, err = sc.ListTopics(context.Background(), &sns.ListTopicsInput{})
	localawstest.WantCode(t, err, "InvalidAction", "ListTopics")
}

func TestQueryCompatibleJSON(t *testing.T) {
	t.Parallel()
	f := &fake{
		spec: awsapi.Spec{Name: "fakesqs", Protocol: awsapi.JSON10, TargetPrefix: "AmazonSQS", SigningName: "sqs"},
		handle: func(req *awsapi.Request) (any, error) {
			if req.Operation == "GetQueueUrl" {
				e := awsapi.NewError("QueueDoesNotExist", "The specified queue does not exist.")
				e.QueryCode = "AWS.SimpleQueueService.NonExistentQueue"
				return nil, e
			}
			return map[string]any{"QueueUrls": []string{req.Env.Endpoint + "/000000000000/q"}}, nil
		},
	}
	s := newStack(t, f)
	c := sqs.NewFromConfig(oneAttempt(s))
	_, err := c.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String("q")})
	qdne := localawstest.ErrorAs[*sqstypes.QueueDoesNotExist](t, err, "GetQueueUrl")
	if qdne.ErrorCode() != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Fatalf("ErrorCode = %s", qdne.ErrorCode())
	}
	out, err := c.ListQueues(context.Background(), &sqs.ListQueuesInput{})
	if err != nil || len(out.QueueUrls) != 1 {
		t.Fatalf("ListQueues = %v, %v", out, err)
	}
}

func TestJSON11TypedError(t *testing.T) {
	t.Parallel()
	f := &fake{
		spec: awsapi.Spec{Name: "fakeevents", Protocol: awsapi.JSON11, TargetPrefix: "AWSEvents", SigningName: "events"},
		handle: func(req *awsapi.Request) (any, error) {
			return nil, awsapi.ResourceNotFoundException("Event bus b does not exist.")
		},
	}
	s := newStack(t, f)
	c := eventbridge.NewFromConfig(oneAttempt(s))
	_, err := c.DescribeEventBus(context.Background(), &eventbridge.DescribeEventBusInput{Name: aws.String("b")})
	localawstest.WantError[*ebtypes.ResourceNotFoundException](t, err, "DescribeEventBus")
}

type topicList struct {
	Topics []struct {
		TopicArn string `xml:"TopicArn"`
	} `xml:"Topics>member"`
}

func TestQueryProtocolRoutedByCredentialScope(t *testing.T) {
	t.Parallel()
	f := &fake{
		spec: awsapi.Spec{Name: "fakesns", Protocol: awsapi.Query, SigningName: "sns", XMLNamespace: "http://sns.amazonaws.com/doc/2010-03-31/"},
		handle: func(req *awsapi.Request) (any, error) {
			switch req.Operation {
			case "ListTopics":
				var out topicList
				out.Topics = append(out.Topics, struct {
					TopicArn string `xml:"TopicArn"`
				}{req.ARN("sns", "t1")})
				return out, nil
			case "GetTopicAttributes":
				e := awsapi.NewError("NotFound", "Topic does not exist")
				e.HTTPStatus = 404
				return nil, e
			}
			return nil, awsapi.InvalidAction(req.Operation)
		},
	}
	s := newStack(t, f)
	c := sns.NewFromConfig(oneAttempt(s))
	out, err := c.ListTopics(context.Background(), &sns.ListTopicsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Topics) != 1 || aws.ToString(out.Topics[0].TopicArn) != "arn:aws:sns:us-east-1:000000000000:t1" {
		t.Fatalf("Topics = %+v", out.Topics)
	}
	_, err = c.GetTopicAttributes(context.Background(), &sns.GetTopicAttributesInput{TopicArn: aws.String("x")})
	localawstest.WantError[*snstypes.NotFoundException](t, err, "GetTopicAttributes")
}

func TestRESTJSONTypedErrorAndRaw(t *testing.T) {
	t.Parallel()
	f := &fake{
		spec: awsapi.Spec{Name: "fakelambda", Protocol: awsapi.RESTJSON, SigningName: "lambda"},
		resolve: func(r *http.Request) string {
			switch {
			case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/"):
				return "GetFunction"
			case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/invocations"):
				return "Invoke"
			}
			return ""
		},
		handle: func(req *awsapi.Request) (any, error) {
			if req.Operation == "Invoke" {
				return &awsapi.Raw{Status: 200, Header: http.Header{"X-Amz-Function-Error": {"Unhandled"}, "X-Amz-Executed-Version": {"$LATEST"}},
					Body: []byte(`{"errorMessage":"boom"}`)}, nil
			}
			return nil, awsapi.NotFound404("Function not found: %s", req.ARN("lambda", "function:f"))
		},
	}
	s := newStack(t, restFake{f})
	c := lambda.NewFromConfig(oneAttempt(s))
	_, err := c.GetFunction(context.Background(), &lambda.GetFunctionInput{FunctionName: aws.String("f")})
	var rnf *lambdatypes.ResourceNotFoundException
	if !errors.As(err, &rnf) || !strings.Contains(rnf.ErrorMessage(), "function:f") {
		t.Fatalf("error = %v", err)
	}
	if aws.ToString(rnf.Type) != "User" {
		t.Fatalf("Type = %v", aws.ToString(rnf.Type))
	}
	out, err := c.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("f")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.FunctionError) != "Unhandled" || string(out.Payload) != `{"errorMessage":"boom"}` {
		t.Fatalf("Invoke = %q %q", aws.ToString(out.FunctionError), out.Payload)
	}
	_, err = c.ListLayers(context.Background(), &lambda.ListLayersInput{})
	localawstest.WantCode(t, err, "UnknownOperationException", "ListLayers")
}

func TestRPCv2CBOR(t *testing.T) {
	t.Parallel()
	f := &fake{
		spec: awsapi.Spec{Name: "fakecloudwatch", Protocol: awsapi.RPCv2CBOR, TargetPrefix: "GraniteServiceVersion20100801", SigningName: "monitoring"},
		handle: func(req *awsapi.Request) (any, error) {
			if req.Operation == "ListMetrics" {
				return map[string]any{"Metrics": []map[string]any{{"Namespace": "Outbox", "MetricName": "Lag"}}}, nil
			}
			return nil, awsapi.NewError("ResourceNotFound", "no such dashboard")
		},
	}
	s := newStack(t, f)
	c := cloudwatch.NewFromConfig(oneAttempt(s))
	out, err := c.ListMetrics(context.Background(), &cloudwatch.ListMetricsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Metrics) != 1 || aws.ToString(out.Metrics[0].MetricName) != "Lag" {
		t.Fatalf("Metrics = %+v", out.Metrics)
	}
	_, err = c.GetDashboard(context.Background(), &cloudwatch.GetDashboardInput{DashboardName: aws.String("d")})
	localawstest.WantCode(t, err, "ResourceNotFound", "GetDashboard")
}

func TestPrincipalsAndAuthorizer(t *testing.T) {
	t.Parallel()
	var seen atomic.Value
	f := &fake{
		spec: awsapi.Spec{Name: "fakests", Protocol: awsapi.Query, SigningName: "sts", XMLNamespace: "https://sts.amazonaws.com/doc/2011-06-15/"},
		handle: func(req *awsapi.Request) (any, error) {
			seen.Store(req.Principal)
			if err := req.Authorize("sts:GetCallerIdentity", "*"); err != nil {
				return nil, err
			}
			return struct {
				Arn     string
				UserId  string
				Account string
			}{req.Principal.ARN, req.Principal.AccessKeyID, req.AccountID}, nil
		},
	}
	s := newStack(t, f)
	ctx := context.Background()

	admin := sts.NewFromConfig(localawstest.Config(s))
	out, err := admin.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.Arn) != "arn:aws:iam::000000000000:root" || aws.ToString(out.Account) != "000000000000" {
		t.Fatalf("admin identity = %s %s", aws.ToString(out.Arn), aws.ToString(out.Account))
	}

	roleArn := "arn:aws:iam::000000000000:role/service/relay"
	role := sts.NewFromConfig(localawstest.RoleConfig(s, roleArn))
	out, err = role.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	p := seen.Load().(awsapi.Principal)
	if p.Admin || p.RoleArn != roleArn || !strings.HasPrefix(aws.ToString(out.Arn), "arn:aws:sts::000000000000:assumed-role/relay/") {
		t.Fatalf("role principal = %+v, arn %s", p, aws.ToString(out.Arn))
	}

	s.Env().SetAuthorizer(localawstest.AdminsOnly{})
	t.Cleanup(func() { s.Env().SetAuthorizer(nil) })
	_, err = role.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDenied" || !strings.Contains(ae.ErrorMessage(), "sts:GetCallerIdentity") {
		t.Fatalf("denied error = %v", err)
	}
	if _, err := admin.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
		t.Fatalf("admin denied: %v", err)
	}

	expired := s.Env().Credentials.IssueRoleSession(roleArn, "old", time.Nanosecond)
	time.Sleep(2 * time.Millisecond)
	old := sts.NewFromConfig(localawstest.ConfigWithCredentials(s, expired.AccessKeyID, expired.SecretAccessKey, expired.SessionToken),
		func(o *sts.Options) { o.RetryMaxAttempts = 1 })
	_, err = old.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	localawstest.WantCode(t, err, "ExpiredTokenException", "GetCallerIdentity with expired credentials")
}

// checkLatencyFault adds latency to put, then removes the rule (twice:
// the second is not found).
func checkLatencyFault(t *testing.T, ctl *control.Client, put func() error) {
	t.Helper()
	ctx := t.Context()
	lat, err := ctl.AddFault(ctx, control.FaultRule{Service: "*", Operation: "PutItem", Latency: awsapi.Duration(150 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := put(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("latency not added: %v", d)
	}
	if err := ctl.RemoveFault(ctx, lat.ID); err != nil {
		t.Fatal(err)
	}
	var ce *control.Error
	if err := ctl.RemoveFault(ctx, lat.ID); !errors.As(err, &ce) || ce.Status != 404 {
		t.Fatalf("second remove = %v", err)
	}
}

// checkRateFault fails about half of the puts with a rate of 0.5.
func checkRateFault(t *testing.T, ctl *control.Client, put func() error) {
	t.Helper()
	ctx := t.Context()
	if _, err := ctl.AddFault(ctx, control.FaultRule{Service: "fakeddb", Operation: "PutItem", Code: "ThrottlingException", Rate: 0.5}); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := 0; i < 200; i++ {
		if put() != nil {
			failed++
		}
	}
	if failed < 50 || failed > 150 {
		t.Fatalf("rate 0.5 failed %d of 200", failed)
	}
	_ = ctl.ClearFaults(ctx)
}

func TestFaultInjection(t *testing.T) {
	t.Parallel()
	f := ddbFake()
	s := newStack(t, f)
	ctl := localawstest.Control(s)
	ctx := context.Background()
	c := dynamodb.NewFromConfig(oneAttempt(s))
	put := func() error {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: "a"}}})
		return err
	}

	rule, err := ctl.AddFault(ctx, control.FaultRule{Service: "fakeddb", Operation: "PutItem", Code: "ProvisionedThroughputExceededException", Count: 2})
	if err != nil || rule.ID == "" {
		t.Fatalf("AddFault = %+v, %v", rule, err)
	}
	before := f.calls.Load()
	for i := 0; i < 2; i++ {
		var pte *ddbtypes.ProvisionedThroughputExceededException
		if err := put(); !errors.As(err, &pte) {
			t.Fatalf("call %d: error = %v, want ProvisionedThroughputExceededException", i, err)
		}
	}
	if f.calls.Load() != before {
		t.Fatal("faulted requests reached the service")
	}
	if err := put(); err != nil {
		t.Fatalf("after count exhausted: %v", err)
	}
	if rules, _ := ctl.Faults(ctx); len(rules) != 0 {
		t.Fatalf("exhausted rule still listed: %+v", rules)
	}

	// Server faults keep their status.
	if _, err := ctl.AddFault(ctx, control.FaultRule{Service: "fakeddb", Operation: "ListTables", Code: "InternalServerError"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.ListTables(ctx, &dynamodb.ListTablesInput{})
	var ise *ddbtypes.InternalServerError
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &ise) || !errors.As(err, &re) || re.HTTPStatusCode() != 500 {
		t.Fatalf("error = %v, want InternalServerError 500", err)
	}
	if err := ctl.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}

	checkLatencyFault(t, ctl, put)
	checkRateFault(t, ctl, put)

	// Invalid rules are rejected.
	if _, err := ctl.AddFault(ctx, control.FaultRule{Service: "x", Rate: 2, Code: "X"}); err == nil {
		t.Fatal("rate 2 accepted")
	}
}

func TestEntryFaults(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctl := localawstest.Control(s)
	ctx := context.Background()
	if _, err := ctl.AddFault(ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Code: "InternalFailure", Entry: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	// Entry rules do not fail whole requests.
	if _, err := s.Env().Faults.Request("events", "PutEvents"); err != nil {
		t.Fatalf("entry rule fired on a request: %v", err)
	}
	code, msg, ok := s.Env().Faults.EntryFault("events", "PutEvents")
	if !ok || code != "InternalFailure" || msg == "" {
		t.Fatalf("EntryFault = %q %q %v", code, msg, ok)
	}
	if _, _, ok := s.Env().Faults.EntryFault("events", "PutEvents"); ok {
		t.Fatal("count 1 fired twice")
	}
}

func TestControlResourcesAndCustomRoutes(t *testing.T) {
	t.Parallel()
	f := ddbFake()
	f.inv = []string{"arn:aws:dynamodb:us-east-1:000000000000:table/b", "arn:aws:dynamodb:us-east-1:000000000000:table/a"}
	s := newStack(t, f)
	var killed atomic.Value
	s.Router().Control().HandleFunc("POST fake/kill/{name}", func(w http.ResponseWriter, r *http.Request) {
		killed.Store(r.PathValue("name"))
		awsapi.WriteControlJSON(w, http.StatusOK, map[string]string{"killed": r.PathValue("name")})
	})
	ctl := localawstest.Control(s)
	ctx := context.Background()
	if err := ctl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := ctl.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := res["fakeddb"]; len(got) != 2 || !strings.HasSuffix(got[0], "table/a") {
		t.Fatalf("resources = %v", res)
	}
	var out map[string]string
	if err := ctl.Do(ctx, http.MethodPost, "fake/kill/f1", nil, &out); err != nil {
		t.Fatal(err)
	}
	if out["killed"] != "f1" || killed.Load() != "f1" {
		t.Fatalf("custom route = %v", out)
	}
}

func TestQueryResultShape(t *testing.T) {
	t.Parallel()
	f := &fake{
		spec: awsapi.Spec{Name: "fakeiam", Protocol: awsapi.Query, SigningName: "iam", XMLNamespace: "https://iam.amazonaws.com/doc/2010-05-08/"},
		handle: func(req *awsapi.Request) (any, error) {
			return nil, awsapi.NewError("NoSuchEntity", "The role with name r cannot be found.")
		},
	}
	s := newStack(t, f)
	req, _ := http.NewRequest(http.MethodPost, s.Endpoint()+"/", strings.NewReader("Action=GetRole&RoleName=r&Version=2010-05-08"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var e struct {
		XMLName xml.Name `xml:"ErrorResponse"`
		Error   struct {
			Type, Code, Message string
		}
		RequestID string `xml:"RequestId"`
	}
	body, _ := io.ReadAll(resp.Body)
	if err := xml.Unmarshal(body, &e); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if resp.StatusCode != 400 || e.Error.Type != "Sender" || e.Error.Code != "NoSuchEntity" || e.RequestID == "" {
		t.Fatalf("error response %d %s", resp.StatusCode, body)
	}
}
