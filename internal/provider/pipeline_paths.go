package provider

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/path"
)

// The attribute of each field of pipeline.Spec is given once, by the
// `spec` struct tag of the model's field (`spec:"Mapping.BatchSize"` on
// relay.batch_size). Validation errors, replacements and drift are mapped
// to attribute paths from these tags; TestSpecFieldPaths walks every field
// of pipeline.Spec and fails on one without an attribute.

var specFieldPaths = sync.OnceValue(func() map[string]path.Path {
	out := map[string]path.Path{}
	walkModel(reflect.TypeFor[PipelineResourceModel](), path.Empty(), func(p path.Path, f reflect.StructField) {
		if spec := f.Tag.Get("spec"); spec != "" {
			out[spec] = p
		}
	})
	return out
})

// walkModel calls fn for every attribute field of a model struct type, with
// its attribute path, descending into objects (pointers to structs).
func walkModel(t reflect.Type, at path.Path, fn func(path.Path, reflect.StructField)) {
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("tfsdk")
		if name == "" || name == "-" {
			continue
		}
		p := at.AtName(name)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			walkModel(f.Type.Elem(), p, fn)
			continue
		}
		fn(p, f)
	}
}

// blockPresent reports whether the model's object called name is present.
func blockPresent(m *PipelineResourceModel, name string) bool {
	v := reflect.ValueOf(m).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("tfsdk") == name {
			f := v.Field(i)
			return f.Kind() != reflect.Pointer || !f.IsNil()
		}
	}
	return false
}

// attributePath returns the attribute path of a field of pipeline.Spec, and
// whether there is one. A field without its own attribute is reported on
// the nearest one that sets it (Target.Type on target).
func attributePath(field string) (path.Path, bool) {
	if p, ok := specFieldPaths()[field]; ok {
		return p, true
	}
	if block, ok := specFieldsWithoutAttribute[field]; ok {
		return path.Root(block), true
	}
	return path.Empty(), false
}

// specFieldsWithoutAttribute are the fields of pipeline.Spec that no
// attribute sets on its own, with the object that decides them.
var specFieldsWithoutAttribute = map[string]string{
	// target.topic_arn set means sns, else eventbridge.
	"Target.Type": "target",
	// The reconciler's concurrency is not configurable.
	"Reconciler.Function.ReservedConcurrency": "reconciler",
	// Ordered mode has no attribute yet; it needs a FIFO target.
	"Ordered": "target",
}

// dottedField writes a Spec field as its attribute path in configurations
// (Mapping.BatchSize as relay.batch_size).
func dottedField(field string) string {
	if p, ok := attributePath(field); ok {
		return dotted(p)
	}
	return field
}

// attributeNames rewrites the Spec fields named in a message as their
// attribute paths, longest first so that Table.Name does not spoil
// Table.NameX.
func attributeNames(msg string) string {
	fields := make([]string, 0, len(specFieldPaths()))
	for f := range specFieldPaths() {
		fields = append(fields, f)
	}
	for f := range specFieldsWithoutAttribute {
		fields = append(fields, f)
	}
	sort.Slice(fields, func(i, j int) bool { return len(fields[i]) > len(fields[j]) })
	for _, f := range fields {
		// Only dotted fields: Name alone is also an English word.
		if strings.Contains(f, ".") && strings.Contains(msg, f) {
			msg = strings.ReplaceAll(msg, f, dottedField(f))
		}
	}
	return msg
}

// walkModelValues calls fn for every attribute value of a model, with its
// path and field, descending into present objects.
func walkModelValues(v reflect.Value, at path.Path, fn func(path.Path, reflect.StructField, reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("tfsdk")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct {
			if !f.IsNil() {
				walkModelValues(f.Elem(), at.AtName(name), fn)
			}
			continue
		}
		fn(at.AtName(name), t.Field(i), f)
	}
}
