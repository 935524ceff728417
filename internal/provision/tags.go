package provision

import (
	"errors"
	"maps"
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

// isValidation reports whether err is a validation error whose message
// contains text.
func isValidation(err error, text string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && strings.Contains(ae.ErrorMessage(), text)
}
