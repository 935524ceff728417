package operate

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// PipelineNames lists the pipelines of the clients' account and Region, by
// name, sorted: the relay functions (a pipeline's name is its relay
// function's, less the suffix Find adds) tagged with that name, as every
// pipeline's components are.
func (c *Clients) PipelineNames(ctx context.Context) ([]string, error) {
	var names []string
	pages := lambda.NewListFunctionsPaginator(c.Lambda, &lambda.ListFunctionsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, call("lambda:ListFunctions", "the account's functions", err)
		}
		for _, f := range page.Functions {
			name, ok := pipelineOf(aws.ToString(f.FunctionName))
			if !ok {
				continue
			}
			out, err := c.Lambda.ListTags(ctx, &lambda.ListTagsInput{Resource: f.FunctionArn})
			if err != nil {
				return nil, call("lambda:ListTags", "function "+aws.ToString(f.FunctionName), err)
			}
			if out.Tags[provision.TagPipeline] == name {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// pipelineOf is the pipeline whose relay function is called function.
func pipelineOf(function string) (string, bool) {
	name, ok := strings.CutSuffix(function, provision.NamesFor("").RelayFunction)
	if !ok || name == "" {
		return "", false
	}
	return name, true
}

// SubscriptionNames lists the subscriptions of the clients' account and
// Region, by name, sorted: the queues named as a subscription's queue
// (NamesOf) and tagged with that subscription's name.
func (c *Clients) SubscriptionNames(ctx context.Context) ([]string, error) {
	var names []string
	pages := sqs.NewListQueuesPaginator(c.SQS, &sqs.ListQueuesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, call("sqs:ListQueues", "the account's queues", err)
		}
		for _, url := range page.QueueUrls {
			out, err := c.SQS.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
			if err != nil {
				return nil, call("sqs:ListQueueTags", "queue "+url, err)
			}
			name := out.Tags[subscription.TagSubscription]
			queue := url[strings.LastIndex(url, "/")+1:]
			if name != "" && (subscription.NamesOf(name, false).Queue == queue || subscription.NamesOf(name, true).Queue == queue) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}
