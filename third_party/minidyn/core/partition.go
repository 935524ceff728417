package core

import (
	"iter"
	"regexp"
	"strings"

	"github.com/google/btree"
)

// A Query names one partition: its key condition holds an equality on the
// partition (hash) key. The items of one partition are neighbours in the
// table's and the indexes' B-trees, whose order strings (order.go) start
// with the encoded hash key, so a Query reads that range instead of every
// key, in DynamoDB's order, and a Query resumed after ExclusiveStartKey
// starts where that key's item is or would be. The candidates are still
// matched against the whole key condition.

// equalityTerm finds "name = :value" and ":value = name" in a condition.
var equalityTerm = regexp.MustCompile(`(#?[A-Za-z0-9_.\-]+)\s*=\s*(:[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)\s*=\s*(#?[A-Za-z0-9_.\-]+)`)

// disjunction finds the words that would let a condition match outside one
// partition; a key condition allows neither, but then the whole key set is
// searched, as the interpreter decides.
var disjunction = regexp.MustCompile(`(?i)\b(OR|NOT)\b`)

// partitionValue returns the order prefix (order.go) of the partition the
// key condition names by an equality on the hash key of ks, if it does.
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

		typ := t.AttributesDef[ks.HashKey]
		if _, ok := getGoValue(val, typ); !ok {
			return "", false
		}

		return partitionOrder(val, typ), true
	}

	return "", false
}

// ordered is an entry of a B-tree ordered by order string.
type ordered interface {
	keyEntry | indexEntry
	ordering() keyEntry
}

func (e keyEntry) ordering() keyEntry   { return e }
func (e indexEntry) ordering() keyEntry { return keyEntry{order: e.order, key: e.key} }

// partitionKeys yields the key strings of the partition's items in tree, in
// search order, after the item whose order string is after when it is set
// (whether that item is still there or not); at makes the tree's pivot for
// an order string.
func partitionKeys[T ordered](tree *btree.BTreeG[T], at func(order string) T, prefix, after string, forward bool) iter.Seq[string] {
	return func(yield func(string) bool) {
		visit := func(e T) bool {
			k := e.ordering()
			if !strings.HasPrefix(k.order, prefix) {
				return false
			}

			return k.order == after || yield(k.key)
		}

		switch {
		case forward && after == "":
			tree.AscendGreaterOrEqual(at(prefix), visit)
		case forward:
			tree.AscendGreaterOrEqual(at(after), visit)
		case after == "":
			tree.DescendLessOrEqual(at(partitionEnd(prefix)), visit)
		default:
			tree.DescendLessOrEqual(at(after), visit)
		}
	}
}
