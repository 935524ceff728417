package validation

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	const pipeline Subject = "outbox pipeline"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"formatted problem", pipeline.Invalid("Mapping.BatchSize", "use 1 to 10000", "is %d", 0),
			"outbox pipeline Mapping.BatchSize is 0: use 1 to 10000"},
		{"against related fields", pipeline.InvalidAgainst("Relay.Timeout", []string{"Mapping.MaximumBatchingWindow"}, "raise it", "is %s", "3s"),
			"outbox pipeline Relay.Timeout is 3s: raise it"},
		{"with a value", Subject("relay configuration").InvalidValue("OUTBOX_TARGET", "kinesis", "is not a known target", `use "eventbridge" or "sns"`),
			`relay configuration OUTBOX_TARGET="kinesis" is not a known target: use "eventbridge" or "sns"`},
		{"empty value left out", Subject("relay configuration").InvalidValue("OUTBOX_TABLE_NAME", "", "is not set", "set it"),
			"relay configuration OUTBOX_TABLE_NAME is not set: set it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			var e *Error
			if !errors.As(tt.err, &e) {
				t.Fatalf("%T is not an *Error", tt.err)
			}
		})
	}
}

func TestInvalidAgainstKeepsRelated(t *testing.T) {
	t.Parallel()
	var e *Error
	err := Subject("s").InvalidAgainst("A", []string{"B", "C"}, "fix", "is wrong")
	if !errors.As(err, &e) || len(e.Related) != 2 || e.Related[0] != "B" || e.Related[1] != "C" {
		t.Errorf("Related = %v, want [B C]", e.Related)
	}
}

func TestTags(t *testing.T) {
	t.Parallel()
	const s Subject = "outbox pipeline"
	tests := []struct {
		tags map[string]string
		want string // "" means valid
	}{
		{map[string]string{"team": "billing", "Name": ""}, ""},
		{map[string]string{"": "x"}, `outbox pipeline Tags has the key "": use keys of 1 to 128 characters`},
		{map[string]string{strings.Repeat("k", 129): "x"}, "use keys of 1 to 128 characters"},
		{map[string]string{"AWS:owner": "x"}, `Tags has the key "AWS:owner": remove the key: the "aws:" prefix is reserved by AWS`},
		{map[string]string{"team": strings.Repeat("v", 257)}, `has a value of 257 characters for "team": use values of at most 256 characters`},
		{map[string]string{"b": strings.Repeat("v", 257), "a": ""}, `for "b"`},
	}
	for _, tt := range tests {
		err := s.Tags("Tags", tt.tags)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Tags(%v) = %v, want nil", tt.tags, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Tags(%v) = %v, want %q", tt.tags, err, tt.want)
		}
	}
}
