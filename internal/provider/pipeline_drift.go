package provider

import (
	"reflect"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// This file shows drift as hashicorp/aws does: Read keeps the values it
// observed in the state, so that a mapping's batch_size changed by hand to
// 5 plans "batch_size: 5 -> 100". The settings shown are those tagged
// drift:"<component>" in the model, in objects the model has.

// showObserved sets the drift-tagged settings of the components that
// changed to the values observed.
func (m *PipelineResourceModel) showObserved(observed provision.Spec, changed []string) {
	spec := reflect.ValueOf(observed)
	walkModelValues(reflect.ValueOf(m).Elem(), path.Empty(), func(_ path.Path, f reflect.StructField, v reflect.Value) {
		t, ok := parseSpecTag(f.Tag.Get("spec"))
		if !ok || !slices.Contains(changed, f.Tag.Get("drift")) {
			return
		}
		if val, ok := t.value(t.fieldIn(spec), v.Type()); ok {
			v.Set(reflect.ValueOf(val))
		}
	})
}

// changedUnseen reports whether one of the components changed out of band
// in a way the plan does not otherwise show: no drift-tagged setting of it
// differs between the prior state and the plan. A plan that would
// otherwise change nothing then marks the component's computed attributes
// unknown (planUnseenDrift), so that it shows an update and apply repairs
// the component.
func (in planInputs) changedUnseen(plan *PipelineResourceModel, components []string) bool {
	for _, c := range in.drift.Changed {
		if slices.Contains(components, c.Component) && !settingsDiffer(in.prior, plan, c.Component) {
			return true
		}
	}
	return false
}

// settingsDiffer reports whether a drift-tagged setting of the component
// differs between two models.
func settingsDiffer(a, b *PipelineResourceModel, component string) bool {
	values := map[string]attr.Value{}
	walkModelValues(reflect.ValueOf(a).Elem(), path.Empty(), func(p path.Path, f reflect.StructField, v reflect.Value) {
		if f.Tag.Get("drift") == component {
			values[p.String()], _ = v.Interface().(attr.Value)
		}
	})
	differ := false
	walkModelValues(reflect.ValueOf(b).Elem(), path.Empty(), func(p path.Path, f reflect.StructField, v reflect.Value) {
		if f.Tag.Get("drift") != component {
			return
		}
		bv, _ := v.Interface().(attr.Value)
		if av, ok := values[p.String()]; ok && av != nil && bv != nil && !av.Equal(bv) {
			differ = true
		}
	})
	return differ
}

// foundChanged returns the changed components whose settings Lookup read
// from the components that Read observed: the mapping only when Lookup
// found the same one (it looks for it by function, not by UUID), so that
// the settings of no mapping never show as zeros.
func foundChanged(changed []string, observed, found provision.State) []string {
	if found.MappingUUID == observed.MappingUUID {
		return changed
	}
	return slices.DeleteFunc(slices.Clone(changed), func(c string) bool { return c == provision.ComponentMapping })
}

// changedComponents returns the components that Read found changed.
func changedComponents(d provision.Drift) []string {
	var out []string
	for _, c := range d.Changed {
		out = append(out, c.Component)
	}
	return out
}
