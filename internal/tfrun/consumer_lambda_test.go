package tfrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/demo"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// consumerOutputs are the outputs of examples/consumer-lambda.
type consumerOutputs struct {
	Writer struct {
		TableName string `json:"table_name"`
	} `json:"writer"`
	QueueURL       string `json:"queue_url"`
	QueueARN       string `json:"queue_arn"`
	InboxTable     string `json:"inbox_table_name"`
	ConsumerPolicy string `json:"consumer_policy_json"`
}

// consumerExample is the function of examples/consumer-lambda deployed on
// the local stack.
type consumerExample struct {
	cfg      aws.Config
	out      consumerOutputs
	function string
	counts   string
	// mapping is the UUID of the queue's event source mapping.
	mapping string
}

// TestAccExamplesConsumerLambda applies examples/consumer-lambda, deploys
// its function (built from main.go) with a role that has only the
// subscription's consumer policy and the counter's statement, writes
// orders, sends some of the queue's messages again, and maps the queue to
// the function with an SQS event source mapping with
// ReportBatchItemFailures, as the README deploys it: the counter is the
// number of orders, and every inbox entry is completed. Then it destroys
// everything.
func TestAccExamplesConsumerLambda(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	t.Parallel()
	ctx, stack, checkDestroyed := startExampleStack(t)
	zip := buildConsumerLambda(t)

	rel := filepath.Join("examples", "consumer-lambda")
	staged, err := tfrun.Stage(root, t.TempDir(), rel)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: root, Dir: t.TempDir(), Log: acctest.TestLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	run := inst.Runner(filepath.Join(staged, rel), tfrun.AWSEnv(stack.Endpoint(), stack.Options().Region))
	run.Log = acctest.TestLog(t)
	vars := []tfrun.Var{{Name: "architecture", Value: "x86_64"}}
	if err := run.Init(ctx); err != nil {
		t.Fatal(err)
	}
	destroyed := destroyOnFailure(t, func(ctx context.Context) error {
		unprotected := append(vars, tfrun.Var{Name: "inbox_deletion_protection", Value: "false"})
		err := run.Apply(ctx, unprotected...)
		if err != nil {
			err = fmt.Errorf("turning the inbox's protection off: %w", err)
		}
		return errors.Join(err, run.Destroy(ctx, unprotected...))
	})
	if err := run.Apply(ctx, vars...); err != nil {
		t.Fatalf("applying %s: %v", rel, err)
	}
	ex := &consumerExample{cfg: demo.AWSConfig(stack.Endpoint(), stack.Options().Region), function: "payments-consumer", counts: "payments-counts"}
	for name, v := range map[string]any{"writer": &ex.out.Writer, "queue_url": &ex.out.QueueURL, "queue_arn": &ex.out.QueueARN,
		"inbox_table_name": &ex.out.InboxTable, "consumer_policy_json": &ex.out.ConsumerPolicy} {
		if err := run.OutputInto(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	ex.deploy(ctx, t, zip)

	const orders = 6
	ex.placeOrders(ctx, t, orders)
	ex.deliverUntilApplied(ctx, t, orders)
	ex.checkInbox(ctx, t, orders)
	ex.remove(ctx, t)

	// The inbox is protected: destroy fails before deleting anything, and
	// goes through once the protection is off.
	if err := run.Destroy(ctx, vars...); err == nil {
		t.Fatal("destroy succeeded although the inbox's deletion protection is on")
	}
	vars = append(vars, tfrun.Var{Name: "inbox_deletion_protection", Value: "false"})
	if err := run.Apply(ctx, vars...); err != nil {
		t.Fatal(err)
	}
	if err := run.Destroy(ctx, vars...); err != nil {
		t.Fatalf("destroying %s: %v", rel, err)
	}
	destroyed()
	checkDestroyed()
}

// buildConsumerLambda builds examples/consumer-lambda, a module of its own,
// for this host's architecture and returns its deployment package.
func buildConsumerLambda(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", out, ".")
	cmd.Dir = filepath.Join(root, "examples", "consumer-lambda")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building examples/consumer-lambda: %v\n%s", err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return lambdatest.ZipOf(t, map[string][]byte{"bootstrap": bin})
}

// deploy creates what the example's README deploys with hashicorp/aws: the
// counts table, the role with the consumer policy and the counter's
// statement, and the function.
func (ex *consumerExample) deploy(ctx context.Context, t *testing.T, zip []byte) {
	t.Helper()
	ddb := dynamodb.NewFromConfig(ex.cfg)
	in := consumer.TableInput(ex.counts)
	in.AttributeDefinitions[0].AttributeName, in.KeySchema[0].AttributeName = aws.String("id"), aws.String("id")
	counts, err := ddb.CreateTable(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	roles := iam.NewFromConfig(ex.cfg)
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sts:AssumeRole","Principal":{"Service":"lambda.amazonaws.com"}}]}`
	role, err := roles.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(ex.function), AssumeRolePolicyDocument: aws.String(trust)})
	if err != nil {
		t.Fatal(err)
	}
	countsPolicy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:UpdateItem","Resource":%q}]}`, aws.ToString(counts.TableDescription.TableArn))
	for name, doc := range map[string]string{"consumer": ex.out.ConsumerPolicy, "counts": countsPolicy} {
		if _, err := roles.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(ex.function), PolicyName: aws.String(name), PolicyDocument: aws.String(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	fn := lambda.NewFromConfig(ex.cfg)
	if _, err := fn.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String(ex.function), Role: role.Role.Arn, Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
		Architectures: []lambdatypes.Architecture{lambdatest.HostArchitecture()}, Code: &lambdatypes.FunctionCode{ZipFile: zip}, Timeout: aws.Int32(30),
		Environment: &lambdatypes.Environment{Variables: map[string]string{"INBOX_TABLE": ex.out.InboxTable, "COUNTS_TABLE": ex.counts}},
	}); err != nil {
		t.Fatal(err)
	}
	lambdatest.WaitActive(ctx, t, fn, ex.function)
}

// remove deletes what deploy created, and the function's log group.
func (ex *consumerExample) remove(ctx context.Context, t *testing.T) {
	t.Helper()
	roles := iam.NewFromConfig(ex.cfg)
	steps := []func() error{
		func() error {
			if ex.mapping == "" {
				return nil
			}
			_, err := lambda.NewFromConfig(ex.cfg).DeleteEventSourceMapping(ctx, &lambda.DeleteEventSourceMappingInput{UUID: aws.String(ex.mapping)})
			return err
		},
		func() error {
			_, err := lambda.NewFromConfig(ex.cfg).DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(ex.function)})
			return err
		},
		func() error {
			_, err := cloudwatchlogs.NewFromConfig(ex.cfg).DeleteLogGroup(ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: aws.String("/aws/lambda/" + ex.function)})
			return err
		},
		func() error {
			for _, p := range []string{"consumer", "counts"} {
				if _, err := roles.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(ex.function), PolicyName: aws.String(p)}); err != nil {
					return err
				}
			}
			_, err := roles.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(ex.function)})
			return err
		},
		func() error {
			_, err := dynamodb.NewFromConfig(ex.cfg).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(ex.counts)})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Errorf("removing the example's function: %v", err)
		}
	}
}

// placeOrders writes n OrderPlaced events with the outbox writer.
func (ex *consumerExample) placeOrders(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	w, err := outbox.NewWriter(dynamodb.NewFromConfig(ex.cfg), outbox.Table{Name: ex.out.Writer.TableName})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		detail := fmt.Sprintf(`{"orderId":"order-%d","total":%d}`, i, 10+i)
		if _, err := w.Write(ctx, nil, outbox.Event{Source: "com.example.orders", DetailType: "OrderPlaced", Detail: json.RawMessage(detail)}); err != nil {
			t.Fatal(err)
		}
	}
}

// deliverUntilApplied maps the queue to the function as the README's
// aws_lambda_event_source_mapping does (batch size 10,
// ReportBatchItemFailures), after sending three of the queue's messages to
// it again (duplicates, as a redelivery after a lost delete makes them).
// It returns once the counter shows n orders and the queue is empty, and
// fails after the deadline or when the function reported a failure.
func (ex *consumerExample) deliverUntilApplied(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	q := sqs.NewFromConfig(ex.cfg)
	ex.duplicate(ctx, t, q, 3)
	fn := lambda.NewFromConfig(ex.cfg)
	m, err := fn.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{
		EventSourceArn: aws.String(ex.out.QueueARN), FunctionName: aws.String(ex.function), BatchSize: aws.Int32(10),
		FunctionResponseTypes: []lambdatypes.FunctionResponseType{lambdatypes.FunctionResponseTypeReportBatchItemFailures},
	})
	if err != nil {
		t.Fatalf("mapping the queue to the function: %v", err)
	}
	ex.mapping = aws.ToString(m.UUID)
	err = acctest.Wait(ctx, fmt.Sprintf("%d orders applied", n), func() error {
		left, err := ex.depth(ctx, q)
		if err != nil {
			return err
		}
		if got := ex.counter(ctx); got != n || left != 0 {
			return fmt.Errorf("the counter shows %d orders, want %d; %d messages in the queue", got, n, left)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v; the function's log:\n%s", err, ex.log(ctx))
	}
	if got := ex.counter(ctx); got != n {
		t.Fatalf("the counter shows %d orders after the queue emptied, want %d", got, n)
	}
}

// depth is the number of messages in the queue, visible or in flight.
func (ex *consumerExample) depth(ctx context.Context, q *sqs.Client) (int, error) {
	attrs, err := awsops.QueueAttributes(ctx, q, ex.out.QueueURL)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"} {
		v, err := strconv.Atoi(attrs[a])
		if err != nil {
			return 0, fmt.Errorf("queue attribute %s = %q: %w", a, attrs[a], err)
		}
		n += v
	}
	return n, nil
}

// duplicate reads k of the messages the relay sent to the queue, makes
// them visible again at once, and sends them to the queue again.
func (ex *consumerExample) duplicate(ctx context.Context, t *testing.T, q *sqs.Client, k int) {
	t.Helper()
	var bodies []string
	err := acctest.Wait(ctx, fmt.Sprintf("%d messages read from the queue", k), func() error {
		if len(bodies) >= k {
			return nil
		}
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(ex.out.QueueURL), MaxNumberOfMessages: int32(k - len(bodies))})
		if err != nil {
			return err
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			// Visible again at once, for the mapping.
			if _, err := q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(ex.out.QueueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return err
			}
		}
		return fmt.Errorf("%d of %d messages read", len(bodies), k)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(ex.out.QueueURL), MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
}

// log is the function's log, for a failure's message.
func (ex *consumerExample) log(ctx context.Context) string {
	out, err := cloudwatchlogs.NewFromConfig(ex.cfg).FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("/aws/lambda/" + ex.function)})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range out.Events {
		b.WriteString(aws.ToString(e.Message))
	}
	// The last lines tell the cause.
	const tail = 4000
	if s := b.String(); len(s) > tail {
		return "..." + s[len(s)-tail:]
	}
	return b.String()
}

// counter is the orders the function counted; -1 when it cannot be read.
func (ex *consumerExample) counter(ctx context.Context) int {
	out, err := dynamodb.NewFromConfig(ex.cfg).GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(ex.counts), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: "orders-placed"}},
	})
	if err != nil {
		return -1
	}
	n := 0
	if v, ok := out.Item["orders"].(*ddbtypes.AttributeValueMemberN); ok {
		_, _ = fmt.Sscan(v.Value, &n)
	}
	return n
}

// checkInbox checks that the inbox holds n entries, all completed.
func (ex *consumerExample) checkInbox(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	out, err := dynamodb.NewFromConfig(ex.cfg).Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(ex.out.InboxTable), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != n {
		t.Errorf("the inbox holds %d entries, want %d", len(out.Items), n)
	}
	for _, item := range out.Items {
		if s := acctest.AttrS(item, consumer.AttrStatus); s != consumer.StatusCompleted {
			t.Errorf("inbox entry %s is %s, want %s", acctest.AttrS(item, consumer.AttrEventID), s, consumer.StatusCompleted)
		}
	}
}
