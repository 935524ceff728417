package provision

import (
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/golden"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

const (
	goldenTable = "arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox"
	goldenQueue = "arn:aws:sqs:eu-west-1:123456789012:orders-relay-dlq"
)

func TestPolicyDocuments(t *testing.T) {
	t.Parallel()
	a, _ := AccountOf(goldenTable)
	eventBridge := Spec{Name: "orders"}.WithDefaults()
	sns := Spec{Name: "orders", PublishedAction: config.ActionDelete,
		Target: TargetSpec{Type: config.TargetSNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"}}.WithDefaults()
	sqs := Spec{Name: "orders", Target: TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:eu-west-1:123456789012:orders.fifo"}}.WithDefaults()
	for name, doc := range map[string]PolicyDocument{
		"relay_eventbridge_mark": RelayPolicy(eventBridge, eventBridge.resources(a, goldenTable, goldenQueue)),
		"relay_sns_delete":       RelayPolicy(sns, sns.resources(a, goldenTable, goldenQueue)),
		"reconciler_eventbridge": ReconcilerPolicy(eventBridge, eventBridge.resources(a, goldenTable, goldenQueue)),
		"reconciler_sns":         ReconcilerPolicy(sns, sns.resources(a, goldenTable, goldenQueue)),
		"relay_sqs_mark":         RelayPolicy(sqs, sqs.resources(a, goldenTable, goldenQueue)),
		"scheduler":              SchedulerPolicy("arn:aws:lambda:eu-west-1:123456789012:function:orders-reconciler"),
		"trust_lambda":           TrustPolicy("lambda.amazonaws.com", ""),
		"trust_scheduler":        TrustPolicy("scheduler.amazonaws.com", "123456789012"),
	} {
		golden.Check(t, name+".json", doc.JSON())
		// No wildcard resources beyond the stream and index sub-ARNs.
		for _, st := range doc.Statement {
			for _, r := range st.Resource {
				if strings.Contains(r, "*") && r != StreamsARN(goldenTable) && !strings.HasPrefix(r, "arn:aws:logs:") {
					t.Errorf("%s: statement %s has the wildcard resource %s", name, st.Sid, r)
				}
			}
			for _, act := range st.Action {
				if strings.Contains(act, "*") {
					t.Errorf("%s: statement %s has the wildcard action %s", name, st.Sid, act)
				}
			}
		}
	}
}

func TestSamePolicy(t *testing.T) {
	t.Parallel()
	doc := SchedulerPolicy("arn:aws:lambda:eu-west-1:1:function:f")
	compact := `{"Statement":[{"Resource":"arn:aws:lambda:eu-west-1:1:function:f","Action":"lambda:InvokeFunction","Effect":"Allow","Sid":"InvokeReconciler"}],"Version":"2012-10-17"}`
	if !awsops.SamePolicy(doc.JSON(), compact) {
		t.Error("equivalent documents compare different")
	}
	if awsops.SamePolicy(doc.JSON(), SchedulerPolicy("arn:aws:lambda:eu-west-1:1:function:g").JSON()) {
		t.Error("different documents compare equal")
	}
	if !awsops.SamePolicy(decodePolicy("%7B%22a%22%3A1%7D"), `{"a": 1}`) {
		t.Error("URL-encoded documents are not decoded")
	}
}
