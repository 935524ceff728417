package provision

import (
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

func TestNamesFor(t *testing.T) {
	t.Parallel()
	n := NamesFor("orders")
	want := Names{
		Table: "orders-outbox", RelayFunction: "orders-relay", RelayRole: "orders-relay",
		RelayLogGroup: "/aws/lambda/orders-relay", DeadLetterQueue: "orders-relay-dlq",
		ReconcilerFunction: "orders-reconciler", ReconcilerRole: "orders-reconciler",
		ReconcilerLogGroup: "/aws/lambda/orders-reconciler", Schedule: "orders-reconcile",
		SchedulerRole: "orders-scheduler", RelayPolicyName: "outbox-relay",
		ReconcilerPolicyName: "outbox-reconciler", SchedulerRolePolicyName: "outbox-scheduler",
		AlarmDLQNotEmpty: "orders-dlq-not-empty", AlarmRelayErrors: "orders-relay-errors",
		AlarmIteratorAge: "orders-iterator-age", AlarmOldestPendingAge: "orders-oldest-pending-age",
	}
	if n != want {
		t.Errorf("NamesFor = %+v, want %+v", n, want)
	}
	// The longest valid name fits Lambda's and IAM's 64 characters.
	long := NamesFor(string(make([]byte, MaxNameLength)))
	for _, name := range []string{long.RelayFunction, long.ReconcilerFunction, long.SchedulerRole, long.Schedule} {
		if len(name) > 64 {
			t.Errorf("%d-character component name", len(name))
		}
	}
}

func TestARNs(t *testing.T) {
	t.Parallel()
	const table = "arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox"
	a, err := AccountOf(table)
	if err != nil {
		t.Fatal(err)
	}
	if a != (Account{Partition: "aws", Region: "eu-west-1", ID: "123456789012"}) {
		t.Errorf("AccountOf = %+v", a)
	}
	for got, want := range map[string]string{
		Spec{}.TargetARN(a): "arn:aws:events:eu-west-1:123456789012:event-bus/default",
		Spec{Target: TargetSpec{EventBus: "arn:aws:events:x:1:event-bus/b"}}.TargetARN(a):                  "arn:aws:events:x:1:event-bus/b",
		Spec{Target: TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:eu-west-1:1:q"}}.TargetARN(a): "arn:aws:sqs:eu-west-1:1:q",
		a.LogGroupARN("/aws/lambda/orders-relay"):                                                          "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/orders-relay:*",
		StreamsARN(table):                 table + "/stream/*",
		IndexARN(table, "outbox-pending"): table + "/index/outbox-pending",
		Spec{Target: TargetSpec{Type: config.TargetSNS, TopicARN: "arn:aws:sns:eu-west-1:1:t"}}.TargetARN(a): "arn:aws:sns:eu-west-1:1:t",
		indexName(IndexARN(table, "outbox-pending")):                                                         "outbox-pending",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	if _, err := AccountOf("table/orders"); err == nil {
		t.Error("AccountOf accepted a non-ARN")
	}
	p, _ := ParseARN(table)
	if p.String() != table || p.Resource != "table/orders-outbox" {
		t.Errorf("ParseARN round trip: %+v", p)
	}
}

func TestTagDiff(t *testing.T) {
	t.Parallel()
	set, remove := awsops.TagDiff(
		map[string]string{"keep": "1", "change": "old", "drop": "x", "aws:cloudformation": "y"},
		map[string]string{"keep": "1", "change": "new", "add": "z"},
	)
	if len(set) != 2 || set["change"] != "new" || set["add"] != "z" {
		t.Errorf("set = %v", set)
	}
	if len(remove) != 1 || remove[0] != "drop" {
		t.Errorf("remove = %v", remove)
	}
}

func TestAddedTag(t *testing.T) {
	t.Parallel()
	for _, a := range []Added{{}, {Stream: true}, {PendingIndex: true, TTL: true}, {true, true, true}} {
		if got := parseAdded(a.tag()); got != a {
			t.Errorf("parseAdded(%q) = %+v, want %+v", a.tag(), got, a)
		}
	}
}

func TestIsIAMPropagation(t *testing.T) {
	t.Parallel()
	for _, msg := range iamPropagationMessages {
		if !isIAMPropagation(errString("InvalidParameterValueException: " + msg + " (role x)")) {
			t.Errorf("%q is not retried", msg)
		}
	}
	if isIAMPropagation(errString("ResourceConflictException: Function already exist")) || isIAMPropagation(nil) {
		t.Error("unrelated errors are retried")
	}
}

type errString string

func (e errString) Error() string { return string(e) }
