package iamdifferential

import (
	"encoding/json"
	"fmt"
)

// operatorFamily is a family of condition operators with a condition key
// of their type, the policy's value and the request values to try.
type operatorFamily struct {
	operators []string
	// key is a single-valued key of the operators' type; setKey a
	// multivalued one for the set forms ("" to use key).
	key, setKey string
	policy      string
	values      []string
}

var operatorFamilies = []operatorFamily{
	{operators: []string{"StringEquals", "StringNotEquals", "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase"},
		key: "aws:PrincipalTag/team", setKey: "aws:TagKeys", policy: "billing", values: []string{"billing", "BILLING", "orders"}},
	{operators: []string{"StringLike", "StringNotLike"},
		key: "aws:PrincipalTag/team", setKey: "aws:TagKeys", policy: "bill*", values: []string{"billing", "bil", "orders"}},
	{operators: []string{"ArnEquals", "ArnLike", "ArnNotEquals", "ArnNotLike"},
		key: "aws:SourceArn", policy: "arn:aws:events:eu-west-1:123456789012:rule/bill*",
		values: []string{"arn:aws:events:eu-west-1:123456789012:rule/billing", "arn:aws:events:eu-west-1:123456789012:rule/orders"}},
	{operators: []string{"NumericEquals", "NumericNotEquals", "NumericLessThan", "NumericLessThanEquals", "NumericGreaterThan", "NumericGreaterThanEquals"},
		key: "aws:MultiFactorAuthAge", policy: "3600", values: []string{"100", "3600", "7200"}},
	{operators: []string{"DateEquals", "DateNotEquals", "DateLessThan", "DateLessThanEquals", "DateGreaterThan", "DateGreaterThanEquals"},
		key: "aws:CurrentTime", policy: "2026-12-04T00:00:00Z", values: []string{"2026-12-03T00:00:00Z", "2026-12-04T00:00:00Z", "2026-12-05T00:00:00Z"}},
	{operators: []string{"Bool"}, key: "aws:SecureTransport", policy: "true", values: []string{"true", "false"}},
	{operators: []string{"IpAddress", "NotIpAddress"}, key: "aws:SourceIp", policy: "10.0.0.0/8", values: []string{"10.1.2.3", "192.168.0.1"}},
	{operators: []string{"Null"}, key: "aws:PrincipalTag/team", setKey: "aws:TagKeys", policy: "true", values: []string{"billing"}},
	{operators: []string{"Null"}, key: "aws:PrincipalTag/team", setKey: "aws:TagKeys", policy: "false", values: []string{"billing"}},
	{operators: []string{"BinaryEquals"}, key: "aws:PrincipalTag/blob", policy: "QmluYXJ5", values: []string{"QmluYXJ5", "T3RoZXI="}},
}

// The forms of an operator.
var operatorForms = []struct{ prefix, suffix string }{
	{"", ""}, {"", "IfExists"}, {"ForAnyValue:", ""}, {"ForAllValues:", ""}, {"ForAnyValue:", "IfExists"}, {"ForAllValues:", "IfExists"},
}

// operatorCases are a policy allowing s3:GetObject under each operator in
// each form, and one denying it so, for a request with each value, none,
// and (set forms) an empty set and every value.
func operatorCases() []decisionCase {
	var out []decisionCase
	add := func(op, key, policy, what string, ctx map[string]string, sets map[string][]string) {
		cond := map[string]map[string]string{op: {key: policy}}
		for _, effect := range []string{"Allow", "Deny"} {
			// A Deny statement beside an unconditional Allow: the condition
			// decides between Allowed and ExplicitlyDenied.
			stmts := []map[string]any{{"Effect": effect, "Action": "s3:GetObject", "Resource": "*", "Condition": cond}}
			if effect == "Deny" {
				stmts = append(stmts, map[string]any{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"})
			}
			doc, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": stmts})
			out = append(out, decisionCase{name: fmt.Sprintf("%s %s {%s: %s} %s", effect, op, key, policy, what), identity: []string{string(doc)},
				principal: consumerRole, action: "s3:GetObject", resource: claimObject, context: ctx, sets: sets})
		}
	}
	for _, f := range operatorFamilies {
		for _, base := range f.operators {
			for _, form := range operatorForms {
				op := form.prefix + base + form.suffix
				key := f.key
				if form.prefix != "" && f.setKey != "" {
					key = f.setKey
				}
				add(op, key, f.policy, "missing", nil, nil)
				if form.prefix == "" || f.setKey == "" {
					// A single-valued key holds one value at most.
					for _, v := range f.values {
						add(op, key, f.policy, "= "+v, map[string]string{key: v}, nil)
					}
					continue
				}
				add(op, key, f.policy, "= []", nil, map[string][]string{key: {}})
				for _, v := range f.values {
					add(op, key, f.policy, "= ["+v+"]", nil, map[string][]string{key: {v}})
				}
				add(op, key, f.policy, fmt.Sprintf("= %v", f.values), nil, map[string][]string{key: f.values})
			}
		}
	}
	return out
}
