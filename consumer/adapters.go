package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
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
	// concurrency is how many messages of a batch HandleSQS applies at once.
	concurrency int
	now         func() time.Time
	// process is inbox.Process; tests of the adapters replace it.
	process func(ctx context.Context, id, hash string, fn func(context.Context, *Tx) error) (Outcome, error)
}

// ConsumerOption configures a Consumer.
type ConsumerOption func(*consumerSettings)

type consumerSettings struct {
	metricsW    io.Writer
	function    string
	effectsOnly bool
	concurrency int
	tracers     trace.TracerProvider
	objects     ObjectGetter
}

// WithTracerProvider sets what makes the consumer spans, such as
// otel.GetTracerProvider() of an application that sets up OpenTelemetry;
// without it the kit records no spans (the handler's context still carries
// the event's trace context). The kit does not read OpenTelemetry's global
// provider itself, so that it builds only the tracing API.
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
	s := consumerSettings{metricsW: os.Stdout, function: os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), concurrency: DefaultConcurrency, tracers: noop.NewTracerProvider()}
	for _, o := range opts {
		o(&s)
	}
	if s.concurrency < 1 {
		return nil, fmt.Errorf("consumer: WithConcurrency needs at least 1 message at a time, not %d", s.concurrency)
	}
	process := inbox.Process
	if s.effectsOnly {
		process = inbox.ProcessEffectsOnly
	}
	return &Consumer[T]{inbox: inbox, handle: handle, metricsW: s.metricsW, function: s.function,
		tracer: s.tracers.Tracer(TracerName), objects: s.objects, concurrency: s.concurrency, now: inbox.now, process: process}, nil
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
// they are delivered again. The messages of a standard queue are applied
// concurrently, WithConcurrency at a time, those of one event in order (a
// duplicate in the batch is skipped, not in progress). On a FIFO queue the
// message groups are applied concurrently and each group's messages in
// order; a failed message stops its group: every later message of the group
// in the batch is reported failed too, unprocessed, and the other groups go
// on.
//
// A queue is FIFO when the message's eventSourceARN ends in ".fifo", as
// Lambda's event source mapping always sets it. A poller that leaves it
// empty must set it: a message with a MessageGroupId and no eventSourceARN
// is taken as a FIFO queue's (its group applied in order, stopped at a
// failure), and each such batch logs the warning "message group without
// event source ARN" with the count of such messages (messages).
func (c *Consumer[T]) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	if n := unknownSource(ev.Records); n > 0 {
		c.inbox.log.WarnContext(ctx, "message group without event source ARN",
			"messages", n, "fix", "set eventSourceARN to the queue's ARN: without it the kit cannot tell a FIFO queue (each group applied in order) from a standard one, and orders each group as on a FIFO queue")
	}
	decoded := make([]Event[T], len(ev.Records))
	errs := make([]error, len(ev.Records))
	for i, m := range ev.Records {
		decoded[i], errs[i] = decodeBody[T](m.Body)
	}
	failed := make([]bool, len(ev.Records))
	runLanes(c.concurrency, sqsLanes(ev.Records, decoded, errs), func(lane []int) {
		for n, i := range lane {
			err := errs[i]
			if err == nil {
				_, err = c.Apply(ctx, decoded[i])
			}
			if err != nil {
				c.failed(ctx, ev.Records[i].MessageId, err)
				for _, later := range lane[n+1:] {
					c.failed(ctx, ev.Records[later].MessageId, fmt.Errorf("%s failed", earlierInLane(ev.Records[i], decoded[i])))
				}
				for _, stopped := range lane[n:] {
					failed[stopped] = true
				}
				return
			}
		}
	})
	var resp events.SQSEventResponse
	for i, m := range ev.Records {
		if failed[i] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	c.flush(ctx)
	return resp, nil
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
