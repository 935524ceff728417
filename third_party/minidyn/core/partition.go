package core

import (
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"
)

// A Query names one partition: its key condition holds an equality on the
// partition (hash) key. The keys of one partition are neighbours in the
// table's and the indexes' B-trees, since a key string starts with the
// hash key's value, so a Query reads that range instead of every key.
// The candidates are still matched against the whole key condition: the
// range is a superset of the partition's items (a hash value containing
// "." shares the prefix), never a subset.

// equalityTerm finds "name = :value" and ":value = name" in a condition.
var equalityTerm = regexp.MustCompile(`(#?[A-Za-z0-9_.\-]+)\s*=\s*(:[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)\s*=\s*(#?[A-Za-z0-9_.\-]+)`)

// disjunction finds the words that would let a condition match outside one
// partition; a key condition allows neither, but then the whole key set is
// searched, as the interpreter decides.
var disjunction = regexp.MustCompile(`(?i)\b(OR|NOT)\b`)

// partitionValue returns the key-string form of the value the key
// condition gives the hash key of ks, if it gives one by equality.
func (t *Table) partitionValue(input QueryInput, ks keySchema) (string, bool) {
	cond := input.KeyConditionExpression
	if cond == "" || input.Scan || disjunction.MatchString(cond) {
		return "", false
	}

	for _, m := range equalityTerm.FindAllStringSubmatch(cond, -1) {
		name, placeholder := m[1], m[2]
		if name == "" {
			name, placeholder = m[4], m[3]
		}

		if alias, ok := input.Aliases[name]; ok {
			name = alias
		}

		if name != ks.HashKey {
			continue
		}

		val, ok := input.ExpressionAttributeValues[placeholder]
		if !ok || val == nil {
			return "", false
		}

		goVal, ok := getGoValue(val, t.AttributesDef[ks.HashKey])
		if !ok {
			return "", false
		}

		return fmt.Sprintf("%v", goVal), true
	}

	return "", false
}

// inPartition reports whether a key string belongs to the range of the
// partition whose hash key string is hash.
func inPartition(ks keySchema, hash, key string) bool {
	if ks.RangeKey == "" {
		return key == hash
	}

	return strings.HasPrefix(key, hash+".")
}

// partitionStart is the least key string of a partition's range.
func partitionStart(ks keySchema, hash string) string {
	if ks.RangeKey == "" {
		return hash
	}

	return hash + "."
}

// inOrder yields keys forward or in reverse.
func inOrder(keys []string, forward bool) iter.Seq[string] {
	if !forward {
		slices.Reverse(keys)
	}

	return slices.Values(keys)
}

// partitionKeys returns the table's primary keys in the partition's range,
// in search order.
func (t *Table) partitionKeys(hash string, forward bool) iter.Seq[string] {
	var keys []string

	t.keys.AscendGreaterOrEqual(partitionStart(t.KeySchema, hash), func(k string) bool {
		if !inPartition(t.KeySchema, hash, k) {
			return false
		}

		keys = append(keys, k)

		return true
	})

	return inOrder(keys, forward)
}

// partitionKeys returns the primary keys of the index's entries in the
// partition's range, in search order.
func (i *index) partitionKeys(hash string, forward bool) iter.Seq[string] {
	var keys []string

	i.entries.AscendGreaterOrEqual(indexEntry{indexKey: partitionStart(i.keySchema, hash)}, func(e indexEntry) bool {
		if !inPartition(i.keySchema, hash, e.indexKey) {
			return false
		}

		keys = append(keys, e.key)

		return true
	})

	return inOrder(keys, forward)
}
