package subscription

import (
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// ErrNotFound is returned by Read and Lookup when nothing of the
// subscription exists any more: the provider removes it from its state.
var ErrNotFound = errors.New("outbox subscription not found")

// Provisioner provisions subscriptions: it holds the AWS clients and the
// settings that Create, Read, Update and Delete use.
type Provisioner struct {
	SQS    *sqs.Client
	Events *eventbridge.Client
	// SNS subscribes the queue of a topic subscription.
	SNS *sns.Client
	// DynamoDB holds the inbox table.
	DynamoDB *dynamodb.Client
	// WaitTimeout bounds each wait (SQS accepting a recently deleted
	// queue's name again); default 3 minutes. The context's deadline
	// applies as well.
	WaitTimeout time.Duration
	// PollInterval is the longest pause between two attempts; default 5s.
	PollInterval time.Duration
}

// New returns a Provisioner whose clients are built from cfg.
func New(cfg aws.Config) *Provisioner {
	return &Provisioner{SQS: sqs.NewFromConfig(cfg), Events: eventbridge.NewFromConfig(cfg), SNS: sns.NewFromConfig(cfg), DynamoDB: dynamodb.NewFromConfig(cfg)}
}

func (c *Provisioner) waitTimeout() time.Duration {
	return awsops.PositiveOr(c.WaitTimeout, 3*time.Minute)
}

func (c *Provisioner) pollInterval() time.Duration {
	return awsops.PositiveOr(c.PollInterval, awsops.DefaultPollInterval)
}

// waiter bounds the waits.
func (c *Provisioner) waiter() awsops.Waiter {
	return awsops.Waiter{Timeout: c.waitTimeout(), MaxDelay: c.pollInterval()}
}
