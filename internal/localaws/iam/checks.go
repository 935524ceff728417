package iam

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// The checks IAM makes of its parameters, and the readers of its awsQuery
// lists, tags and pages.

var (
	roleNameRE   = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	policyNameRE = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)
	pathRE       = regexp.MustCompile(`^/([\x21-\x7e]*/)?$`)
)

func checkName(field, v string, re *regexp.Regexp, maxLen int) *awsapi.Error {
	if v == "" {
		return validationError("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", field)
	}
	if len(v) > maxLen {
		return validationError("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", v, field, maxLen)
	}
	if !re.MatchString(v) {
		return validationError("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", v, field)
	}
	return nil
}

func checkPath(v string) *awsapi.Error {
	if len(v) > 512 || !pathRE.MatchString(v) {
		return validationError("The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	return nil
}

// checkDocument validates a policy document. trust requires principals;
// identity documents must not have them and need resources.
func checkDocument(doc string, trust bool) *awsapi.Error {
	if strings.TrimSpace(doc) == "" {
		return validationError("1 validation error detected: Value null at 'policyDocument' failed to satisfy constraint: Member must not be null")
	}
	p, err := iampolicy.Parse(doc)
	if err != nil {
		return malformedPolicy("Syntax errors in policy.")
	}
	for _, st := range p.Statements {
		if trust {
			if st.Principal == nil && st.NotPrincipal == nil {
				return malformedPolicy("Missing required field Principal.")
			}
			if st.HasResource {
				return malformedPolicy("Has prohibited field Resource.")
			}
			continue
		}
		if st.Principal != nil || st.NotPrincipal != nil {
			return malformedPolicy("Policy document should not specify a principal.")
		}
		if !st.HasResource {
			return malformedPolicy("Policy statement must contain resources.")
		}
	}
	return nil
}

// form helpers

func tagsFrom(f url.Values, prefix string) []tag {
	var out []tag
	for i := 1; ; i++ {
		k := f.Get(fmt.Sprintf("%s.member.%d.Key", prefix, i))
		if k == "" && !f.Has(fmt.Sprintf("%s.member.%d.Key", prefix, i)) {
			return out
		}
		out = append(out, tag{Key: k, Value: f.Get(fmt.Sprintf("%s.member.%d.Value", prefix, i))})
	}
}

func listFrom(f url.Values, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		key := fmt.Sprintf("%s.member.%d", prefix, i)
		if !f.Has(key) {
			return out
		}
		out = append(out, f.Get(key))
	}
}

func checkTags(tags []tag) *awsapi.Error {
	if len(tags) > 50 {
		return awsapi.NewError("LimitExceeded", "The number of tags has reached the maximum limit.")
	}
	for _, t := range tags {
		if !awsapi.TagWithinLimits(t.Key, t.Value) {
			return validationError("1 validation error detected: Value '%s' at 'tags.member.key' failed to satisfy constraint: Member must have length between 1 and 128", t.Key)
		}
	}
	return nil
}

// paginate applies Marker and MaxItems (default 100) to n items.
func paginate(f url.Values, n int) (start, end int, marker string, err *awsapi.Error) {
	start, ok := awsapi.IntParam(f, "Marker", 0, 0, n)
	if !ok {
		return 0, 0, "", validationError("Invalid Marker.")
	}
	maxItems, ok := awsapi.IntParam(f, "MaxItems", 100, 1, 1000)
	if !ok {
		return 0, 0, "", validationError("1 validation error detected: Value '%s' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 1000", f.Get("MaxItems"))
	}
	end = min(start+maxItems, n)
	if end < n {
		marker = strconv.Itoa(end)
	}
	return start, end, marker, nil
}
