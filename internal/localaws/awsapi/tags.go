package awsapi

import (
	"slices"
	"strings"
)

// Tag is one tag, as the services' JSON and Query forms spell it.
type Tag struct{ Key, Value string }

// MergeTags returns old with add applied, as TagResource does: a key
// already there takes the new value, a new key is appended.
func MergeTags(old, add []Tag) []Tag {
	out := slices.Clone(old)
	for _, t := range add {
		if i := slices.IndexFunc(out, func(o Tag) bool { return o.Key == t.Key }); i >= 0 {
			out[i].Value = t.Value
		} else {
			out = append(out, t)
		}
	}
	return out
}

// MergedLen is how many tags tags would hold with add applied, as
// TagResource applies them: a key already there takes the new value.
func MergedLen(tags, add map[string]string) int {
	n := len(tags)
	for k := range add {
		if _, ok := tags[k]; !ok {
			n++
		}
	}
	return n
}

// Untag removes keys from tags, as UntagResource does: a key not there
// is ignored.
func Untag(tags map[string]string, keys []string) {
	for _, k := range keys {
		delete(tags, k)
	}
}

// TagWithinLimits reports whether a tag's key is 1 to 128 characters long
// and its value at most 256, as AWS requires of tags.
func TagWithinLimits(key, value string) bool {
	return key != "" && len(key) <= 128 && len(value) <= 256
}

// TagMap returns tags as a map. A tag not within the limits of
// TagWithinLimits is refused with the error that invalid returns for it.
func TagMap(tags []Tag, invalid func(Tag) *Error) (map[string]string, error) {
	m := map[string]string{}
	for _, t := range tags {
		if !TagWithinLimits(t.Key, t.Value) {
			return nil, invalid(t)
		}
		m[t.Key] = t.Value
	}
	return m, nil
}

// TagList returns m as tags sorted by key.
func TagList(m map[string]string) []Tag {
	out := make([]Tag, 0, len(m))
	for k, v := range m {
		out = append(out, Tag{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b Tag) int { return strings.Compare(a.Key, b.Key) })
	return out
}
