package subscription

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

// ErrNotFound is returned by Read and Lookup when nothing of the
// subscription exists any more: the provider removes it from its state.
var ErrNotFound = errors.New("outbox subscription not found")

// Clients are the AWS clients and settings of the operations.
type Clients struct {
	SQS    *sqs.Client
	Events *eventbridge.Client
	// WaitTimeout bounds each wait (SQS accepting a recently deleted
	// queue's name again); default 3 minutes. The context's deadline
	// applies as well.
	WaitTimeout time.Duration
	// PollInterval is the longest pause between two attempts; default 5s.
	PollInterval time.Duration
}

// NewClients builds the clients from cfg.
func NewClients(cfg aws.Config) *Clients {
	return &Clients{SQS: sqs.NewFromConfig(cfg), Events: eventbridge.NewFromConfig(cfg)}
}

func (c *Clients) waitTimeout() time.Duration {
	if c.WaitTimeout > 0 {
		return c.WaitTimeout
	}
	return 3 * time.Minute
}

func (c *Clients) pollInterval() time.Duration {
	if c.PollInterval > 0 {
		return c.PollInterval
	}
	return 5 * time.Second
}

// waitFor polls check until it reports done, fails, or the wait times out.
// what describes the condition for the error.
func (c *Clients) waitFor(ctx context.Context, what string, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.waitTimeout())
	defer cancel()
	delay := 250 * time.Millisecond
	for {
		done, err := check(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, c.pollInterval())
	}
}

// isNotFound reports whether err says that the resource does not exist.
func isNotFound(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "ResourceNotFoundException", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist":
		return true
	}
	return false
}

// ignoreNotFound returns nil for a not-found error, else err.
func ignoreNotFound(err error) error {
	if isNotFound(err) {
		return nil
	}
	return err
}

// isQueueDeletedRecently reports SQS's refusal to reuse the name of a queue
// deleted less than 60 seconds ago.
func isQueueDeletedRecently(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && strings.Contains(ae.ErrorCode(), "QueueDeletedRecently")
}
