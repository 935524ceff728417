package outboxpipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAccModuleInbox: a subscription's inbox passes through the module,
// whose outputs give the inbox table and the consumer's policy of each
// subscription that has one, and nothing for one that has none.
func TestAccModuleInbox(t *testing.T) {
	ctx, tf := startModuleTest(t, 15*time.Minute)
	run, write := applyModule(ctx, t, tf)
	write("inbox.tf", `
module "i" {
  source = "../modules/outbox-pipeline"
  name   = "inb"
  relay  = { architecture = "x86_64" }
  subscriptions = {
    payments = {
      sources = ["com.example.orders"]
      inbox   = { deletion_protection = false, point_in_time_recovery = false }
    }
    audit = {
      sources = ["com.example.orders"]
    }
  }
}

output "i" {
  value = module.i
}
`)
	if err := run.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := run.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Tables   map[string]string `json:"subscription_inbox_table_names"`
		Policies map[string]string `json:"subscription_consumer_policies"`
		Subs     map[string]struct {
			QueueARN       string  `json:"queue_arn"`
			InboxTableName *string `json:"inbox_table_name"`
			InboxTableARN  *string `json:"inbox_table_arn"`
			ConsumerPolicy *string `json:"consumer_policy_json"`
		} `json:"subscriptions"`
	}
	if err := run.OutputInto(ctx, "i", &out); err != nil {
		t.Fatal(err)
	}
	tables, policies, subs := out.Tables, out.Policies, out.Subs
	if len(tables) != 1 || tables["payments"] != "inb-payments-inbox" || len(policies) != 1 {
		t.Fatalf("inbox tables %v, policies %v: want payments' alone", tables, policies)
	}
	p, a := subs["payments"], subs["audit"]
	if p.InboxTableName == nil || *p.InboxTableName != tables["payments"] || p.ConsumerPolicy == nil || *p.ConsumerPolicy != policies["payments"] {
		t.Errorf("subscriptions.payments = %+v", p)
	}
	if a.InboxTableName != nil || a.InboxTableARN != nil || a.ConsumerPolicy != nil {
		t.Errorf("subscriptions.audit has an inbox: %+v", a)
	}
	var doc struct{ Statement []struct{ Resource []string } }
	if err := json.Unmarshal([]byte(policies["payments"]), &doc); err != nil {
		t.Fatal(err)
	}
	var resources []string
	for _, s := range doc.Statement {
		resources = append(resources, s.Resource...)
	}
	if len(resources) != 2 || resources[0] != p.QueueARN || !strings.HasSuffix(resources[1], ":table/inb-payments-inbox") {
		t.Errorf("the consumer policy is on %v, want the queue %s and the inbox table", resources, p.QueueARN)
	}
}
