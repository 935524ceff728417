package awsops

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// SortedKeys returns the keys of m, sorted.
func SortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// TagDiff returns the tags to set and the keys to remove, sorted, to go
// from have to want. Keys in the reserved aws: prefix (in any case) are
// never removed.
func TagDiff(have, want map[string]string) (set map[string]string, remove []string) {
	set = map[string]string{}
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			set[k] = v
		}
	}
	for _, k := range SortedKeys(have) {
		if _, ok := want[k]; !ok && !strings.HasPrefix(strings.ToLower(k), "aws:") {
			remove = append(remove, k)
		}
	}
	return set, remove
}

// TagMap returns tags, the tag structures of any AWS service, as a map:
// kv returns a tag's key and value.
func TagMap[T any](tags []T, kv func(T) (key, value *string)) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		k, v := kv(t)
		m[aws.ToString(k)] = aws.ToString(v)
	}
	return m
}

// SyncTags brings a resource's tags from have to want (TagDiff): untag
// removes the keys to remove, tag sets the tags to set. Each is called only
// when it has something to do.
func SyncTags(ctx context.Context, have, want map[string]string,
	untag func(context.Context, []string) error, tag func(context.Context, map[string]string) error) error {
	set, remove := TagDiff(have, want)
	if len(remove) > 0 {
		if err := untag(ctx, remove); err != nil {
			return err
		}
	}
	if len(set) > 0 {
		return tag(ctx, set)
	}
	return nil
}

// TagList returns tags as the tag structures of an AWS service, sorted by
// key: tag makes one from a key and a value.
func TagList[T any](tags map[string]string, tag func(key, value *string) T) []T {
	var out []T
	for _, k := range SortedKeys(tags) {
		out = append(out, tag(aws.String(k), aws.String(tags[k])))
	}
	return out
}

// WithTag returns a copy of tags (nil for none) with key set to value: the
// tags of a component, the user's and the one naming what it belongs to.
func WithTag(tags map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(tags)+1)
	maps.Copy(out, tags)
	out[key] = value
	return out
}
