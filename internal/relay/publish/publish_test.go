package publish

import (
	"reflect"
	"testing"
)

func TestChunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		sizes []int
		want  [][]int
	}{
		{"none", nil, nil},
		{"one", []int{5}, [][]int{{0}}},
		{"by count", []int{1, 1, 1, 1, 1}, [][]int{{0, 1}, {2, 3}, {4}}},
		{"by bytes", []int{6, 5, 5, 10, 1}, [][]int{{0}, {1, 2}, {3}, {4}}},
		{"exactly the limit", []int{4, 6, 10}, [][]int{{0, 1}, {2}}},
		{"oversize alone", []int{1, 11, 1}, [][]int{{0}, {1}, {2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Chunks(tt.sizes, 2, 10); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Chunks(%v, 2, 10) = %v, want %v", tt.sizes, got, tt.want)
			}
		})
	}
}
