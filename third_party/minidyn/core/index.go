package core

import (
	"maps"
	"sort"
	"time"

	"github.com/truora/minidyn/types"
)

type indexType string

const (
	indexTypeGlobal indexType = "global"
	indexTypeLocal  indexType = "local"
)

type index struct {
	keySchema  keySchema
	sortedKeys []string
	sortedRefs [][2]string // used for searching
	typ        indexType
	projection *types.Projection
	Table      *Table
	refs       map[string]string
	createdAt  time.Time
}

func newIndex(t *Table, typ indexType, ks keySchema) *index {
	ks.Secondary = true

	return &index{
		keySchema:  ks,
		sortedKeys: []string{},
		typ:        typ,
		Table:      t,
		refs:       map[string]string{},
	}
}

func (i *index) Clear() {
	i.sortedKeys = []string{}
	i.refs = map[string]string{}
}

type indexSnapshot struct {
	sortedKeys []string
	refs       map[string]string
}

func (i *index) snapshot() indexSnapshot {
	keys := make([]string, len(i.sortedKeys))
	copy(keys, i.sortedKeys)

	refs := make(map[string]string, len(i.refs))
	maps.Copy(refs, i.refs)

	return indexSnapshot{sortedKeys: keys, refs: refs}
}

func (i *index) restore(s indexSnapshot) {
	i.sortedKeys = s.sortedKeys
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

	i.setRef(key, indexKey)

	return nil
}

func (i *index) updateData(key string, item, _ map[string]*types.Item) error {
	return i.putData(key, item)
}

func (i *index) delete(key string, _ map[string]*types.Item) error {
	i.setRef(key, "")

	return nil
}

// setRef records that the item stored under key has the given index key, or
// none ("") when the item lacks the index's key attributes (indexes are
// sparse). It keeps sortedKeys equal to the sorted values of refs: an item
// that gains the keys is inserted, one that loses them is removed, and one
// whose index key changes moves.
func (i *index) setRef(key, indexKey string) {
	old, exists := i.refs[key]
	if exists && old == indexKey {
		return
	}

	if exists {
		delete(i.refs, key)
		i.sortedKeys = removeSorted(i.sortedKeys, old)
	}

	if indexKey != "" {
		i.refs[key] = indexKey
		i.sortedKeys = insertSorted(i.sortedKeys, indexKey)
	}
}

// insertSorted inserts k into the sorted slice keys at its position.
func insertSorted(keys []string, k string) []string {
	pos := sort.SearchStrings(keys, k)
	keys = append(keys, "")
	copy(keys[pos+1:], keys[pos:])
	keys[pos] = k

	return keys
}

// removeSorted removes one occurrence of k from the sorted slice keys.
func removeSorted(keys []string, k string) []string {
	pos := sort.SearchStrings(keys, k)
	if pos == len(keys) || keys[pos] != k {
		return keys
	}

	copy(keys[pos:], keys[pos+1:])
	keys[len(keys)-1] = ""

	return keys[:len(keys)-1]
}

func (i *index) lessKey(x, y int) bool {
	if i.sortedRefs[x][1] < i.sortedRefs[y][1] {
		return true
	}

	if i.sortedRefs[x][1] > i.sortedRefs[y][1] {
		return false
	}

	return i.sortedRefs[x][0] < i.sortedRefs[y][0]
}

func (i *index) startSearch(scanForward bool) {
	i.sortedRefs = make([][2]string, len(i.refs))
	pos := 0

	for k, v := range i.refs {
		i.sortedRefs[pos] = [2]string{k, v}
		pos++
	}

	sort.Slice(i.sortedRefs, func(x, y int) bool {
		less := i.lessKey(x, y)
		if scanForward {
			return less
		}

		return !less
	})
}

func (i *index) getPrimaryKey(indexKey string) (string, bool) {
	if len(i.sortedRefs) > 0 {
		key := i.sortedRefs[0]
		pk, ik := key[0], key[1]

		i.sortedRefs = i.sortedRefs[1:len(i.sortedRefs)]

		if indexKey == ik {
			return pk, true
		}
	}

	return "", false
}

func (i *index) count() int64 {
	return int64(len(i.sortedKeys))
}
