package targetkind

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// samples are valid settings of every kind; a new kind adds its own.
var samples = map[Type]Settings{
	EventBridge: {Type: EventBridge, EventBus: "arn:aws:events:eu-west-1:123456789012:event-bus/orders"},
	SNS:         {Type: SNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"},
	SQS:         {Type: SQS, QueueARN: testQueue},
}

const testSubject validation.Subject = "test"

// TestKindsAreComplete: every registered kind has a sample, settings that
// name fields of Settings, a permission, and settings that survive the
// relay's environment and ForAddress unchanged.
func TestKindsAreComplete(t *testing.T) {
	t.Parallel()
	if got := Types(); got[0] != Default || len(got) != len(samples) {
		t.Fatalf("Types() = %v: want the default first and a sample of each kind", got)
	}
	for _, k := range Kinds() {
		s, ok := samples[k.Type()]
		if !ok {
			t.Fatalf("kind %s has no sample", k.Type())
		}
		for _, set := range k.Settings() {
			f, ok := reflect.TypeFor[Settings]().FieldByName(set.Field)
			if !ok || f.Type.Kind() != reflect.String {
				t.Errorf("%s: setting %s is no string field of Settings", k.Type(), set.Field)
			}
			if *set.Value(&s) != reflect.ValueOf(s).FieldByName(set.Field).String() {
				t.Errorf("%s: setting %s points at another field", k.Type(), set.Field)
			}
		}
		if p := k.Permission(); p.Sid == "" || len(p.Actions) == 0 {
			t.Errorf("%s: permission %+v", k.Type(), p)
		}
		if err := s.Validate(testSubject, "Target"); err != nil {
			t.Errorf("%s: the sample is invalid: %v", k.Type(), err)
		}
		env := s.Env()
		got, err := FromEnv(testSubject, func(name string) string { return env[name] })
		if err != nil || got != s.WithDefaults() {
			t.Errorf("%s: FromEnv(%v) = %+v, %v", k.Type(), env, got, err)
		}
		if got, err := ForAddress(s.Address()); err != nil || got != s {
			t.Errorf("%s: ForAddress(%s) = %+v, %v", k.Type(), s.Address(), got, err)
		}
		if k.ARN(s, Account{}) != s.Address() || s.Describe() != k.What()+" "+s.Address() {
			t.Errorf("%s: ARN %q, Describe %q", k.Type(), k.ARN(s, Account{}), s.Describe())
		}
	}
}

// TestValidateNamesTheField: a setting of another kind, and an invalid
// setting of the kind, are reported at Target.<Field>.
func TestValidateNamesTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s     Settings
		field string
		want  string
	}{
		{Settings{TopicARN: samples[SNS].TopicARN}, "Target.TopicARN", "is set for the eventbridge target"},
		{Settings{Type: SQS, QueueARN: testQueue, EventBus: "orders"}, "Target.EventBus", "is set for the sqs target"},
		{Settings{Type: SQS}, "Target.QueueARN", "is not set"},
		{Settings{Type: SNS, TopicARN: testQueue}, "Target.TopicARN", "not an SNS topic ARN"},
		{Settings{Type: "kinesis"}, "Target.Type", `use "eventbridge", "sns", "sqs"`},
	} {
		err := tc.s.Validate(testSubject, "Target")
		var ve *validation.Error
		if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v; want %s with %q", tc.s, err, tc.field, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	if s := (Settings{}).WithDefaults(); s != (Settings{Type: EventBridge, EventBus: DefaultEventBus, Envelope: outbox.FormatOutbox}) {
		t.Errorf("defaults %+v", s)
	}
	a := Account{Partition: "aws", Region: "eu-west-1", ID: "123456789012"}
	if got := (Settings{}).ARN(a); got != "arn:aws:events:eu-west-1:123456789012:event-bus/default" {
		t.Errorf("default ARN %s", got)
	}
	if got := (Settings{}).ARN(Account{}); got != "" {
		t.Errorf("ARN without account %q, want empty", got)
	}
}

func TestForAddressRefuses(t *testing.T) {
	t.Parallel()
	for _, a := range []string{"arn:aws:lambda:eu-west-1:123456789012:function:f", "arn:nope", "arn:aws:sqs:eu-west-1:1:q"} {
		if _, err := ForAddress(a); err == nil {
			t.Errorf("ForAddress(%s) accepted it", a)
		}
	}
	if !slices.Contains(strings.Split(Addresses(), " "), "queue") {
		t.Errorf("Addresses() = %q", Addresses())
	}
}

// TestKindLimitsAreTheContracts: every kind's limits are the record
// contract's for its name, which the writer checks events against.
func TestKindLimitsAreTheContracts(t *testing.T) {
	t.Parallel()
	for _, k := range Kinds() {
		want, ok := outbox.LimitsOf(string(k.Type()))
		if !ok || k.Limits() != want || want.MessageBytes == 0 {
			t.Errorf("%s: Limits %+v, the contract's %+v (%v)", k.Type(), k.Limits(), want, ok)
		}
	}
	if len(outbox.TargetLimits) != len(Kinds()) {
		t.Errorf("the contract has limits for %d kinds, %d are registered", len(outbox.TargetLimits), len(Kinds()))
	}
}
