package subscription

import (
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/golden"
)

const (
	goldenQueue = "arn:aws:sqs:eu-west-1:123456789012:billing"
	goldenRule  = "arn:aws:events:eu-west-1:123456789012:rule/orders/billing"
)

func TestSubscriptionQueuePolicyGolden(t *testing.T) {
	t.Parallel()
	doc := QueuePolicy(goldenQueue, goldenRule)
	golden.Check(t, "queue_policy.json", doc.JSON())
	// Only EventBridge, only SendMessage, only this queue, only this rule.
	if len(doc.Statement) != 1 {
		t.Fatalf("%d statements, want 1", len(doc.Statement))
	}
	st := doc.Statement[0]
	if st.Principal["Service"] != "events.amazonaws.com" || len(st.Action) != 1 || st.Action[0] != "sqs:SendMessage" ||
		len(st.Resource) != 1 || st.Resource[0] != goldenQueue || st.Condition["ArnEquals"]["aws:SourceArn"] != goldenRule {
		t.Errorf("the policy grants more than the rule's delivery: %s", doc.JSON())
	}
	if got := RuleARNOfPolicy(doc.JSON()); got != goldenRule {
		t.Errorf("RuleARNOfPolicy = %q, want %q", got, goldenRule)
	}
	if got := RuleARNOfPolicy(`{"Statement":[{"Sid":"Other","Condition":{"ArnEquals":{"aws:SourceArn":"x"}}}]}`); got != "" {
		t.Errorf("RuleARNOfPolicy of a foreign policy = %q, want empty", got)
	}
}

func TestSubscriptionSamePolicy(t *testing.T) {
	t.Parallel()
	doc := QueuePolicy(goldenQueue, goldenRule)
	compact := `{"Statement":[{"Condition":{"ArnEquals":{"aws:SourceArn":"` + goldenRule + `"}},"Resource":"` + goldenQueue +
		`","Action":"sqs:SendMessage","Principal":{"Service":"events.amazonaws.com"},"Effect":"Allow","Sid":"AllowSubscriptionRule"}],"Version":"2012-10-17"}`
	if !awsops.SamePolicy(doc.JSON(), compact) {
		t.Error("equivalent documents compare different")
	}
	if awsops.SamePolicy(doc.JSON(), QueuePolicy(goldenQueue, goldenRule+"x").JSON()) {
		t.Error("documents for different rules compare equal")
	}
}

// TestSubscriptionTopicQueuePolicy: the queue of a topic subscription lets
// SNS send on behalf of the topic, and of nothing else.
func TestSubscriptionTopicQueuePolicy(t *testing.T) {
	t.Parallel()
	st := QueuePolicy(goldenQueue, goldenTopic).Statement[0]
	if st.Principal["Service"] != "sns.amazonaws.com" || st.Condition["ArnEquals"]["aws:SourceArn"] != goldenTopic {
		t.Errorf("statement %+v", st)
	}
}
