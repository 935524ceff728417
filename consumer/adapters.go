package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// Handler applies one event; it adds its DynamoDB writes to tx, which the
// kit commits with the completion.
type Handler[T any] func(ctx context.Context, e Event[T], tx *Tx) error

// Consumer applies the events of a subscription with a Handler, once.
type Consumer[T any] struct {
	inbox    *Inbox
	handle   Handler[T]
	metricsW io.Writer
	function string
	tracer   trace.Tracer
	objects  ObjectGetter
	now      func() time.Time
	// process is inbox.Process; tests of the adapters replace it.
	process func(ctx context.Context, id, hash string, fn func(context.Context, *Tx) error) (Outcome, error)
}

// ConsumerOption configures a Consumer.
type ConsumerOption func(*consumerSettings)

type consumerSettings struct {
	metricsW io.Writer
	function string
	tracers  trace.TracerProvider
	objects  ObjectGetter
}

// WithTracerProvider sets what makes the consumer spans (default
// OpenTelemetry's global TracerProvider, which records nothing unless the
// application sets one).
func WithTracerProvider(tp trace.TracerProvider) ConsumerOption {
	return func(s *consumerSettings) { s.tracers = tp }
}

// WithMetricsWriter sets where the adapters write the metrics after each
// invocation (default stdout, which Lambda sends to CloudWatch Logs).
func WithMetricsWriter(w io.Writer) ConsumerOption {
	return func(s *consumerSettings) { s.metricsW = w }
}

// WithFunctionName sets the metrics' FunctionName dimension (default
// AWS_LAMBDA_FUNCTION_NAME).
func WithFunctionName(name string) ConsumerOption {
	return func(s *consumerSettings) { s.function = name }
}

// New returns a consumer applying events with handle through inbox.
func New[T any](inbox *Inbox, handle Handler[T], opts ...ConsumerOption) (*Consumer[T], error) {
	if inbox == nil || handle == nil {
		return nil, errors.New("consumer: New needs an inbox and a handler")
	}
	s := consumerSettings{metricsW: os.Stdout, function: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), tracers: otel.GetTracerProvider()}
	for _, o := range opts {
		o(&s)
	}
	return &Consumer[T]{inbox: inbox, handle: handle, metricsW: s.metricsW, function: s.function,
		tracer: s.tracers.Tracer(TracerName), objects: s.objects, now: inbox.now, process: inbox.Process}, nil
}

// Apply applies one unwrapped event, in a consumer span that continues the
// event's trace (see trace.go). A claim-checked event's data is fetched
// and its hash checked first (see claimcheck.go).
func (c *Consumer[T]) Apply(ctx context.Context, e Event[T]) (Outcome, error) {
	ctx, span := c.startSpan(ctx, e.ID, e.DetailType, e.TraceParent, e.TraceState)
	var outcome Outcome
	err := c.resolve(ctx, &e)
	if err == nil {
		outcome, err = c.process(ctx, e.ID, e.PayloadHash, func(ctx context.Context, tx *Tx) error {
			return c.handle(ctx, e, tx)
		})
	}
	endSpan(span, outcome, err)
	return outcome, err
}

// HandleSQS is the handler of a Lambda function whose event source is a
// subscription's queue, with ReportBatchItemFailures: it applies each
// message's event and reports the failed ones by message id, so that only
// they are delivered again. On a FIFO queue, a failed message stops its
// message group: every later message of the group in the batch is reported
// failed too, unprocessed, and the other groups go on.
func (c *Consumer[T]) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	stopped := map[string]bool{}
	for _, m := range ev.Records {
		group := ""
		if strings.HasSuffix(m.EventSourceARN, ".fifo") {
			group = m.Attributes["MessageGroupId"]
		}
		if group != "" && stopped[group] {
			c.failed(ctx, m.MessageId, fmt.Errorf("an earlier message of group %s failed", group))
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			continue
		}
		if err := c.applyMessage(ctx, m); err != nil {
			c.failed(ctx, m.MessageId, err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			if group != "" {
				stopped[group] = true
			}
		}
	}
	c.flush(ctx)
	return resp, nil
}

func (c *Consumer[T]) applyMessage(ctx context.Context, m events.SQSMessage) error {
	e, err := decodeBody[T](m.Body)
	if err != nil {
		return err
	}
	_, err = c.Apply(ctx, e)
	return err
}

// HandleEventBridge is the handler of a Lambda function that a rule invokes
// directly. An error makes Lambda retry the asynchronous invocation.
func (c *Consumer[T]) HandleEventBridge(ctx context.Context, ev events.EventBridgeEvent) error {
	e, err := decodeEvent[T](ev.Source, ev.DetailType, ev.Detail)
	if err == nil {
		_, err = c.Apply(ctx, e)
	}
	if err != nil {
		c.failed(ctx, ev.ID, err)
	}
	c.flush(ctx)
	return err
}

func (c *Consumer[T]) failed(ctx context.Context, deliveryID string, err error) {
	c.inbox.metrics.add(EventsFailed, 1)
	c.inbox.log.WarnContext(ctx, "delivery failed", "deliveryId", deliveryID, "error", err.Error())
}

// flush writes the invocation's metrics. A failure is logged, never the
// invocation's: failing a batch whose events were applied would only
// deliver it again.
func (c *Consumer[T]) flush(ctx context.Context) {
	if err := c.inbox.metrics.Flush(c.metricsW, c.function, c.now()); err != nil {
		c.inbox.log.WarnContext(ctx, "writing the metrics failed", "error", err.Error())
	}
}
