package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// RelayCode gives the relay package for an architecture: the zip (a
// bootstrap binary) and its base64 SHA-256, as Lambda reports CodeSha256.
// The provider fills it from internal/relaypackage.
type RelayCode struct {
	Zip    func(arch string) ([]byte, error)
	SHA256 func(arch string) (string, error)
}

// ErrNoRelayCode is returned when the relay package is not available.
var ErrNoRelayCode = errors.New("the relay package is not built: run `make relay` (go generate ./internal/relaypackage) and rebuild the provider")

func (c RelayCode) get(arch Architecture) (zip []byte, sha string, err error) {
	if c.Zip == nil || c.SHA256 == nil {
		return nil, "", ErrNoRelayCode
	}
	if zip, err = c.Zip(string(arch)); err != nil {
		return nil, "", fmt.Errorf("relay package for %s: %w (%w)", arch, err, ErrNoRelayCode)
	}
	if len(zip) == 0 {
		return nil, "", fmt.Errorf("relay package for %s is empty: %w", arch, ErrNoRelayCode)
	}
	if sha, err = c.SHA256(string(arch)); err != nil {
		return nil, "", fmt.Errorf("relay package checksum for %s: %w", arch, err)
	}
	return zip, sha, nil
}

// Provisioner provisions outbox pipelines: it holds the AWS clients and the
// settings that Create, Read, Update and Delete use.
type Provisioner struct {
	DynamoDB  *dynamodb.Client
	SQS       *sqs.Client
	Lambda    *lambda.Client
	IAM       *iam.Client
	Logs      *cloudwatchlogs.Client
	Scheduler *scheduler.Client
	// CloudWatch holds the pipeline's alarms.
	CloudWatch *cloudwatch.Client
	// S3 holds the claim-check bucket.
	S3 *s3.Client
	// AWS builds the client that checks that the target exists, whatever
	// its kind.
	AWS aws.Config
	// Region is the region of the clients; a target elsewhere is refused.
	Region string
	// Code is the relay package.
	Code RelayCode
	// PropagationTimeout bounds the retries of calls that fail while a new
	// role propagates through IAM; default 2 minutes.
	PropagationTimeout time.Duration
	// WaitTimeout bounds each wait for a component to become ready (index
	// ACTIVE, function Active, mapping Enabled); default 10 minutes. The
	// context's deadline applies as well.
	WaitTimeout time.Duration
	// PollInterval is the longest pause between two polls; default 5s.
	PollInterval time.Duration
}

// New returns a Provisioner whose clients are built from cfg.
func New(cfg aws.Config, code RelayCode) *Provisioner {
	return &Provisioner{
		DynamoDB:   dynamodb.NewFromConfig(cfg),
		SQS:        sqs.NewFromConfig(cfg),
		Lambda:     lambda.NewFromConfig(cfg),
		IAM:        iam.NewFromConfig(cfg),
		Logs:       cloudwatchlogs.NewFromConfig(cfg),
		Scheduler:  scheduler.NewFromConfig(cfg),
		CloudWatch: cloudwatch.NewFromConfig(cfg),
		S3:         s3.NewFromConfig(cfg),
		AWS:        cfg,
		Region:     cfg.Region,
		Code:       code,
	}
}

func (c *Provisioner) propagation() time.Duration {
	return awsops.PositiveOr(c.PropagationTimeout, 2*time.Minute)
}

func (c *Provisioner) waitTimeout() time.Duration {
	return awsops.PositiveOr(c.WaitTimeout, 10*time.Minute)
}

func (c *Provisioner) pollInterval() time.Duration {
	return awsops.PositiveOr(c.PollInterval, awsops.DefaultPollInterval)
}

// iamPropagationMessages are the messages of errors that Lambda returns
// while a new role or policy is not visible to it yet.
var iamPropagationMessages = []string{
	"cannot be assumed by Lambda",
	"execution role does not have permissions",
	"ensure the role can perform",
	"The role defined for the function cannot be assumed",
	// EventBridge Scheduler, while the schedule's role propagates.
	"must allow AWS EventBridge Scheduler to assume the role",
}

func isIAMPropagation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, m := range iamPropagationMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// retryPropagation calls fn until it succeeds, fails with an error that is
// not an IAM propagation error, or the propagation timeout passes.
func (c *Provisioner) retryPropagation(ctx context.Context, fn func() error) error {
	ctx, cancel := context.WithTimeout(ctx, c.propagation())
	defer cancel()
	delay := 250 * time.Millisecond
	for {
		err := fn()
		if !isIAMPropagation(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still failing after %s while IAM propagates the role)", err, c.propagation())
		case <-time.After(delay):
		}
		delay = min(delay*2, c.pollInterval())
	}
}

// waiter bounds the waits for a component to become ready.
func (c *Provisioner) waiter() awsops.Waiter {
	return awsops.Waiter{Timeout: c.waitTimeout(), MaxDelay: c.pollInterval()}
}

// waitFor polls check until it reports done, fails, or the wait times out.
// what describes the condition for the error.
func (c *Provisioner) waitFor(ctx context.Context, what string, check func(context.Context) (bool, error)) error {
	return c.waiter().For(ctx, what, check)
}
