package provision

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestStateFieldsHaveNames: every field of the State, and of the structs it
// holds, has its own JSON name, so that renaming a Go field cannot change
// the encoding.
func TestStateFieldsHaveNames(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, at string) {
		seen := map[string]bool{}
		for f := range fieldsOf(typ) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Errorf("%s.%s has no JSON name: give it `json:\"%s\"`", at, f.Name, f.Name)
			}
			if seen[name] {
				t.Errorf("%s: two fields are named %q", at, name)
			}
			seen[name] = true
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, at+"."+f.Name)
			}
		}
	}
	walk(reflect.TypeFor[State](), "State")
}

func fieldsOf(typ reflect.Type) func(func(reflect.StructField) bool) {
	return func(yield func(reflect.StructField) bool) {
		for i := range typ.NumField() {
			if !yield(typ.Field(i)) {
				return
			}
		}
	}
}

// filled sets every field of v to a value that is not its zero.
func filled(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			filled(v.Field(i), n)
		}
	case reflect.String:
		v.SetString("value-" + strings.Repeat("x", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		filled(s.Index(0), n)
		v.Set(s)
	default:
		panic("filled: add the kind " + v.Kind().String())
	}
}

func TestStateRoundTrip(t *testing.T) {
	var st State
	n := 0
	filled(reflect.ValueOf(&st).Elem(), &n)
	b, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"version":1,"state":{`) {
		t.Fatalf("encoding %s: want the version first", b)
	}
	got, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, st)
	}
}

// TestDecodeStateVersion0: a State recorded before versions were (the State
// itself) still decodes.
func TestDecodeStateVersion0(t *testing.T) {
	b, err := os.ReadFile("testdata/state_v0.json")
	if err != nil {
		t.Fatal(err)
	}
	st, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "orders" || st.TableName != "orders-outbox" || !st.TableOwned || st.MappingUUID != "b1e4a4b2-3f0c-4c53-9d0e-2f4a1c9e7a10" ||
		st.Layout.PendingShards != 16 || st.Alarms.DLQNotEmpty == "" {
		t.Fatalf("decoded %+v", st)
	}
}

func TestDecodeStateRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", `{"version":1,"state":{"TableNme":"orders-outbox"}}`, `unknown field "TableNme"`},
		{"unknown field in version 0", `{"Name":"orders","QueueAddress":"x"}`, `unknown field "QueueAddress"`},
		{"newer version", `{"version":2,"state":{}}`, "newer provider (version 2; this provider reads up to 1): upgrade the provider"},
		{"not JSON", `{"version":`, "decoding the recorded state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeState([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeState(%s) = %v; want an error with %q", tc.in, err, tc.want)
			}
		})
	}
	if _, err := DecodeState([]byte(`{"version":3,"state":{}}`)); !errors.Is(err, ErrNewerState) {
		t.Fatalf("newer version: %v, want ErrNewerState", err)
	}
}
