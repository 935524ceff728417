package provision

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every value outside its limit is reported, once per field, with the
// limit's fix; the reconciler's and the alarms' only when they are on.
func TestValidateLimits(t *testing.T) {
	t.Parallel()
	ttl := -48 * time.Hour
	s := Spec{
		Name:         "orders",
		Mapping:      MappingSpec{BatchSize: 20000},
		Relay:        FunctionSpec{MemorySize: 64},
		PublishedTTL: &ttl,
		Controls:     LambdaControls{ApplicationLogLevel: "LOUD"},
		Reconciler:   ReconcilerSpec{Disabled: true, Function: FunctionSpec{Timeout: 5000}},
		Alarms:       AlarmsSpec{EvaluationPeriods: 5000},
	}
	want := map[string]string{
		"Mapping.BatchSize":            "is 20000: use 1 to 10000",
		"Relay.MemorySize":             "is 64: use 128 to 10240 MB",
		"PublishedTTL":                 "is -2: use 0 (keep published items forever) or more days",
		"Controls.ApplicationLogLevel": `is "LOUD": use "TRACE", "DEBUG", "INFO", "WARN", "ERROR" or "FATAL"`,
	}
	err := s.Validate()
	got := map[string]string{}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ve *ValidationError
		if !errors.As(e, &ve) {
			t.Fatalf("%v is not a ValidationError", e)
		}
		if _, twice := got[ve.Field]; twice {
			t.Errorf("%s reported twice: %v", ve.Field, err)
		}
		got[ve.Field] = ve.Problem + ": " + ve.Fix
	}
	for field, msg := range want {
		if got[field] != msg {
			t.Errorf("%s: %q, want %q", field, got[field], msg)
		}
	}
	for field := range got {
		if strings.HasPrefix(field, "Reconciler.") || strings.HasPrefix(field, "Alarms.") {
			t.Errorf("%s is checked while off: %s", field, got[field])
		}
	}
}

// Every field of a limit is a field of Spec.
func TestLimitFieldsExist(t *testing.T) {
	t.Parallel()
	for field := range limits {
		if v := specField(reflect.ValueOf(Spec{}), field); !v.IsValid() {
			t.Errorf("%s is not a field of Spec", field)
		}
	}
}
