package awsops

import (
	"encoding/json"
	"reflect"
	"strings"
)

// PolicyVersion is the version of the IAM policy language.
const PolicyVersion = "2012-10-17"

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
		panic("awsops: marshalling policy document: " + err.Error())
	}
	return string(b)
}

// SamePolicy reports whether two policy documents in JSON (as stored, or
// URL encoded by IAM and decoded by the caller) mean the same, ignoring
// layout and the single-value form of lists.
func SamePolicy(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(normalise(x), normalise(y))
}

// NormalisedPolicy is a decoded policy document with its one-element
// lists unwrapped (see SamePolicy).
func NormalisedPolicy(v any) any { return normalise(v) }

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

// KMSKeyStatement allows actions on a KMS key given by ARN, id, alias name
// or alias ARN (as an SQS queue's KmsMasterKeyId may be), in the partition,
// account and region of accountARN, another ARN of the same owner. IAM
// names a key only by its key ARN: an id becomes one, and an alias becomes
// the keys of that account and region that carry it, through the
// kms:ResourceAliases condition ("Specifying KMS keys in IAM policy
// statements" and "Use aliases to control access to KMS keys", AWS KMS
// developer guide).
func KMSKeyStatement(sid string, actions []string, key, accountARN string) Statement {
	st := Statement{Sid: sid, Effect: "Allow", Action: actions}
	p := strings.SplitN(accountARN, ":", 6)
	if len(p) != 6 {
		p = []string{"arn", "aws", "kms", "*", "*", ""}
	}
	inAccount := func(res string) string { return strings.Join([]string{"arn", p[1], "kms", p[3], p[4], res}, ":") }
	switch {
	case strings.HasPrefix(key, "arn:") && strings.Contains(key, ":alias/"):
		st.Resource = []string{inAccount("key/*")}
		st.Condition = map[string]map[string]string{"ForAnyValue:StringEquals": {"kms:ResourceAliases": key[strings.Index(key, ":alias/")+1:]}}
	case strings.HasPrefix(key, "arn:"):
		st.Resource = []string{key}
	case strings.HasPrefix(key, "alias/"):
		st.Resource = []string{inAccount("key/*")}
		st.Condition = map[string]map[string]string{"ForAnyValue:StringEquals": {"kms:ResourceAliases": key}}
	default:
		st.Resource = []string{inAccount("key/" + key)}
	}
	return st
}
