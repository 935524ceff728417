package operate

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Pipeline is a deployed pipeline, as found by its name.
type Pipeline struct {
	Name string
	// Names are the names of its components.
	Names provision.Names
	// Config is the relay's configuration, read from its environment: the
	// table, the target and what happens to published items.
	Config config.Config
	// RelayFunctionARN is the relay function's ARN.
	RelayFunctionARN string
	// Reconciler is true when the reconciler function exists.
	Reconciler bool
	// Region is the Region it was found in, which the command runs
	// against.
	Region string
}

// Table is the outbox table of p.
func (p *Pipeline) Table() outbox.Table { return p.Config.Table }

// pending is where the pipeline's pending events are found, as its
// reconciler looks for them.
func (p *Pipeline) pending() pendingSet {
	return pendingSet{table: p.Config.Table, shards: p.Config.ReconcileShards}
}

// Target describes where p publishes: the bus, the topic or the queue.
func (p *Pipeline) Target() string { return p.Config.Target.Address() }

// Find finds the pipeline called name: its relay function must exist.
func (c *Clients) Find(ctx context.Context, name string) (*Pipeline, error) {
	n := provision.NamesFor(name)
	out, err := c.Lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(n.RelayFunction)})
	if isNotFound(err) {
		return nil, fmt.Errorf("pipeline %q: its relay function %s does not exist in this account and region: check the pipeline's name, --region and --profile: %w", name, n.RelayFunction, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: reading the relay function: %w", name, call("lambda:GetFunctionConfiguration", "function "+n.RelayFunction, err))
	}
	env := map[string]string{}
	if out.Environment != nil {
		env = out.Environment.Variables
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: the relay function %s has an invalid environment (repair it with terraform apply): %w", name, n.RelayFunction, err)
	}
	p := &Pipeline{Name: name, Names: n, Config: cfg, RelayFunctionARN: aws.ToString(out.FunctionArn), Region: c.AWS.Region}
	_, err = c.Lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(n.ReconcilerFunction)})
	switch {
	case err == nil:
		p.Reconciler = true
	case !isNotFound(err):
		return nil, fmt.Errorf("pipeline %q: reading the reconciler function: %w", name, call("lambda:GetFunctionConfiguration", "function "+n.ReconcilerFunction, err))
	}
	return p, nil
}

// queueURL returns the URL of p's dead-letter queue.
func (c *Clients) queueURL(ctx context.Context, p *Pipeline) (string, error) {
	out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(p.Names.DeadLetterQueue)})
	if isNotFound(err) {
		return "", fmt.Errorf("pipeline %q: its dead-letter queue %s does not exist: run terraform apply to recreate it: %w", p.Name, p.Names.DeadLetterQueue, ErrNotFound)
	}
	if err != nil {
		return "", call("sqs:GetQueueUrl", "queue "+p.Names.DeadLetterQueue, err)
	}
	return aws.ToString(out.QueueUrl), nil
}
