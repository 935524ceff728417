package provider

import (
	"reflect"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A setting is declared once: its model field, whose `spec` tag names the
// field of the Spec it sets, and its attribute's description in the
// schema. From the tag come the mapping both ways (model to Spec, and Spec
// to model on import and in drift), the attribute's default (the default
// Spec's value: declareSettings), its validator and the allowed values in
// its description (the Spec's limit: provision.Limit), and the attribute
// path of the Spec's errors (specFieldPaths).
//
// The tag is the Spec field's dotted path, and how the attribute writes
// it: `spec:"Reconciler.Disabled,not"` (enabled = !Disabled),
// `spec:"PublishedTTL,days"` and `spec:"Reconciler.MinAge,seconds"` (a
// duration as a whole number).

// specTag is a parsed spec tag.
type specTag struct {
	field string
	not   bool
	unit  time.Duration
}

var tagUnits = map[string]time.Duration{"days": 24 * time.Hour, "seconds": time.Second}

func parseSpecTag(tag string) (specTag, bool) {
	field, opt, _ := strings.Cut(tag, ",")
	t := specTag{field: field, not: opt == "not", unit: tagUnits[opt]}
	return t, field != ""
}

// fieldIn returns the field of the struct value v at the tag's dotted
// path; invalid when there is none.
func (t specTag) fieldIn(v reflect.Value) reflect.Value {
	for _, name := range strings.Split(t.field, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}
		}
		v = v.FieldByName(name)
	}
	return v
}

// set sets the Spec field f (addressable) to the attribute value a; a
// null or unknown value leaves it zero (its default).
func (t specTag) set(f reflect.Value, a attr.Value) {
	if !f.IsValid() || a == nil || !known(a) {
		return
	}
	var v reflect.Value
	switch a := a.(type) {
	case types.String:
		v = reflect.ValueOf(a.ValueString())
	case types.Bool:
		v = reflect.ValueOf(a.ValueBool() != t.not)
	case types.Int64:
		n := a.ValueInt64()
		if t.unit != 0 {
			n *= int64(t.unit)
		}
		v = reflect.ValueOf(n)
	case types.Set:
		if partlyUnknown(a) {
			return
		}
		v = reflect.ValueOf(setStrings(a))
	case types.List:
		if partlyUnknown(a) {
			return
		}
		v = reflect.ValueOf(listStrings(a))
	default:
		return
	}
	typ := f.Type()
	if typ.Kind() == reflect.Pointer {
		p := reflect.New(typ.Elem())
		p.Elem().Set(v.Convert(typ.Elem()))
		f.Set(p)
		return
	}
	f.Set(v.Convert(typ))
}

// value is the attribute value, of the model's attribute type typ, of the
// Spec field f; false when there is none to show (an unset optional
// setting: nil, "" or an empty list).
func (t specTag) value(f reflect.Value, typ reflect.Type) (attr.Value, bool) {
	if !f.IsValid() || (f.Kind() == reflect.Pointer && f.IsNil()) {
		return nil, false
	}
	f = reflect.Indirect(f)
	var out attr.Value
	switch f.Kind() {
	case reflect.String:
		out = types.StringValue(f.String())
		if f.String() == "" {
			return nil, false
		}
	case reflect.Bool:
		out = types.BoolValue(f.Bool() != t.not)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n := f.Int()
		if t.unit != 0 {
			n /= int64(t.unit)
		}
		out = types.Int64Value(n)
	case reflect.Slice:
		s, ok := f.Interface().([]string)
		if !ok || len(s) == 0 {
			return nil, false
		}
		out = controlsSet(s)
		if typ == reflect.TypeFor[types.List]() {
			out = stringList(s)
		}
	default:
		return nil, false
	}
	if reflect.TypeOf(out) != typ {
		return nil, false
	}
	return out, true
}

// nullOf is the null value of a model's attribute type.
func nullOf(typ reflect.Type) (attr.Value, bool) {
	switch typ {
	case reflect.TypeFor[types.String]():
		return types.StringNull(), true
	case reflect.TypeFor[types.Int64]():
		return types.Int64Null(), true
	case reflect.TypeFor[types.Bool]():
		return types.BoolNull(), true
	case reflect.TypeFor[types.Set]():
		return types.SetNull(types.StringType), true
	case reflect.TypeFor[types.List]():
		return types.ListNull(types.StringType), true
	}
	return nil, false
}

// modelToSpec sets the fields of the Spec that spec points to from the
// tagged settings of the model that m points to, in the objects it has.
func modelToSpec(m, spec any) {
	s := reflect.ValueOf(spec).Elem()
	walkModelValues(reflect.ValueOf(m).Elem(), path.Empty(), func(_ path.Path, f reflect.StructField, v reflect.Value) {
		if t, ok := parseSpecTag(f.Tag.Get("spec")); ok {
			a, _ := v.Interface().(attr.Value)
			t.set(t.fieldIn(s), a)
		}
	})
}

// specToModel sets the tagged settings of the model struct that m points
// to from spec (with its defaults): every object whole, and null where the
// Spec holds no value.
func specToModel(spec, m any) {
	fillFromSpec(reflect.ValueOf(spec), reflect.ValueOf(m).Elem())
}

func fillFromSpec(spec, model reflect.Value) {
	for i := range model.NumField() {
		f, v := model.Type().Field(i), model.Field(i)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(f.Type.Elem()))
			fillFromSpec(spec, v.Elem())
			continue
		}
		t, ok := parseSpecTag(f.Tag.Get("spec"))
		if !ok {
			continue
		}
		val, ok := t.value(t.fieldIn(spec), f.Type)
		if !ok {
			val, ok = nullOf(f.Type)
		}
		if ok {
			v.Set(reflect.ValueOf(val))
		}
	}
}
