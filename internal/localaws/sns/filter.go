package sns

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/eventpattern"
)

// Subscription filter policies, as the SNS Developer Guide documents them:
// a FilterPolicy is matched against the message attributes
// (FilterPolicyScope MessageAttributes, the default) or against the
// message body, a JSON object (MessageBody). The policy syntax (exact
// values, prefix, suffix, anything-but, numeric, exists, equals-ignore-case,
// $or) is the one EventBridge patterns share, and eventpattern matches it.
// A message the policy does not match is not delivered to the
// subscription.

const (
	scopeAttributes = "MessageAttributes"
	scopeBody       = "MessageBody"
)

// filter is a subscription's compiled filter policy and its scope.
type filter struct {
	pattern *eventpattern.Pattern
	body    bool
}

// compileFilter compiles the filter policy of a subscription's attributes;
// nil when it has none.
func compileFilter(attrs map[string]string) (*filter, error) {
	policy := attrs["FilterPolicy"]
	scope := attrs["FilterPolicyScope"]
	if scope != "" && scope != scopeAttributes && scope != scopeBody {
		return nil, errInvalid("Invalid parameter: FilterPolicyScope: Invalid value [%s]. Please use either MessageBody or MessageAttributes", scope)
	}
	if policy == "" {
		return nil, nil
	}
	if scope != scopeBody && nested(policy) {
		return nil, errInvalid("Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy")
	}
	p, err := eventpattern.Compile(policy)
	if err != nil {
		reason := err.Error()
		var pe *eventpattern.Error
		if errors.As(err, &pe) {
			reason = pe.Reason
		}
		return nil, errInvalid("Invalid parameter: FilterPolicy: %s", reason)
	}
	return &filter{pattern: p, body: scope == scopeBody}, nil
}

// nested reports whether a policy has a key whose value is an object (but
// $or's): message attributes are flat, only a body has nested keys.
func nested(policy string) bool {
	var m map[string]any
	if json.Unmarshal([]byte(policy), &m) != nil {
		return false // Compile reports it
	}
	for k, v := range m {
		if _, isObject := v.(map[string]any); isObject && k != "$or" {
			return true
		}
	}
	return false
}

// matches reports whether the message passes the filter; a nil filter
// passes everything.
func (f *filter) matches(m outgoing) bool {
	if f == nil {
		return true
	}
	if f.body {
		return f.pattern.Matches([]byte(m.message))
	}
	return f.pattern.MatchesValue(attributeValues(m.attrs))
}

// attributeValues is the message attributes as the filter policy sees
// them: strings, numbers, and the elements of String.Array values; binary
// attributes are not matched.
func attributeValues(attrs map[string]Attribute) map[string]any {
	out := make(map[string]any, len(attrs))
	for k, a := range attrs {
		switch {
		case a.DataType == "String.Array":
			var arr []any
			if json.Unmarshal([]byte(a.StringValue), &arr) == nil {
				out[k] = arr
			}
		case strings.HasPrefix(a.DataType, "Number"):
			if n, err := strconv.ParseFloat(a.StringValue, 64); err == nil {
				out[k] = n
			}
		case strings.HasPrefix(a.DataType, "String"):
			out[k] = a.StringValue
		}
	}
	return out
}

// defaultFilterScope gives a subscription with a filter policy and no
// scope the default scope, MessageAttributes, as GetSubscriptionAttributes
// reports it.
func defaultFilterScope(attrs map[string]string) {
	if attrs["FilterPolicy"] != "" && attrs["FilterPolicyScope"] == "" {
		attrs["FilterPolicyScope"] = scopeAttributes
	}
}
