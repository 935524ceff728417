package pipeline

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/aws/smithy-go"
)

// tags returns the tags of every tagged component: Spec.Tags and the
// pipeline's name.
func (s Spec) tags() map[string]string {
	out := maps.Clone(s.Tags)
	if out == nil {
		out = map[string]string{}
	}
	out[TagPipeline] = s.Name
	return out
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// tagDiff returns the tags to set and the keys to remove to go from have to
// want.
func tagDiff(have, want map[string]string) (set map[string]string, remove []string) {
	set = map[string]string{}
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			set[k] = v
		}
	}
	for _, k := range sortedKeys(have) {
		if _, ok := want[k]; !ok && !strings.HasPrefix(k, "aws:") {
			remove = append(remove, k)
		}
	}
	return set, remove
}

// isValidation reports whether err is a validation error whose message
// contains text.
func isValidation(err error, text string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && strings.Contains(ae.ErrorMessage(), text)
}
