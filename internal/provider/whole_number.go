package provider

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// wholeNumberType is the type of the integer attributes: an Int64 whose
// validation says, for a value such as 1.5, that the attribute takes whole
// numbers (the framework's own message prints the value as
// "%!s(*big.Float=1.5)"). Its values are plain types.Int64.
type wholeNumberType struct{ basetypes.Int64Type }

// The framework calls a type's Validate before it converts the value, which
// is where a fraction must be caught; its successor, ValidateableAttribute,
// sees only converted values.
var _ xattr.TypeWithValidate = wholeNumberType{} //nolint:staticcheck // see above

func (t wholeNumberType) Equal(o attr.Type) bool {
	switch o.(type) {
	case wholeNumberType, basetypes.Int64Type:
		return true
	}
	return false
}

func (t wholeNumberType) String() string { return "wholeNumberType" }

// fraction returns the value of in when it is a known number that is not
// whole.
func fraction(in tftypes.Value) (*big.Float, bool) {
	if !in.IsKnown() || in.IsNull() || !in.Type().Is(tftypes.Number) {
		return nil, false
	}
	var f *big.Float
	if err := in.As(&f); err != nil || f == nil || f.IsInt() {
		return nil, false
	}
	return f, true
}

// ValueFromTerraform reads a value that is not whole as unknown, so that
// the configuration's other checks go on; Validate reports it.
func (t wholeNumberType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	if _, ok := fraction(in); ok {
		return basetypes.NewInt64Unknown(), nil
	}
	return t.Int64Type.ValueFromTerraform(ctx, in)
}

func (t wholeNumberType) Validate(ctx context.Context, in tftypes.Value, p path.Path) diag.Diagnostics {
	f, ok := fraction(in)
	if !ok {
		return t.Int64Type.Validate(ctx, in, p)
	}
	var diags diag.Diagnostics
	i, _ := f.Int(nil) // toward zero
	diags.AddAttributeError(p, "Invalid value",
		fmt.Sprintf("%s is %s: it must be a whole number, such as %d or %d.", dotted(p), f.Text('g', -1), i.Int64(), i.Int64()+int64(f.Sign())))
	return diags
}
