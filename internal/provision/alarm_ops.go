package provision

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// The alarms as a component: ensure, read, delete and look up.

// describeAlarms returns the metric alarms that exist among names, by name.
func (c *Pipeline) describeAlarms(ctx context.Context, names []string) (map[string]types.MetricAlarm, error) {
	out := map[string]types.MetricAlarm{}
	if len(names) == 0 {
		return out, nil
	}
	p := cloudwatch.NewDescribeAlarmsPaginator(c.CloudWatch, &cloudwatch.DescribeAlarmsInput{
		AlarmNames: names, AlarmTypes: []types.AlarmType{types.AlarmTypeMetricAlarm},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range page.MetricAlarms {
			out[aws.ToString(a.AlarmName)] = a
		}
	}
	return out, nil
}

// ensureAlarms creates or updates the alarms that s asks for and deletes
// the recorded ones it no longer asks for.
func (c *Pipeline) ensureAlarms(ctx context.Context, s Spec, st *State) error {
	defs := AlarmDefinitions(s)
	wanted := map[string]bool{}
	var names []string
	for _, d := range defs {
		wanted[d.Key] = true
		names = append(names, d.Name)
	}
	var stale []string
	for _, k := range AlarmKeys {
		if !wanted[k] && st.Alarms.get(k) != "" {
			stale = append(stale, k)
		}
	}
	if err := c.deleteAlarms(ctx, st, stale...); err != nil {
		return err
	}
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("reading alarms (%s): %w", strings.Join(names, ", "), err)
	}
	tags := s.tags()
	for _, d := range defs {
		a, exists := have[d.Name]
		known := st.Alarms.get(d.Key) != ""
		switch {
		case exists && !known:
			return fmt.Errorf("creating alarm (%s): an alarm of that name already exists: delete it or choose another pipeline name", d.Name)
		case !exists:
			if _, err := c.CloudWatch.PutMetricAlarm(ctx, d.input(tags)); err != nil {
				return fmt.Errorf("creating alarm (%s): %w", d.Name, err)
			}
			created, err := c.describeAlarms(ctx, []string{d.Name})
			if err != nil {
				return fmt.Errorf("reading alarm (%s) after creating it: %w", d.Name, err)
			}
			if created[d.Name].AlarmArn == nil {
				return fmt.Errorf("reading alarm (%s) after creating it: CloudWatch does not describe it", d.Name)
			}
			st.Alarms.set(d.Key, aws.ToString(created[d.Name].AlarmArn))
		default:
			st.Alarms.set(d.Key, aws.ToString(a.AlarmArn))
			if len(d.diff(a)) > 0 {
				// PutMetricAlarm replaces the whole configuration; its tags
				// apply only to a new alarm.
				if _, err := c.CloudWatch.PutMetricAlarm(ctx, d.input(nil)); err != nil {
					return fmt.Errorf("updating alarm (%s): %w", d.Name, err)
				}
			}
			if err := c.syncAlarmTags(ctx, aws.ToString(a.AlarmArn), tags); err != nil {
				return fmt.Errorf("tagging alarm (%s): %w", d.Name, err)
			}
		}
	}
	return nil
}

func cloudWatchTag(k, v *string) types.Tag { return types.Tag{Key: k, Value: v} }

func (c *Pipeline) syncAlarmTags(ctx context.Context, arn string, want map[string]string) error {
	out, err := c.CloudWatch.ListTagsForResource(ctx, &cloudwatch.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
	if err != nil {
		return err
	}
	have := awsops.TagMap(out.Tags, func(t types.Tag) (*string, *string) { return t.Key, t.Value })
	return awsops.SyncTags(ctx, have, want, func(ctx context.Context, keys []string) error {
		_, err := c.CloudWatch.UntagResource(ctx, &cloudwatch.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := c.CloudWatch.TagResource(ctx, &cloudwatch.TagResourceInput{ResourceARN: aws.String(arn), Tags: awsops.TagList(set, cloudWatchTag)})
		return err
	})
}

// deleteAlarms deletes the recorded alarms of keys (every alarm when none
// is given); alarms already gone are skipped.
func (c *Pipeline) deleteAlarms(ctx context.Context, st *State, keys ...string) error {
	if len(keys) == 0 {
		keys = AlarmKeys
	}
	n := NamesFor(st.Name)
	var names []string
	for _, k := range keys {
		if st.Alarms.get(k) != "" {
			names = append(names, n.Alarm(k))
		}
	}
	if len(names) == 0 {
		return nil
	}
	// DeleteAlarms fails as a whole when one of the names does not exist.
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("deleting alarms (%s): %w", strings.Join(names, ", "), err)
	}
	var existing []string
	for _, name := range names {
		if _, ok := have[name]; ok {
			existing = append(existing, name)
		}
	}
	if len(existing) > 0 {
		_, err := c.CloudWatch.DeleteAlarms(ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: existing})
		if err := awsops.IgnoreNotFound(err); err != nil {
			return fmt.Errorf("deleting alarms (%s): %w", strings.Join(existing, ", "), err)
		}
	}
	for _, k := range keys {
		st.Alarms.set(k, "")
	}
	return nil
}

// readAlarms records the drift of the alarms: missing, changed, not
// recorded although s asks for them, or recorded although it does not.
func (c *Pipeline) readAlarms(ctx context.Context, s Spec, st *State, d *Drift) error {
	n := NamesFor(st.Name)
	var names []string
	for _, k := range AlarmKeys {
		if st.Alarms.get(k) != "" {
			names = append(names, n.Alarm(k))
		}
	}
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("reading alarms (%s): %w", strings.Join(names, ", "), err)
	}
	defs := map[string]AlarmDefinition{}
	for _, def := range AlarmDefinitions(s) {
		defs[def.Key] = def
	}
	for _, k := range AlarmKeys {
		def, wanted := defs[k]
		if st.Alarms.get(k) == "" {
			if wanted {
				d.AddMissing(AlarmComponent(k))
			}
			continue
		}
		a, ok := have[n.Alarm(k)]
		switch {
		case !ok:
			st.Alarms.set(k, "")
			if wanted {
				d.AddMissing(AlarmComponent(k))
			}
		case !wanted:
			st.Alarms.set(k, aws.ToString(a.AlarmArn))
			d.AddChanged(AlarmComponent(k), "disabled")
		default:
			st.Alarms.set(k, aws.ToString(a.AlarmArn))
			d.AddChanged(AlarmComponent(k), def.diff(a)...)
		}
	}
	return nil
}

// lookupAlarms records the pipeline's existing alarms in st and their
// settings in s, for import.
func (c *Pipeline) lookupAlarms(ctx context.Context, s *Spec, st *State) error {
	n := NamesFor(s.Name)
	var names []string
	for _, k := range AlarmKeys {
		names = append(names, n.Alarm(k))
	}
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("reading alarms (%s): %w", strings.Join(names, ", "), err)
	}
	a := AlarmsSpec{}
	for _, k := range AlarmKeys {
		m, ok := have[n.Alarm(k)]
		if !ok {
			continue
		}
		a.Enabled = true
		st.Alarms.set(k, aws.ToString(m.AlarmArn))
		if len(m.AlarmActions) > 0 {
			a.SNSTopicARN = m.AlarmActions[0]
		}
		a.TreatMissingData = aws.ToString(m.TreatMissingData)
		threshold := aws.ToFloat64(m.Threshold)
		switch k {
		case AlarmRelayErrors:
			a.RelayErrorsThreshold = int32(threshold)
			a.EvaluationPeriods = aws.ToInt32(m.EvaluationPeriods)
		case AlarmIteratorAge:
			a.IteratorAgeThresholdSeconds = int32(threshold / 1000)
		case AlarmOldestPendingAge:
			a.OldestPendingAgeThresholdSeconds = int32(threshold)
		}
	}
	s.Alarms = a
	return nil
}
