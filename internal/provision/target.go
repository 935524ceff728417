package provision

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// checkTarget verifies, before anything is built or changed, that the bus
// or topic exists and is in the clients' region: the relay can publish only
// there, and every event would otherwise wait for a target that is not
// coming.
func (c *Pipeline) checkTarget(ctx context.Context, s Spec) error {
	what, id := "event bus", s.Target.EventBus
	if s.Target.Type == config.TargetSNS {
		what, id = "SNS topic", s.Target.TopicARN
	}
	if region := arnRegion(id); region != "" && c.Region != "" && region != c.Region {
		return fmt.Errorf("checking the target %s (%s): it is in %s, but the pipeline is in %s: the relay publishes only within its region; use a %s in %s, or configure the provider for %s",
			what, id, region, c.Region, what, c.Region, region)
	}
	var err error
	if s.Target.Type == config.TargetSNS {
		_, err = c.SNS.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(id)})
	} else {
		_, err = c.EventBridge.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String(id)})
	}
	switch {
	case awsops.IsNotFound(err):
		return fmt.Errorf("checking the target %s (%s): it does not exist in %s: create it first (or fix the name); the pipeline would hold every event back until it exists", what, id, c.Region)
	case err != nil:
		return fmt.Errorf("checking the target %s (%s): %w", what, id, err)
	}
	return nil
}

// arnRegion is the region of an ARN, "" for a name.
func arnRegion(id string) string {
	parts := strings.SplitN(id, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" {
		return ""
	}
	return parts[3]
}
