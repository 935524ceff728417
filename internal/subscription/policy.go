package subscription

import (
	"encoding/json"
	"reflect"
)

// PolicyDocument is an IAM policy document.
type PolicyDocument struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Statement is one statement of a PolicyDocument.
type Statement struct {
	Sid       string                       `json:"Sid,omitempty"`
	Effect    string                       `json:"Effect"`
	Principal map[string]string            `json:"Principal,omitempty"`
	Action    []string                     `json:"Action"`
	Resource  []string                     `json:"Resource,omitempty"`
	Condition map[string]map[string]string `json:"Condition,omitempty"`
}

// JSON returns the document as indented JSON.
func (d PolicyDocument) JSON() string {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		panic("subscription: marshalling policy document: " + err.Error())
	}
	return string(b)
}

// QueuePolicy is the queue's resource policy: EventBridge may send to the
// queue on behalf of the subscription's rule, and of nothing else.
func QueuePolicy(queueARN, ruleARN string) PolicyDocument {
	return PolicyDocument{Version: queuePolicyVersion, Statement: []Statement{{
		Sid:       queuePolicySid,
		Effect:    "Allow",
		Principal: map[string]string{"Service": eventBridgeServicePrincipal},
		Action:    []string{"sqs:SendMessage"},
		Resource:  []string{queueARN},
		Condition: map[string]map[string]string{"ArnEquals": {"aws:SourceArn": ruleARN}},
	}}}
}

// RuleARNOfPolicy returns the rule that a queue policy written by
// QueuePolicy lets send, or "".
func RuleARNOfPolicy(policy string) string {
	var d struct {
		Statement []struct {
			Sid       string                    `json:"Sid"`
			Condition map[string]map[string]any `json:"Condition"`
		} `json:"Statement"`
	}
	if json.Unmarshal([]byte(policy), &d) != nil {
		return ""
	}
	for _, st := range d.Statement {
		if st.Sid != queuePolicySid {
			continue
		}
		for _, op := range []string{"ArnEquals", "ArnLike", "StringEquals"} {
			if s, ok := st.Condition[op]["aws:SourceArn"].(string); ok {
				return s
			}
		}
	}
	return ""
}

// samePolicy reports whether two policy documents mean the same, ignoring
// layout and the single-value form of lists.
func samePolicy(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(normalise(x), normalise(y))
}

// normalise turns one-element lists into their element, so that "Action":
// "x" and "Action": ["x"] compare equal.
func normalise(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalise(e)
		}
		return out
	case []any:
		if len(t) == 1 {
			return normalise(t[0])
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}
