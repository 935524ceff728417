package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// targetAttr is the attribute of the target object that chooses one kind
// of package target and holds where it publishes (the kind's first
// setting). The schema, the mapping both ways and the plan go through
// targetAttrs: a new kind is one row, and one field of TargetModel.
type targetAttr struct {
	name string
	kind targetkind.Type
	desc string
	// placeholder stands for a value unknown at plan, so that the rest of
	// the configuration can be validated; "" for a kind with a default.
	placeholder string
	value       func(t *TargetModel) *types.String
}

var targetAttrs = []targetAttr{
	{name: "event_bus", kind: targetkind.EventBridge,
		desc:  "Name or ARN of the EventBridge bus. Defaults to `default`.",
		value: func(t *TargetModel) *types.String { return &t.EventBus }},
	{name: "topic_arn", kind: targetkind.SNS, placeholder: placeholderTopicARN,
		desc: "ARN of an SNS topic, standard or FIFO (`.fifo`). The message is the published event's JSON, with `source` and `detail-type` as message attributes; " +
			"to a FIFO topic, the message group is the event's ordering key (`outboxOrderingKey`), or for an event written without one the item's partition key (on a dedicated table the event's own key, so that each such event is a group of its own and no two keep an order), and the deduplication id is its event id. A key's events arrive in the order written only with `ordering.enabled` and events written with an ordering key. Unset, the pipeline publishes to `event_bus`.",
		value: func(t *TargetModel) *types.String { return &t.TopicARN }},
	{name: "queue_arn", kind: targetkind.SQS, placeholder: "arn:aws:sqs:us-east-1:123456789012:unknown-until-apply",
		desc: "ARN of an SQS queue, standard or FIFO (`.fifo`), sent to with `SendMessageBatch`. The message body is the published event's JSON, as on SNS, with `source` and `detail-type` as message attributes; " +
			"to a FIFO queue, the message group is the event's ordering key (`outboxOrderingKey`), or for an event written without one the item's partition key (on a dedicated table the event's own key, so that each such event is a group of its own and no two keep an order), and the deduplication id is its event id. A key's events arrive in the order written only with `ordering.enabled` and events written with an ordering key. Unset, the pipeline publishes to `event_bus`.",
		value: func(t *TargetModel) *types.String { return &t.QueueARN }},
}

// targetAttribute is the target object.
func targetAttribute() schema.SingleNestedAttribute {
	attrs := map[string]schema.Attribute{}
	for i, a := range targetAttrs {
		var others []string
		var conflicts []path.Expression
		for j, o := range targetAttrs {
			if j != i {
				others = append(others, "`"+o.name+"`")
			}
			if j > i {
				conflicts = append(conflicts, path.MatchRelative().AtParent().AtName(o.name))
			}
		}
		var v []validator.String
		if len(conflicts) > 0 {
			v = append(v, stringvalidator.ConflictsWith(conflicts...))
		}
		attrs[a.name] = optionalStringAttr(a.desc+" Conflicts with "+joinWords(others)+".", v...)
	}
	attrs["envelope"] = stringSetting("The format of every event the relay publishes, on every kind, {limit}: `outbox`, the outbox's own " +
		"(the detail `{\"metadata\":{\"eventId\":...},\"data\":...}`, on SNS and SQS inside an EventBridge-style envelope), or `cloudevents`, " +
		"a CloudEvents 1.0 event in structured JSON mode (`id` the event id, `subject` the aggregate, the `sequence` and `partitionkey` extensions " +
		"for ordered events, `dataref` for a claim check, `traceparent` for a traced one). EventBridge's `source` and `detail-type` and the message " +
		"attributes are the same in either. See the record contract guide.")
	return defaultedObject("Where the relay publishes: an EventBridge bus (`event_bus`, the account's `default` bus when no attribute is set), an SNS topic (`topic_arn`) or an SQS queue (`queue_arn`); standard or FIFO for the topic and the queue.", attrs)
}

// joinWords joins words as "a, b and c".
func joinWords(w []string) string {
	switch len(w) {
	case 0:
		return ""
	case 1:
		return w[0]
	}
	out := w[0]
	for _, x := range w[1 : len(w)-1] {
		out += ", " + x
	}
	return out + " and " + w[len(w)-1]
}

// spec maps the target object: the kind of the attribute that is set; nil
// or without any, the default kind.
func (t *TargetModel) spec(o specOptions) provision.TargetSpec {
	s := provision.TargetSpec{Type: targetkind.Default}
	if t == nil {
		return s
	}
	for _, a := range targetAttrs {
		v := *a.value(t)
		if v.IsNull() {
			continue
		}
		if a.kind != targetkind.Default || s.Type == targetkind.Default {
			s.Type = a.kind
		}
		set := settingOf(a.kind)
		*set.Value(&s) = str(v)
		if o.validating && v.IsUnknown() {
			*set.Value(&s) = a.placeholder
		}
	}
	if !t.Envelope.IsUnknown() {
		s.Envelope = outbox.Format(str(t.Envelope))
	}
	return s
}

// settingOf is the first setting of kind: where it publishes.
func settingOf(kind targetkind.Type) targetkind.Setting {
	k, _ := targetkind.Lookup(kind)
	return k.Settings()[0]
}

// targetModelFromSpec is the target object of s (with its defaults): the
// attribute of its kind, null where it holds the default.
func targetModelFromSpec(s provision.TargetSpec) *TargetModel {
	m := &TargetModel{}
	for _, a := range targetAttrs {
		v := types.StringNull()
		set := settingOf(a.kind)
		if a.kind == s.Type && s.Address() != set.Default {
			v = types.StringValue(s.Address())
		}
		*a.value(m) = v
	}
	m.Envelope = types.StringValue(string(s.WithDefaults().Envelope))
	return m
}

// targetKnown reports whether the kind and address of t are known at plan.
func targetKnown(t *TargetModel) bool {
	if t == nil {
		return true
	}
	for _, a := range targetAttrs {
		if a.value(t).IsUnknown() {
			return false
		}
	}
	return true
}
