package subscription

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSubscriptionBuildPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                 string
		sources, detailTypes []string
		want                 string
	}{
		{"both", []string{"com.example.orders"}, []string{"OrderPlaced"}, `{"detail-type":["OrderPlaced"],"source":["com.example.orders"]}`},
		{"sorted and deduplicated", []string{"b", "a", "b"}, []string{"Y", "X"}, `{"detail-type":["X","Y"],"source":["a","b"]}`},
		{"sources only", []string{"com.example.orders"}, nil, `{"source":["com.example.orders"]}`},
		{"detail types only", nil, []string{"OrderPlaced", "OrderCancelled"}, `{"detail-type":["OrderCancelled","OrderPlaced"]}`},
		{"special characters", []string{`a"b`}, nil, `{"source":["a\"b"]}`},
	} {
		if got := BuildPattern(c.sources, c.detailTypes); got != c.want {
			t.Errorf("%s: BuildPattern = %s, want %s", c.name, got, c.want)
		}
	}
	// The set's order does not matter.
	if BuildPattern([]string{"a", "b"}, nil) != BuildPattern([]string{"b", "a"}, nil) {
		t.Error("the pattern depends on the order of the sources")
	}
	s := Spec{Name: "x", EventPattern: `{"source":["x"]}`, Sources: []string{"ignored"}}
	if s.Pattern() != `{"source":["x"]}` {
		t.Errorf("Pattern() = %s, want the event pattern as given", s.Pattern())
	}
}

func TestSubscriptionSplitPattern(t *testing.T) {
	t.Parallel()
	built := BuildPattern([]string{"s1", "s2"}, []string{"D"})
	src, dt, p := splitPattern(built)
	if p != "" || !slices.Equal(src, []string{"s1", "s2"}) || !slices.Equal(dt, []string{"D"}) {
		t.Errorf("splitPattern(%s) = %v %v %q", built, src, dt, p)
	}
	for _, custom := range []string{
		`{"source":["s"],"detail":{"status":["paid"]}}`,
		`{"source":[{"prefix":"com."}]}`,
		`{"source":["b","a"]}`,
	} {
		if _, _, p := splitPattern(custom); p != custom {
			t.Errorf("splitPattern(%s) did not keep the pattern", custom)
		}
	}
}

func TestSubscriptionSameJSON(t *testing.T) {
	t.Parallel()
	if !SameJSON(`{"source": ["a"], "detail-type": ["b"]}`, `{"detail-type":["b"],"source":["a"]}`) {
		t.Error("documents differing in layout and key order compare different")
	}
	if SameJSON(`{"source":["a","b"]}`, `{"source":["b","a"]}`) {
		t.Error("arrays in another order compare equal")
	}
}

func TestSubscriptionRuleARN(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ bus, want string }{
		{"default", "arn:aws:events:eu-west-1:123456789012:rule/billing"},
		{"orders", "arn:aws:events:eu-west-1:123456789012:rule/orders/billing"},
	} {
		got, err := RuleARN(goldenQueue, c.bus, "billing")
		if err != nil || got != c.want {
			t.Errorf("RuleARN(%s) = %s, %v; want %s", c.bus, got, err, c.want)
		}
		bus, name, ok := ParseRuleARN(got)
		if !ok || bus != c.bus || name != "billing" {
			t.Errorf("ParseRuleARN(%s) = %s, %s, %v", got, bus, name, ok)
		}
	}
	if BusName("arn:aws:events:eu-west-1:123456789012:event-bus/orders") != "orders" || BusName("") != "default" || BusName("orders") != "orders" {
		t.Error("BusName does not resolve names and ARNs")
	}
}

func TestSubscriptionValidate(t *testing.T) {
	t.Parallel()
	ok := Spec{Name: "billing", Sources: []string{"com.example.orders"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a minimal spec is invalid: %v", err)
	}
	neg := int32(-1)
	for _, c := range []struct {
		edit        func(*Spec)
		field, text string
	}{
		{func(s *Spec) { s.Name = "" }, "Name", "is empty"},
		{func(s *Spec) { s.Name = "bad name" }, "Name", "do not allow"},
		{func(s *Spec) { s.Name = strings.Repeat("n", 65) }, "Name", "65 characters"},
		{func(s *Spec) { s.EventBus = "bad bus" }, "EventBus", `"bad bus"`},
		{func(s *Spec) { s.Sources = nil }, "Sources", "are empty"},
		{func(s *Spec) { s.Sources = []string{" "} }, "Sources", `" "`},
		{func(s *Spec) { s.DetailTypes = []string{""} }, "DetailTypes", `""`},
		{func(s *Spec) { s.Sources, s.EventPattern = nil, `not json` }, "EventPattern", "not valid JSON"},
		{func(s *Spec) { s.Sources, s.EventPattern = nil, `["a"]` }, "EventPattern", "not a JSON object"},
		{func(s *Spec) { s.Sources, s.EventPattern = nil, `{}` }, "EventPattern", "empty object"},
		{func(s *Spec) { s.Sources, s.EventPattern = nil, `{"source":"a"}` }, "EventPattern", "not an array"},
		{func(s *Spec) { s.Sources, s.EventPattern = nil, `{"detail":{"x":[]}}` }, "EventPattern", "empty array at detail.x"},
		{func(s *Spec) { s.EventPattern = `{"source":["a"]}` }, "EventPattern", "not both"},
		{func(s *Spec) { s.Queue.VisibilityTimeoutSeconds = &neg }, "Queue.VisibilityTimeoutSeconds", "is -1"},
		{func(s *Spec) { s.Queue.MessageRetentionSeconds = 59 }, "Queue.MessageRetentionSeconds", "is 59"},
		{func(s *Spec) { s.Queue.ReceiveWaitTimeSeconds = 21 }, "Queue.ReceiveWaitTimeSeconds", "is 21"},
		{func(s *Spec) { s.Queue.MaxReceiveCount = 1001 }, "Queue.MaxReceiveCount", "is 1001"},
		{func(s *Spec) { s.DeadLetter.MessageRetentionSeconds = 30 }, "DeadLetter.MessageRetentionSeconds", "is 30"},
		{func(s *Spec) { s.DeadLetter.MessageRetentionSeconds = 3600 }, "DeadLetter.MessageRetentionSeconds", "at least the queue's"},
		{func(s *Spec) { s.Tags = map[string]string{"AWS:x": "y"} }, "Tags", "reserved"},
		{func(s *Spec) { s.TopicARN = "orders" }, "TopicARN", `"orders"`},
		{func(s *Spec) { s.TopicARN, s.EventBus = goldenTopic, "orders" }, "EventBus", "no rule on a bus"},
		{func(s *Spec) { s.TopicARN, s.Sources, s.EventPattern = goldenTopic, nil, `{"source":["a"]}` }, "EventPattern", "filter policy"},
	} {
		s := ok
		c.edit(&s)
		err := s.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(err.Error(), c.text) || ve.Fix == "" {
			t.Errorf("Validate() = %v; want a problem of %s with %q and a fix", err, c.field, c.text)
		}
	}
}

const goldenTopic = "arn:aws:sns:eu-west-1:123456789012:orders.fifo"

// TestSubscriptionTopicNames: a subscription to a FIFO topic has FIFO
// queues, named with ".fifo", and the filter policy of its sources and
// detail types.
func TestSubscriptionTopicNames(t *testing.T) {
	t.Parallel()
	s := Spec{Name: "billing", TopicARN: goldenTopic, Sources: []string{"com.example.orders"}, DetailTypes: []string{"OrderChanged"}}.WithDefaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := s.Names(); n.Queue != "billing.fifo" || n.DeadLetterQueue != "billing-dlq.fifo" {
		t.Errorf("names %+v", n)
	}
	if q, d := queueAttributes(s, "dlq"), deadLetterAttributes(s); q[attrFIFO] != "true" || d[attrFIFO] != "true" {
		t.Errorf("queue %v, dead-letter queue %v: want FIFO queues", q, d)
	}
	if got := topicSubscriptionAttributes(s); got[attrRawDelivery] != "true" || got[attrFilterPolicy] != `{"detail-type":["OrderChanged"],"source":["com.example.orders"]}` {
		t.Errorf("subscription attributes %v", got)
	}
	standard := Spec{Name: "billing", TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"}
	if n := standard.Names(); n != NamesFor("billing") || queueAttributes(standard.WithDefaults(), "dlq")[attrFIFO] != "" {
		t.Errorf("a standard topic's subscription has names %+v", n)
	}
}
