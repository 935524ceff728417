package core

import (
	"iter"
	"maps"
	"time"

	"github.com/google/btree"

	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/types"
)

type indexType string

const (
	indexTypeGlobal indexType = "global"
	indexTypeLocal  indexType = "local"
)

// indexEntry is one item in a secondary index: its order string (order.go)
// of the index's keys, then the table's, its index key and its primary key.
// Entries are ordered by order string, which is DynamoDB's order of the
// index's items.
type indexEntry struct {
	order, indexKey, key string
}

func lessEntry(a, b indexEntry) bool {
	if a.order != b.order {
		return a.order < b.order
	}

	return a.key < b.key
}

func newEntrySet() *btree.BTreeG[indexEntry] {
	return btree.NewG(btreeDegree, lessEntry)
}

type index struct {
	keySchema  keySchema
	entries    *btree.BTreeG[indexEntry] // the indexed items in search order
	typ        indexType
	projection *types.Projection
	Table      *Table
	refs       map[string]indexEntry // primary key -> entry of each indexed item
	createdAt  time.Time
}

func newIndex(t *Table, typ indexType, ks keySchema) *index {
	ks.Secondary = true

	return &index{
		keySchema: ks,
		entries:   newEntrySet(),
		typ:       typ,
		Table:     t,
		refs:      map[string]indexEntry{},
	}
}

func (i *index) Clear() {
	i.entries = newEntrySet()
	i.refs = map[string]indexEntry{}
}

type indexSnapshot struct {
	entries *btree.BTreeG[indexEntry]
	refs    map[string]indexEntry
}

func (i *index) snapshot() indexSnapshot {
	refs := make(map[string]indexEntry, len(i.refs))
	maps.Copy(refs, i.refs)

	return indexSnapshot{entries: i.entries.Clone(), refs: refs}
}

func (i *index) restore(s indexSnapshot) {
	i.entries = s.entries
	i.refs = s.refs
}

// ProjectItem returns the attributes visible through this index's projection (ALL, KEYS_ONLY, INCLUDE).
// For ALL or unknown types, it returns a full shallow copy of the item.
func (i *index) ProjectItem(item map[string]*types.Item) map[string]*types.Item {
	if i == nil || i.projection == nil {
		return copyItem(item)
	}

	pt := ""
	if i.projection.ProjectionType != nil {
		pt = *i.projection.ProjectionType
	}

	switch pt {
	case "", "ALL":
		return copyItem(item)
	case "KEYS_ONLY":
		return i.projectKeysOnly(item)
	case "INCLUDE":
		return i.projectInclude(item)
	default:
		return copyItem(item)
	}
}

func (i *index) projectKeysOnly(item map[string]*types.Item) map[string]*types.Item {
	out := make(map[string]*types.Item)
	maps.Copy(out, i.Table.KeySchema.getKeyItem(item))
	maps.Copy(out, i.keySchema.getKeyItem(item))

	return out
}

func (i *index) projectInclude(item map[string]*types.Item) map[string]*types.Item {
	out := i.projectKeysOnly(item)

	for _, namePtr := range i.projection.NonKeyAttributes {
		if namePtr == nil {
			continue
		}

		name := *namePtr
		if v, ok := item[name]; ok {
			out[name] = v
		}
	}

	return out
}

func (i *index) putData(key string, item map[string]*types.Item) error {
	indexKey, err := i.keySchema.GetKey(i.Table.AttributesDef, item)
	if err != nil {
		return err
	}

	entry := indexEntry{indexKey: indexKey, key: key}
	if indexKey != "" {
		entry.order = i.order(item)
	}

	i.setRef(entry)

	return nil
}

// order is the order string of an item in the index: its index keys, then
// its table keys.
func (i *index) order(item map[string]*types.Item) string {
	ts := i.Table.KeySchema

	return orderOf(i.Table.AttributesDef, item, i.keySchema.HashKey, i.keySchema.RangeKey, ts.HashKey, ts.RangeKey)
}

func (i *index) updateData(key string, item, _ map[string]*types.Item) error {
	return i.putData(key, item)
}

func (i *index) delete(key string, _ map[string]*types.Item) error {
	i.setRef(indexEntry{key: key})

	return nil
}

// setRef records the entry of the item stored under e.key, with no index
// key ("") when the item lacks the index's key attributes (indexes are
// sparse). An item that gains the keys is inserted, one that loses them is
// removed, and one whose index key changes moves.
func (i *index) setRef(e indexEntry) {
	old, exists := i.refs[e.key]
	if exists && old == e {
		return
	}

	if exists {
		delete(i.refs, e.key)
		i.entries.Delete(old)
	}

	if e.indexKey != "" {
		i.refs[e.key] = e
		i.entries.ReplaceOrInsert(e)
	}
}

// primaryKeys yields the primary keys of the indexed items in index order,
// or in reverse.
func (i *index) primaryKeys(forward bool) iter.Seq[string] {
	return func(yield func(string) bool) {
		visit := func(e indexEntry) bool { return yield(e.key) }
		if forward {
			i.entries.Ascend(visit)

			return
		}

		i.entries.Descend(visit)
	}
}

func (i *index) count() int64 {
	return int64(i.entries.Len())
}
